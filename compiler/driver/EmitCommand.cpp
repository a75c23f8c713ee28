//===- EmitCommand.cpp - ppsc emit: print a compiled schedule -------------===//
#include "pps/backends/CppEmitter.h"
#include "pps/backends/JsonEmitter.h"
#include "pps/backends/PpsPrinter.h"
#include "pps/backends/TorchCsv.h"
#include "pps/backends/Trace.h"
#include "pps/driver/Pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pps::driver {

static llvm::cl::SubCommand
    EmitCmd("emit", "Compile a schedule and print it in a target form");

static llvm::cl::opt<std::string>
    Target("target",
           llvm::cl::desc("Output form: pps (lowered text), json, torch "
                          "(PyTorch CSV), cpp (executor), trace (simulated "
                          "Chrome trace)"),
           llvm::cl::value_desc("target"), llvm::cl::init("pps"),
           llvm::cl::sub(EmitCmd), llvm::cl::cat(opts::Category));

static llvm::cl::opt<bool> WithComms(
    "with-comms",
    llvm::cl::desc("torch: write PyTorch's compute+comms CSV flavour"),
    llvm::cl::sub(EmitCmd), llvm::cl::cat(opts::Category));

namespace {
using EmitFn = bool (*)(Session &, const ir::Schedule &, llvm::raw_ostream &);
struct TargetInfo {
  const char *Name;
  PipelineGoal Goal;
  EmitFn Fn;
};

bool emitPpsTarget(Session &, const ir::Schedule &S, llvm::raw_ostream &OS) {
  backends::printPps(S, OS);
  return true;
}
bool emitJsonTarget(Session &, const ir::Schedule &S, llvm::raw_ostream &OS) {
  backends::emitJson(S, OS);
  return true;
}
bool emitTorchTarget(Session &Sn, const ir::Schedule &S,
                     llvm::raw_ostream &OS) {
  // PyTorch's schedules send every microbatch through stages 0..S-1.
  if (S.Topo.Directions != 1) {
    Sn.Diags.report(
        DiagKind::InvalidValue, S.DeclLoc,
        fmt::format("the torch target cannot express `directions {}`: "
                    "PyTorch sends every microbatch through every stage",
                    S.Topo.Directions));
    return false;
  }
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
  backends::emitTorchCsv(S, OS, {WithComms});
  return true;
}
bool emitCppTarget(Session &, const ir::Schedule &S, llvm::raw_ostream &OS) {
  backends::emitCpp(S, {opts::Input, true}, OS);
  return true;
}
bool emitTraceTarget(Session &Sn, const ir::Schedule &S,
                     llvm::raw_ostream &OS) {
  sim::SimResult R = sim::simulate(S, {}, &Sn.Diags);
  backends::writeChromeTrace(S, R, OS);
  return !R.Deadlocked;
}

// One line per target.
const TargetInfo Targets[] = {
    {"pps", PipelineGoal::Lower, emitPpsTarget},
    {"json", PipelineGoal::Lower, emitJsonTarget},
    {"torch", PipelineGoal::Lower, emitTorchTarget},
    {"cpp", PipelineGoal::Check, emitCppTarget},
    {"trace", PipelineGoal::Check, emitTraceTarget},
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
  if (opts::Input.empty())
    return S.usage("no input file (use - for stdin)");
  std::optional<ir::Schedule> Sched = S.load();
  passes::AnalysisResults Results;
  bool Ok = Sched && runPipeline(S, *Sched, T->Goal, Results);
  std::unique_ptr<OutputFile> OS;
  if (Ok)
    OS = S.openOutput();
  if (OS)
    Ok = T->Fn(S, *Sched, *OS);
  // A failed emitter's output never replaces a file.
  if (OS && (Ok || !OS->isAtomic()))
    Ok &= S.commitOutput(*OS);
  S.flushDiagnostics();
  return Ok && OS ? ExitOk : ExitDiagnostics;
}

static CommandRegistration Reg(EmitCmd, runEmit);

} // namespace pps::driver
