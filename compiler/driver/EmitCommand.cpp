//===- EmitCommand.cpp - ppsc emit: print a compiled schedule -------------===//
//
// The outputs a runtime executes (json, torch, cpp) are written only after
// the same proof as `ppsc lint` (the Check pipeline: dependencies, comm
// matching, deadlock under the comm model, memory) passed; a schedule that
// fails it is refused with lint's diagnostics. --no-verify (or disabling one
// of the proof's passes) writes it anyway, and the output says it is
// unverified. This is decided here, once for every target; the backends
// only write the ExportStatus down. `pps` is a printer (the lowered text,
// unchecked) and `trace` a simulation.
//
//===----------------------------------------------------------------------===//
#include "pps/backends/CppEmitter.h"
#include "pps/backends/Export.h"
#include "pps/backends/JsonEmitter.h"
#include "pps/backends/PpsPrinter.h"
#include "pps/backends/TorchCsv.h"
#include "pps/backends/Trace.h"
#include "pps/driver/Pipeline.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pps::driver {

static llvm::cl::SubCommand
    EmitCmd("emit", "Compile a schedule and print it in a target form");

static llvm::cl::opt<std::string> Target(
    "target",
    llvm::cl::desc(
        "Output form: json, torch (PyTorch CSV), cpp (executor): proved as "
        "lint does first; pps (lowered text, printed unchecked: lint checks "
        "it); trace (simulated Chrome trace)"),
    llvm::cl::value_desc("target"), llvm::cl::init("pps"),
    llvm::cl::sub(EmitCmd), llvm::cl::cat(opts::Category));

static llvm::cl::opt<bool> WithComms(
    "with-comms",
    llvm::cl::desc("torch: write PyTorch's compute+comms CSV flavour"),
    llvm::cl::sub(EmitCmd), llvm::cl::cat(opts::Category));

static llvm::cl::opt<bool> ReorderComms(
    "reorder-comms",
    llvm::cl::desc("Replace the schedule's own send/recv order by the one "
                   "--comm-placement=optimize finds, if faster under the comm "
                   "model (a note says by how much)"),
    llvm::cl::sub(EmitCmd), llvm::cl::cat(opts::Category));

static llvm::cl::opt<bool> NoVerify(
    "no-verify",
    llvm::cl::desc("json, torch, cpp: write the output without the proof "
                   "(deadlock, matching, memory) lint runs; it says it is "
                   "unverified"),
    llvm::cl::sub(EmitCmd), llvm::cl::cat(opts::Category));

namespace {
using EmitFn = bool (*)(Session &, const ir::Schedule &,
                        const backends::ExportStatus &, llvm::raw_ostream &);
struct TargetInfo {
  const char *Name;
  /// A runtime executes it: proved first unless --no-verify.
  bool Executable;
  /// How far to run the pipeline otherwise (or with --no-verify).
  PipelineGoal Goal;
  EmitFn Fn;
};

bool emitPpsTarget(Session &, const ir::Schedule &S,
                   const backends::ExportStatus &, llvm::raw_ostream &OS) {
  backends::printPps(S, OS);
  return true;
}
bool emitJsonTarget(Session &, const ir::Schedule &S,
                    const backends::ExportStatus &St, llvm::raw_ostream &OS) {
  backends::emitJson(S, OS, St);
  return true;
}
bool emitTorchTarget(Session &Sn, const ir::Schedule &S,
                     const backends::ExportStatus &St, llvm::raw_ostream &OS) {
  if (!backends::checkTorchExport(S, Sn.Diags))
    return false;
  // PyTorch's format spells idle(t) as t empty cells: bound what a short
  // input can make us write.
  if (!WithComms) {
    double Cells = 0;
    for (const ir::RankProgram &R : S.Ranks)
      for (const ir::Action &A : R.Actions)
        if (A.Kind == ir::ActionKind::Idle)
          Cells += std::max(1.0, std::round(double(A.idleTime())));
    if (Cells > double(opts::MaxActions)) {
      Sn.Diags.report(DiagKind::LimitExceeded, S.DeclLoc,
                      fmt::format("the torch target writes idle(t) as t empty "
                                  "cells: {:g} cells, more than the limit of "
                                  "{} (--max-actions)",
                                  Cells, opts::MaxActions.getValue()));
      return false;
    }
  }
  backends::emitTorchCsv(S, OS, {WithComms, St});
  return true;
}
bool emitCppTarget(Session &, const ir::Schedule &S,
                   const backends::ExportStatus &St, llvm::raw_ostream &OS) {
  backends::CppEmitOptions O;
  O.SourceName = opts::Input;
  O.Status = St;
  backends::emitCpp(S, O, OS);
  return true;
}
bool emitTraceTarget(Session &Sn, const ir::Schedule &S,
                     const backends::ExportStatus &, llvm::raw_ostream &OS) {
  sim::SimResult R = sim::simulate(S, {}, &Sn.Diags);
  backends::writeChromeTrace(S, R, OS);
  return !R.Deadlocked;
}

// One line per target.
const TargetInfo Targets[] = {
    {"pps", false, PipelineGoal::Lower, emitPpsTarget},
    {"json", true, PipelineGoal::Lower, emitJsonTarget},
    {"torch", true, PipelineGoal::Lower, emitTorchTarget},
    {"cpp", true, PipelineGoal::Lower, emitCppTarget},
    {"trace", false, PipelineGoal::Check, emitTraceTarget},
};
} // namespace

