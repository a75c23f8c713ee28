//===- PassUtil.cpp - helpers shared by the passes ------------------------===//
#include "PassUtil.h"

#include "pps/support/Prefetch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pps::passes::detail {

using namespace ir;

void UnitIndex::build(const Schedule &S) {
  const Topology &T = S.Topo;
  size_t NumRanks = S.Ranks.size();
  RankBase.assign(NumRanks + 1, 0);
  Cells.init(T, 2, S.numActions());
  UnitRank.clear();
  UnitRank.reserve(S.numActions());
  HasDuplicates = false;
  uint32_t U = 0;
  for (size_t R = 0; R < NumRanks; ++R) {
    RankBase[R] = U;
    const auto &Acts = S.Ranks[R].Actions;
    for (size_t I = 0; I < Acts.size();) {
      if (!isCompute(Acts[I].Kind)) {
        ++I;
        continue;
      }
      unsigned Len = unitLength(Acts, I);
      UnitRank.push_back(int32_t(R));
      for (unsigned J = 0; J < Len; ++J) {
        const Action &A = Acts[I + J];
        if (A.Kind == ActionKind::W || !inRange(T, A))
          continue;
        uint32_t &Slot =
            Cells.at(A.Kind == ActionKind::F ? 0 : 1, A.Microbatch, A.Stage);
        if (Slot == None)
          Slot = U * 2 + J;
        else
          HasDuplicates = true;
      }
      I += Len;
      ++U;
    }
  }
  RankBase[NumRanks] = U;
}

uint32_t producerEntry(const Topology &T, const UnitIndex &U, const Action &A) {
  if (!inRange(T, A))
    return None;
  // Same-stage producers (the last stage's F for its B, I for W) are never
  // on another rank.
  schema::Producer Pr = analysis::producerOf(T, A);
  if (!Pr.CrossStage)
    return None;
  return Pr.What == schema::Needs::F ? U.unitF(Pr.Mb, Pr.Stage)
                                     : U.unitBI(Pr.Mb, Pr.Stage);
}

uint32_t consumerEntry(const Topology &T, const UnitIndex &U, const Action &A) {
  if (!inRange(T, A))
    return None;
  int32_t Cs = analysis::consumerStage(T, A);
  if (Cs < 0)
    return None;
  return A.Kind == ActionKind::F ? U.unitF(A.Microbatch, Cs)
                                 : U.unitBI(A.Microbatch, Cs);
}

static double clampCost(double C) {
  return std::isfinite(C) && C > 0 ? C : 0.0;
}

double unitCost(const Schedule &S, const std::vector<Action> &Acts, size_t I) {
  const Action *First = &Acts[I];
  double C = clampCost(S.Cost.computeCost(First->Kind, First->Stage));
  if (unitLength(Acts, I) == 1)
    return C;
  const Action *Second = First + 1;
  if (std::optional<double> T = S.Cost.overlapTime(First->Stage))
    return clampCost(*T);
  return C + clampCost(S.Cost.computeCost(Second->Kind, Second->Stage));
}

/// True if the member at (Unit, Member) is the registered occurrence of its
/// compute, so its cross-rank links are the ones the lookups describe.
static bool isRegistered(const Topology &T, const UnitIndex &U, const Action &A,
                         uint32_t Unit, unsigned Member) {
  if (!inRange(T, A))
    return false;
  if (A.Kind == ActionKind::F)
    return U.unitF(A.Microbatch, A.Stage) == Unit * 2 + Member;
  if (A.Kind == ActionKind::B || A.Kind == ActionKind::I)
    return U.unitBI(A.Microbatch, A.Stage) == Unit * 2 + Member;
  return false;
}

/// Fills TL.CrossProd and TL.CrossCons: for every unit member, the unit on
/// another rank that produces its cross-stage input (the lookups describe
/// only the registered occurrence of a compute), and its inverse.
static void linkUnits(const Schedule &S, const UnitIndex &U, Timeline &TL) {
  const Topology &T = S.Topo;
  for (size_t R = 0; R < S.Ranks.size(); ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    uint32_t Lo = U.RankBase[R], Hi = U.RankBase[R + 1];
    forEachUnitMember(Acts, Lo, [&](size_t I, unsigned J, uint32_t Unit) {
      const Action &X = Acts[I];
      if (U.HasDuplicates ? !isRegistered(T, U, X, Unit, J) : !inRange(T, X))
        return;
      uint32_t EP = producerEntry(T, U, X);
      uint32_t P = UnitIndex::unitOf(EP);
      if (P == None || (P >= Lo && P < Hi))
        return;
      TL.CrossProd[size_t(Unit) * 2 + J] = P;
      TL.CrossCons[EP] = Unit * 2 + J;
    });
  }
}

