//===- AlignBubbles.h - align-bubbles: explicit idle slots ----------------===//
//
// Requires: verify-deps clean (dependencies that cannot be timed are
//   skipped, never crash).
// Computes, from the compute order alone, each compute's start and end time
// (cost model; a cross-rank input arrives at producer end + message time).
// Always: warns (idle-ready-work) when the explicit idle slots written
//   before a compute add up to more than the wait its dependencies impose:
//   a runtime that honours the slot keeps the rank idle while its next work
//   is ready (stale slots after an edit, or hand-written ones).
// With Insert: removes every existing idle action and writes `idle(t)` so
//   each rank's timeline lines up: before a unit that waits (ahead of the
//   receives that feed it) and at the end up to the makespan. Idempotent.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/passes/PassManager.h"

namespace pps::passes {

struct AlignBubblesOptions {
  /// Rewrite idle slots (the opt-in transformation); otherwise only analyse.
  bool Insert = true;
};

/// The align-bubbles pass.
std::unique_ptr<Pass> createAlignBubblesPass(AlignBubblesOptions Opts = {});

} // namespace pps::passes
