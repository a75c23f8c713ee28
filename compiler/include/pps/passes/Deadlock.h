//===- Deadlock.h - deadlock: matching and happens-before cycle check -----===//
//
// Requires: nothing; trusts no earlier pass.
// Matches sends and receives in FIFO order per (source, destination) rank
// channel (pps/analysis/Matching.h) and reports self-comm, wrong-peer,
// fifo-mismatch (the n-th send and the n-th receive carry different
// kind/microbatch/stage), unmatched sends and receives. Then runs the
// schedule's happens-before graph under the comm model (Schedule::Comm
// unless overridden; pps/analysis/Deadlock.h): if it cannot be completed,
// the shortest cycle of waiting ranks is reported as a deadlock with each
// action's rank and location, and every rank's blocked action is named:
//   rank 1 blocks at `send F0@1 -> 0` waiting for rank 0 to post
//   `recv F0@2 <- 1`
// Guarantees: AnalysisResults::DeadlockFree is true iff every rank runs to
// the end of its program under the model, and AnalysisResults::Deadlock
// holds the result (the simulator explains a stuck run with it instead of
// checking again). Trusts no earlier pass, so the pass manager runs it even
// after an earlier pass reported an error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/passes/PassManager.h"

#include <optional>

namespace pps::passes {

struct DeadlockOptions {
  /// Check under this model instead of the schedule's own.
  std::optional<ir::CommModel> Model;
};

/// The deadlock pass.
std::unique_ptr<Pass> createDeadlockPass(DeadlockOptions Opts = {});

} // namespace pps::passes
