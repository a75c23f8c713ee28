//===- CommPlacement.cpp - where insert-comms puts each pair --------------===//
//
// See CommPlacement.h. The keys are PairKey's (CommPlacement.h); the
// optimizer times each candidate with the analysis layer's engine.
//
//===----------------------------------------------------------------------===//
#include "CommPlacement.h"

#include "pps/analysis/Deadlock.h"
#include "pps/analysis/Matching.h"
#include "pps/analysis/Timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace pps::passes::detail {

using namespace ir;

namespace {

constexpr uint64_t NoSite = ~uint64_t(0);

uint64_t site(int32_t Rank, size_t Index) {
  return (uint64_t(uint32_t(Rank)) << 32) | uint64_t(Index);
}

/// One pair event waiting for its slot on a rank.
struct Pending {
  PairKey Key;
  Action A;
  uint32_t Entry; // the consumer entry of its pair
  bool IsSend;
};

} // namespace

uint64_t placeByKeys(Schedule &S, const UnitIndex &U, const Timeline &TL,
                     const std::vector<uint8_t> &Early, PairSites *Sites) {
  const Topology &T = S.Topo;
  size_t NumRanks = S.Ranks.size();
  if (Sites) {
    Sites->Send.assign(TL.CrossProd.size(), NoSite);
    Sites->Recv.assign(TL.CrossProd.size(), NoSite);
  }
  auto KeyOf = [&](uint32_t P, uint32_t Entry) {
    uint32_t C = Entry >> 1, J = Entry & 1;
    return Early[Entry] ? PairKey::early(TL, P, C, J)
                        : PairKey::late(TL, P, C, J);
  };
  uint64_t Inserted = 0;
  std::vector<Pending> Events;
  std::vector<Action> New;
  for (size_t R = 0; R < NumRanks; ++R) {
    auto &Acts = S.Ranks[R].Actions;
    // This rank's pair events: the receive of each unit member fed from
    // another rank, the send of each one feeding another rank.
    Events.clear();
    forEachUnitMember(
        Acts, U.RankBase[R], [&](size_t I, unsigned J, uint32_t Unit) {
          const Action &X = Acts[I];
          uint32_t Me = Unit * 2 + J;
          uint32_t P = TL.CrossProd[Me];
          if (P != None)
            Events.push_back(
                {KeyOf(P, Me),
                 Action::comm(analysis::inputRecvKind(T, X), X.Microbatch,
                              X.Stage, U.UnitRank[P], X.Loc),
                 Me, false});
          uint32_t E = TL.CrossCons[Me];
          if (E != None)
            Events.push_back(
                {KeyOf(Unit, E),
                 Action::comm(analysis::outputSendKind(T, X), X.Microbatch,
                              X.Stage, U.UnitRank[E >> 1], X.Loc),
                 E, true});
        });
    std::sort(
        Events.begin(), Events.end(),
        [](const Pending &A, const Pending &B) { return A.Key.before(B.Key); });
    // Merge them into the program by key.
    New.clear();
    New.reserve(Acts.size() + Events.size());
    size_t Head = 0;
    auto Emit = [&](const Pending &E) {
      if (Sites)
        (E.IsSend ? Sites->Send : Sites->Recv)[E.Entry] =
            site(int32_t(R), New.size());
      New.push_back(E.A);
    };
    uint32_t Unit = U.RankBase[R];
    for (size_t I = 0; I < Acts.size();) {
      if (!isCompute(Acts[I].Kind)) {
        New.push_back(Acts[I++]);
        continue;
      }
      PairKey Here = PairKey::unit(TL, Unit);
      while (Head < Events.size() && Events[Head].Key.before(Here))
        Emit(Events[Head++]);
      unsigned Len = unitLength(Acts, I);
      for (unsigned J = 0; J < Len; ++J)
        New.push_back(Acts[I + J]);
      I += Len;
      ++Unit;
    }
    while (Head < Events.size())
      Emit(Events[Head++]);
    Inserted += Events.size();
    Acts.swap(New);
  }
  return Inserted;
}

