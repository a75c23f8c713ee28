//===- Export.cpp - what every executable export says and carries ---------===//
#include "pps/backends/Export.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <fmt/format.h>

#include <tuple>

namespace pps::backends {

using namespace ir;

std::string ExportStatus::sentence() const {
  if (Verified)
    return fmt::format("verified: dependencies, comm matching, freedom from "
                       "deadlock under the {} and memory checked as "
                       "`ppsc lint` does",
                       commDescription(Model, Stream));
  return fmt::format("UNVERIFIED: not checked for deadlock ({})", Why);
}

std::vector<Action> exportActions(llvm::ArrayRef<Action> Actions) {
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

} // namespace pps::backends
