//===- Builder.h - the C++ builder API: the embedded form of the language -===//
//
// Builds a Schedule without text. Every action a builder emits is the same
// IR the front end produces, so passes, simulator and backends accept it.
//
//   ir::ScheduleBuilder B(/*ranks=*/2, /*stages=*/2, /*microbatches=*/2);
//   B.rank(0).F(0).F(1).B(0).B(1);
//   B.rank(1).F(0).B(0).F(1).B(1);
//   ir::Schedule S = B.build();
//
// A stage of -1 means "the rank's only stage" (asserted).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"

#include <vector>

namespace pps::ir {

class ScheduleBuilder;

/// Appends actions to one rank's program.
class RankBuilder {
public:
  RankBuilder &F(int32_t Mb, int32_t Stage = -1) {
    return compute(ActionKind::F, Mb, Stage);
  }
  RankBuilder &I(int32_t Mb, int32_t Stage = -1) {
    return compute(ActionKind::I, Mb, Stage);
  }
  RankBuilder &W(int32_t Mb, int32_t Stage = -1) {
    return compute(ActionKind::W, Mb, Stage);
  }
  RankBuilder &B(int32_t Mb, int32_t Stage = -1) {
    return compute(ActionKind::B, Mb, Stage);
  }
  RankBuilder &compute(ActionKind K, int32_t Mb, int32_t Stage = -1);
  /// overlap(a, b): two computes that run together.
  RankBuilder &overlap(Action First, Action Second);
  /// send/recv of kind SendF/SendB/RecvF/RecvB; the peer is explicit.
  RankBuilder &comm(ActionKind K, int32_t Mb, int32_t Stage, int32_t Peer);
  RankBuilder &unshard(int32_t Stage) {
    return control(ActionKind::Unshard, Stage);
  }
  RankBuilder &reshard(int32_t Stage) {
    return control(ActionKind::Reshard, Stage);
  }
  RankBuilder &reduceGrad(int32_t Stage) {
    return control(ActionKind::ReduceGrad, Stage);
  }
  RankBuilder &control(ActionKind K, int32_t Stage);
  RankBuilder &idle(float Time = 1.0f);
  /// Appends a ready-made action (location kept).
  RankBuilder &append(const Action &A);

private:
  friend class ScheduleBuilder;
  RankBuilder(Schedule &S, int32_t Rank, int32_t OnlyStage)
      : S(S), Rank(Rank), OnlyStage(OnlyStage) {}
  int32_t resolveStage(int32_t Stage) const;
  Schedule &S;
  int32_t Rank;
  int32_t OnlyStage; // the rank's only stage, or -1 if it holds several
};

class ScheduleBuilder {
public:
  ScheduleBuilder(int32_t Ranks, int32_t Stages, int32_t Microbatches,
                  Placement P = Placement::Loop);

  /// Explicit stage -> rank map (sets Placement::Explicit).
  ScheduleBuilder &placement(llvm::ArrayRef<int32_t> StageToRank);
  ScheduleBuilder &name(std::string N);
  ScheduleBuilder &cost(const StageCost &C);
  ScheduleBuilder &stageCost(int32_t Stage, const StageCost &C);
  ScheduleBuilder &comm(CommModel M);
  ScheduleBuilder &latency(double L);
  ScheduleBuilder &memoryLimit(int64_t Limit);
  /// The activation memory model (`memory { F = ..; I = ..; }`).
  ScheduleBuilder &memoryModel(const schema::MemoryModel &M);
  /// The time of overlap pairs whose first compute is on Stage.
  ScheduleBuilder &overlapCost(int32_t Stage, double T);

  RankBuilder rank(int32_t R);
  Schedule &schedule() { return S; }
  Schedule build() { return std::move(S); }

private:
  Schedule S;
  /// Per rank: its only stage, or -1 (several or none). Rebuilt when the
  /// placement changes, so a stage-less call costs O(1).
  std::vector<int32_t> OnlyStage;
  void computeOnlyStages();
};

} // namespace pps::ir
