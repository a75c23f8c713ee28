//===- TorchCsv.cpp - write PyTorch pipelining's schedule CSV -------------===//
//
// Walks each rank's program once. See TorchCsv.h for the contract; the
// action spellings are shared with the importer (pps/import/TorchNames.h).
//
//===----------------------------------------------------------------------===//
#include "pps/backends/TorchCsv.h"

#include "pps/analysis/Describe.h"
#include "pps/import/TorchNames.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>

namespace pps::backends {

using namespace ir;
using import::torchActionName;

bool checkTorchExport(const Schedule &S, DiagnosticEngine &Diags) {
  // PyTorch's schedules send every microbatch through stages 0..S-1.
  if (S.Topo.Directions != 1) {
    Diags.report(
        DiagKind::TorchExport, S.DeclLoc,
        fmt::format("the torch target cannot express `directions {}`: "
                    "PyTorch sends every microbatch through every stage",
                    S.Topo.Directions));
    return false;
  }
  bool Ok = true;
  for (size_t R = 0; R < S.Ranks.size(); ++R) {
    const std::vector<Action> &Acts = S.Ranks[R].Actions;
    for (size_t I = 0; I + 1 < Acts.size(); ++I) {
      if (!Acts[I].overlapsNext() || !isCompute(Acts[I].Kind))
        continue;
      ActionKind K1 = Acts[I].Kind, K2 = Acts[I + 1].Kind;
      bool ForwardAndBackward = (K1 == ActionKind::F && K2 == ActionKind::B) ||
                                (K1 == ActionKind::B && K2 == ActionKind::F);
      if (!ForwardAndBackward) {
        Ok = false;
        Diags
            .report(DiagKind::TorchExport, analysis::locOf(S, Acts[I]),
                    fmt::format("the torch target cannot express "
                                "overlap({}, {}) on rank {}: PyTorch's "
                                "OVERLAP_F_B pairs a forward with a full "
                                "backward (B)",
                                actionText(Acts[I]), actionText(Acts[I + 1]),
                                R))
            .note(analysis::locOf(S, Acts[I]),
                  "an overlap runner (torchtitan's DualPipeV "
                  "overlap_callback) runs the pair's first action as a "
                  "forward and its second as a full backward; write the two "
                  "actions without overlap(...) to export them");
      }
      ++I;
    }
  }
  return Ok;
}

void emitTorchCsv(const Schedule &S, llvm::raw_ostream &OS,
                  const TorchExportOptions &Opts) {
  assert(S.Topo.Directions == 1 && "PyTorch's CSV has one direction");
  if (!Opts.Status.Verified)
    OS << "# pps: " << Opts.Status.sentence()
       << "; PyTorch's loaders reject this line: delete it to load the file "
          "anyway\n";
  for (const RankProgram &Program : S.Ranks) {
    std::vector<Action> WithReduce;
    llvm::ArrayRef<Action> Actions = Program.Actions;
    if (Opts.WithComms) {
      WithReduce = exportActions(Actions);
      Actions = WithReduce;
    }
    bool First = true;
    auto Cell = [&]() -> llvm::raw_ostream & {
      if (!First)
        OS << ',';
      First = false;
      return OS;
    };
    for (size_t I = 0; I < Actions.size(); ++I) {
      const Action &A = Actions[I];
      if (A.Kind == ActionKind::Idle) {
        if (Opts.WithComms)
          continue; // the compute+comms loader rejects empty cells
        long Slots = std::max(1L, std::lround(A.idleTime()));
        for (long K = 0; K < Slots; ++K)
          Cell();
        continue;
      }
      if (!isCompute(A.Kind)) {
        if (Opts.WithComms)
          Cell() << torchActionName(A);
        continue;
      }
      if (A.overlapsNext() && I + 1 < Actions.size()) {
        // The forward first (checkTorchExport allows only F with B).
        const Action &B = Actions[I + 1];
        bool Swap = A.Kind != ActionKind::F && B.Kind == ActionKind::F;
        const Action &X = Swap ? B : A, &Y = Swap ? A : B;
        Cell() << '(' << torchActionName(X) << ';' << torchActionName(Y)
               << ")OVERLAP_F_B";
        ++I;
        continue;
      }
      Cell() << torchActionName(A);
    }
    OS << '\n';
  }
}

} // namespace pps::backends
