//===- Deadlock.h - the happens-before check of a matched schedule --------===//
//
// Runs a schedule's happens-before graph under a comm model, on top of the
// FIFO matching (Matching.h): program order per rank, a rendezvous pair as
// one event, eager send -> recv, a batched group (a maximal run of
// consecutive comms on a rank) posted together and complete when all its
// operations are matched. A send is eager under the eager model, or when the
// stream rule's eager threshold admits its size (ir::CommStream). The
// rank's comms form one in-order sequence (the stream rule's scope rank,
// which is also how blocking sends and receives and the abstract model are
// checked), or, under scope peer, one sequence per peer: an operation then
// waits only for the one before it to the same peer and for the computes
// before it in program order, which wait for the receives they consume.
// The graph is walked in topological order in linear time. If it cannot be
// completed, reportDeadlock names the shortest cycle of waiting ranks with each
// action's rank and location, and every other rank's blocked action:
//   rank 1 blocks at `send F0@1 -> 0` waiting for rank 0 to post
//   `recv F0@2 <- 1`
//
// The deadlock pass runs it and keeps the result (AnalysisResults::
// Deadlock); the simulator reuses that result to explain a run that got
// stuck, or runs the check itself (on the const schedule) when no pass did.
//
// Requires: M = matchComms(S) for the same schedule.
// Guarantees: DeadlockResult::Free is true iff every rank runs to the end of
//   its program under the model; work linear in the number of actions and
//   matched pairs (the cycle search is bounded).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/analysis/Matching.h"
#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace pps::analysis {

/// Where each rank stops in the happens-before walk.
struct DeadlockResult {
  /// The comm model and stream rule the schedule was checked under.
  ir::CommModel Model = ir::CommModel::Rendezvous;
  ir::CommStream Stream;
  /// True if every rank runs to the end of its program.
  bool Free = false;
  /// Per rank: its last posted group of comms [Cursor, GroupEnd) and how
  /// many of its operations are still unmatched; Cursor is the program's
  /// size once the rank finished.
  struct RankState {
    uint32_t Cursor = 0, GroupEnd = 0, Remaining = 0;
    uint8_t Posted = 0;
  };
  std::vector<RankState> Ranks;
  /// Scope peer: per rank, the operations posted and never completed (the
  /// heads of its stuck streams), ascending; Ranks[r] then names the first.
  std::vector<llvm::SmallVector<uint32_t, 2>> StuckOps;
  /// Scope peer: per action (global id), 1 once it was posted.
  std::vector<uint8_t> Posted;
};

/// Walks S's happens-before graph under Model and the stream rule (the
/// schedule's unless Stream is given).
DeadlockResult checkDeadlock(const ir::Schedule &S, const Matching &M,
                             ir::CommModel Model,
                             std::optional<ir::CommStream> Stream = {});

/// Explains a result that is not Free: a `deadlock` error with the
/// shortest cycle of waiting ranks, or, without a cycle, an unmatched-recv
/// or unmatched-send error that every chain of waits ends at; notes name
/// each blocked rank's action.
void reportDeadlock(const ir::Schedule &S, const Matching &M,
                    const DeadlockResult &R, DiagnosticEngine &D);

/// Where the ranks of a result that is not Free block, as data: what
/// reportDeadlock puts into words (the HTML timeline draws it).
struct DeadlockExplanation {
  struct Blocked {
    int32_t Rank = 0;
    /// The operation the rank blocks at: on the cycle, the one that waits
    /// for the next rank of the cycle; elsewhere its first unsatisfied one.
    uint32_t Index = 0;
    /// The rank whose operation it waits for, and that operation's index;
    /// -1 and NoAction when nothing ever matches it.
    int32_t WaitsFor = -1;
    uint32_t PartnerIndex = NoAction;
  };
  /// Every rank that does not finish, ascending.
  std::vector<Blocked> Ranks;
  /// The shortest cycle of waiting ranks (r0 waits for r1 ... waits for
  /// r0); empty when every chain of waits ends at an unmatched operation.
  std::vector<int32_t> Cycle;
};

/// Explains a result that is not Free (empty for one that is).
DeadlockExplanation explainDeadlock(const ir::Schedule &S, const Matching &M,
                                    const DeadlockResult &R);

/// The note of a wait cycle that says why rank Peer has not reached its
/// action Needed (which the previous rank of the cycle waits for): "rank
/// Peer <Verb> `Needed` only after `Blocked`", where Blocked is the action
/// Peer is stuck at. Adds nothing when Peer is stuck at Needed itself: the
/// cycle's next link (what Peer waits for) is the reason, and "runs `X`
/// only after `X`" would explain nothing. Verb is "posts" for comms, "runs"
/// for computes. Used by every report of a wait cycle (the deadlock pass,
/// insert-comms on a compute order that deadlocks).
void noteOnlyAfter(Diagnostic &D, const ir::Schedule &S, int32_t Peer,
                   size_t Needed, size_t Blocked, llvm::StringRef Verb);

/// Shortest cycle in a directed graph over ranks given as adjacency lists
/// (Adj[r] = ranks r waits for). Returns the ranks on the cycle, in order
/// (r0 waits for r1 waits for ... waits for r0); empty if there is none.
/// Breadth-first search from every node, stopping early at a self-loop or a
/// 2-cycle and bounded in total work for pathological graphs.
std::vector<int32_t>
shortestCycle(llvm::ArrayRef<llvm::SmallVector<int32_t, 2>> Adj);

} // namespace pps::analysis