static int runEmit() {
  Session S;
  const TargetInfo *T = nullptr;
  for (const TargetInfo &Info : Targets)
    if (Target == Info.Name)
      T = &Info;
  if (!T) {
    std::string Names;
    for (const TargetInfo &Info : Targets)
      Names += (Names.empty() ? "" : ", ") + std::string(Info.Name);
    return S.usage(fmt::format("unknown target '{}' (expected one of: {})",
                               Target.getValue(), Names));
  }
  CommOverrides Comm;
  if (!S.commOptions(Comm))
    return S.finish(ExitUsage);
  if (opts::Input.empty())
    return S.usage("no input file (use - for stdin)");
  std::optional<ir::Schedule> Sched = S.load();
  if (Sched && !S.applyCommOptions(Comm, *Sched))
    return S.finish(ExitUsage);
  // A compute-only CSV carries no comms (PyTorch's lowering inserts its
  // own): what is proved is its computes, with the comm order pps inserts.
  if (Sched && T->Fn == emitTorchTarget && !WithComms)
    for (ir::RankProgram &R : Sched->Ranks)
      llvm::erase_if(R.Actions,
                     [](const ir::Action &A) { return ir::isComm(A.Kind); });
  // The one decision for every executable target: prove, or say why not.
  bool Prove = T->Executable && !NoVerify;
  passes::AnalysisResults Results;
  bool Ok =
      Sched && runPipeline(S, *Sched, Prove ? PipelineGoal::Check : T->Goal,
                           Results, ReorderComms);
  if (Sched)
    noteReordered(S, *Sched, Results);
  backends::ExportStatus Status;
  if (Sched) {
    std::string Skipped = skippedProof(Results);
    if (!Prove)
      Status = backends::ExportStatus::unverified(
          *Sched, "exported with --no-verify; `ppsc lint` checks it");
    else if (!Skipped.empty())
      Status = backends::ExportStatus::unverified(*Sched, Skipped);
    else
      Status = backends::ExportStatus::verified(*Sched);
    if (T->Executable)
      noteSkippedChecks(S.Diags);
  }
  std::unique_ptr<OutputFile> OS;
  if (Ok)
    OS = S.openOutput();
  if (OS)
    Ok = T->Fn(S, *Sched, Status, *OS);
  // A failed emitter's output never replaces a file.
  if (OS && (Ok || !OS->isAtomic()))
    Ok &= S.commitOutput(*OS);
  S.flushDiagnostics();
  return Ok && OS ? ExitOk : ExitDiagnostics;
}

static CommandRegistration Reg(EmitCmd, runEmit);

} // namespace pps::driver