double makespanUnderModel(const Schedule &S) {
  analysis::TimingResult R = analysis::computeTiming(S, analysis::timingOf(S));
  return R.Deadlocked ? std::numeric_limits<double>::infinity() : R.Makespan;
}

namespace {

/// The candidates optimize tries; see run().
class Optimizer {
public:
  Optimizer(const Schedule &Base, const UnitIndex &U, const Timeline &TL)
      : Base(Base), U(U), TL0(TL) {}
  double run(Schedule &Out);

private:
  /// Places Mask's keys of TL into Cand (with its sites) and times it;
  /// keeps it if it is the fastest so far.
  void tryKeys(const Timeline &TL, const std::vector<uint8_t> &Mask);
  /// PyTorch's lowering, if it is deadlock-free under the schedule's model.
  void tryPyTorch();
  /// Keeps Cand if it beats the best so far.
  void consider(double M, const Timeline *TL, const std::vector<uint8_t> *Mask);
  /// The timeline of the best candidate's simulated compute times (the
  /// dependency timeline's links and tie order), for keys that follow the
  /// model instead of the dependency timeline's estimate.
  bool retime(Timeline &Out);
  /// The pairs whose key the best candidate's timing says to flip.
  std::vector<uint32_t> flips();
  analysis::TimingResult timeBest(bool KeepHeld) const;

