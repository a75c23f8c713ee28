//===- LintCommand.cpp - ppsc lint: prove a schedule free of deadlock -----===//
//
// Runs the whole pass pipeline (verify-deps, insert-comms, deadlock,
// align-bubbles analysis, memory) and prints the findings like the front
// end does (text or --diagnostics-format=json). Exit 0 when there is no
// finding, 1 with any error or warning, 2 on a usage error.
//
//===----------------------------------------------------------------------===//
#include "pps/driver/Pipeline.h"

#include <fmt/format.h>

#include <algorithm>

namespace pps::driver {

static llvm::cl::SubCommand
    LintCmd("lint",
            "Check a schedule: dependencies, comms, deadlock (with the cycle), "
            "memory");

static llvm::cl::opt<std::string> CommModelOpt(
    "comm-model",
    llvm::cl::desc("Check under this comm model instead of the schedule's"),
    llvm::cl::value_desc("rendezvous|eager|batched"), llvm::cl::sub(LintCmd),
    llvm::cl::cat(opts::Category));

static int runLint() {
  Session S;
  if (opts::Input.empty())
    return S.usage("no input file (use - for stdin)");
  std::optional<ir::CommModel> Model;
  if (!CommModelOpt.empty()) {
    for (ir::CommModel M : {ir::CommModel::Rendezvous, ir::CommModel::Eager,
                            ir::CommModel::Batched})
      if (CommModelOpt == ir::commModelName(M))
        Model = M;
    if (!Model)
      return S.usage(fmt::format("--comm-model must be rendezvous, eager or "
                                 "batched, got '{}'",
                                 CommModelOpt.getValue()));
  }
  std::optional<ir::Schedule> Sched = S.load();
  if (!Sched) {
    S.flushDiagnostics();
    return ExitDiagnostics;
  }
  if (Model)
    Sched->Comm = *Model;
  passes::AnalysisResults Results;
  bool Ok = runPipeline(S, *Sched, PipelineGoal::Check, Results);
  bool Findings = !Ok || S.Diags.numErrors() > 0 || S.Diags.numWarnings() > 0;
  // Say what was not checked rather than claim it below.
  noteSkippedChecks(S.Diags);
  S.flushDiagnostics();
  if (Findings)
    return ExitDiagnostics;
  if (opts::DiagnosticsFormat == "text") {
    // Claim only what the passes established.
    std::string Claim =
        Results.DeadlockFree
            ? fmt::format(" is free of deadlock under the {} model",
                          ir::commModelName(Sched->Comm).str())
            : std::string();
    std::string Peak;
    if (!Results.PeakMemory.empty())
      Peak = fmt::format(", peak {} activations per rank",
                         *std::max_element(Results.PeakMemory.begin(),
                                           Results.PeakMemory.end()));
    llvm::errs() << fmt::format("{}: ok: pipeline '{}'{}; {} actions on {} "
                                "ranks{}\n",
                                opts::Input.getValue(), Sched->Name, Claim,
                                Sched->numActions(), Sched->Topo.Ranks, Peak);
  }
  return ExitOk;
}

static CommandRegistration Reg(LintCmd, runLint);

} // namespace pps::driver
