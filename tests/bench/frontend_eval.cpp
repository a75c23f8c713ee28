//===- frontend_eval.cpp - front end speed: evaluation and parsing --------===//
//
// BM_EvalMillionActions: a programmable schedule that emits ~1M actions
// (8 ranks x 2 x 1000 microbatches x 63 rounds) goes through the whole
// front end (parse, sema, evaluate). The target is well under a second.
// BM_ParseLowered: the lowered text of a ~100k-action schedule parsed back.
//
//===----------------------------------------------------------------------===//
#include "pps/backends/PpsPrinter.h"
#include "pps/frontend/Frontend.h"

#include <benchmark/benchmark.h>

#include "llvm/Support/raw_ostream.h"

using namespace pps;

static const char *BigSchedule = R"(
schedule big(n = 1) {
  for r in 0..P {
    rank r {
      for k in 0..n {
        for i in 0..M { F(i); }
        for i in 0..M { B(i); }
      }
    }
  }
}
pipeline b { ranks 8; microbatches 1000; schedule big(n: 63); }
)";

static void BM_EvalMillionActions(benchmark::State &St) {
  size_t Actions = 0;
  for (auto _ : St) {
    SourceManager SM;
    DiagnosticEngine Diags(SM);
    frontend::FrontendOptions Opts;
    auto S = frontend::compileBuffer("big.pps", BigSchedule, SM, Diags, Opts);
    if (!S) {
      St.SkipWithError("compile failed");
      return;
    }
    Actions = S->numActions();
    benchmark::DoNotOptimize(S);
  }
  St.counters["actions"] = double(Actions);
  St.counters["actions/s"] = benchmark::Counter(
      double(Actions), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_EvalMillionActions)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_ParseLowered(benchmark::State &St) {
  std::string Text;
  {
    SourceManager SM;
    DiagnosticEngine Diags(SM);
    frontend::FrontendOptions Opts;
    std::string Src = BigSchedule;
    Src.replace(Src.find("n: 63"), 5, "n: 6");
    auto S = frontend::compileBuffer("big.pps", Src, SM, Diags, Opts);
    if (!S) {
      St.SkipWithError("compile failed");
      return;
    }
    llvm::raw_string_ostream OS(Text);
    backends::printPps(*S, OS);
  }
  size_t Actions = 0;
  for (auto _ : St) {
    SourceManager SM;
    DiagnosticEngine Diags(SM);
    frontend::FrontendOptions Opts;
    auto S = frontend::compileBuffer("lowered.pps", Text, SM, Diags, Opts);
    if (!S) {
      St.SkipWithError("parse failed");
      return;
    }
    Actions = S->numActions();
  }
  St.counters["actions"] = double(Actions);
  St.counters["bytes"] = double(Text.size());
}
BENCHMARK(BM_ParseLowered)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
