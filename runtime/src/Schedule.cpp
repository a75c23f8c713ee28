//===- Schedule.cpp - decoding and naming of generated action tables ------===//
#include "ppsrt/Schedule.h"

#include <fmt/format.h>

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

std::string formatAction(const Action &A) {
  return pps::schema::actionText(A.kind, A.mb, A.stage, A.peer);
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
