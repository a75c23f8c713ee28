//===- Timing.h - the timing engine: when each action runs ----------------===//
//
// The one timing rule of pps: given a schedule, its cost model and a comm
// model, the start and end of every action. The simulator's figures
// (pps/sim/Simulator.h), the traces, the executor's predicted makespans
// (the C++ emitter writes them into the executor) and synthesis' what-if
// runs all come from this engine.
//
// Semantics (docs/simulation.md has the long form):
//  * Compute F/I/W/B(m, s) costs CostModel::computeCost(kind, s); an
//    overlap(a, b) pair starts when both may start and costs
//    CostModel::overlapCost (a's stage's overlap time, else `overlap`, else
//    the sum of the two). Idle and control actions take no time.
//  * A message costs CostModel::messageTime(kind): latency + bytes/bandwidth.
//  * Comms occupy a rank as CommTiming says:
//    - Async (default): the compute track runs the rank's computes in
//      program order; a compute waits only for the receive that serves it
//      (the schema's inputRecvKind: RECV_F(m,s) serves F(m,s), RECV_B(m,s)
//      serves B/I(m,s)). The comms between a rank and one peer form a track
//      in program order (one track per peer; under batched one track for
//      all); a track orders the *start* of its transfers, messages under way
//      overlap. A send is ready when the compute it serves has finished (or,
//      if that compute is not on the rank before it, when every compute
//      before it has); a receive is posted as soon as its track reaches it.
//    - Blocking: one track per rank; a send/recv holds the rank from when
//      the rank reaches it until its transfer completes.
//    - Executor: what ppsrt::Executor does with one thread per rank: a
//      rendezvous send holds the rank until it is matched and transferred,
//      an eager send returns at once, a receive is posted and waited for by
//      the compute that consumes it (at the RECV itself with BlockingRecv),
//      a batched run holds the rank until all of it has matched.
//  * Rendezvous: a send and its receive start and finish together. Eager: a
//    send never waits for its receive; the receive ends at
//    max(posted, send end). Batched: each maximal run of consecutive comms on
//    a rank is posted together and completes (all its actions end) when
//    every operation in it has matched.
//  * The stream rule (ir::CommStream, docs/simulation.md "Streams"), with
//    Async timing: with a stream scope, a rank's comms run on in-order
//    streams (one per rank, or one per peer) instead of the tracks above:
//    an operation (under batched, a group) starts when the computes before
//    it in program order have finished and the operation before it on its
//    stream has *completed*, so a receive still waiting for its data holds
//    back what is behind it (head-of-line blocking). An eager threshold
//    makes sends of at most that many bytes eager (they never wait for
//    their receive) under rendezvous and batched. Each operation's time
//    held back by its stream, and the operation that caused it, are kept
//    (RankTimeline::Held, HeldBy).
//  * Matching is FIFO per (source rank, destination rank) channel (the
//    pairs of pps/analysis/Matching.h; the engine pairs them as they post).
//  * Dataflow (a schedule without comms, or when asked): cross-rank
//    dependencies come from the schema's producer rule: a compute waits for
//    its producer on another rank plus one message time; comm actions are
//    ignored.
//
// Requires: a schedule whose actions name valid ranks, stages and
//   microbatches (the front end and the verify passes guarantee this; the
//   engine does not crash on anything else, but times are then
//   meaningless).
// Guarantees: work linear in the number of actions (each wake-up of a rank
//   also looks at each of its comm tracks: one per peer it talks to); never
//   loops forever. If no rank can progress the result has Deadlocked = true
//   and the times of the actions that never ran are NaN.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace pps::analysis {

/// How comm actions occupy a rank (see above).
enum class CommTiming : uint8_t { Async, Blocking, Executor };

