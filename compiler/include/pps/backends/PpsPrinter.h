//===- PpsPrinter.h - the lowered .pps text form (the textual IR) ---------===//
//
// Prints a Schedule as a `pipeline` declaration with explicit per-rank
// action lists. Parsing the output gives an equivalent Schedule (round trip).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"

#include "llvm/Support/raw_ostream.h"

namespace pps::backends {

/// Prints S in the lowered .pps form.
void printPps(const ir::Schedule &S, llvm::raw_ostream &OS);

/// Prints one action as it appears in the text form, e.g. "F3@5",
/// "send F3@5 -> 2", "idle(2.5)". An overlap pair is printed by printPps.
void printAction(const ir::Action &A, llvm::raw_ostream &OS);

} // namespace pps::backends
