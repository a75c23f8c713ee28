//===- InsertComms.cpp - insert-comms: send/recv insertion ----------------===//
//
// From the compute order, the dependency timeline gives every compute unit
// a key (start time, resolution order) that is a total order consistent
// with every dependency and every rank's program order. A cross-rank pair
// for consumer unit C (member j) gets the key just below C's key:
// (key(C), j) - epsilon. Every rank's new program is its computes with the
// pair events merged in by key: on the consumer's rank the recv lands
// directly before C; on the producer's rank the send lands after the last
// of its units whose key is below C's. All programs are therefore
// restrictions of one global order in which each pair is one event, which
// is why no comm model can deadlock (docs/passes.md).
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

/// A send waiting on its producer's rank for its slot.
struct PendingSend {
  uint32_t Consumer; // consumer unit
  uint32_t Member;   // 0/1 within the consumer's unit
  Action A;
};

class InsertCommsPass : public Pass {
public:
  llvm::StringRef name() const override { return "insert-comms"; }
  llvm::StringRef description() const override {
    return "insert send/recv pairs so the schedule cannot deadlock";
  }
  void run(Schedule &S, PassContext &Ctx) override;

private:
  void reportCycle(const Schedule &S, const UnitIndex &U, const Timeline &TL,
                   DiagnosticEngine &Diags);
};

unsigned unitLen(const std::vector<Action> &Acts, size_t I) {
  return Acts[I].overlapsNext() && I + 1 < Acts.size() && isCompute(Acts[I + 1].Kind)
             ? 2
             : 1;
}

/// True if X, member J of Unit, is the registered occurrence of its compute
/// (duplicates get no comms).
bool registered(const Topology &T, const UnitIndex &U, const Action &X,
                uint32_t Unit, unsigned J) {
  if (!inRange(T, X) || X.Kind == ActionKind::W)
    return false;
  uint32_t E = X.Kind == ActionKind::F ? U.UnitF[msIndex(T, X.Microbatch, X.Stage)]
                                       : U.UnitBI[msIndex(T, X.Microbatch, X.Stage)];
  return E == Unit * 2 + J;
}

