//===- Suggest.h - "did you mean" for a misspelt name ---------------------===//
//
// One rule for every suggestion ppsc makes (names in a schedule, stdlib
// schedules, -D overrides, subcommands): the candidate nearest by edit
// distance, if it is near enough to be a slip, comparing both the names as
// written and a normalised form (lower case, without '_', '-' and spaces,
// "one" and "two" as digits), so `onef1b` finds `one_f_one_b` and `zbv`
// finds `zb_v`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace pps {

/// The candidate nearest to Name, or "" when none is near. Ties go to the
/// first candidate.
std::string nearestName(llvm::StringRef Name,
                        llvm::ArrayRef<std::string> Candidates);
std::string nearestName(llvm::StringRef Name,
                        llvm::ArrayRef<llvm::StringRef> Candidates);

} // namespace pps
