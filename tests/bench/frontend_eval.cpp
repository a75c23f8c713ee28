//===- frontend_eval.cpp - front end speed: evaluation and parsing --------===//
//
// BM_EvalMillionActions: a programmable schedule that emits ~1M actions
// (8 ranks x 2 x 1000 microbatches x 63 rounds) goes through the whole
// front end (parse, sema, evaluate). The target is well under a second.
// BM_ParseLowered: the lowered text of a ~100k-action schedule parsed back.
// BM_ParseLoweredInterleaved/M: `ppsc check` of the lowered text (after
// insert-comms, as `ppsc emit --target=pps` writes it) of interleaved 1F1B
// on 64 ranks x 2 chunks x M microbatches; M = 1024 is 782,336 actions in
// 12.5 MB. A doubling series (M = 256 .. 4096) shows the cost is linear.
// Counters: actions/s (per process CPU second), bytes/action (peak RSS growth
// while parsing, from VmHWM reset through /proc/self/clear_refs).
//
//   build/bench/bench_frontend_eval --benchmark_counters_tabular=true
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include "pps/backends/PpsPrinter.h"
#include "pps/frontend/Frontend.h"
#include "pps/passes/PassManager.h"
#include "pps/pipeline/PassPipeline.h"

#include <benchmark/benchmark.h>

#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

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

namespace {

/// The lowered text of interleaved 1F1B at 64 x 2 x M (with send/recv).
std::string loweredInterleaved(int64_t M) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  frontend::FrontendOptions Opts;
  Opts.StdlibDir = PPS_SOURCE_DIR "/stdlib";
  std::string Src = fmt::format("pipeline p {{ ranks 64; stages 2 * P "
                                "placement loop; microbatches {}; schedule "
                                "interleaved_1f1b(); }}\n",
                                M);
  auto S = frontend::compileBuffer("il.pps", Src, SM, Diags, Opts);
  if (!S)
    return {};
  passes::PassManager PM;
  pipeline::addPasses(PM, *S, pipeline::PipelineConfig());
  passes::PassContext Ctx{Diags, {}};
  if (!PM.run(*S, Ctx) || Diags.hasErrors())
    return {};
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  backends::printPps(*S, OS);
  OS.flush();
  return Text;
}

size_t parse(const std::string &Text) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  frontend::FrontendOptions Opts;
  auto S = frontend::compileBuffer("lowered.pps", Text, SM, Diags, Opts);
  return S ? S->numActions() : 0;
}

} // namespace

static void BM_ParseLoweredInterleaved(benchmark::State &St) {
  std::string Text = loweredInterleaved(St.range(0));
  if (Text.empty()) {
    St.SkipWithError("lowering failed");
    return;
  }
  // Peak memory of one parse, before the timed ones.
  size_t Actions = 0;
  double Grown = bench::peakGrowth([&] { Actions = parse(Text); });
  if (!Actions) {
    St.SkipWithError("parse failed");
    return;
  }
  for (auto _ : St)
    benchmark::DoNotOptimize(parse(Text));
  bench::reportActions(St, double(Actions), Grown / double(Actions));
  St.counters["MB"] = double(Text.size()) / 1e6;
}
BENCHMARK(BM_ParseLoweredInterleaved)
    ->RangeMultiplier(2)
    ->Range(256, 4096)
    // The front end runs on its own thread (large stack): the whole
    // process's CPU time, and rates against it.
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
