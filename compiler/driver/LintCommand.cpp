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
  if (opts::Input.empty()) {
    llvm::errs() << "ppsc lint: error: no input file (use - for stdin)\n";
    return ExitUsage;
  }
  std::optional<ir::CommModel> Model;
  if (!CommModelOpt.empty()) {
    for (ir::CommModel M : {ir::CommModel::Rendezvous, ir::CommModel::Eager,
                            ir::CommModel::Batched})
      if (CommModelOpt == ir::commModelName(M))
        Model = M;
    if (!Model) {
      llvm::errs() << fmt::format("ppsc lint: error: --comm-model must be "
                                  "rendezvous, eager or batched, got '{}'\n",
                                  CommModelOpt.getValue());
      return ExitUsage;
    }
  }
  Session S;
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
  S.flushDiagnostics();
  if (Findings)
    return ExitDiagnostics;
  if (opts::DiagnosticsFormat == "text") {
    int64_t Peak = 0;
    for (int64_t P : Results.PeakMemory)
      Peak = std::max(Peak, P);
    llvm::errs() << fmt::format(
        "{}: ok: pipeline '{}' is free of deadlock under the {} model; {} "
        "actions on {} ranks, peak {} activations per rank\n",
        opts::Input.getValue(), Sched->Name, ir::commModelName(Sched->Comm),
        Sched->numActions(), Sched->Topo.Ranks, Peak);
  }
  return ExitOk;
}

static CommandRegistration Reg(LintCmd, runLint);

} // namespace pps::driver
