//===- TorchCsv.cpp - write PyTorch pipelining's schedule CSV -------------===//
//
// Walks each rank's program once. See TorchCsv.h for the contract; the
// action spellings are shared with the importer (pps/import/TorchNames.h).
//
//===----------------------------------------------------------------------===//
#include "pps/backends/TorchCsv.h"

#include "pps/import/TorchNames.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace pps::backends {

using namespace ir;
using import::torchActionName;

namespace {

/// Where to add REDUCE_GRAD for stages that have none, so PyTorch's
/// compute+comms runtime reduces and scales gradients: after the stage's
/// last B or W (and after the sends right behind it), as PyTorch's
/// _add_reduce_grad + _add_send_recv place it.
std::vector<Action> withReduceGrad(llvm::ArrayRef<Action> Actions) {
  struct Last {
    int32_t Stage;
    size_t After; // insert before this index
  };
  llvm::SmallVector<int32_t, 4> HasReduce;
  llvm::SmallVector<Last, 4> Lasts;
  for (size_t I = 0; I < Actions.size(); ++I) {
    const Action &A = Actions[I];
    if (A.Kind == ActionKind::ReduceGrad) {
      HasReduce.push_back(A.Stage);
      continue;
    }
    if (A.Kind != ActionKind::B && A.Kind != ActionKind::W)
      continue;
    size_t After = I + 1;
    if (A.overlapsNext() && After < Actions.size())
      ++After; // after the whole overlap pair
    // After the sends that follow it (its gradient, and the pair's).
    while (After < Actions.size() && isSend(Actions[After].Kind))
      ++After;
    auto It =
        llvm::find_if(Lasts, [&](const Last &L) { return L.Stage == A.Stage; });
    if (It == Lasts.end())
      Lasts.push_back({A.Stage, After});
    else
      It->After = After;
  }
  llvm::erase_if(Lasts, [&](const Last &L) {
    return llvm::is_contained(HasReduce, L.Stage);
  });
  if (Lasts.empty())
    return std::vector<Action>(Actions.begin(), Actions.end());
  llvm::sort(Lasts, [](const Last &X, const Last &Y) {
    return std::tie(X.After, X.Stage) < std::tie(Y.After, Y.Stage);
  });
  std::vector<Action> Out;
  Out.reserve(Actions.size() + Lasts.size());
  size_t Next = 0;
  for (size_t I = 0; I <= Actions.size(); ++I) {
    while (Next < Lasts.size() && Lasts[Next].After == I)
      Out.push_back(
          Action::control(ActionKind::ReduceGrad, Lasts[Next++].Stage));
    if (I < Actions.size())
      Out.push_back(Actions[I]);
  }
  return Out;
}

} // namespace

void emitTorchCsv(const Schedule &S, llvm::raw_ostream &OS,
                  const TorchExportOptions &Opts) {
  assert(S.Topo.Directions == 1 && "PyTorch's CSV has one direction");
  for (const RankProgram &Program : S.Ranks) {
    std::vector<Action> WithReduce;
    llvm::ArrayRef<Action> Actions = Program.Actions;
    if (Opts.WithComms) {
      WithReduce = withReduceGrad(Actions);
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
        Cell() << '(' << torchActionName(A) << ';'
               << torchActionName(Actions[I + 1]) << ")OVERLAP_F_B";
        ++I;
        continue;
      }
      Cell() << torchActionName(A);
    }
    OS << '\n';
  }
}

} // namespace pps::backends
