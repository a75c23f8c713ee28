//===- stdlib_gen.cpp - time to instantiate each stdlib schedule ----------===//
//
// Google Benchmark: compiles `schedule NAME();` at P = 64 through the front
// end (parse, import the stdlib file, evaluate the programmable schedule
// into the IR), for every stdlib schedule at M = 4096 (the figure: each
// under 100 ms) and as a doubling series M = 1024 .. 8192. Counters:
// actions, actions/s and time/action (per process CPU second: the front
// end evaluates on its own thread with a large stack), bytes/action (peak
// RSS growth of one compile over its actions). The heap is set up as ppsc
// sets it up (bench::mainWithPpscHeap; PPS_BENCH_HEAP=glibc keeps glibc's
// defaults, what the Python module and the language server get). Run:
//   build/bench/bench_stdlib_gen --benchmark_counters_tabular=true
//   build/bench/bench_stdlib_gen --benchmark_filter=M4096
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include "pps/frontend/Frontend.h"
#include "pps/support/Diagnostics.h"
#include "pps/support/SourceManager.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <string>

namespace {

struct Case {
  const char *Name;
  const char *Stages;    // stages expression
  const char *Placement; // loop | v
};

const Case Cases[] = {
    {"gpipe", "P", "loop"},
    {"one_f_one_b", "P", "loop"},
    {"interleaved_1f1b", "2 * P", "loop"},
    {"interleaved_1f1b_overlap", "2 * P", "loop"},
    {"looped_bfs", "2 * P", "loop"},
    {"zb_h1", "P", "loop"},
    {"zb_h2", "P", "loop"},
    {"zb_v", "2 * P", "v"},
    {"v_half", "2 * P", "v"},
    {"v_min", "2 * P", "v"},
    {"dualpipe_v", "2 * P", "v"},
    // The placement text carries the extra item dualpipe needs.
    {"dualpipe", "2 * P", "v; directions 2"},
};

/// Compiles Text; the number of actions, or 0 on an error.
size_t compile(const std::string &Text) {
  pps::frontend::FrontendOptions FO;
  FO.ImportPaths.push_back(std::string(PPS_SOURCE_DIR) + "/stdlib");
  pps::SourceManager SM;
  pps::DiagnosticEngine Diags(SM);
  auto S = pps::frontend::compileBuffer("bench.pps", Text, SM, Diags, FO);
  if (!S || Diags.hasErrors())
    return 0;
  return S->numActions();
}

void BM_StdlibGen(benchmark::State &State, const Case &C, int64_t P,
                  int64_t M) {
  std::string Text = fmt::format(
      "pipeline bench {{ ranks {}; stages {} placement {}; microbatches {}; "
      "schedule {}(); }}\n",
      P, C.Stages, C.Placement, M, C.Name);
  size_t Actions = 0;
  double Grown = pps::bench::peakGrowth([&] { Actions = compile(Text); });
  if (!Actions) {
    State.SkipWithError("compile failed");
    return;
  }
  for (auto _ : State)
    benchmark::DoNotOptimize(compile(Text));
  pps::bench::reportActions(State, double(Actions), Grown / double(Actions));
}

int registerAll() {
  for (int64_t M : {4096, 1024, 2048, 8192})
    for (const Case &C : Cases)
      benchmark::RegisterBenchmark(
          fmt::format("stdlib_gen/{}/P64_M{}", C.Name, M).c_str(),
          [&C, M](benchmark::State &St) { BM_StdlibGen(St, C, 64, M); })
          ->Unit(benchmark::kMillisecond)
          // The front end evaluates on its own thread (large stack): the
          // whole process's CPU time, and rates against it.
          ->MeasureProcessCPUTime()
          ->Iterations(1)
          ->Repetitions(3)
          ->ReportAggregatesOnly(false);
  return 0;
}

const int Registered = registerAll();

} // namespace

int main(int Argc, char **Argv) {
  return pps::bench::mainWithPpscHeap(Argc, Argv);
}
