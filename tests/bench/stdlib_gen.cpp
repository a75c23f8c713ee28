//===- stdlib_gen.cpp - time to instantiate each stdlib schedule ----------===//
//
// Google Benchmark: compiles `schedule NAME();` at P = 64, M = 4096 through
// the front end (parse, import the stdlib file, evaluate the programmable
// schedule into the IR) and reports actions per second. The target is well
// under a second per schedule. Run:
//   build/bench/bench_stdlib_gen --benchmark_min_time=0.5
//
//===----------------------------------------------------------------------===//
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

void BM_StdlibGen(benchmark::State &State, const Case &C, int64_t P,
                  int64_t M) {
  std::string Text = fmt::format(
      "pipeline bench {{ ranks {}; stages {} placement {}; microbatches {}; "
      "schedule {}(); }}\n",
      P, C.Stages, C.Placement, M, C.Name);
  pps::frontend::FrontendOptions FO;
  FO.ImportPaths.push_back(std::string(PPS_SOURCE_DIR) + "/stdlib");
  size_t Actions = 0;
  for (auto _ : State) {
    pps::SourceManager SM;
    pps::DiagnosticEngine Diags(SM);
    auto S = pps::frontend::compileBuffer("bench.pps", Text, SM, Diags, FO);
    if (!S || Diags.hasErrors()) {
      State.SkipWithError("compile failed");
      return;
    }
    Actions = S->numActions();
    benchmark::DoNotOptimize(S);
  }
  State.counters["actions"] = double(Actions);
  State.counters["actions_per_s"] =
      benchmark::Counter(double(Actions) * double(State.iterations()),
                         benchmark::Counter::kIsRate);
}

int registerAll() {
  for (const Case &C : Cases)
    benchmark::RegisterBenchmark(
        fmt::format("stdlib_gen/{}/P64_M4096", C.Name).c_str(),
        [&C](benchmark::State &St) { BM_StdlibGen(St, C, 64, 4096); })
        ->Unit(benchmark::kMillisecond)
        // The front end evaluates on its own thread (large stack): count the
        // whole process's CPU time and report rates against wall time.
        ->MeasureProcessCPUTime()
        ->UseRealTime()
        ->Iterations(1)
        ->Repetitions(3)
        ->ReportAggregatesOnly(false);
  return 0;
}

const int Registered = registerAll();

} // namespace

BENCHMARK_MAIN();
