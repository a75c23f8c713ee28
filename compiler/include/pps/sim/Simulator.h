//===- Simulator.h - the event-driven cost-model simulator ----------------===//
//
// Simulates a lowered schedule (comms present) under its cost model and comm
// model and returns the start and end time of every action plus the figures
// people choose schedules by: makespan, bubble, busy/idle time per rank,
// peak activation memory, messages and bytes per rank pair, critical path.
//
// Requires: a schedule whose actions name valid ranks, stages and
//   microbatches (the front end and the verify passes guarantee this; the
//   simulator does not crash on anything else, but times are then
//   meaningless). Cross-rank data dependencies are carried by send/recv
//   actions; a schedule with no comms at all is simulated in *dataflow*
//   mode (see SimOptions::Dataflow), which is what synthesis and quick
//   what-if runs over pure compute orders want.
// Guarantees: work linear in the number of actions (each wake-up of a rank
//   also looks at each of its comm tracks: one per peer it talks to); never
//   loops forever. If no rank can progress the result has Deadlocked = true,
//   the times of the actions that never ran are NaN, and (with a
//   DiagnosticEngine) the deadlock pass explains the cycle, or, when it sees
//   none (dataflow mode), a `deadlock` diagnostic says where each rank stuck.
//
// Semantics (docs/simulation.md has the long form):
//  * Compute F/I/W/B(m, s) costs CostModel::computeCost(kind, s); an
//    overlap(a, b) pair starts when both may start and costs Cost.Overlap,
//    or the sum of the two when unset. Idle and control actions take no time.
//  * A message costs CostModel::messageTime(kind): latency + bytes/bandwidth.
//  * Async comm (default): the compute track runs the rank's computes in
//    program order; a compute waits only for the receive that serves it
//    (RECV_F(m,s) serves F(m,s), RECV_B(m,s) serves B/I(m,s)). The comms
//    between a rank and one peer form a track in program order (one track
//    per peer; under batched one track for all); a track orders the *start*
//    of its transfers, messages under way overlap. A send is ready when the
//    compute it serves has finished (or, if that compute is not on the rank
//    before it, when every compute before it has); a receive is posted as
//    soon as its track reaches it.
//  * Blocking comm: one track per rank; a send/recv holds the rank from
//    when the rank reaches it until its transfer completes.
//  * Rendezvous: a send and its receive start and finish together. Eager: a
//    send never waits for its receive; the receive ends at
//    max(posted, send end). Batched: each maximal run of consecutive comms on
//    a rank is posted together and completes (all its actions end) when
//    every operation in it has matched.
//  * Matching is FIFO per (source rank, destination rank) channel.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace pps::sim {

/// How cross-rank dependencies are taken.
enum class DataflowMode : uint8_t {
  /// Dataflow when the schedule has no comm actions, comms otherwise.
  Auto,
  /// Always from the send/recv actions (a cross-rank dependency without a
  /// comm is not waited for).
  Comms,
  /// Always from the data dependencies: a compute waits for its producer on
  /// another rank plus one message time; comm actions are ignored.
  Dataflow,
};

struct SimOptions {
  /// Overrides the schedule's comm model (rendezvous / eager / batched).
  std::optional<ir::CommModel> CommModel;
  /// Overrides Cost.AsyncComm: true = blocking (comm occupies the rank).
  std::optional<bool> BlockingComm;
  /// Overrides the per-message latency (time units).
  std::optional<double> Latency;
  DataflowMode Dataflow = DataflowMode::Auto;
  /// Compute the critical path (costs 8 bytes per action).
  bool CriticalPath = true;
  /// Keep per-action start/end times in the result (the trace backends need
  /// them; synthesis that only wants the makespan can switch them off).
  bool KeepTimes = true;
};

