//===- Builder.cpp - the C++ builder API ----------------------------------===//
#include "pps/ir/Builder.h"

#include <cassert>

namespace pps::ir {

int32_t RankBuilder::resolveStage(int32_t Stage) const {
  if (Stage >= 0)
    return Stage;
  assert(OnlyStage >= 0 && "rank holds several stages: give the stage");
  return OnlyStage;
}

RankBuilder &RankBuilder::compute(ActionKind K, int32_t Mb, int32_t Stage) {
  assert(isCompute(K) && "not a compute kind");
  S.Ranks[Rank].Actions.push_back(Action::compute(K, Mb, resolveStage(Stage)));
  return *this;
}

RankBuilder &RankBuilder::overlap(Action First, Action Second) {
  assert(isCompute(First.Kind) && isCompute(Second.Kind) &&
         "overlap pairs two computes");
  First.Stage = resolveStage(First.Stage);
  Second.Stage = resolveStage(Second.Stage);
  First.Flags |= ActionFlags::OverlapNext;
  S.Ranks[Rank].Actions.push_back(First);
  S.Ranks[Rank].Actions.push_back(Second);
  return *this;
}

RankBuilder &RankBuilder::comm(ActionKind K, int32_t Mb, int32_t Stage,
                               int32_t Peer) {
  assert(isComm(K) && "not a comm kind");
  S.Ranks[Rank].Actions.push_back(
      Action::comm(K, Mb, resolveStage(Stage), Peer));
  return *this;
}

RankBuilder &RankBuilder::control(ActionKind K, int32_t Stage) {
  assert(isControl(K) && "not a control kind");
  S.Ranks[Rank].Actions.push_back(Action::control(K, resolveStage(Stage)));
  return *this;
}

RankBuilder &RankBuilder::idle(float Time) {
  S.Ranks[Rank].Actions.push_back(Action::idle(Time));
  return *this;
}

RankBuilder &RankBuilder::append(const Action &A) {
  S.Ranks[Rank].Actions.push_back(A);
  return *this;
}

ScheduleBuilder::ScheduleBuilder(int32_t Ranks, int32_t Stages,
                                 int32_t Microbatches, Placement P) {
  S.Topo.Ranks = Ranks;
  S.Topo.Stages = Stages;
  S.Topo.Microbatches = Microbatches;
  bool Ok = S.Topo.place(P);
  assert(Ok && "placement does not fit ranks and stages");
  (void)Ok;
  S.resetRanks();
  computeOnlyStages();
}

void ScheduleBuilder::computeOnlyStages() {
  OnlyStage.assign(S.Topo.Ranks, -1);
  std::vector<int32_t> Count(S.Topo.Ranks, 0);
  for (int32_t St = 0; St < int32_t(S.Topo.StageToRank.size()); ++St) {
    int32_t R = S.Topo.StageToRank[St];
    if (R < 0 || R >= S.Topo.Ranks)
      continue;
    OnlyStage[R] = ++Count[R] == 1 ? St : -1;
  }
}

ScheduleBuilder &ScheduleBuilder::placement(llvm::ArrayRef<int32_t> Map) {
  S.Topo.Place = Placement::Explicit;
  S.Topo.StageToRank.assign(Map.begin(), Map.end());
  computeOnlyStages();
  return *this;
}
ScheduleBuilder &ScheduleBuilder::name(std::string N) {
  S.Name = std::move(N);
  return *this;
}
ScheduleBuilder &ScheduleBuilder::cost(const StageCost &C) {
  S.Cost.Default = C;
  return *this;
}
ScheduleBuilder &ScheduleBuilder::stageCost(int32_t Stage, const StageCost &C) {
  if (S.Cost.PerStage.empty())
    S.Cost.PerStage.assign(S.Topo.Stages, S.Cost.Default);
  S.Cost.PerStage[Stage] = C;
  return *this;
}
ScheduleBuilder &ScheduleBuilder::comm(CommModel M) {
  S.Comm = M;
  return *this;
}
ScheduleBuilder &ScheduleBuilder::latency(double L) {
  S.Cost.Latency = L;
  return *this;
}
ScheduleBuilder &ScheduleBuilder::memoryLimit(int64_t Limit) {
  S.MemoryLimit = Limit;
  return *this;
}
ScheduleBuilder &ScheduleBuilder::memoryModel(const schema::MemoryModel &M) {
  S.Memory = M;
  return *this;
}
ScheduleBuilder &ScheduleBuilder::overlapCost(int32_t Stage, double T) {
  assert(Stage >= 0 && Stage < S.Topo.Stages && "stage out of range");
  if (S.Cost.StageOverlap.empty())
    S.Cost.StageOverlap.resize(size_t(S.Topo.Stages));
  S.Cost.StageOverlap[size_t(Stage)] = T;
  return *this;
}
RankBuilder ScheduleBuilder::rank(int32_t R) {
  assert(R >= 0 && R < S.Topo.Ranks && "rank out of range");
  return RankBuilder(S, R, OnlyStage[R]);
}

} // namespace pps::ir
