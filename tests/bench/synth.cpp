//===- synth.cpp - schedule synthesis time -------------------------------===//
//
// BM_Synth/<placement>/<P>/<M>: the whole portfolio `ppsc synth` runs
// (greedy list scheduler, plus the V pattern search under V placement; the
// exact search at P = 4, M = 8, with its default state budget) for
// P = 4, 8, 16, 32 and M = 2P, 4P; memory limit P activations per rank
// (loop) or P + 2 chunks (V, V-Half's peak). Counters: the makespan found
// and jobs per second. Target: P = 32 under a second; V at P = 64 and 128
// (M = 2P): under one and five seconds.
// BM_Evaluate: the evaluator alone on the P = 32, M = 128 loop result.
//
//===----------------------------------------------------------------------===//
#include "pps/synth/Algorithms.h"

#include <benchmark/benchmark.h>

using namespace pps;
using namespace pps::synth;

static Problem problemFor(const benchmark::State &St) {
  bool V = St.range(0) == 1;
  int32_t P = int32_t(St.range(1)), M = int32_t(St.range(2));
  return Problem::make(P, M, V ? ir::Placement::V : ir::Placement::Loop,
                       {1, 1, 1}, V ? P + 2 : P);
}

static void BM_Synth(benchmark::State &St) {
  Problem P = problemFor(St);
  double Makespan = 0;
  for (auto _ : St) {
    std::optional<Result> R = synthesize(P, {});
    if (!R) {
      St.SkipWithError("no schedule found");
      return;
    }
    Makespan = R->Eval.Makespan;
    benchmark::DoNotOptimize(R->Ord.Ranks.data());
  }
  St.counters["makespan"] = Makespan;
  St.counters["jobs/s"] = benchmark::Counter(
      double(P.numJobs()) * St.iterations(), benchmark::Counter::kIsRate);
}

static void synthArgs(benchmark::internal::Benchmark *B) {
  B->ArgNames({"v", "P", "M"});
  for (int64_t V : {0, 1})
    for (int64_t P : {4, 8, 16, 32})
      for (int64_t K : {2, 4})
        B->Args({V, P, K * P});
}
BENCHMARK(BM_Synth)->Apply(synthArgs)->Unit(benchmark::kMillisecond);
// The depths large models use, V placement: targets P = 64 under a second and
// P = 128 under five (one run each, CPU time).
BENCHMARK(BM_Synth)
    ->ArgNames({"v", "P", "M"})
    ->Args({1, 64, 128})
    ->Args({1, 128, 256})
    ->Iterations(1)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

static void BM_Evaluate(benchmark::State &St) {
  Problem P = Problem::make(32, 128, ir::Placement::Loop, {1, 1, 1}, 32);
  std::optional<Result> R = greedyList(P);
  if (!R) {
    St.SkipWithError("no schedule found");
    return;
  }
  for (auto _ : St)
    benchmark::DoNotOptimize(evaluate(P, R->Ord).Makespan);
  St.counters["jobs/s"] = benchmark::Counter(
      double(P.numJobs()) * St.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Evaluate)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
