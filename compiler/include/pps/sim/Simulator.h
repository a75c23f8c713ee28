//===- Simulator.h - the cost-model simulator and its figures -------------===//
//
// Simulates a schedule under its cost model and comm model and returns the
// start and end time of every action plus the figures people choose
// schedules by: makespan, bubble, busy/idle time per rank, peak activation
// memory, messages and bytes per rank pair, critical path.
//
// The times are the analysis layer's timing engine (pps/analysis/Timing.h,
// which states the semantics); memory is the memory analysis
// (pps/analysis/Memory.h); matching and deadlocks are explained by
// pps/analysis/Matching.h and Deadlock.h. This file adds the options people
// pass on the command line and the figures.
//
// Requires: a schedule whose actions name valid ranks, stages and
//   microbatches (see Timing.h). A schedule with no comms at all is
//   simulated in *dataflow* mode (see SimOptions::Dataflow), which is what
//   synthesis and quick what-if runs over pure compute orders want.
// Guarantees: work linear in the number of actions; never loops forever.
//   With a DiagnosticEngine and comms, the FIFO matching's findings are
//   reported (unless the deadlock pass's result is passed in: it reported
//   them); if no rank can progress the result has Deadlocked = true, the
//   times of the actions that never ran are NaN, and the deadlock is
//   explained as a cycle (the deadlock analysis, reused from the deadlock
//   pass when given) or, when the check sees none (dataflow mode, or a
//   stall of blocking timing), by where each rank is stuck.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/analysis/Deadlock.h"
#include "pps/analysis/Timing.h"
#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <limits>
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
  /// Overrides the schedule's stream rule (scope, eager threshold).
  std::optional<ir::CommStream> Stream;
  /// Overrides Cost.AsyncComm: true = blocking (comm occupies the rank).
  std::optional<bool> BlockingComm;
  /// Time comms as ppsrt::Executor runs them (overrides BlockingComm; see
  /// analysis::CommTiming::Executor): the executor's predicted makespan.
  bool ExecutorTiming = false;
  /// With ExecutorTiming: receives wait at the RECV (--recv=blocking).
  bool ExecutorBlockingRecv = false;
  /// Overrides the per-message latency (time units).
  std::optional<double> Latency;
  DataflowMode Dataflow = DataflowMode::Auto;
  /// Compute the critical path (costs 8 bytes per action).
  bool CriticalPath = true;
  /// Keep per-action start/end times in the result (the trace backends need
  /// them; synthesis that only wants the makespan can switch them off).
  bool KeepTimes = true;
  /// The deadlock pass's result for this schedule
  /// (passes::AnalysisResults::Deadlock), if it ran: a run that gets stuck
  /// is then not checked again, and the matching it reported is not
  /// reported again.
  const analysis::DeadlockResult *Deadlock = nullptr;
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
  /// Sum over the rank's comms of the time they were held back by their
  /// stream, behind an operation that had not completed
  /// (RankTimeline::Held; async timing).
  double StreamHeld = 0;
  /// Under a stream rule: how much idle time inside the rank's span the
  /// rule adds, against the same schedule timed without it (SimResult::
  /// MakespanWithoutStreams); 0 otherwise.
  double StreamBubble = 0;
  /// End of the rank's last action.
  double End = 0;
  /// From the start of the rank's first compute to the end of its last: the
  /// per-rank iteration time the zero-bubble papers report (0 with no
  /// computes).
  double Span = 0;
  /// Peak activation memory, from the memory analysis (pps/analysis/
  /// Memory.h), in the schedule's memory model's units (by default one
  /// stage's activations of one microbatch).
  double PeakMemory = 0;
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

/// One action, and per-action times: the timing engine's.
using analysis::ActionRef;
using analysis::RankTimeline;

struct SimResult {
  bool Deadlocked = false;
  /// Simulated under these (after SimOptions overrides).
  ir::CommModel Comm = ir::CommModel::Rendezvous;
  ir::CommStream Stream;
  bool Blocking = false;
  bool UsedDataflow = false;

  /// End of the last action on any rank.
  double Makespan = 0;
  /// The largest per-rank span (RankStats::Span).
  double Span = 0;
  /// Under a stream rule (async timing): the makespan of the same schedule
  /// without it (scope none, same eager threshold), so Makespan -
  /// MakespanWithoutStreams is what the rule costs; NaN otherwise.
  double MakespanWithoutStreams = std::numeric_limits<double>::quiet_NaN();
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
  double PeakMemory = 0; // max over ranks
  /// The memory model the peaks are counted in (the schedule's).
  ir::MemorySpec Memory;

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

/// Writes the options of Opts that change the schedule -- the comm model,
/// the stream rule, the latency, blocking or async comm -- into S itself.
/// Callers that lower S (insert-comms orders messages by the simulated time of
/// each pair) call this before the passes, so that every pass reads the cost
/// the simulator times with: an option then gives the result of the same value
/// written in the file.
void applyScheduleOverrides(ir::Schedule &S, const SimOptions &Opts);

/// Simulates S. Diags may be null (no diagnostics, just the result); with an
/// engine, a deadlock is reported as a `deadlock` error located at the
/// action each stuck rank waits on.
SimResult simulate(const ir::Schedule &S, const SimOptions &Opts = {},
                   DiagnosticEngine *Diags = nullptr);

} // namespace pps::sim
