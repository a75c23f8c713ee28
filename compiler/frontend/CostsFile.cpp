//===- CostsFile.cpp - --costs=FILE: a schedule's costs from another file
//--===//
#include "pps/frontend/CostsFile.h"

#include <fmt/format.h>

namespace pps::frontend {

std::optional<CostsFile> readCostsFile(llvm::StringRef Path, SourceManager &SM,
                                       DiagnosticEngine &Diags,
                                       const FrontendOptions &Opts) {
  // The schedule's overrides (--stages, -D, --pipeline) are not the costs
  // file's: only where imports are found carries over.
  FrontendOptions FO;
  FO.ImportPaths = Opts.ImportPaths;
  FO.StdlibDir = Opts.StdlibDir;
  FO.ImportRoot = Opts.ImportRoot;
  FO.StepBudget = Opts.StepBudget;
  FO.MaxActions = Opts.MaxActions;
  uint64_t ErrorsBefore = Diags.numErrors();
  std::optional<ir::Schedule> S = compileFile(Path, SM, Diags, FO);
  if (!S || Diags.numErrors() != ErrorsBefore)
    return std::nullopt;
  CostsFile F;
  F.Path = Path.str();
  F.Cost = S->Cost;
  F.Stages = S->Topo.Stages;
  F.Name = S->Name;
  F.Loc = S->DeclLoc;
  return F;
}

bool checkCostsStages(const CostsFile &F, int32_t Stages,
                      llvm::StringRef ForWhat, LocId ForLoc,
                      DiagnosticEngine &Diags) {
  if (F.Stages == Stages)
    return true;
  Diagnostic &D = Diags.report(
      DiagKind::CostsMismatch, F.Loc,
      fmt::format("the costs file gives costs for {} stage{}, but {} has {} "
                  "(costs are per stage: profile a run with the same stages)",
                  F.Stages, F.Stages == 1 ? "" : "s", ForWhat.str(), Stages));
  if (ForLoc != NoLoc)
    D.note(ForLoc, fmt::format("{} declared here", ForWhat.str()));
  return false;
}

bool applyCostsFile(const CostsFile &F, ir::Schedule &S,
                    DiagnosticEngine &Diags) {
  if (!checkCostsStages(F, S.Topo.Stages, fmt::format("pipeline '{}'", S.Name),
                        S.DeclLoc, Diags))
    return false;
  // Everything the file says a thing costs; how comms behave (the comm
  // model, blocking or async) stays the schedule's.
  bool Async = S.Cost.AsyncComm;
  S.Cost = F.Cost;
  S.Cost.AsyncComm = Async;
  return true;
}

} // namespace pps::frontend
