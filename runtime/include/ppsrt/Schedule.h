//===- Schedule.h - the action tables of generated executors --------------===//
//
// A generated executor (ppsc emit --target=cpp) describes its schedule with
// plain constant data: the topology, the cost model and, per rank, a compact
// table of actions (three 32-bit words each, so a million actions compile in
// seconds). The rules about actions (kinds, encoding, partner and producer
// rules, FIFO matching) are the schema's, ppsrt/Schema.h, which the compiler
// uses too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/Schema.h"

#include <cstdint>
#include <string>

namespace ppsrt {

// The kinds, their predicates, the comm models, the decoded action and the
// row encoding are the schema's (ppsrt/Schema.h, generated from
// ActionKinds.def): the compiler's IR uses the very same enum.
using Kind = pps::schema::Kind;
using pps::schema::NumKinds;
using CommModel = pps::schema::CommModel;
using Action = pps::schema::Action;
using pps::schema::decodeRow;
using pps::schema::encodeWord0;
using pps::schema::FlagOverlapNext;
using pps::schema::isComm;
using pps::schema::isCompute;
using pps::schema::isControl;
using pps::schema::isRecv;
using pps::schema::isSend;
using pps::schema::matchingComm;
using pps::schema::RowWords;

/// One rank's action table: Count rows of RowWords words.
struct RankTable {
  const int32_t *rows;
  int64_t count;
};

/// Compute costs of one stage, in time units.
struct StageCost {
  double F, I, W, B;
};

/// One route through the stages (the compiler's analysis::Route): the
/// microbatches [firstMicrobatch, firstMicrobatch + microbatches) traverse
/// stages firstStage..lastStage; dataRank (the rank of firstStage) reads
/// their inputs, lossRank (the rank of lastStage) computes their losses.
struct RouteDesc {
  int32_t firstMicrobatch;
  int32_t microbatches;
  int32_t firstStage;
  int32_t lastStage;
  int32_t dataRank;
  int32_t lossRank;
};

/// Everything a generated executor knows about its schedule.
struct ScheduleDesc {
  const char *name;   ///< pipeline name (already escaped for C++ strings)
  const char *source; ///< source file it was compiled from
  int32_t ranks;
  int32_t stages;
  int32_t microbatches;
  const int32_t *stageToRank; ///< stages entries
  const StageCost *stageCost; ///< stages entries
  double overlapCost;         ///< time of an overlap pair; < 0 = sum
  double latency;             ///< time units per message
  double bandwidthBytesPerMs; ///< 0 = infinite
  double activationBytes;
  double gradientBytes;
  CommModel comm;
  const RankTable *rankTables; ///< ranks entries
  /// ranks entries: the memory analysis' peak, in live activations (the
  /// chunk model's count, whatever the memory model).
  const int64_t *predictedPeak;
  double predictedMakespan; ///< ppsc sim's makespan; < 0 if unknown
  /// 1: every microbatch traverses all stages; 2: microbatches [0, M/2)
  /// traverse stages [0, S/2) and the rest [S/2, S) (bidirectional).
  int32_t directions = 1;
  /// The compiler's timing engine run as this runtime's Executor runs the
  /// schedule (rendezvous sends hold the rank, receives are waited for by
  /// their consumer): the makespan of one step in time units per comm model
  /// and receive mode, at [model * 2 + blockingRecv]; < 0 if the schedule
  /// cannot finish that way. Null when not computed.
  const double *executorMakespan = nullptr;
  /// The routes (one per direction), as the compiler derived them: where
  /// data enters and where losses are computed. Null when not given.
  int32_t numRoutes = 0;
  const RouteDesc *routes = nullptr;
  /// Per stage, its weight group: the layer of the model whose weights it
  /// holds. Stages of one group (DualPipe's stage k and stage S/2 + k) hold
  /// copies of the same weights: a runtime initialises them alike and sums
  /// their gradients before the optimizer steps. Null: every stage is a
  /// group of its own.
  const int32_t *weightGroup = nullptr;
  int32_t numWeightGroups = 0;
  /// Null if ppsc proved the schedule free of deadlock (as `ppsc lint`)
  /// before writing the executor, or if the description was made by hand;
  /// else why it did not (the executor prints it as a warning).
  const char *unverified = nullptr;
  /// The activation memory model (the schema's): what F(m, s) allocates and
  /// what I(m, s) frees, in the unit of the schedule's memory limit; the
  /// Executor counts live memory by it (Executor::peakMemory).
  pps::schema::MemoryModel memory = pps::schema::MemoryModel::chunks();
  /// ranks entries: the memory analysis' peak in the memory model's units;
  /// null with the chunk model (predictedPeak is the same figure then).
  const double *predictedMemory = nullptr;
  /// stages entries: the time of an overlap pair whose first compute is on
  /// the stage (< 0: overlapCost applies); null when no stage has one.
  const double *stageOverlapCost = nullptr;
  /// The stream rule the schedule was compiled with (`comm { stream rank;
  /// eager threshold 64 KiB; }`, the schema's); the executor runs under it
  /// unless --comm, --stream or --eager-threshold say otherwise.
  pps::schema::CommStream stream{};
  /// The compiler's timing engine run as the Executor runs under a stream
  /// rule (ppsc sim's asynchronous timing: comms on in-order streams,
  /// receives waited for by their consumers): the makespan of one step in
  /// time units [0] under the schedule's own comm model and stream rule,
  /// [1] under the nccl preset; < 0 if there is no such rule or the
  /// schedule cannot finish that way. Null when not computed.
  const double *streamMakespan = nullptr;
  /// stages entries: each stage's memory model, when they differ (a
  /// profile's measured bytes per stage); null: `memory` for every stage.
  const pps::schema::MemoryModel *stageMemory = nullptr;
  /// The memory model's amounts (and predictedMemory) are bytes.
  bool memoryBytes = false;
};

/// The memory model Stage counts by.
inline const pps::schema::MemoryModel &memoryOf(const ScheduleDesc &S,
                                                int32_t Stage) {
  return S.stageMemory ? S.stageMemory[Stage] : S.memory;
}

/// The time of overlap(A, B): A's stage's overlap time, else overlapCost,
/// else the sum of the two (the compiler's CostModel::overlapCost).
double overlapCostOf(const ScheduleDesc &S, const Action &A, const Action &B);
/// The longest an overlap pair may take (the largest overlap time given,
/// 0 if none): for timeouts.
double maxOverlapCost(const ScheduleDesc &S);

/// The weight group of Stage (the stage itself without weight sharing).
inline int32_t weightGroupOf(const ScheduleDesc &S, int32_t Stage) {
  return S.weightGroup ? S.weightGroup[Stage] : Stage;
}
/// How many weight groups (model layers) S has.
inline int32_t numWeightGroups(const ScheduleDesc &S) {
  return S.weightGroup ? S.numWeightGroups : S.stages;
}
/// True if Rank reads some route's microbatch inputs (ScheduleDesc::routes;
/// the rank of stage 0 when no routes are given).
bool feedsData(const ScheduleDesc &S, int32_t Rank);
/// True if Rank computes some route's losses (the rank of the last stage
/// when no routes are given).
bool computesLoss(const ScheduleDesc &S, int32_t Rank);

/// The executor's predicted makespan of one step (ScheduleDesc::
/// executorMakespan) for a comm model and receive mode; < 0 if unknown or
/// the schedule cannot finish.
inline double executorMakespan(const ScheduleDesc &S, CommModel Comm,
                               bool BlockingRecv) {
  if (!S.executorMakespan)
    return -1;
  return S.executorMakespan[unsigned(Comm) * 2 + (BlockingRecv ? 1 : 0)];
}

/// The routes of S's microbatches (the schema's rule).
inline pps::schema::Route routeOf(const ScheduleDesc &S) {
  return {S.stages, S.microbatches, S.directions};
}
/// The first and last stage microbatch Mb traverses.
inline int32_t firstStage(const ScheduleDesc &S, int32_t Mb) {
  return routeOf(S).firstStage(Mb);
}
inline int32_t lastStage(const ScheduleDesc &S, int32_t Mb) {
  return routeOf(S).lastStage(Mb);
}

inline const char *commModelName(CommModel C) { return pps::schema::nameOf(C); }

/// Cost of one compute action in time units.
double computeCost(const ScheduleDesc &S, const Action &A);

/// The text form of an action, as the .pps printer and the lint write it:
/// "F3@5", "send F3@5 -> 2", "recv B3@6 <- 1", "unshard 5", "idle".
std::string formatAction(const Action &A);

/// The comm action that carries the input a compute action needs from
/// another rank (RECV_F(m, s) for F(m, s), RECV_B(m, s) for I/B(m, s)), with
/// Kind::Idle if the compute needs nothing received.
Action inputRecvOf(const ScheduleDesc &S, const Action &Compute);

} // namespace ppsrt
