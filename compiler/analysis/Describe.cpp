//===- Describe.cpp - how analyses name and locate an action --------------===//
#include "pps/analysis/Describe.h"

#include <fmt/format.h>

namespace pps::analysis {

std::string describe(const ir::Schedule &S, int32_t Rank, size_t Index) {
  const ir::Action &A = S.Ranks[size_t(Rank)].Actions[Index];
  if (A.Loc != NoLoc)
    return fmt::format("`{}`", ir::actionText(A));
  return fmt::format("`{}` (rank {} action #{})", ir::actionText(A), Rank,
                     Index);
}

} // namespace pps::analysis
