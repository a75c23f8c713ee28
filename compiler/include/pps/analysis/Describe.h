//===- Describe.h - how analyses name and locate an action ----------------===//
//
// The analyses' diagnostics (and the passes', which share them) name an
// action by its text form in backquotes and point at its source location;
// an action the builder API made has no location, so it is pointed at the
// pipeline declaration and named with its rank and position instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"

#include <string>

namespace pps::analysis {

/// Where to point a diagnostic about an action: its own location, or the
/// pipeline declaration for actions built without text.
inline LocId locOf(const ir::Schedule &S, const ir::Action &A) {
  return A.Loc != NoLoc ? A.Loc : S.DeclLoc;
}

/// "`send F0@1 -> 0`", followed by " (rank 1 action #3)" when the action has
/// no source location of its own (builder API), so it can still be found.
std::string describe(const ir::Schedule &S, int32_t Rank, size_t Index);

} // namespace pps::analysis
