//===- InsertComms.cpp - insert-comms: send/recv insertion ----------------===//
//
// From the compute order, the dependency timeline gives every compute unit
// a key (start time, resolution order) that is a total order consistent
// with every dependency and every rank's program order. A cross-rank pair
// gets a key at its consumer's start time, below the consumer (see Event).
// Every rank's new program is its computes with the pair events merged in by
// key: on the consumer's rank the recv lands right before the consumer (only
// other comm events can sit between); on the producer's rank the send lands
// at the consumer's start time. All programs are therefore restrictions of
// one global order in which each pair is one event, which is why no comm
// model can deadlock (docs/passes.md).
//
//===----------------------------------------------------------------------===//
#include "pps/passes/InsertComms.h"

#include "PassUtil.h"
#include "VerifyDepsImpl.h"

#include <fmt/format.h>

#include <algorithm>

namespace pps::passes {

using namespace ir;
using namespace detail;

namespace {

/// A point in the global order. A unit U has key (Start[U], 1, Seq[U], 2);
/// the pair event feeding member j of consumer C from producer P has key
/// (Start[C], 0, Seq[C], j) when P started strictly earlier (so the send
/// precedes whatever the producer's rank starts at the same moment as C),
/// else (Start[C], 1, Seq[C], j), just below C. Either way
/// key(P) < key(pair) < key(C), and keys are all distinct. The last three
/// parts are packed in Order; a pair event names the comm it stands for
/// by the compute it serves (its rank-local index), the peer and the
/// direction.
struct Event {
  double Time;
  uint64_t Order;
  uint32_t Index;
  int32_t Peer;
  bool Recv;

  static uint64_t order(uint32_t Phase, uint32_t Seq, uint32_t Sub) {
    return uint64_t(Phase) << 34 | uint64_t(Seq) << 2 | Sub;
  }
  bool before(const Event &O) const {
    return Time < O.Time || (Time == O.Time && Order < O.Order);
  }
  /// The send or receive the event stands for.
  Action comm(const Topology &T, const std::vector<Action> &Acts) const {
    const Action &X = Acts[Index];
    ActionKind K =
        Recv ? analysis::inputRecvKind(T, X) : analysis::outputSendKind(T, X);
    return Action::comm(K, X.Microbatch, X.Stage, Peer, X.Loc);
  }
};

/// 2 if A[I] (a compute) begins an overlap pair, else 1.
unsigned unitLen(const Action *A, size_t N, size_t I) {
  return A[I].overlapsNext() && I + 1 < N && isCompute(A[I + 1].Kind) ? 2 : 1;
}

/// Writes one rank's new program: its actions with the pair events merged
/// in by key. Everything the loops read is copied into locals first (the
/// stores of actions, which hold bytes, could otherwise alias any array
/// and force reloads).
class RankMerge {
public:
  RankMerge(const Topology &T, const UnitIndex &U, const Timeline &TL)
      : T(T), Start(TL.Start.data()), Seq(TL.Seq.data()),
        CrossProd(TL.CrossProd.data()), CrossCons(TL.CrossCons.data()),
        UnitRank(U.UnitRank.data()) {}

  /// Merges rank R's Acts (its first unit is FirstUnit) into Out (which
  /// has room reserved for every action and event); returns the events
  /// inserted.
  uint64_t run(const std::vector<Action> &Acts, uint32_t FirstUnit,
               std::vector<Action> &Out);

private:
  void push(const Event &E) {
    if (Tail == Cap)
      grow();
    size_t K = Tail++;
    for (; K > Head && E.before(Q[K - 1]); --K)
      Q[K] = Q[K - 1];
    Q[K] = E;
  }
  void grow() {
    Buf.resize(std::max<size_t>(64, Buf.size() * 2));
    Q = Buf.data();
    Cap = Buf.size();
  }
  Event pair(uint32_t P, uint32_t C, uint32_t J, uint32_t Index, int32_t Peer,
             bool Recv) const {
    return {Start[C], Event::order(Start[P] < Start[C] ? 0 : 1, Seq[C], J),
            Index, Peer, Recv};
  }

