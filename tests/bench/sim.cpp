//===- sim.cpp - simulator and Chrome trace throughput --------------------===//
//
// Interleaved 1F1B (Megatron order, loop placement) built with the builder
// API, comms inserted by the insert-comms pass (or, should it report a
// problem, by the time-ordered insertion of the sim tests), then:
//   BM_Simulate          simulate (per-action times + critical path)
//   BM_SimulateLean      simulate, makespan and figures only (KeepTimes off)
//   BM_SimulateDoubling  BM_Simulate along doubling series, with
//                        time/action and bytes/action
//   BM_ChromeTrace       write the Chrome trace to /dev/null or to a file
// Sizes: 64 ranks x 2 chunks x 4096 microbatches, 1024 ranks x 2 chunks x
// 1024 microbatches; the doubling series 64 x 2 x 1024..16384 (0.78M to
// 12.5M actions) and 1024 x 2 x 1024, 2048, 4096 (12.6M, 25.2M, 50.3M; the
// last needs about 4 GB). Real time (the
// simulator uses a second thread for its setup and memory figures);
// items_per_second and actions/s are actions per second.
//
// The heap is set up as ppsc sets it up (bench::mainWithPpscHeap);
// PPS_BENCH_HEAP=glibc measures with glibc's defaults instead.
//
//   build/bench/bench_sim --benchmark_counters_tabular=true
//
//===----------------------------------------------------------------------===//
#include "../unit/sim/SimTestUtil.h"
#include "BenchUtil.h"

#include "pps/backends/Trace.h"
#include "pps/passes/InsertComms.h"
#include "pps/sim/Simulator.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <map>
#include <memory>

using namespace pps;

namespace {

/// Built once per size and kept for every benchmark that needs it.
const ir::Schedule &schedule(int P, int V, int M) {
  static std::map<std::tuple<int, int, int>, std::unique_ptr<ir::Schedule>>
      Cache;
  auto &Slot = Cache[{P, V, M}];
  if (Slot)
    return *Slot;
  Slot = std::make_unique<ir::Schedule>(simtest::interleaved1F1B(P, V, M));
  ir::Schedule &S = *Slot;
  S.Cost.Latency = 0.05;
  SourceManager SM;
  DiagnosticEngine D(SM);
  passes::PassContext Ctx{D, {}};
  ir::Schedule Copy = S;
  passes::createInsertCommsPass()->run(Copy, Ctx);
  if (!D.hasErrors() && Copy.hasComms())
    S = std::move(Copy);
  else
    simtest::insertComms(S);
  return S;
}

void BM_Simulate(benchmark::State &St) {
  const ir::Schedule &S = schedule(St.range(0), St.range(1), St.range(2));
  double Makespan = 0;
  for (auto _ : St) {
    sim::SimResult R = sim::simulate(S);
    Makespan = R.Makespan;
    benchmark::DoNotOptimize(R);
  }
  St.SetItemsProcessed(int64_t(St.iterations()) * int64_t(S.numActions()));
  St.counters["actions"] = double(S.numActions());
  St.counters["makespan"] = Makespan;
}

void BM_SimulateLean(benchmark::State &St) {
  const ir::Schedule &S = schedule(St.range(0), St.range(1), St.range(2));
  sim::SimOptions O;
  O.KeepTimes = false;
  O.CriticalPath = false;
  for (auto _ : St) {
    sim::SimResult R = sim::simulate(S, O);
    benchmark::DoNotOptimize(R.Makespan);
  }
  St.SetItemsProcessed(int64_t(St.iterations()) * int64_t(S.numActions()));
  St.counters["actions"] = double(S.numActions());
}

/// A doubling series (per-action times and the critical path, as
/// BM_Simulate): time/action stays flat when the cost is linear;
/// bytes/action is the peak memory one simulation adds to its schedule's,
/// over its actions.
void BM_SimulateDoubling(benchmark::State &St) {
  const ir::Schedule &S = schedule(St.range(0), St.range(1), St.range(2));
  double Grown =
      bench::peakGrowth([&] { benchmark::DoNotOptimize(sim::simulate(S)); });
  for (auto _ : St) {
    sim::SimResult R = sim::simulate(S);
    benchmark::DoNotOptimize(R);
  }
  auto Actions = double(S.numActions());
  bench::reportActions(St, Actions, Grown / Actions);
}

/// Arg 3: 0 = /dev/null, 1 = a file in the temp directory.
void BM_ChromeTrace(benchmark::State &St) {
  const ir::Schedule &S = schedule(St.range(0), St.range(1), St.range(2));
  sim::SimResult R = sim::simulate(S);
  std::string Path = "/dev/null";
  if (St.range(3)) {
    llvm::SmallString<128> Tmp;
    llvm::sys::path::system_temp_directory(true, Tmp);
    llvm::sys::path::append(Tmp, "pps_bench_trace.json");
    Path = std::string(Tmp.str());
  }
  uint64_t Bytes = 0;
  for (auto _ : St) {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    if (EC) {
      St.SkipWithError("cannot open the trace file");
      break;
    }
    backends::writeChromeTrace(S, R, OS);
    OS.flush();
    Bytes = OS.tell();
  }
  if (St.range(3))
    llvm::sys::fs::remove(Path);
  St.SetItemsProcessed(int64_t(St.iterations()) * int64_t(S.numActions()));
  St.SetBytesProcessed(int64_t(St.iterations()) * int64_t(Bytes));
  St.counters["trace_MB"] = double(Bytes) / 1e6;
}

} // namespace

BENCHMARK(BM_Simulate)
    ->Args({64, 2, 4096})
    ->Args({1024, 2, 1024})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SimulateLean)
    ->Args({64, 2, 4096})
    ->Args({1024, 2, 1024})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// 64 ranks: 0.78M to 12.5M actions; 1024 ranks: 12.6M to 50.3M (fewer
// microbatches than ranks make a different schedule, not half of it).
BENCHMARK(BM_SimulateDoubling)
    ->ArgsProduct({{64}, {2}, benchmark::CreateRange(1024, 16384, 2)})
    ->ArgsProduct({{1024}, {2}, {1024, 2048, 4096}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ChromeTrace)
    ->Args({64, 2, 4096, 0})
    ->Args({64, 2, 4096, 1})
    ->Args({1024, 2, 1024, 0})
    ->Args({1024, 2, 1024, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

int main(int Argc, char **Argv) {
  return pps::bench::mainWithPpscHeap(Argc, Argv);
}