/// Figures for one rank.
struct RankStats {
  /// Time the compute track is busy (an overlap pair counts once).
  double ComputeBusy = 0;
  /// Makespan - ComputeBusy: the rank's bubble.
  double Idle = 0;
  /// Sum of the transfer times of the rank's sends and receives (transfers
  /// on different tracks overlap, so this can exceed the makespan).
  double CommBusy = 0;
  /// Sum over the rank's comms of the time from posted to transfer start
  /// (receives posted early wait long; also can exceed the makespan).
  double CommWait = 0;
  /// End of the rank's last action.
  double End = 0;
  /// Peak activation memory (units of one stage's activations of one
  /// microbatch), from the memory analysis (pps/analysis/Memory.h).
  int64_t PeakMemory = 0;
  /// Index of the action at which PeakMemory is first reached (-1 if 0).
  int64_t PeakMemoryAt = -1;
  uint64_t Computes = 0;
  uint64_t Sends = 0;
  uint64_t Recvs = 0;
};

/// Messages and bytes on one (source rank, destination rank) channel.
struct ChannelStats {
  int32_t Src = 0;
  int32_t Dst = 0;
  uint64_t Messages = 0;
  double Bytes = 0;
};

/// One action: rank and index into that rank's action vector.
struct ActionRef {
  int32_t Rank = -1;
  uint32_t Index = 0;
};

/// Per-action times, parallel to the rank's action vector. For a receive,
/// Start is when it was posted and End when its data arrived, so
/// [Start, TransferStart) is time spent waiting; for a send, Start is when
/// it was issued. An action that never ran (deadlock) has NaN times.
struct RankTimeline {
  std::vector<double> Start;
  std::vector<double> End;
  /// Comm actions: when the transfer began (after any wait). For other
  /// actions equal to Start.
  std::vector<double> TransferStart;
};

struct SimResult {
  bool Deadlocked = false;
  /// Simulated under these (after SimOptions overrides).
  ir::CommModel Comm = ir::CommModel::Rendezvous;
  bool Blocking = false;
  bool UsedDataflow = false;

  /// End of the last action on any rank.
  double Makespan = 0;
  /// The ideal time: the largest per-rank compute time (what the busiest
  /// rank would need with no bubble and no comm wait).
  double Ideal = 0;
  /// (Makespan - Ideal) / Makespan: share of the run that is bubble.
  double BubbleOverMakespan = 0;
  /// (Makespan - Ideal) / Ideal: bubble relative to useful work (the
  /// (p-1)/m of the GPipe and 1F1B papers).
  double BubbleOverIdeal = 0;
  /// 1 - sum(ComputeBusy) / (ranks * Makespan): mean idle share over ranks.
  double MeanIdleFraction = 0;

  llvm::SmallVector<RankStats, 8> Ranks;
  /// Sorted by (Src, Dst).
  std::vector<ChannelStats> Channels;
  uint64_t Messages = 0;
  double Bytes = 0;
  int64_t PeakMemory = 0; // max over ranks

  /// Per rank, parallel to Schedule::Ranks[r].Actions (empty if
  /// SimOptions::KeepTimes is off).
  llvm::SmallVector<RankTimeline, 8> Times;
  /// The chain of actions that determines the makespan, first to last:
  /// each one's start is bound by the end of the one before it.
  std::vector<ActionRef> CriticalPath;
  /// Where each rank stopped when Deadlocked (index of its first action
  /// that never finished; = size when the rank finished).
  std::vector<uint32_t> StuckAt;

  double start(ActionRef A) const { return Times[A.Rank].Start[A.Index]; }
  double end(ActionRef A) const { return Times[A.Rank].End[A.Index]; }
};

/// Simulates S. Diags may be null (no diagnostics, just the result); with an
/// engine, a deadlock is reported as a `deadlock` error located at the
/// action each stuck rank waits on.
SimResult simulate(const ir::Schedule &S, const SimOptions &Opts = {},
                   DiagnosticEngine *Diags = nullptr);

} // namespace pps::sim