struct TimingOptions {
  ir::CommModel Model = ir::CommModel::Rendezvous;
  /// The stream rule (defaults to the schedule's when not set).
  std::optional<ir::CommStream> Stream;
  CommTiming Timing = CommTiming::Async;
  /// Executor timing: wait for each receive at the RECV action itself
  /// instead of at its consumer (the executor's --recv=blocking).
  bool BlockingRecv = false;
  /// Take cross-rank dependencies from the producer rule, not the comms.
  bool Dataflow = false;
  /// Keep each action's binding predecessor (for the critical path; 8
  /// bytes per action).
  bool KeepPreds = true;
  /// Keep RankTimeline::Held and HeldBy (16 bytes per action).
  bool KeepHeld = false;
  /// The costs (defaults to the schedule's when not set).
  std::optional<ir::CostModel> Cost;
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
  /// Async timing: how long each comm was held back by its stream or track
  /// (posted later than the computes before it allowed, because the
  /// operation ahead of it had not completed, or under the abstract model
  /// had not started its transfer); 0 for other actions. Empty unless
  /// TimingOptions::KeepHeld.
  std::vector<double> Held;
  /// With Held: the operation that caused the hold (packed rank << 32 |
  /// index, ~0 for none): the nearest operation ahead of it on its stream
  /// that waited for its partner (typically a receive posted before its
  /// data could come), or the one that held it when none did.
  std::vector<uint64_t> HeldBy;
};

/// What the engine accumulates per rank as actions finish.
struct RankTiming {
  /// Time the compute track is busy (an overlap pair counts once).
  double ComputeBusy = 0;
  /// Sum of the transfer times of the rank's sends and receives.
  double CommBusy = 0;
  /// Sum over the rank's comms of the time from posted to transfer start.
  double CommWait = 0;
  /// Async timing: sum over the rank's comms of the time they were held
  /// back by their stream or track (RankTimeline::Held).
  double StreamHeld = 0;
  /// End of the rank's last action.
  double End = 0;
  /// Start of the rank's first compute and end of its last (0 and 0 with
  /// no computes): its span, the zero-bubble papers' iteration time.
  double ComputeStart = 0;
  double ComputeEnd = 0;
  uint64_t Computes = 0;
  uint64_t Sends = 0;
  uint64_t Recvs = 0;
};

/// Messages and bytes on one (source rank, destination rank) channel.
struct ChannelTraffic {
  int32_t Src = 0;
  int32_t Dst = 0;
  uint64_t Messages = 0;
  double Bytes = 0;
};

struct TimingResult {
  bool Deadlocked = false;
  /// End of the last action on any rank.
  double Makespan = 0;
  std::vector<RankTiming> Ranks;
  /// Per rank, parallel to Schedule::Ranks[r].Actions.
  std::vector<RankTimeline> Times;
  /// Channels that carried messages, in the order first used.
  std::vector<ChannelTraffic> Channels;
  /// Where each rank stopped (index of its first action that never
  /// finished; = size when the rank finished).
  std::vector<uint32_t> StuckAt;
  /// With KeepPreds: per rank, per action, the action whose end bound its
  /// start (packed rank << 32 | index; ~0 for none). Set for every action
  /// that ran.
  std::vector<std::unique_ptr<uint64_t[]>> Preds;

  /// The chain of actions that determines the makespan, first to last:
  /// each one's start is bound by the end of the one before it. Empty if
  /// the run deadlocked or predecessors were not kept.
  std::vector<ActionRef> criticalPath() const;
};

/// Times S under the options.
TimingResult computeTiming(const ir::Schedule &S, const TimingOptions &Opts);

/// The options that time S as its own comm block says: its comm model and
/// stream rule, async or blocking; no critical path.
inline TimingOptions timingOf(const ir::Schedule &S) {
  TimingOptions TO;
  TO.Model = S.Comm;
  TO.Stream = S.Stream;
  TO.Timing = S.Cost.AsyncComm ? CommTiming::Async : CommTiming::Blocking;
  TO.KeepPreds = false;
  return TO;
}

/// Explains a run that got stuck without a deadlock the happens-before
/// check sees (dataflow mode, or a stall of the chosen comm timing): one
/// `deadlock` error at the first stuck rank's action, a note per other
/// stuck rank saying what it waits for.
void reportStuckRun(const ir::Schedule &S, const TimingResult &T,
                    DiagnosticEngine &D);

} // namespace pps::analysis