  const Schedule &Base;
  const UnitIndex &U;
  const Timeline &TL0;
  Schedule Cand, Best;
  PairSites CandSites, BestSites;
  double BestM = std::numeric_limits<double>::infinity();
  /// The keys of the best candidate (null: PyTorch's lowering).
  const Timeline *BestTL = nullptr;
  std::vector<uint8_t> BestMask;
  double Eps = 1e-9;
};

analysis::TimingResult Optimizer::timeBest(bool KeepHeld) const {
  analysis::TimingOptions TO = analysis::timingOf(Best);
  TO.KeepHeld = KeepHeld;
  return analysis::computeTiming(Best, TO);
}

void Optimizer::consider(double M, const Timeline *TL,
                         const std::vector<uint8_t> *Mask) {
  if (!(M < BestM - Eps))
    return;
  BestM = M;
  Best = Cand;
  BestSites = CandSites;
  BestTL = TL;
  BestMask = Mask ? *Mask : std::vector<uint8_t>();
}

void Optimizer::tryKeys(const Timeline &TL, const std::vector<uint8_t> &Mask) {
  Cand = Base;
  placeByKeys(Cand, U, TL, Mask, &CandSites);
  consider(makespanUnderModel(Cand), &TL, &Mask);
}

void Optimizer::tryPyTorch() {
  if (Base.Topo.Directions != 1)
    return;
  Cand = Base;
  SourceManager SM;
  DiagnosticEngine Quiet(SM);
  uint64_t Inserted = 0;
  if (!placeLikePyTorch(Cand, U, Quiet, Inserted))
    return;
  analysis::Matching M = analysis::matchComms(Cand);
  if (!M.clean() ||
      !analysis::checkDeadlock(Cand, M, Cand.Comm, Cand.Stream).Free)
    return; // PyTorch's order hangs under this model: no candidate
  CandSites = PairSites();
  consider(makespanUnderModel(Cand), nullptr, nullptr);
}

bool Optimizer::retime(Timeline &Out) {
  analysis::TimingResult T = timeBest(/*KeepHeld=*/false);
  if (T.Deadlocked)
    return false;
  Out = TL0;
  for (size_t R = 0; R < Best.Ranks.size(); ++R) {
    const auto &Acts = Best.Ranks[R].Actions;
    uint32_t Unit = U.RankBase[R];
    for (size_t I = 0; I < Acts.size();) {
      if (!isCompute(Acts[I].Kind)) {
        ++I;
        continue;
      }
      Out.Start[Unit] = T.Times[R].Start[I];
      Out.End[Unit] = T.Times[R].End[I];
      I += unitLength(Acts, I);
      ++Unit;
    }
  }
  // The resolution order: by simulated start, ties in the dependency
  // timeline's order (which respects every dependency and program order;
  // so does the simulated start, which is never earlier than a producer's
  // end or a rank's previous unit's).
  std::vector<uint32_t> ByStart(Out.Start.size());
  for (uint32_t K = 0; K < ByStart.size(); ++K)
    ByStart[K] = K;
  std::sort(ByStart.begin(), ByStart.end(), [&](uint32_t A, uint32_t B) {
    return Out.Start[A] != Out.Start[B] ? Out.Start[A] < Out.Start[B]
                                        : TL0.Seq[A] < TL0.Seq[B];
  });
  for (uint32_t K = 0; K < ByStart.size(); ++K)
    Out.Seq[ByStart[K]] = K;
  return true;
}

std::vector<uint32_t> Optimizer::flips() {
  std::vector<uint32_t> Out;
  if (!BestTL)
    return Out;
  analysis::TimingResult T = timeBest(/*KeepHeld=*/true);
  if (T.Deadlocked)
    return Out;
  // Receives some hold was blamed on.
  std::vector<std::vector<uint8_t>> Blamed(Best.Ranks.size());
  for (size_t R = 0; R < Best.Ranks.size(); ++R)
    Blamed[R].assign(Best.Ranks[R].Actions.size(), 0);
  for (const analysis::RankTimeline &RT : T.Times)
    for (size_t I = 0; I < RT.Held.size(); ++I)
      if (RT.Held[I] > Eps && RT.HeldBy[I] != NoSite)
        Blamed[RT.HeldBy[I] >> 32][uint32_t(RT.HeldBy[I])] = 1;
  for (uint32_t E = 0; E < BestSites.Send.size(); ++E) {
    uint64_t Sd = BestSites.Send[E], Rv = BestSites.Recv[E];
    if (Sd == NoSite || Rv == NoSite)
      continue;
    const analysis::RankTimeline &RT = T.Times[Rv >> 32];
    uint32_t RI = uint32_t(Rv);
    if (BestMask[E]) {
      // Early: back to late if its receive held its stream back.
      if (Blamed[Rv >> 32][RI])
        Out.push_back(E);
      continue;
    }
    // Late: early if the send sits behind other computes of its rank and
    // the receive then waited for it.
    uint32_t SI = uint32_t(Sd);
    const auto &SActs = Best.Ranks[Sd >> 32].Actions;
    bool AfterOthers = SI > 0 && isCompute(SActs[SI - 1].Kind) &&
                       !(SActs[SI - 1].Microbatch == SActs[SI].Microbatch &&
                         SActs[SI - 1].Stage == SActs[SI].Stage);
    if (AfterOthers && RT.End[RI] > RT.Start[RI] + Eps)
      Out.push_back(E);
  }
  return Out;
}

double Optimizer::run(Schedule &Out) {
  // 1. Every pair late (the consumer placement: the starting point, so the
  //    result is never slower than it), then every pair early.
  std::vector<uint8_t> Late(TL0.CrossProd.size(), 0), Early(Late.size(), 1);
  tryKeys(TL0, Late);
  if (std::isfinite(BestM))
    Eps = 1e-9 * std::max(1.0, BestM);
  tryKeys(TL0, Early);
  // 2. PyTorch's own lowering, when it is deadlock-free under the model.
  tryPyTorch();
  // 3. Keys from the best candidate's simulated times (twice: the second
  //    from the first's result when it won).
  Timeline Re[2];
  for (Timeline &TL : Re) {
    if (!retime(TL))
      break;
    double Before = BestM;
    tryKeys(TL, Late);
    tryKeys(TL, Early);
    if (!(BestM < Before))
      break;
  }
  // 4. Flips of single pairs that the best keyed candidate's timing
  //    suggests: all of them, else halves; bounded rounds, each linear.
  for (int Round = 0; Round < 6; ++Round) {
    std::vector<uint32_t> F = flips();
    double Before = BestM;
    const Timeline *TL = BestTL;
    std::vector<uint8_t> Mask = BestMask;
    for (size_t Take = F.size(); Take > 0 && !(BestM < Before); Take /= 2) {
      std::vector<uint8_t> Try = Mask;
      for (size_t K = 0; K < Take; ++K)
        Try[F[K]] ^= 1;
      tryKeys(*TL, Try);
      if (Take < 4)
        break;
    }
    if (!(BestM < Before))
      break;
  }
  Out = std::move(Best);
  return BestM;
}

} // namespace

