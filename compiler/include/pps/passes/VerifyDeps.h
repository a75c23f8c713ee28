//===- VerifyDeps.h - verify-deps: completeness and data dependencies -----===//
//
// Requires: nothing (runs on any schedule the front end or the builder
//   produced; out-of-range fields are reported, never indexed).
// Guarantees, when it reports no error:
//   * every (microbatch, stage) has F exactly once and either B once or I
//     and W once each, all on the rank that holds the stage;
//   * every compute comes after its same-rank producers (F(m,s) after
//     F(m,s-1); B/I(m,s) after B/I(m,s+1), the last stage after its own F;
//     W(m,s) after I(m,s)) and is not overlapped with one of them;
//   * if the schedule has comms: every cross-rank dependency is carried by a
//     recv before the consumer (before its overlap pair) and a send after
//     the producer; no comm is duplicated, stray, or sent from the first or
//     last stage where nothing is on the other side. (A comm whose partner
//     stage is on its own rank is left to the deadlock pass: wrong-peer.)
// Sets AnalysisResults::DepsVerified. (What a receive posted long before
// its consumer costs depends on the comm model: comm-streams says.)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/passes/PassManager.h"

namespace pps::passes {

/// The verify-deps pass.
std::unique_ptr<Pass> createVerifyDepsPass();

} // namespace pps::passes
