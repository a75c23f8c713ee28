//===- Schedule.cpp - the pps IR ------------------------------------------===//
#include "pps/ir/Schedule.h"

#include <fmt/format.h>

#include <cmath>

namespace pps::ir {

std::string memoryAmountText(const MemorySpec &M, double V) {
  if (!M.Bytes) {
    if (V == std::round(V) && std::fabs(V) < 1e15)
      return fmt::format("{}", int64_t(V));
    return fmt::format("{:g}", V);
  }
  const char *Units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double X = std::fabs(V);
  int U = 0;
  while (X >= 1024 && U < 5) {
    X /= 1024;
    ++U;
  }
  const char *Sign = V < 0 ? "-" : "";
  if (U == 0 || X == std::floor(X))
    return fmt::format("{}{} {}", Sign, int64_t(X), Units[U]);
  return fmt::format("{}{:.2f} {}", Sign, X, Units[U]);
}

std::string actionText(const Action &A, bool WithStage) {
  // The schema spells every kind; only an idle slot's length is the IR's.
  if (A.Kind == ActionKind::Idle && A.idleTime() != 1.0f)
    return fmt::format("idle({})", A.idleTime());
  return schema::actionText(A.Kind, A.Microbatch, A.Stage, A.Peer, WithStage);
}

llvm::StringRef placementName(Placement P) {
  switch (P) {
  case Placement::Loop:
    return "loop";
  case Placement::V:
    return "v";
  case Placement::Explicit:
    return "explicit";
  }
  llvm_unreachable("every Placement has a name");
}

llvm::StringRef commModelName(CommModel C) { return schema::nameOf(C); }

llvm::StringRef streamScopeName(StreamScope S) { return schema::nameOf(S); }

bool isNcclPreset(CommModel C, const CommStream &St) {
  return C == CommModel::Rendezvous && St == schema::NcclStream;
}

std::string commDescription(CommModel C, const CommStream &St) {
  if (isNcclPreset(C, St))
    return "nccl model";
  std::string D = fmt::format("{} model", commModelName(C).str());
  std::string With;
  if (St.Scope == StreamScope::Rank)
    With = "one stream per rank";
  else if (St.Scope == StreamScope::Peer)
    With = "one stream per peer";
  if (St.EagerThreshold >= 0 && C != CommModel::Eager)
    With += fmt::format("{}sends of up to {} bytes eager",
                        With.empty() ? "" : " and ", St.EagerThreshold);
  return With.empty() ? D : D + " with " + With;
}

std::string commConfigProblem(CommModel C, const CommStream &St) {
  const char *Why = schema::commConfigProblem(C, St);
  return Why ? Why : "";
}

llvm::SmallVector<int32_t, 4> Topology::stagesOf(int32_t Rank) const {
  llvm::SmallVector<int32_t, 4> Out;
  for (int32_t S = 0; S < int32_t(StageToRank.size()); ++S)
    if (StageToRank[S] == Rank)
      Out.push_back(S);
  return Out;
}

int32_t Topology::stageOf(int32_t Rank, int32_t Chunk) const {
  int32_t Seen = 0;
  for (int32_t S = 0; S < int32_t(StageToRank.size()); ++S)
    if (StageToRank[S] == Rank && Seen++ == Chunk)
      return S;
  return -1;
}

bool Topology::place(Placement P) {
  Place = P;
  StageToRank.clear();
  if (Ranks <= 0 || Stages <= 0)
    return false;
  if (P == Placement::Loop) {
    for (int32_t S = 0; S < Stages; ++S)
      StageToRank.push_back(S % Ranks);
    return true;
  }
  if (P == Placement::V) {
    if (Stages % Ranks != 0)
      return false;
    // Stage s in chunk c = s / P goes down the ranks for even chunks and
    // back up for odd ones: 0..P-1, P-1..0, ...
    for (int32_t S = 0; S < Stages; ++S) {
      int32_t Chunk = S / Ranks, Off = S % Ranks;
      StageToRank.push_back(Chunk % 2 == 0 ? Off : Ranks - 1 - Off);
    }
    return true;
  }
  return false;
}

double CostModel::computeCost(ActionKind K, int32_t S) const {
  const StageCost &C =
      S >= 0 && S < int32_t(PerStage.size()) ? PerStage[S] : Default;
  switch (K) {
  case ActionKind::F:
    return C.F;
  case ActionKind::I:
    return C.I;
  case ActionKind::W:
    return C.W;
  case ActionKind::B:
    return C.B;
  default:
    return 0.0;
  }
}

std::optional<double> CostModel::overlapTime(int32_t S) const {
  if (S >= 0 && S < int32_t(StageOverlap.size()) && StageOverlap[size_t(S)])
    return StageOverlap[size_t(S)];
  return Overlap;
}

bool CostModel::hasOverlapTime() const {
  if (Overlap)
    return true;
  for (const std::optional<double> &T : StageOverlap)
    if (T)
      return true;
  return false;
}

double CostModel::overlapCost(const Action &First, const Action &Second) const {
  if (std::optional<double> T = overlapTime(First.Stage))
    return *T;
  return computeCost(First.Kind, First.Stage) +
         computeCost(Second.Kind, Second.Stage);
}

double CostModel::messageTime(ActionKind CommKind) const {
  double Bytes = messageBytes(CommKind);
  double T = Latency;
  if (BandwidthBytesPerMs > 0)
    T += Bytes / BandwidthBytesPerMs;
  return T;
}

size_t Schedule::numActions() const {
  size_t N = 0;
  for (const RankProgram &R : Ranks)
    N += R.Actions.size();
  return N;
}

bool Schedule::hasComms() const {
  for (const RankProgram &R : Ranks)
    for (const Action &A : R.Actions)
      if (isComm(A.Kind))
        return true;
  return false;
}

static bool sameCost(const StageCost &A, const StageCost &B) {
  return A.F == B.F && A.I == B.I && A.W == B.W && A.B == B.B;
}

bool Schedule::equivalent(const Schedule &O, std::string *Why) const {
  auto Fail = [&](std::string Msg) {
    if (Why)
      *Why = std::move(Msg);
    return false;
  };
  if (Topo.Ranks != O.Topo.Ranks || Topo.Stages != O.Topo.Stages ||
      Topo.Microbatches != O.Topo.Microbatches)
    return Fail("topology sizes differ");
  if (Topo.StageToRank != O.Topo.StageToRank)
    return Fail("stage placement differs");
  if (Topo.Directions != O.Topo.Directions)
    return Fail("directions differ");
  if (Comm != O.Comm)
    return Fail("comm model differs");
  if (Stream != O.Stream)
    return Fail("comm stream rule differs");
  if (MemoryLimit != O.MemoryLimit)
    return Fail("memory limit differs");
  if (Memory != O.Memory)
    return Fail("memory model differs");
  if (Fsdp.Enabled != O.Fsdp.Enabled || Fsdp.Prefetch != O.Fsdp.Prefetch)
    return Fail("fsdp options differ");
  const CostModel &A = Cost, &B = O.Cost;
  if (!sameCost(A.Default, B.Default) || A.Overlap != B.Overlap ||
      A.Latency != B.Latency ||
      A.BandwidthBytesPerMs != B.BandwidthBytesPerMs ||
      A.ActivationBytes != B.ActivationBytes ||
      A.GradientBytes != B.GradientBytes || A.AsyncComm != B.AsyncComm ||
      A.PerStage.size() != B.PerStage.size())
    return Fail("cost model differs");
  for (size_t S = 0; S < A.PerStage.size(); ++S)
    if (!sameCost(A.PerStage[S], B.PerStage[S]))
      return Fail(fmt::format("cost of stage {} differs", S));
  // Per-stage overlap times: the same where a stage has one (an empty list
  // and one of unset entries say the same).
  for (int32_t S = 0; S < Topo.Stages; ++S)
    if (A.overlapTime(S) != B.overlapTime(S))
      return Fail(fmt::format("overlap cost of stage {} differs", S));
  if (Ranks.size() != O.Ranks.size())
    return Fail("number of rank programs differs");
  for (size_t R = 0; R < Ranks.size(); ++R) {
    const auto &X = Ranks[R].Actions, &Y = O.Ranks[R].Actions;
    if (X.size() != Y.size())
      return Fail(
          fmt::format("rank {} has {} actions vs {}", R, X.size(), Y.size()));
    for (size_t I = 0; I < X.size(); ++I)
      if (!X[I].sameAs(Y[I]))
        return Fail(fmt::format("rank {} action {} differs", R, I));
  }
  return true;
}

} // namespace pps::ir
