//===- Schedule.cpp - decoding and naming of generated action tables ------===//
#include "ppsrt/Schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace ppsrt {

double computeCost(const ScheduleDesc &S, const Action &A) {
  if (A.stage < 0 || A.stage >= S.stages)
    return 0;
  const StageCost &C = S.stageCost[A.stage];
  switch (A.kind) {
  case Kind::F:
    return C.F;
  case Kind::I:
    return C.I;
  case Kind::W:
    return C.W;
  case Kind::B:
    return C.B;
  default:
    return 0;
  }
}

double overlapCostOf(const ScheduleDesc &S, const Action &A, const Action &B) {
  if (S.stageOverlapCost && A.stage >= 0 && A.stage < S.stages &&
      S.stageOverlapCost[A.stage] >= 0)
    return S.stageOverlapCost[A.stage];
  if (S.overlapCost >= 0)
    return S.overlapCost;
  return computeCost(S, A) + computeCost(S, B);
}

double maxOverlapCost(const ScheduleDesc &S) {
  double Max = std::max(0.0, S.overlapCost);
  if (S.stageOverlapCost)
    for (int32_t St = 0; St < S.stages; ++St)
      Max = std::max(Max, S.stageOverlapCost[St]);
  return Max;
}

std::string formatAction(const Action &A) {
  return pps::schema::actionText(A.kind, A.mb, A.stage, A.peer);
}

bool feedsData(const ScheduleDesc &S, int32_t Rank) {
  if (!S.routes)
    return S.stages > 0 && S.stageToRank[0] == Rank;
  for (int32_t R = 0; R < S.numRoutes; ++R)
    if (S.routes[R].dataRank == Rank)
      return true;
  return false;
}

bool computesLoss(const ScheduleDesc &S, int32_t Rank) {
  if (!S.routes)
    return S.stages > 0 && S.stageToRank[S.stages - 1] == Rank;
  for (int32_t R = 0; R < S.numRoutes; ++R)
    if (S.routes[R].lossRank == Rank)
      return true;
  return false;
}

Action inputRecvOf(const ScheduleDesc &S, const Action &C) {
  Action R;
  R.kind = pps::schema::inputRecvKind(C.kind, C.mb, C.stage, routeOf(S));
  if (R.kind == Kind::Idle)
    return R;
  R.mb = C.mb;
  R.stage = C.stage;
  R.peer =
      S.stageToRank[pps::schema::producerOf(C.kind, C.mb, C.stage, routeOf(S))
                        .Stage];
  return R;
}

} // namespace ppsrt
