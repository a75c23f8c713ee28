//===- AlignBubbles.h - align-bubbles: explicit idle slots ----------------===//
//
// Requires: verify-deps clean (dependencies that cannot be timed are
//   skipped, never crash).
// Computes, from the compute order alone, each compute's start and end time
// (cost model; a cross-rank input arrives at producer end + message time).
// Always: warns (idle-ready-work) when a rank waits before a compute while
//   the next backward compute in its program (B, I or W), which does not
//   depend on it, is ready and fits in the wait.
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
