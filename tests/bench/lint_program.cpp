//===- lint_program.cpp - benchmark: ppsc lint of a programmable schedule -===//
//
// What `ppsc lint il.pps` does inside the process, for
//   pipeline p { ranks 64; stages 2 * P placement loop; microbatches M;
//                schedule interleaved_1f1b(); }
// the front end (parse, import the stdlib, evaluate) and the lint pass
// pipeline (pipeline::addPasses, Goal::Check: verify-deps, insert-comms,
// deadlock, align-bubbles, memory). M = 1024 is the whole-process figure
// (782,336 actions; tests/bench/whole_process.sh times the process
// itself, start-up included); M = 256 .. 4096 is a doubling series.
//
//   BM_LintProgram/M     front end + passes
//   BM_LintFrontEnd/M    the front end alone
//   BM_LintPasses/M      the passes alone, on a fresh copy each time
//
// Counters: actions (after the passes), actions/s and time/action (per
// process CPU second: the front end runs on its own thread), bytes/action
// (peak RSS growth of one run over its actions).
//
//   build/bench/bench_lint_program --benchmark_counters_tabular=true
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include "pps/frontend/Frontend.h"
#include "pps/passes/PassManager.h"
#include "pps/pipeline/PassPipeline.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <string>

using namespace pps;

namespace {

std::string program(int64_t M) {
  return fmt::format("pipeline p {{ ranks 64; stages 2 * P placement loop; "
                     "microbatches {}; schedule interleaved_1f1b(); }}\n",
                     M);
}

std::optional<ir::Schedule> frontEnd(const std::string &Text) {
  frontend::FrontendOptions FO;
  FO.ImportPaths.push_back(std::string(PPS_SOURCE_DIR) + "/stdlib");
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  auto S = frontend::compileBuffer("il.pps", Text, SM, Diags, FO);
  if (Diags.hasErrors())
    return std::nullopt;
  return S;
}

/// The lint passes; the actions after them (0 if they found anything).
size_t passes(ir::Schedule &S) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  passes::PassManager PM;
  pipeline::PipelineConfig Config;
  Config.Until = pipeline::Goal::Check;
  pipeline::addPasses(PM, S, Config);
  passes::PassContext Ctx{Diags, {}};
  if (!PM.run(S, Ctx) || Diags.hasErrors() || !pipeline::proved(Ctx.Results))
    return 0;
  return S.numActions();
}

size_t lintProgram(const std::string &Text) {
  std::optional<ir::Schedule> S = frontEnd(Text);
  return S ? passes(*S) : 0;
}

void BM_LintProgram(benchmark::State &St) {
  std::string Text = program(St.range(0));
  size_t Actions = 0;
  double Grown = bench::peakGrowth([&] { Actions = lintProgram(Text); });
  if (!Actions) {
    St.SkipWithError("the schedule did not lint clean");
    return;
  }
  for (auto _ : St)
    benchmark::DoNotOptimize(lintProgram(Text));
  bench::reportActions(St, double(Actions), Grown / double(Actions));
}
BENCHMARK(BM_LintProgram)
    ->RangeMultiplier(2)
    ->Range(256, 4096)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

void BM_LintFrontEnd(benchmark::State &St) {
  std::string Text = program(St.range(0));
  size_t Actions = 0;
  double Grown = bench::peakGrowth([&] {
    std::optional<ir::Schedule> S = frontEnd(Text);
    Actions = S ? S->numActions() : 0;
  });
  if (!Actions) {
    St.SkipWithError("compile failed");
    return;
  }
  for (auto _ : St)
    benchmark::DoNotOptimize(frontEnd(Text));
  bench::reportActions(St, double(Actions), Grown / double(Actions));
}
BENCHMARK(BM_LintFrontEnd)
    ->RangeMultiplier(2)
    ->Range(256, 4096)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

void BM_LintPasses(benchmark::State &St) {
  std::optional<ir::Schedule> Base = frontEnd(program(St.range(0)));
  if (!Base) {
    St.SkipWithError("compile failed");
    return;
  }
  size_t Actions = 0;
  double Grown = bench::peakGrowth([&] {
    ir::Schedule S = *Base;
    Actions = passes(S);
  });
  if (!Actions) {
    St.SkipWithError("the schedule did not lint clean");
    return;
  }
  for (auto _ : St) {
    St.PauseTiming();
    ir::Schedule S = *Base;
    St.ResumeTiming();
    benchmark::DoNotOptimize(passes(S));
  }
  bench::reportActions(St, double(Actions), Grown / double(Actions));
}
BENCHMARK(BM_LintPasses)
    ->RangeMultiplier(2)
    ->Range(256, 4096)
    ->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
