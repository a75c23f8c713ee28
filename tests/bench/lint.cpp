//===- lint.cpp - benchmark: lint (insert-comms + verify + deadlock + memory)
//
// Compute-only schedules built with the builder API, linted the way the
// pass pipeline does: verify-deps, insert-comms, deadlock (rendezvous),
// memory. Each iteration lints a fresh copy (the copy is not timed).
//
//   BM_LintInterleaved64x2/M  Megatron's interleaved 1F1B, 64 ranks x 2
//                             chunks x M microbatches: M = 4096 is 3.13M
//                             actions after insert-comms (the 20M
//                             actions/s figure); M = 512 .. 16384 doubles
//                             (12.5M actions).
//   BM_LintOneFOneB1024/M     1F1B on 1024 ranks, M = 256 .. 2048 (1.6M to
//                             12.6M actions): linear up to 12.6M.
//   BM_InsertComms1F1B1024/M  insert-comms alone on the same, M = 256 ..
//                             4096 (25M actions).
//   BM_InsertCommsInterleaved64x2/4096  insert-comms alone, interleaved.
//   BM_MatchInterleaved64x2/M, BM_DeadlockInterleaved64x2/M
//                             the deadlock pass's two parts alone on the
//                             lowered interleaved schedule: the matching,
//                             and the happens-before walk given it.
//
// Counters: actions (after insert-comms), actions/s and time/action per
// CPU second of the lint (one thread; CPU time, since the machine may be
// shared; time/action stays flat along a doubling series when the cost is
// linear), bytes/action (peak RSS growth while building and linting one
// schedule, over the actions it ends with), faults/kaction (minor page
// faults of the timed lint per 1000 actions).
//
// The heap is set up as ppsc sets it up (bench::mainWithPpscHeap);
// PPS_BENCH_HEAP=glibc measures with glibc's defaults instead.
//
//   build/bench/bench_lint --benchmark_counters_tabular=true
//
//===----------------------------------------------------------------------===//
#include "../unit/passes/Schedules.h"
#include "BenchUtil.h"

#include "pps/analysis/Deadlock.h"
#include "pps/analysis/Matching.h"
#include "pps/passes/Deadlock.h"
#include "pps/passes/InsertComms.h"
#include "pps/passes/Memory.h"
#include "pps/passes/VerifyDeps.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <functional>
#include <map>

using namespace pps;

namespace {

/// Runs the lint passes (or insert-comms alone); aborts the benchmark on a
/// finding (they must be clean schedules).
size_t lint(ir::Schedule &S, bool InsertOnly) {
  SourceManager SM;
  DiagnosticEngine D(SM);
  passes::PassManager PM;
  if (!InsertOnly)
    PM.add(passes::createVerifyDepsPass());
  PM.add(passes::createInsertCommsPass());
  if (!InsertOnly) {
    PM.add(passes::createDeadlockPass());
    PM.add(passes::createMemoryPass());
  }
  passes::PassContext Ctx{D, {}};
  Ctx.MaxActions = uint64_t(1) << 30; // 25M actions at the largest size
  driver::adviseHugePagesForPasses(); // as ppsc does before its passes
  if (!PM.run(S, Ctx) || (!InsertOnly && !Ctx.Results.DeadlockFree)) {
    std::fprintf(stderr, "bench_lint: the schedule did not lint clean\n");
    std::abort();
  }
  return S.numActions();
}

void runLint(benchmark::State &State,
             const std::function<ir::Schedule(int32_t)> &Build,
             bool InsertOnly = false) {
  auto M = int32_t(State.range(0));
  size_t Actions = 0;
  double Grown = bench::peakGrowth([&] {
    ir::Schedule S = Build(M);
    Actions = lint(S, InsertOnly);
  });
  ir::Schedule Base = Build(M);
  long Faults = 0;
  for (auto _ : State) {
    State.PauseTiming();
    ir::Schedule S = Base;
    long F0 = bench::minorFaults();
    State.ResumeTiming();
    benchmark::DoNotOptimize(lint(S, InsertOnly));
    State.PauseTiming();
    Faults += bench::minorFaults() - F0;
    State.ResumeTiming();
  }
  bench::reportActions(State, double(Actions), Grown / double(Actions), Faults);
}

void BM_LintInterleaved64x2(benchmark::State &State) {
  runLint(State, [](int32_t M) { return testing::interleaved(64, 2, M); });
}
BENCHMARK(BM_LintInterleaved64x2)
    ->RangeMultiplier(2)
    ->Range(512, 16384)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

void BM_LintOneFOneB1024(benchmark::State &State) {
  runLint(State, [](int32_t M) { return testing::oneFOneB(1024, M); });
}
BENCHMARK(BM_LintOneFOneB1024)
    ->RangeMultiplier(2)
    ->Range(256, 2048)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

void BM_InsertCommsInterleaved64x2(benchmark::State &State) {
  runLint(
      State, [](int32_t M) { return testing::interleaved(64, 2, M); },
      /*InsertOnly=*/true);
}
BENCHMARK(BM_InsertCommsInterleaved64x2)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

void BM_InsertComms1F1B1024(benchmark::State &State) {
  runLint(
      State, [](int32_t M) { return testing::oneFOneB(1024, M); },
      /*InsertOnly=*/true);
}
BENCHMARK(BM_InsertComms1F1B1024)
    ->RangeMultiplier(2)
    ->Range(256, 4096)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

/// The lowered interleaved schedule (insert-comms' output), built once.
const ir::Schedule &lowered(int32_t M) {
  static std::map<int32_t, ir::Schedule> Cache;
  auto [It, New] = Cache.try_emplace(M);
  if (New) {
    It->second = testing::interleaved(64, 2, M);
    SourceManager SM;
    DiagnosticEngine D(SM);
    passes::PassContext Ctx{D, {}};
    passes::createInsertCommsPass()->run(It->second, Ctx);
  }
  return It->second;
}

void BM_MatchInterleaved64x2(benchmark::State &State) {
  const ir::Schedule &S = lowered(int32_t(State.range(0)));
  for (auto _ : State)
    benchmark::DoNotOptimize(analysis::matchComms(S));
  bench::reportActions(State, double(S.numActions()), 0);
}
BENCHMARK(BM_MatchInterleaved64x2)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_DeadlockInterleaved64x2(benchmark::State &State) {
  const ir::Schedule &S = lowered(int32_t(State.range(0)));
  analysis::Matching M = analysis::matchComms(S);
  for (auto _ : State)
    benchmark::DoNotOptimize(analysis::checkDeadlock(S, M, S.Comm));
  bench::reportActions(State, double(S.numActions()), 0);
}
BENCHMARK(BM_DeadlockInterleaved64x2)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

} // namespace

int main(int Argc, char **Argv) {
  return pps::bench::mainWithPpscHeap(Argc, Argv);
}