double placeOptimized(Schedule &S, const UnitIndex &U, const Timeline &TL) {
  Schedule Base = S;
  return Optimizer(Base, U, TL).run(S);
}

bool placeLikePyTorch(Schedule &S, const UnitIndex &U, DiagnosticEngine &Diags,
                      uint64_t &Inserted) {
  const Topology &T = S.Topo;
  int32_t NumRanks = int32_t(S.Ranks.size());
  size_t NR = S.Ranks.size();
  std::vector<std::vector<Action>> Out(NR);
  std::vector<size_t> Head(NR, 0);
  std::vector<uint32_t> UnitOf(NR);
  for (int32_t R = 0; R < NumRanks; ++R)
    UnitOf[size_t(R)] = U.RankBase[size_t(R)];
  std::vector<uint8_t> Placed(U.numUnits(), 0);
  // Ready as _ready_to_schedule has it: the input's producer (or its
  // receive, which went in when the producer did) is in the rank's list;
  // W, and F on the first / B and I on the last stage, are always ready.
  auto Ready = [&](const Action &X) {
    if (X.Kind == ActionKind::W)
      return true;
    uint32_t P = UnitIndex::unitOf(producerEntry(T, U, X));
    return P == None || Placed[P];
  };
  Inserted = 0;
  size_t Left = 0;
  for (const RankProgram &RP : S.Ranks)
    Left += RP.Actions.empty() ? 0 : 1;
  while (Left) {
    bool Progress = false;
    // One action per rank and round, ranks in order.
    for (int32_t R = 0; R < NumRanks; ++R) {
      const auto &Acts = S.Ranks[size_t(R)].Actions;
      size_t &H = Head[size_t(R)];
      if (H >= Acts.size())
        continue;
      if (!isCompute(Acts[H].Kind)) {
        Out[size_t(R)].push_back(Acts[H++]);
      } else {
        unsigned Len = unitLength(Acts, H);
        bool Ok = true;
        for (unsigned J = 0; J < Len; ++J)
          Ok &= Ready(Acts[H + J]);
        if (!Ok)
          continue;
        uint32_t Unit = UnitOf[size_t(R)]++;
        Placed[Unit] = 1;
        for (unsigned J = 0; J < Len; ++J)
          Out[size_t(R)].push_back(Acts[H + J]);
        for (unsigned J = 0; J < Len; ++J) {
          const Action &X = Acts[H + J];
          uint32_t C = UnitIndex::unitOf(consumerEntry(T, U, X));
          if (C == None || U.UnitRank[C] == R)
            continue;
          int32_t To = U.UnitRank[C];
          Out[size_t(R)].push_back(Action::comm(analysis::outputSendKind(T, X),
                                                X.Microbatch, X.Stage, To,
                                                X.Loc));
          int32_t CS = analysis::consumerStage(T, X);
          Out[size_t(To)].push_back(Action::comm(
              analysis::inputRecvKind(T, Action::compute(X.Kind == ActionKind::F
                                                             ? ActionKind::F
                                                             : ActionKind::B,
                                                         X.Microbatch, CS)),
              X.Microbatch, CS, R, X.Loc));
          Inserted += 2;
        }
        H += Len;
      }
      Progress = true;
      if (H >= Acts.size())
        --Left;
    }
    if (!Progress) {
      for (int32_t R = 0; R < NumRanks; ++R) {
        const auto &Acts = S.Ranks[size_t(R)].Actions;
        if (Head[size_t(R)] < Acts.size()) {
          Diags.report(DiagKind::Deadlock, locOf(S, Acts[Head[size_t(R)]]),
                       fmt::format("PyTorch's send/recv lowering stops: rank "
                                   "{} never gets the input of {}",
                                   R, describe(S, R, Head[size_t(R)])));
          break;
        }
      }
      return false;
    }
  }
  for (int32_t R = 0; R < NumRanks; ++R)
    S.Ranks[size_t(R)].Actions = std::move(Out[size_t(R)]);
  return true;
}

} // namespace pps::passes::detail
