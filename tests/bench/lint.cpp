//===- lint.cpp - benchmark: lint (insert-comms + verify + deadlock + memory)
//
// Interleaved 1F1B built with the builder API (64 ranks x 2 chunks x 4096
// microbatches, about 1M computes) and 1F1B on 1024 ranks x 1024
// microbatches (2M computes). Each iteration lints a fresh copy of the
// compute-only schedule: verify-deps, insert-comms, deadlock (rendezvous),
// memory. Counters:
//   computes/s, actions/s   computes in, and actions out (with comms), per
//                           CPU second of lint (one thread; CPU time, since
//                           the machine may be shared)
//   bytes/action            peak RSS growth while building and linting one
//                           schedule, over the actions the lint ends with
//                           (from VmHWM, reset through /proc/self/clear_refs;
//                           getrusage when that is unavailable)
//   doubling_ratio          lint CPU time at 2M over lint CPU time at M
//   doubling_ratio_below    lint CPU time at M over lint CPU time at M/2
//                           (best of 3 each)
//
//   build/bench/bench_lint --benchmark_counters_tabular=true
//
//===----------------------------------------------------------------------===//
#include "../unit/passes/Schedules.h"

#include "pps/passes/Deadlock.h"
#include "pps/passes/InsertComms.h"
#include "pps/passes/Memory.h"
#include "pps/passes/VerifyDeps.h"

#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>

using namespace pps;

namespace {

/// Runs the lint passes; aborts the benchmark on a finding (they must be
/// clean schedules).
size_t lint(ir::Schedule &S) {
  SourceManager SM;
  DiagnosticEngine D(SM);
  passes::PassManager PM;
  PM.add(passes::createVerifyDepsPass());
  PM.add(passes::createInsertCommsPass());
  PM.add(passes::createDeadlockPass());
  PM.add(passes::createMemoryPass());
  passes::PassContext Ctx{D, {}};
  if (!PM.run(S, Ctx) || !Ctx.Results.DeadlockFree) {
    std::fprintf(stderr, "bench_lint: the schedule did not lint clean\n");
    std::abort();
  }
  return S.numActions();
}

/// kB from a "Name:   123 kB" line of /proc/self/status, or -1.
long statusKb(const char *Name) {
  FILE *F = std::fopen("/proc/self/status", "r");
  if (!F)
    return -1;
  char Line[256];
  long Kb = -1;
  size_t N = std::strlen(Name);
  while (std::fgets(Line, sizeof Line, F))
    if (std::strncmp(Line, Name, N) == 0 && Line[N] == ':')
      Kb = std::atol(Line + N + 1);
  std::fclose(F);
  return Kb;
}

/// Resets the peak-RSS mark; false if the kernel does not allow it.
bool resetPeak() {
  FILE *F = std::fopen("/proc/self/clear_refs", "w");
  if (!F)
    return false;
  bool Ok = std::fputs("5", F) >= 0;
  return std::fclose(F) == 0 && Ok;
}

long maxRssKb() {
  struct rusage U;
  getrusage(RUSAGE_SELF, &U);
  return U.ru_maxrss;
}

/// Peak RSS growth (bytes) while building and linting one schedule, and the
/// actions it ends with.
std::pair<double, size_t>
memoryPerAction(const std::function<ir::Schedule()> &Build) {
  bool Reset = resetPeak();
  long Base = statusKb("VmRSS");
  long Before = Reset ? statusKb("VmHWM") : maxRssKb();
  size_t Actions;
  {
    ir::Schedule S = Build();
    Actions = lint(S);
  }
  long Peak = Reset ? statusKb("VmHWM") : maxRssKb();
  double Grown = double(Peak - (Reset ? Base : Before)) * 1024.0;
  return {Grown / double(Actions), Actions};
}

/// CPU seconds of this process (the machine may be shared: wall time
/// would measure the neighbours).
double cpuSeconds() {
  timespec T;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &T);
  return double(T.tv_sec) + double(T.tv_nsec) * 1e-9;
}

double secondsToLint(const ir::Schedule &Base, int Reps) {
  double Best = 1e30;
  for (int I = 0; I < Reps; ++I) {
    ir::Schedule S = Base;
    double T0 = cpuSeconds();
    lint(S);
    Best = std::min(Best, cpuSeconds() - T0);
  }
  return Best;
}

void runLint(benchmark::State &State,
             const std::function<ir::Schedule(int32_t)> &Build, int32_t M) {
  auto [BytesPerAction, Actions] = memoryPerAction([&] { return Build(M); });
  ir::Schedule Base = Build(M);
  size_t Computes = Base.numActions();
  for (auto _ : State) {
    State.PauseTiming();
    ir::Schedule S = Base;
    State.ResumeTiming();
    benchmark::DoNotOptimize(lint(S));
  }
  double Iters = double(State.iterations());
  State.counters["computes/s"] =
      benchmark::Counter(double(Computes) * Iters, benchmark::Counter::kIsRate);
  State.counters["actions/s"] =
      benchmark::Counter(double(Actions) * Iters, benchmark::Counter::kIsRate);
  State.counters["actions"] = double(Actions);
  State.counters["bytes/action"] = BytesPerAction;
  // Time linear in size: twice the microbatches, at most ~2x the time.
  // Reported both ways around the benchmarked size, since the step from
  // M/2 to M may cross a cache size on the machine.
  double TFull = secondsToLint(Base, 3);
  {
    ir::Schedule Double = Build(2 * M);
    State.counters["doubling_ratio"] = secondsToLint(Double, 3) / TFull;
  }
  {
    ir::Schedule Half = Build(M / 2);
    State.counters["doubling_ratio_below"] = TFull / secondsToLint(Half, 3);
  }
}

void BM_LintInterleaved64x2(benchmark::State &State) {
  runLint(
      State, [](int32_t M) { return testing::interleaved(64, 2, M); },
      int32_t(State.range(0)));
}
BENCHMARK(BM_LintInterleaved64x2)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

void BM_LintOneFOneB1024(benchmark::State &State) {
  runLint(
      State, [](int32_t M) { return testing::oneFOneB(1024, M); },
      int32_t(State.range(0)));
}
BENCHMARK(BM_LintOneFOneB1024)
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

} // namespace

BENCHMARK_MAIN();