namespace {
/// Unit costs by (kind, stage) for the four compute kinds, from the cost
/// model (a table, so the timeline's loop makes no call per unit).
class UnitCosts {
public:
  explicit UnitCosts(const Schedule &S) : S(S), Stages(S.Topo.Stages) {
    Table.resize(size_t(std::max(Stages, 0)) * 4);
    for (int32_t St = 0; St < Stages; ++St)
      for (ActionKind K :
           {ActionKind::F, ActionKind::I, ActionKind::W, ActionKind::B})
        Table[size_t(St) * 4 + unsigned(K)] =
            clampCost(S.Cost.computeCost(K, St));
  }
  /// unitCost(S, Acts, I).
  double of(const std::vector<Action> &Acts, size_t I, unsigned Len) const {
    const Action &A = Acts[I];
    if (LLVM_LIKELY(Len == 1 && A.Stage >= 0 && A.Stage < Stages &&
                    unsigned(A.Kind) < 4))
      return Table[size_t(A.Stage) * 4 + unsigned(A.Kind)];
    return unitCost(S, Acts, I);
  }

private:
  const Schedule &S;
  int32_t Stages;
  std::vector<double> Table;
};
} // namespace

bool computeTimeline(const Schedule &S, const UnitIndex &U, Timeline &TL) {
  size_t NumRanks = S.Ranks.size();
  uint32_t N = U.numUnits();
  TL.Start.assign(N, 0.0);
  TL.End.assign(N, -1.0);
  TL.Seq.assign(N, 0);
  TL.Blocked.clear();
  TL.Makespan = 0;
  TL.CrossProd.assign(size_t(N) * 2, None);
  TL.CrossCons.assign(size_t(N) * 2, None);
  linkUnits(S, U, TL);
  UnitCosts Costs(S);
  double MsgF = clampCost(S.Cost.messageTime(ActionKind::SendF));
  double MsgB = clampCost(S.Cost.messageTime(ActionKind::SendB));

  std::vector<size_t> ActCursor(NumRanks, 0);
  std::vector<uint32_t> UnitCursor(NumRanks, 0), WaitFor(NumRanks, None);
  std::vector<double> RankTime(NumRanks, 0.0);
  std::vector<uint8_t> InList(NumRanks, 1);
  // Ranks blocked on a unit of rank Q (at most one entry per blocked rank).
  std::vector<llvm::SmallVector<int32_t, 2>> Waiters(NumRanks);
  std::vector<int32_t> Work;
  Work.reserve(NumRanks);
  for (size_t R = NumRanks; R-- > 0;)
    Work.push_back(int32_t(R));
  uint32_t Counter = 0;
  const uint32_t *CrossProd = TL.CrossProd.data();
  double *Start = TL.Start.data(), *End = TL.End.data();
  uint32_t *Seq = TL.Seq.data();

  auto Advance = [&](int32_t R) {
    const auto &Acts = S.Ranks[R].Actions;
    size_t AC = ActCursor[R];
    uint32_t Unit = U.RankBase[R] + UnitCursor[R];
    double Time = RankTime[R];
    auto Save = [&] {
      ActCursor[R] = AC;
      UnitCursor[R] = Unit - U.RankBase[R];
      RankTime[R] = Time;
      // The rank resumes here on its next visit, after the other ranks'
      // visits have pushed these lines out of cache: fetch them now.
      prefetchRead(Acts.data(), AC + 3);
      prefetchRead(CrossProd, size_t(Unit) * 2 + 8);
      prefetchWrite(Start, Unit + 4);
      prefetchWrite(End, Unit + 4);
      prefetchWrite(Seq, Unit + 8);
    };
    while (AC < Acts.size()) {
      const Action *A = &Acts[AC];
      if (!isCompute(A->Kind)) {
        ++AC;
        continue;
      }
      unsigned Len = unitLength(Acts, AC);
      double Ready = Time;
      for (unsigned J = 0; J < Len; ++J) {
        uint32_t P = CrossProd[size_t(Unit) * 2 + J];
        if (P == None)
          continue;
        if (End[P] < 0) {
          WaitFor[R] = P;
          Waiters[U.UnitRank[P]].push_back(R);
          Save();
          return;
        }
        Ready = std::max(Ready,
                         End[P] + (A[J].Kind == ActionKind::F ? MsgF : MsgB));
      }
      WaitFor[R] = None;
      Start[Unit] = Ready;
      Time = End[Unit] = Ready + Costs.of(Acts, AC, Len);
      Seq[Unit] = Counter++;
      // Wake the ranks that waited for this unit.
      auto &Ws = Waiters[R];
      for (size_t K = 0; K < Ws.size();) {
        int32_t W = Ws[K];
        if (WaitFor[W] != Unit) {
          ++K;
          continue;
        }
        Ws[K] = Ws.back();
        Ws.pop_back();
        if (!InList[W]) {
          InList[W] = 1;
          Work.push_back(W);
        }
      }
      AC += Len;
      ++Unit;
    }
    Save();
  };

  while (!Work.empty()) {
    int32_t R = Work.back();
    Work.pop_back();
    InList[R] = 0;
    Advance(R);
  }
  for (size_t R = 0; R < NumRanks; ++R) {
    TL.Makespan = std::max(TL.Makespan, RankTime[R]);
    if (U.RankBase[R] + UnitCursor[R] < U.RankBase[R + 1])
      TL.Blocked.push_back(
          {int32_t(R), U.RankBase[R] + UnitCursor[R], WaitFor[R]});
  }
  return TL.Blocked.empty();
}

} // namespace pps::passes::detail
