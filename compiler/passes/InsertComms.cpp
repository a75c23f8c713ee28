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

#include "CommPlacement.h"
#include "PassUtil.h"
#include "VerifyDepsImpl.h"
#include "pps/support/Parallel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pps::passes {

using namespace ir;
using namespace detail;

namespace {

/// A pair event waiting for its slot (keys: CommPlacement.h).
struct Event {
  PairKey Key;
  /// The comm, by parts: its kind and peer, and the index of the compute
  /// (in the rank's old program) whose microbatch, stage and location it
  /// takes. Written field by field and read the same way: a whole Action
  /// built in the slot and copied out soon after stalled on store-to-load
  /// forwarding (its fields were stored narrow and copied wide).
  uint32_t From;
  int32_t Peer;
  ActionKind Kind;
};

class InsertCommsPass : public Pass {
public:
  explicit InsertCommsPass(InsertCommsOptions Opts) : Opts(Opts) {}
  llvm::StringRef name() const override { return "insert-comms"; }
  /// Adds (or reorders) only sends and receives.
  bool preservesComputeOrder() const override { return true; }
  llvm::StringRef description() const override {
    return "insert send/recv pairs so the schedule cannot deadlock";
  }
  void run(Schedule &S, PassContext &Ctx) override;

private:
  void reportCycle(const Schedule &S, const UnitIndex &U, const Timeline &TL,
                   DiagnosticEngine &Diags);
  /// The consumer placement: the linear merge of the late keys.
  uint64_t placeConsumer(Schedule &S, const UnitIndex &U, const Timeline &TL);
  /// ReorderComms on a schedule with checked comms of its own.
  void reorder(Schedule &S, PassContext &Ctx);
  CommPlacement placement(const Schedule &S) const {
    if (Opts.Placement)
      return *Opts.Placement;
    return S.Stream.inOrder() && S.Cost.AsyncComm ? CommPlacement::Optimize
                                                  : CommPlacement::Consumer;
  }