  const Topology &T;
  const double *Start;
  const uint32_t *Seq, *CrossProd, *CrossCons;
  const int32_t *UnitRank;
  std::vector<Event> Buf; // the pending events, Q[Head..Tail) in key order
  Event *Q = nullptr;
  size_t Head = 0, Tail = 0, Cap = 0;
};

uint64_t RankMerge::run(const std::vector<Action> &Acts, uint32_t FirstUnit,
                        std::vector<Action> &Out) {
  const Action *A = Acts.data();
  size_t N = Acts.size();
  Head = Tail = 0;
  uint64_t Inserted = 0;
  // Receives are queued a little ahead: those of every upcoming unit that
  // starts at the same time as the next one (zero-cost units tie).
  size_t LookI = 0;
  uint32_t LookUnit = FirstUnit;
  auto QueueRecvs = [&](double UpTo) {
    while (LookI < N) {
      if (!isCompute(A[LookI].Kind)) {
        ++LookI;
        continue;
      }
      if (Start[LookUnit] > UpTo)
        return;
      unsigned Len = unitLen(A, N, LookI);
      for (unsigned J = 0; J < Len; ++J) {
        uint32_t P = CrossProd[size_t(LookUnit) * 2 + J];
        if (P == None)
          continue;
        push(pair(P, LookUnit, J, uint32_t(LookI + J), UnitRank[P],
                  /*Recv=*/true));
        ++Inserted;
      }
      LookI += Len;
      ++LookUnit;
    }
  };
  uint32_t Unit = FirstUnit;
  for (size_t I = 0; I < N;) {
    if (!isCompute(A[I].Kind)) {
      Out.push_back(A[I++]);
      continue;
    }
    unsigned Len = unitLen(A, N, I);
    // Every pair event ordered before this unit goes here.
    double Time = Start[Unit];
    QueueRecvs(Time);
    Event Here{Time, Event::order(1, Seq[Unit], 2), 0, 0, false};
    while (Head < Tail && Q[Head].before(Here))
      Out.push_back(Q[Head++].comm(T, Acts));
    if (Head == Tail)
      Head = Tail = 0;
    for (unsigned J = 0; J < Len; ++J)
      Out.push_back(A[I + J]);
    // Sends wait, ordered by their pair's key, for their slot.
    for (unsigned J = 0; J < Len; ++J) {
      uint32_t E = CrossCons[size_t(Unit) * 2 + J];
      if (E == None)
        continue;
      push(pair(Unit, E >> 1, E & 1, uint32_t(I + J), UnitRank[E >> 1],
                /*Recv=*/false));
      ++Inserted;
    }
    I += Len;
    ++Unit;
  }
  while (Head < Tail)
    Out.push_back(Q[Head++].comm(T, Acts));
  return Inserted;
}

class InsertCommsPass : public Pass {
public:
  llvm::StringRef name() const override { return "insert-comms"; }
  llvm::StringRef description() const override {
    return "insert send/recv pairs so the schedule cannot deadlock";
  }
  void run(Schedule &S, PassContext &Ctx) override;
  /// Adds only sends and receives.
  bool preservesComputeOrder() const override { return true; }

private:
  void reportCycle(const Schedule &S, const UnitIndex &U, const Timeline &TL,
                   DiagnosticEngine &Diags);
};

/// Index of the action that starts unit Unit (rank-local unit number).
size_t actionOfUnit(const Schedule &S, int32_t Rank, uint32_t LocalUnit) {
  const auto &Acts = S.Ranks[Rank].Actions;
  uint32_t K = 0;
  for (size_t I = 0; I < Acts.size(); ++I) {
    if (!isCompute(Acts[I].Kind))
      continue;
    if (K++ == LocalUnit)
      return I;
    if (Acts[I].overlapsNext() && I + 1 < Acts.size() &&
        isCompute(Acts[I + 1].Kind))
      ++I;
  }
  return Acts.size() - 1;
}

/// Computes whose input comes from another rank: each gets one receive,
/// and its producer one send.
uint64_t crossRankInputs(const Schedule &S) {
  const Topology &T = S.Topo;
  uint64_t N = 0;
  for (size_t R = 0; R < S.Ranks.size(); ++R)
    for (const Action &A : S.Ranks[R].Actions) {
      if (!isCompute(A.Kind))
        continue;
      schema::Producer P = analysis::producerOf(T, A);
      N += P.CrossStage && P.Stage >= 0 && P.Stage < T.Stages &&
           T.StageToRank[P.Stage] != int32_t(R);
    }
  return N;
}

} // namespace

void InsertCommsPass::reportCycle(const Schedule &S, const UnitIndex &U,
                                  const Timeline &TL, DiagnosticEngine &Diags) {
  size_t NumRanks = S.Ranks.size();
  std::vector<llvm::SmallVector<int32_t, 2>> Adj(NumRanks);
  std::vector<const Timeline::Stuck *> ByRank(NumRanks, nullptr);
  for (const Timeline::Stuck &B : TL.Blocked) {
    ByRank[B.Rank] = &B;
    if (B.WaitsFor != None)
      Adj[B.Rank].push_back(U.UnitRank[B.WaitsFor]);
  }
  std::vector<int32_t> Cycle = shortestCycle(Adj);
  auto Where = [&](int32_t R, uint32_t Unit) {
    return actionOfUnit(S, R, Unit - U.RankBase[R]);
  };
  if (Cycle.empty()) {
    const Timeline::Stuck &B = TL.Blocked.front();
    size_t I = Where(B.Rank, B.Unit);
    Diags.report(
        DiagKind::Deadlock, locOf(S, S.Ranks[B.Rank].Actions[I]),
        fmt::format("rank {} cannot run {}: its input is never produced",
                    B.Rank, describe(S, B.Rank, I)));
    return;
  }
  const Timeline::Stuck &First = *ByRank[Cycle.front()];
  size_t FirstI = Where(First.Rank, First.Unit);
  std::string Ranks;
  for (size_t K = 0; K < Cycle.size(); ++K)
    Ranks += (K ? (K + 1 == Cycle.size() ? " and " : ", ") : "") +
             std::to_string(Cycle[K]);
  Diagnostic &D = Diags.report(
      DiagKind::Deadlock, locOf(S, S.Ranks[First.Rank].Actions[FirstI]),
      fmt::format("the compute order deadlocks: rank{} {} wait{} on each other "
                  "before any send or receive could be placed",
                  Cycle.size() > 1 ? "s" : "", Ranks,
                  Cycle.size() > 1 ? "" : "s"));
  for (size_t K = 0; K < Cycle.size(); ++K) {
    const Timeline::Stuck &B = *ByRank[Cycle[K]];
    int32_t Q = U.UnitRank[B.WaitsFor];
    const Timeline::Stuck &QB = *ByRank[Q];
    size_t I = Where(B.Rank, B.Unit), PI = Where(Q, B.WaitsFor);
    size_t QI = Where(Q, QB.Unit);
    D.note(locOf(S, S.Ranks[B.Rank].Actions[I]),
           fmt::format("rank {} waits at {} for {} from rank {}", B.Rank,
                       describe(S, B.Rank, I), describe(S, Q, PI), Q));
    analysis::noteOnlyAfter(D, S, Q, PI, QI, "runs");
  }
}

void InsertCommsPass::run(Schedule &S, PassContext &Ctx) {
  if (S.hasComms()) {
    // The user wrote the comms: check them (verify-deps may have already).
    if (!Ctx.Results.DepsVerified)
      Ctx.Results.DepsVerified = detail::verifyDeps(S, Ctx.Diags);
    return;
  }
  const Topology &T = S.Topo;
  if (T.Stages <= 0 || T.Microbatches <= 0 ||
      int32_t(S.Ranks.size()) != T.Ranks ||
      int32_t(T.StageToRank.size()) != T.Stages)
    return;
  // Every cross-rank dependency becomes a send and a receive, which may
  // triple the schedule: count them before building anything per unit.
  if (!checkActionLimit(S, 2 * crossRankInputs(S), "sends and receives", Ctx))
    return;
  UnitIndex U;
  U.build(S);
  Timeline TL;
  if (!computeTimeline(S, U, TL)) {
    reportCycle(S, U, TL, Ctx.Diags);
    return;
  }

  // Exact sizes (from the timeline's links), so each rank's new program is
  // allocated once.
  size_t NumRanks = S.Ranks.size();
  std::vector<uint32_t> Extra(NumRanks, 0);
  for (size_t R = 0; R < NumRanks; ++R) {
    const uint32_t *Prod = TL.CrossProd.data(), *Cons = TL.CrossCons.data();
    uint32_t N = 0;
    for (size_t K = size_t(U.RankBase[R]) * 2,
                E = size_t(U.RankBase[R + 1]) * 2;
         K < E; ++K)
      N += (Prod[K] != None) + (Cons[K] != None);
    Extra[R] = N;
  }

  uint64_t Inserted = 0;
  RankMerge Merge(T, U, TL);
  for (size_t R = 0; R < NumRanks; ++R) {
    auto &Acts = S.Ranks[R].Actions;
    std::vector<Action> New;
    New.reserve(Acts.size() + Extra[R]);
    Inserted += Merge.run(Acts, U.RankBase[R], New);
    Acts = std::move(New);
  }
  Ctx.Results.CommsInserted += Inserted;
  // The compute order is as timed: align-bubbles need not time it again.
  Ctx.Results.ComputeMakespan = TL.Makespan;
}

std::unique_ptr<Pass> createInsertCommsPass() {
  return std::make_unique<InsertCommsPass>();
}

} // namespace pps::passes
