//===- Fsdp.h - fsdp: unshard/reshard/reduce_grad insertion
//----------------===//
//
// Requires: verify-deps clean. Runs only when Schedule::Fsdp.Enabled (set by
//   `fsdp prefetch K;` or the driver's --fsdp[=K]); leaves a schedule that
//   already holds unshard/reshard/reduce_grad actions unchanged.
// Guarantees, per rank: before each compute, the stages of the next K + 1
//   distinct stages it computes (its own first; only computes count toward
//   the window) are unsharded, and stages that left the window are resharded
//   first; an `unshard s` precedes every compute of stage s with no
//   `reshard s` in between; `reduce_grad s` directly follows the last
//   backward (B or W) of stage s; every stage is resharded at the end.
// Comms keep their relative order, so deadlock freedom is unaffected.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/passes/PassManager.h"

namespace pps::passes {

/// The fsdp pass.
std::unique_ptr<Pass> createFsdpPass();

} // namespace pps::passes