/// Index of the action that starts unit Unit (rank-local unit number).
size_t actionOfUnit(const Schedule &S, int32_t Rank, uint32_t LocalUnit) {
  const auto &Acts = S.Ranks[Rank].Actions;
  uint32_t K = 0;
  for (size_t I = 0; I < Acts.size(); ++I) {
    if (!isCompute(Acts[I].Kind))
      continue;
    if (K++ == LocalUnit)
      return I;
    if (Acts[I].overlapsNext() && I + 1 < Acts.size() && isCompute(Acts[I + 1].Kind))
      ++I;
  }
  return Acts.size() - 1;
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
    Diags.report(DiagKind::Deadlock, locOf(S, S.Ranks[B.Rank].Actions[I]),
                 fmt::format("rank {} cannot run {}: its input is never produced",
                             B.Rank, describe(S, B.Rank, I)));
    return;
  }
  const Timeline::Stuck &First = *ByRank[Cycle.front()];
  size_t FirstI = Where(First.Rank, First.Unit);
  std::string Ranks;
  for (size_t K = 0; K < Cycle.size(); ++K)
    Ranks += (K ? (K + 1 == Cycle.size() ? " and " : ", ") : "") + std::to_string(Cycle[K]);
  Diagnostic &D = Diags.report(
      DiagKind::Deadlock, locOf(S, S.Ranks[First.Rank].Actions[FirstI]),
      fmt::format("the compute order deadlocks: rank{} {} wait{} on each other "
                  "before any send or receive could be placed",
                  Cycle.size() > 1 ? "s" : "", Ranks, Cycle.size() > 1 ? "" : "s"));
  for (size_t K = 0; K < Cycle.size(); ++K) {
    const Timeline::Stuck &B = *ByRank[Cycle[K]];
    int32_t Q = U.UnitRank[B.WaitsFor];
    const Timeline::Stuck &QB = *ByRank[Q];
    size_t I = Where(B.Rank, B.Unit), PI = Where(Q, B.WaitsFor);
    size_t QI = Where(Q, QB.Unit);
    D.note(locOf(S, S.Ranks[B.Rank].Actions[I]),
           fmt::format("rank {} waits at {} for {} from rank {}", B.Rank,
                       describe(S, B.Rank, I), describe(S, Q, PI), Q));
    D.note(locOf(S, S.Ranks[Q].Actions[PI]),
           fmt::format("rank {} runs {} only after {}", Q, describe(S, Q, PI),
                       describe(S, Q, QI)));
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
  if (T.Stages <= 0 || T.Microbatches <= 0 || int32_t(S.Ranks.size()) != T.Ranks ||
      int32_t(T.StageToRank.size()) != T.Stages)
    return;
  UnitIndex U;
  U.build(S);
  Timeline TL;
  if (!computeTimeline(S, U, TL)) {
    reportCycle(S, U, TL, Ctx.Diags);
    return;
  }

  // Exact sizes, so each rank's new program is allocated once.
  size_t NumRanks = S.Ranks.size();
  std::vector<uint32_t> Extra(NumRanks, 0);
  for (size_t R = 0; R < NumRanks; ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    uint32_t Unit = U.RankBase[R];
    for (size_t I = 0; I < Acts.size();) {
      if (!isCompute(Acts[I].Kind)) {
        ++I;
        continue;
      }
      unsigned Len = unitLen(Acts, I);
      for (unsigned J = 0; J < Len; ++J) {
        const Action &X = Acts[I + J];
        if (!registered(T, U, X, Unit, J))
          continue;
        uint32_t P = UnitIndex::unitOf(producerEntry(T, U, X));
        uint32_t C = UnitIndex::unitOf(consumerEntry(T, U, X));
        Extra[R] += (P != None && U.UnitRank[P] != int32_t(R)) +
                    (C != None && U.UnitRank[C] != int32_t(R));
      }
      I += Len;
      ++Unit;
    }
  }

  uint64_t Inserted = 0;
  llvm::SmallVector<PendingSend, 16> Pending;
  std::vector<Action> New;
  for (size_t R = 0; R < NumRanks; ++R) {
    auto &Acts = S.Ranks[R].Actions;
    New.clear();
    New.reserve(Acts.size() + Extra[R]);
    Pending.clear();
    size_t Head = 0;
    uint32_t Unit = U.RankBase[R], End = U.RankBase[R + 1];
    auto Before = [&](const PendingSend &A, const PendingSend &B) {
      if (A.Consumer != B.Consumer)
        return TL.before(A.Consumer, B.Consumer);
      return A.Member < B.Member;
    };
    for (size_t I = 0; I < Acts.size();) {
      const Action &A = Acts[I];
      if (!isCompute(A.Kind)) {
        New.push_back(A);
        ++I;
        continue;
      }
      unsigned Len = unitLen(Acts, I);
      // Receives directly before the unit that consumes them.
      for (unsigned J = 0; J < Len; ++J) {
        const Action &X = Acts[I + J];
        if (!registered(T, U, X, Unit, J))
          continue;
        uint32_t P = UnitIndex::unitOf(producerEntry(T, U, X));
        if (P == None || U.UnitRank[P] == int32_t(R))
          continue;
        New.push_back(Action::comm(X.Kind == ActionKind::F ? ActionKind::RecvF
                                                           : ActionKind::RecvB,
                                   X.Microbatch, X.Stage, U.UnitRank[P], X.Loc));
        ++Inserted;
      }
      for (unsigned J = 0; J < Len; ++J)
        New.push_back(Acts[I + J]);
      // Sends wait, ordered by their consumer's key, for their slot.
      for (unsigned J = 0; J < Len; ++J) {
        const Action &X = Acts[I + J];
        if (!registered(T, U, X, Unit, J))
          continue;
        uint32_t E = consumerEntry(T, U, X);
        uint32_t C = UnitIndex::unitOf(E);
        if (C == None || U.UnitRank[C] == int32_t(R))
          continue;
        PendingSend P{C, E & 1,
                      Action::comm(X.Kind == ActionKind::F ? ActionKind::SendF
                                                           : ActionKind::SendB,
                                   X.Microbatch, X.Stage, U.UnitRank[C], X.Loc)};
        Pending.push_back(P);
        for (size_t K = Pending.size() - 1; K > Head && Before(Pending[K], Pending[K - 1]); --K)
          std::swap(Pending[K], Pending[K - 1]);
        ++Inserted;
      }
      I += Len;
      ++Unit;
      // Flush the sends whose consumer comes before this rank's next unit.
      while (Head < Pending.size() &&
             (Unit == End || TL.before(Pending[Head].Consumer, Unit)))
        New.push_back(Pending[Head++].A);
      if (Head == Pending.size()) {
        Pending.clear();
        Head = 0;
      }
    }
    for (; Head < Pending.size(); ++Head)
      New.push_back(Pending[Head].A);
    Acts = std::move(New);
    New = std::vector<Action>();
  }
  Ctx.Results.CommsInserted += Inserted;
}

std::unique_ptr<Pass> createInsertCommsPass() {
  return std::make_unique<InsertCommsPass>();
}

} // namespace pps::passes
