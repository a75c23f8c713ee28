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

static const char *computeName(Kind K) {
  switch (K) {
  case Kind::F:
  case Kind::SendF:
  case Kind::RecvF:
    return "F";
  case Kind::I:
    return "I";
  case Kind::W:
    return "W";
  default:
    return "B";
  }
}

std::string formatAction(const Action &A) {
  switch (A.kind) {
  case Kind::F:
  case Kind::I:
  case Kind::W:
  case Kind::B:
    return fmt::format("{}{}@{}", computeName(A.kind), A.mb, A.stage);
  case Kind::SendF:
  case Kind::SendB:
    return fmt::format("send {}{}@{} -> {}", computeName(A.kind), A.mb, A.stage,
                       A.peer);
  case Kind::RecvF:
  case Kind::RecvB:
    return fmt::format("recv {}{}@{} <- {}", computeName(A.kind), A.mb, A.stage,
                       A.peer);
  case Kind::Unshard:
    return fmt::format("unshard {}", A.stage);
  case Kind::Reshard:
    return fmt::format("reshard {}", A.stage);
  case Kind::ReduceGrad:
    return fmt::format("reduce_grad {}", A.stage);
  case Kind::Idle:
    return "idle";
  }
  std::abort(); // every Kind and CommModel is handled above
}

Action matchingComm(const Action &A, int32_t Self) {
  Action M = A;
  M.peer = Self;
  M.flags = 0;
  switch (A.kind) {
  case Kind::SendF:
    M.kind = Kind::RecvF;
    M.stage = A.stage + 1;
    break;
  case Kind::SendB:
    M.kind = Kind::RecvB;
    M.stage = A.stage - 1;
    break;
  case Kind::RecvF:
    M.kind = Kind::SendF;
    M.stage = A.stage - 1;
    break;
  case Kind::RecvB:
    M.kind = Kind::SendB;
    M.stage = A.stage + 1;
    break;
  default:
    break;
  }
  return M;
}

Action inputRecvOf(const ScheduleDesc &S, const Action &C) {
  Action R;
  if (C.kind == Kind::F && C.stage > firstStage(S, C.mb)) {
    R.kind = Kind::RecvF;
    R.peer = S.stageToRank[C.stage - 1];
  } else if ((C.kind == Kind::B || C.kind == Kind::I) &&
             C.stage < lastStage(S, C.mb)) {
    R.kind = Kind::RecvB;
    R.peer = S.stageToRank[C.stage + 1];
  } else {
    return R;
  }
  R.mb = C.mb;
  R.stage = C.stage;
  return R;
}

const char *commModelName(CommModel C) {
  switch (C) {
  case CommModel::Rendezvous:
    return "rendezvous";
  case CommModel::Eager:
    return "eager";
  case CommModel::Batched:
    return "batched";
  }
  std::abort(); // every Kind and CommModel is handled above
}

} // namespace ppsrt