  InsertCommsOptions Opts;
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
  return parallelSum(S.Ranks.size(), threadsForActions(S.numActions()),
                     [&](size_t R, unsigned) {
                       uint64_t N = 0;
                       for (const Action &A : S.Ranks[R].Actions) {
                         if (!isCompute(A.Kind))
                           continue;
                         schema::Producer P = analysis::producerOf(T, A);
                         N += P.CrossStage && P.Stage >= 0 &&
                              P.Stage < T.Stages &&
                              T.StageToRank[P.Stage] != int32_t(R);
                       }
                       return N;
                     });
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

void InsertCommsPass::reorder(Schedule &S, PassContext &Ctx) {
  double Before = makespanUnderModel(S);
  Schedule Cand = S;
  for (RankProgram &R : Cand.Ranks)
    llvm::erase_if(R.Actions, [](const Action &A) { return isComm(A.Kind); });
  UnitIndex U;
  U.build(Cand);
  Timeline TL;
  if (!computeTimeline(Cand, U, TL))
    return; // the compute order itself is stuck: the deadlock pass says
  double After = placeOptimized(Cand, U, TL);
  double Eps = 1e-9 * std::max(1.0, std::isfinite(After) ? After : 1.0);
  if (std::isfinite(After) && !(After < Before - Eps)) {
    Ctx.Results.Reordered = {Before, Before}; // kept: already as good
    return;
  }
  for (size_t R = 0; R < S.Ranks.size(); ++R)
    S.Ranks[R].Actions = std::move(Cand.Ranks[R].Actions);
  Ctx.Results.Reordered = {Before, After};
}

void InsertCommsPass::run(Schedule &S, PassContext &Ctx) {
  if (S.hasComms()) {
    // The user wrote the comms: check them (verify-deps may have already).
    if (!Ctx.Results.DepsVerified)
      Ctx.Results.DepsVerified = detail::verifyDeps(S, Ctx.Diags);
    if (Opts.ReorderComms && Ctx.Results.DepsVerified)
      reorder(S, Ctx);
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
  // The compute order is as timed (the comms come next to it, whatever
  // the placement): align-bubbles need not time it again.
  Ctx.Results.ComputeMakespan = TL.Makespan;

  switch (placement(S)) {
  case CommPlacement::Consumer:
    Ctx.Results.CommsInserted += placeConsumer(S, U, TL);
    return;
  case CommPlacement::Producer:
    Ctx.Results.CommsInserted +=
        placeByKeys(S, U, TL, std::vector<uint8_t>(TL.CrossProd.size(), 1));
    return;
  case CommPlacement::Optimize: {
    placeOptimized(S, U, TL);
    Ctx.Results.CommsInserted += 2 * crossRankInputs(S);
    return;
  }
  case CommPlacement::PyTorch: {
    if (S.Topo.Directions != 1) {
      Ctx.Diags.report(DiagKind::InvalidValue, S.DeclLoc,
                       "PyTorch's send/recv lowering knows one route through "
                       "the stages; this pipeline has two directions");
      return;
    }
    uint64_t Inserted = 0;
    if (placeLikePyTorch(S, U, Ctx.Diags, Inserted))
      Ctx.Results.CommsInserted += Inserted;
    return;
  }
  }
  llvm_unreachable("every placement is handled");
}

uint64_t InsertCommsPass::placeConsumer(Schedule &S, const UnitIndex &U,
                                        const Timeline &TL) {
  // Ranks are merged independently (each reads the timeline and writes
  // only its own program), on a few threads for big schedules, each with
  // its own scratch: the programs do not depend on the threads.
  size_t NumRanks = S.Ranks.size();
  unsigned Threads = threadsForActions(S.numActions());
  std::vector<llvm::SmallVector<Event, 16>> Scratch(Threads);
  return parallelSum(NumRanks, Threads, [&](size_t R, unsigned Worker) {
    // The old program, read through a local view (a reference to the
    // vector would be reloaded after every store into the new one).
    llvm::ArrayRef<Action> Acts = S.Ranks[R].Actions;
    // The exact size (from the timeline's links), so the rank's new program
    // is allocated once.
    size_t Extra = 0;
    for (size_t K = size_t(U.RankBase[R]) * 2;
         K < size_t(U.RankBase[R + 1]) * 2; ++K)
      Extra += (TL.CrossProd[K] != None) + (TL.CrossCons[K] != None);
    std::vector<Action> New;
    New.reserve(Acts.size() + Extra);
    llvm::SmallVector<Event, 16> &Pending = Scratch[Worker];
    Pending.clear();
    size_t Head = 0;
    uint64_t Added = 0;
    // Insertion from the back: most events arrive in key order. The event
    // is written into its slot at the back and only moved when it belongs
    // further up.
    auto Push = [&](ActionKind Kind, size_t From, int32_t Peer, uint32_t Prod,
                    uint32_t Cons, uint32_t J) {
      Event &E = Pending.emplace_back();
      E.Key = PairKey::late(TL, Prod, Cons, J);
      E.From = uint32_t(From);
      E.Peer = Peer;
      E.Kind = Kind;
      size_t At = Pending.size() - 1;
      if (At > Head && E.Key.before(Pending[At - 1].Key)) {
        Event Moved = E;
        for (; At > Head && Moved.Key.before(Pending[At - 1].Key); --At)
          Pending[At] = Pending[At - 1];
        Pending[At] = Moved;
      }
      ++Added;
    };
    auto Emit = [&](const Event &E) {
      const Action &X = Acts[E.From];
      Action &C = New.emplace_back();
      C.Kind = E.Kind;
      C.Microbatch = X.Microbatch;
      C.Stage = X.Stage;
      C.Peer = E.Peer;
      C.Loc = X.Loc;
    };
    // Receives are queued a little ahead: those of every upcoming unit that
    // starts at the same time as the next one (zero-cost units tie).
    size_t LookI = 0;
    uint32_t LookUnit = U.RankBase[R];
    auto QueueRecvs = [&](double UpTo) {
      while (LookI < Acts.size()) {
        if (!isCompute(Acts[LookI].Kind)) {
          ++LookI;
          continue;
        }
        if (TL.Start[LookUnit] > UpTo)
          return;
        unsigned Len = unitLength(Acts, LookI);
        for (unsigned J = 0; J < Len; ++J) {
          uint32_t P = TL.CrossProd[size_t(LookUnit) * 2 + J];
          if (P == None)
            continue;
          Push(analysis::inputRecvKind(S.Topo, Acts[LookI + J]), LookI + J,
               U.UnitRank[P], P, LookUnit, J);
        }
        LookI += Len;
        ++LookUnit;
      }
    };
    uint32_t Unit = U.RankBase[R];
    for (size_t I = 0; I < Acts.size();) {
      const Action &A = Acts[I];
      if (!isCompute(A.Kind)) {
        New.push_back(A);
        ++I;
        continue;
      }
      unsigned Len = unitLength(Acts, I);
      // Every pair event ordered before this unit goes here.
      QueueRecvs(TL.Start[Unit]);
      PairKey Here = PairKey::unit(TL, Unit);
      while (Head < Pending.size() && Pending[Head].Key.before(Here))
        Emit(Pending[Head++]);
      if (Head == Pending.size()) {
        Pending.clear();
        Head = 0;
      }
      for (unsigned J = 0; J < Len; ++J)
        New.push_back(Acts[I + J]);
      // Sends wait, ordered by their pair's key, for their slot.
      for (unsigned J = 0; J < Len; ++J) {
        uint32_t E = TL.CrossCons[size_t(Unit) * 2 + J];
        if (E == None)
          continue;
        uint32_t C = E >> 1;
        Push(analysis::outputSendKind(S.Topo, Acts[I + J]), I + J,
             U.UnitRank[C], Unit, C, E & 1);
      }
      I += Len;
      ++Unit;
    }
    for (; Head < Pending.size(); ++Head)
      Emit(Pending[Head]);
    S.Ranks[R].Actions = std::move(New);
    return Added;
  });
}

llvm::StringRef commPlacementName(CommPlacement P) {
  switch (P) {
  case CommPlacement::Consumer:
    return "consumer";
  case CommPlacement::Producer:
    return "producer";
  case CommPlacement::Optimize:
    return "optimize";
  case CommPlacement::PyTorch:
    return "pytorch";
  }
  llvm_unreachable("every placement has a name");
}

std::optional<CommPlacement> commPlacementNamed(llvm::StringRef Name) {
  for (CommPlacement P : {CommPlacement::Consumer, CommPlacement::Producer,
                          CommPlacement::Optimize, CommPlacement::PyTorch})
    if (Name == commPlacementName(P))
      return P;
  return std::nullopt;
}

std::unique_ptr<Pass> createInsertCommsPass(InsertCommsOptions Opts) {
  return std::make_unique<InsertCommsPass>(Opts);
}

} // namespace pps::passes
