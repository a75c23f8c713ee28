//===- BenchUtil.h - what the benchmarks measure besides time -------------===//
//
// Shared by the benchmarks in tests/bench: peak memory per action (the
// growth of the peak RSS while one unit of work runs, from VmHWM reset
// through /proc/self/clear_refs after malloc_trim; getrusage's ru_maxrss,
// which cannot be reset, where the kernel does not allow the reset), the
// counters every speed figure reports, and a main that sets the heap up as
// ppsc does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/driver/Heap.h"

#include <benchmark/benchmark.h>

#include <malloc.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace pps::bench {

/// kB from a "Name:   123 kB" line of /proc/self/status, or -1.
inline long statusKb(const char *Name) {
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
inline bool resetPeak() {
  FILE *F = std::fopen("/proc/self/clear_refs", "w");
  if (!F)
    return false;
  bool Ok = std::fputs("5", F) >= 0;
  return std::fclose(F) == 0 && Ok;
}

/// Peak RSS growth, in bytes, while Work runs. Memory an earlier
/// benchmark freed is given back to the system first, so that reusing it
/// counts as growth too.
template <typename Fn> double peakGrowth(Fn Work) {
  malloc_trim(0);
  bool Reset = resetPeak();
  long Base = statusKb("VmRSS");
  struct rusage U;
  getrusage(RUSAGE_SELF, &U);
  long Before = Reset ? Base : U.ru_maxrss;
  Work();
  long Peak =
      Reset ? statusKb("VmHWM") : (getrusage(RUSAGE_SELF, &U), U.ru_maxrss);
  return Peak < Before ? 0.0 : double(Peak - Before) * 1024.0;
}

/// Minor page faults of this process so far.
inline long minorFaults() {
  struct rusage U;
  getrusage(RUSAGE_SELF, &U);
  return U.ru_minflt;
}

/// The counters of a speed figure: actions (the size), actions/s (per
/// second of the benchmark's clock), time/action (constant along a
/// doubling series when the cost is linear), bytes/action (peak memory)
/// and, given the minor page faults of the timed loop, faults/kaction.
inline void reportActions(benchmark::State &St, double Actions,
                          double BytesPerAction, long Faults = -1) {
  St.counters["actions"] = Actions;
  St.counters["actions/s"] = benchmark::Counter(
      Actions, benchmark::Counter::kIsIterationInvariantRate);
  St.counters["time/action"] = benchmark::Counter(
      Actions, benchmark::Counter::kIsIterationInvariantRate |
                   benchmark::Counter::kInvert);
  St.counters["bytes/action"] = BytesPerAction;
  if (Faults >= 0 && St.iterations() > 0)
    St.counters["faults/kaction"] =
        double(Faults) * 1000.0 / (double(St.iterations()) * Actions);
}

/// The benchmark's main, with the heap set up as ppsc sets it up for a
/// batch run (pps/driver/Heap.h: memory is kept and reused, not unmapped
/// and faulted in again), so that the figures are those of the command
/// line. PPS_BENCH_HEAP=glibc keeps glibc's defaults: what a long-running
/// embedder (the Python module, the language server) gets.
inline int mainWithPpscHeap(int Argc, char **Argv) {
  const char *Heap = std::getenv("PPS_BENCH_HEAP");
  bool Glibc = Heap && std::strcmp(Heap, "glibc") == 0;
  if (!Glibc)
    driver::tuneHeapForBatchRun();
  benchmark::Initialize(&Argc, Argv);
  if (benchmark::ReportUnrecognizedArguments(Argc, Argv))
    return 1;
  benchmark::AddCustomContext("heap", Glibc ? "glibc defaults"
                                            : "as ppsc (pps/driver/Heap.h)");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

} // namespace pps::bench
