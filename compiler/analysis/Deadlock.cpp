//===- Deadlock.cpp - the happens-before check of a matched schedule ------===//
//
// The happens-before graph is walked in topological order (Kahn's algorithm
// with the edges left implicit): node = an action, or a comm group (one
// comm, or under batched a maximal run of consecutive comms); edges =
// program order, and for each matched pair (x in G, y in H) post(H) ->
// done(G) and post(G) -> done(H) (rendezvous: the pair is one event;
// batched: a group completes when all its operations are matched), or only
// post(send) -> done(recv) under eager. Each rank keeps a cursor; a posted
// group counts its unmatched partners and is woken when the count reaches
// zero, so every action and every edge is visited once. If some rank cannot
// finish, the wait-for graph over the blocked ranks gives the shortest
// cycle (a deadlock) and every rank's blocked action.
//
//===----------------------------------------------------------------------===//
#include "pps/analysis/Deadlock.h"

#include "pps/analysis/Dependencies.h"
#include "pps/analysis/Describe.h"
#include "pps/support/Prefetch.h"

#include "llvm/ADT/DenseMap.h"

#include <fmt/format.h>

#include <algorithm>

namespace pps::analysis {

using ir::Action;
using ir::CommModel;

namespace {

/// True if the message comm kind K carries is sent eagerly (the send never
/// waits for its receive): the schema's rule, shared with the timing engine
/// and the runtime.
bool eagerMessage(const ir::Schedule &S, const DeadlockResult &R,
                  ir::ActionKind K) {
  return schema::sendIsEager(R.Model, R.Stream, S.Cost.messageBytes(K));
}

bool perPeer(const DeadlockResult &R) {
  return R.Stream.Scope == ir::StreamScope::Peer;
}

/// True if operation YL of the rank in state QS is posted (its group is) or
/// done (the rank's cursor is past it).
bool postedOrDone(const DeadlockResult::RankState &QS, size_t YL) {
  return QS.Cursor > YL || (QS.Posted && YL < QS.GroupEnd);
}

/// True if operation I of Rank's posted group [Start, End) is matched:
/// its partner is posted (or it is an eager send).
bool satisfied(const ir::Schedule &S, const Matching &M,
               const DeadlockResult &R, int32_t Rank, size_t Start, size_t End,
               size_t I) {
  const Action &A = S.Ranks[Rank].Actions[I];
  if (ir::isSend(A.Kind) && eagerMessage(S, R, A.Kind))
    return true;
  uint32_t Y = M.Partner[M.Ids.gid(Rank, I)];
  if (Y == NoAction)
    return false;
  if (perPeer(R))
    return R.Posted[Y];
  int32_t Q = A.Peer; // a partner is on the peer's rank
  size_t YL = M.Ids.indexOn(Q, Y);
  if (Q == Rank && YL >= Start && YL < End)
    return true; // both ends in the group being posted
  return postedOrDone(R.Ranks[Q], YL);
}

/// Per action kind: true for a send whose message is eager (the schema's
/// rule, decided once per kind instead of once per operation).
struct EagerSends {
  bool Of[schema::NumKinds] = {};
  EagerSends(const ir::Schedule &S, const DeadlockResult &R) {
    for (unsigned K = 0; K < schema::NumKinds; ++K)
      Of[K] = ir::isSend(ir::ActionKind(K)) &&
              eagerMessage(S, R, ir::ActionKind(K));
  }
  bool operator()(ir::ActionKind K) const { return Of[unsigned(K)]; }
};

/// Walks the graph, leaving each rank's state in R; true if all finish.
bool walk(const ir::Schedule &S, const Matching &M, DeadlockResult &R) {
  int32_t NumRanks = int32_t(S.Ranks.size());
  R.Ranks.assign(NumRanks, DeadlockResult::RankState());
  std::vector<int32_t> Work;
  Work.reserve(NumRanks);
  for (int32_t Rk = NumRanks; Rk-- > 0;)
    Work.push_back(Rk);
  bool Batched = R.Model == CommModel::Batched;
  EagerSends Eager(S, R);
  const uint32_t *Partner = M.Partner.data();
  const uint32_t *Base = M.Ids.Base.data();
  DeadlockResult::RankState *Ranks = R.Ranks.data();

  // Operation A of Rk, whose partner is operation YL of rank Q (A's peer)
  // outside A's own group, was just posted: wakes Q if its posted group was
  // waiting for it.
  // A receive whose send is eager wakes nobody: the send never waited. (The
  // send's own message decides: a mismatched pair may carry another kind
  // than the receive expects.)
  auto WakePartner = [&](int32_t Rk, const Action &A, int32_t Q, uint32_t YL) {
    if (!ir::isSend(A.Kind) && Eager(S.Ranks[Q].Actions[YL].Kind))
      return;
    DeadlockResult::RankState &QS = Ranks[Q];
    if (QS.Posted && YL >= QS.Cursor && YL < QS.GroupEnd && QS.Remaining > 0)
      if (--QS.Remaining == 0 && Q != Rk)
        Work.push_back(Q);
  };
  // A group of one (every model but batched): the operation is matched if
  // it is an eager send or its partner is posted (or done).
  auto PostOne = [&](int32_t Rk, const Action &A, uint32_t C) {
    DeadlockResult::RankState &RS = Ranks[Rk];
    RS.Cursor = C;
    RS.GroupEnd = C + 1;
    RS.Posted = 1;
    uint32_t Y = Partner[Base[Rk] + C];
    bool EagerSend = Eager(A.Kind);
    if (Y == NoAction) {
      RS.Remaining = !EagerSend;
      return;
    }
    int32_t Q = A.Peer; // a partner is on the peer's rank
    uint32_t YL = Y - Base[Q];
    RS.Remaining = !(EagerSend || postedOrDone(Ranks[Q], YL));
    WakePartner(Rk, A, Q, YL);
  };
  // A batched group [Start, End).
  auto PostGroup = [&](int32_t Rk, const Action *Acts, uint32_t Start,
                       uint32_t End) {
    DeadlockResult::RankState &RS = Ranks[Rk];
    RS.Cursor = Start;
    RS.GroupEnd = End;
    RS.Posted = 1;
    uint32_t Rem = 0;
    for (uint32_t I = Start; I < End; ++I)
      Rem += !satisfied(S, M, R, Rk, Start, End, I);
    RS.Remaining = Rem;
    for (uint32_t I = Start; I < End; ++I) {
      uint32_t Y = Partner[Base[Rk] + I];
      if (Y == NoAction)
        continue;
      int32_t Q = Acts[I].Peer;
      uint32_t YL = Y - Base[Q];
      if (Q != Rk || YL < Start || YL >= End) // not both ends in the group
        WakePartner(Rk, Acts[I], Q, YL);
    }
  };

  while (!Work.empty()) {
    int32_t Rk = Work.back();
    Work.pop_back();
    const Action *Acts = S.Ranks[Rk].Actions.data();
    uint32_t N = uint32_t(S.Ranks[Rk].Actions.size());
    DeadlockResult::RankState &RS = Ranks[Rk];
    uint32_t C = RS.Cursor;
    for (;;) {
      if (RS.Posted) {
        if (RS.Remaining > 0)
          break;
        C = RS.GroupEnd;
        RS.Posted = 0;
      }
      while (C < N && !ir::isComm(Acts[C].Kind))
        ++C;
      if (C == N)
        break;
      if (!Batched) {
        PostOne(Rk, Acts[C], C);
        continue;
      }
      uint32_t End = C + 1;
      while (End < N && ir::isComm(Acts[End].Kind))
        ++End;
      PostGroup(Rk, Acts, C, End);
    }
    RS.Cursor = C;
    // The rank resumes here on its next visit, after the other ranks'
    // visits have pushed these lines out of cache: fetch them now.
    prefetchRead(Acts, C + 3);
    prefetchRead(Acts, C + 6);
    prefetchRead(Partner, Base[Rk] + C + 16);
  }
  for (int32_t Rk = 0; Rk < NumRanks; ++Rk)
    if (R.Ranks[Rk].Cursor < S.Ranks[Rk].Actions.size())
      return false;
  return true;
}

/// Scope peer: one in-order sequence of comms per (rank, peer); an
/// operation is posted once the one before it on its sequence completed and
/// every compute before it in program order finished; a compute finishes
/// once the receive it consumes (if any) completed. Fills R.Posted,
/// R.StuckOps and, for the explanation, R.Ranks[r] = the first stuck op.
bool walkPeer(const ir::Schedule &S, const Matching &M, DeadlockResult &R) {
  int32_t NumRanks = int32_t(S.Ranks.size());
  uint32_t Total = M.Ids.size();
  R.Ranks.assign(NumRanks, DeadlockResult::RankState());
  R.StuckOps.assign(NumRanks, {});
  R.Posted.assign(Total, 0);
  std::vector<uint8_t> Done(Total, 0);

  // Per rank: its sequences (ops per peer, program order), and which
  // receive serves each compute (by (kind, microbatch, stage)).
  struct Seq {
    int32_t Peer;
    std::vector<uint32_t> Ops;
    uint32_t Head = 0;
  };
  struct RankSt {
    std::vector<Seq> Seqs;
    uint32_t Compute = 0; // first compute not finished (program index)
  };
  std::vector<RankSt> Rs(NumRanks);
  // (rank, kind, microbatch, stage) -> index of the receive on the rank.
  llvm::DenseMap<std::pair<uint64_t, uint64_t>, uint32_t> RecvOf;
  auto Key = [](int32_t Rank, ir::ActionKind K, int32_t Mb, int32_t St) {
    return std::make_pair(
        (uint64_t(uint32_t(Rank)) << 8) | uint64_t(unsigned(K)),
        (uint64_t(uint32_t(Mb)) << 32) | uint64_t(uint32_t(St)));
  };
  for (int32_t Rk = 0; Rk < NumRanks; ++Rk) {
    const auto &Acts = S.Ranks[Rk].Actions;
    for (uint32_t I = 0; I < Acts.size(); ++I) {
      const Action &A = Acts[I];
      if (!ir::isComm(A.Kind))
        continue;
      Seq *Sq = nullptr;
      for (Seq &X : Rs[Rk].Seqs)
        if (X.Peer == A.Peer)
          Sq = &X;
      if (!Sq) {
        Rs[Rk].Seqs.push_back({A.Peer, {}, 0});
        Sq = &Rs[Rk].Seqs.back();
      }
      Sq->Ops.push_back(I);
      if (ir::isRecv(A.Kind))
        RecvOf.try_emplace(Key(Rk, A.Kind, A.Microbatch, A.Stage), I);
    }
  }
  std::vector<int32_t> Work;
  for (int32_t Rk = NumRanks; Rk-- > 0;)
    Work.push_back(Rk);
  auto Complete = [&](int32_t Rk, uint32_t I) {
    uint32_t G = M.Ids.gid(Rk, I);
    if (Done[G])
      return;
    Done[G] = 1;
    Work.push_back(Rk);
  };
  // Completes what posting op I of Rk (now posted) allows.
  auto OnPosted = [&](int32_t Rk, uint32_t I) {
    const Action &A = S.Ranks[Rk].Actions[I];
    uint32_t G = M.Ids.gid(Rk, I);
    R.Posted[G] = 1;
    bool Eager = eagerMessage(S, R, A.Kind);
    if (ir::isSend(A.Kind) && Eager)
      Complete(Rk, I);
    uint32_t Y = M.Partner[G];
    if (Y == NoAction || !R.Posted[Y])
      return;
    int32_t Q = A.Peer;
    uint32_t YL = uint32_t(M.Ids.indexOn(Q, Y));
    // Both ends posted: a rendezvous pair completes; the receive of an
    // eager message completes now that its send is posted.
    Complete(Rk, I);
    Complete(Q, YL);
  };
  while (!Work.empty()) {
    int32_t Rk = Work.back();
    Work.pop_back();
    RankSt &St = Rs[Rk];
    const auto &Acts = S.Ranks[Rk].Actions;
    for (bool Moved = true; Moved;) {
      Moved = false;
      // The computes, up to one whose receive has not completed.
      while (St.Compute < Acts.size()) {
        const Action &A = Acts[St.Compute];
        if (ir::isCompute(A.Kind)) {
          ir::ActionKind RK = inputRecvKind(S.Topo, A);
          if (RK != ir::ActionKind::Idle) {
            auto It = RecvOf.find(Key(Rk, RK, A.Microbatch, A.Stage));
            if (It != RecvOf.end() && It->second < St.Compute &&
                !Done[M.Ids.gid(Rk, It->second)])
              break;
          }
        }
        ++St.Compute;
        Moved = true;
      }
      for (Seq &Sq : St.Seqs)
        while (Sq.Head < Sq.Ops.size()) {
          uint32_t I = Sq.Ops[Sq.Head];
          uint32_t G = M.Ids.gid(Rk, I);
          if (!R.Posted[G]) {
            // St.Compute stops at the first compute that has not finished.
            if (St.Compute < I)
              break;
            OnPosted(Rk, I);
            Moved = true;
          }
          if (!Done[G])
            break;
          ++Sq.Head;
          Moved = true;
        }
    }
  }
  bool Free = true;
  for (int32_t Rk = 0; Rk < NumRanks; ++Rk) {
    const RankSt &St = Rs[Rk];
    for (const Seq &Sq : St.Seqs)
      if (Sq.Head < Sq.Ops.size() && R.Posted[M.Ids.gid(Rk, Sq.Ops[Sq.Head])])
        R.StuckOps[Rk].push_back(Sq.Ops[Sq.Head]);
    std::sort(R.StuckOps[Rk].begin(), R.StuckOps[Rk].end());
    bool SeqsDone = true;
    for (const Seq &Sq : St.Seqs)
      SeqsDone &= Sq.Head == Sq.Ops.size();
    DeadlockResult::RankState &RS = R.Ranks[Rk];
    if (SeqsDone && St.Compute == S.Ranks[Rk].Actions.size()) {
      RS.Cursor = RS.GroupEnd = uint32_t(S.Ranks[Rk].Actions.size());
      continue;
    }
    Free = false;
    uint32_t First = R.StuckOps[Rk].empty() ? St.Compute : R.StuckOps[Rk][0];
    RS.Cursor = First;
    RS.GroupEnd = First + 1;
    RS.Posted = 1;
    RS.Remaining = 1;
  }
  return Free;
}

/// Explains where the ranks of a result that is not free block.
class Report {
public:
  Report(const ir::Schedule &S, const Matching &M, const DeadlockResult &R)
      : S(S), M(M), R(R), NumRanks(int32_t(S.Ranks.size())) {}
  void run(DiagnosticEngine &D) const;
  /// The blocked ranks and the cycle; FirstBlocked[r] = r's first
  /// unsatisfied operation (SIZE_MAX if r finished).
  DeadlockExplanation explain(std::vector<size_t> &FirstBlocked) const;

private:
  /// The operation of Rk's posted group that waits for rank Q, else
  /// Fallback.
  size_t waitOp(int32_t Rk, int32_t Q, size_t Fallback) const;
  /// Rk's posted, unfinished operations: its posted group, or under scope
  /// peer the heads of its stuck sequences.
  llvm::SmallVector<size_t, 4> postedOps(int32_t Rk) const;
  uint32_t gid(int32_t Rank, size_t I) const { return M.Ids.gid(Rank, I); }
  bool satisfied(int32_t Rank, size_t Start, size_t End, size_t I) const {
    return analysis::satisfied(S, M, R, Rank, Start, End, I);
  }
  std::string blockedSentence(int32_t Rank, size_t I) const;

  const ir::Schedule &S;
  const Matching &M;
  const DeadlockResult &R;
  int32_t NumRanks;
};

std::string Report::blockedSentence(int32_t Rank, size_t I) const {
  const Action &A = S.Ranks[Rank].Actions[I];
  const DeadlockResult::RankState &RS = R.Ranks[Rank];
  std::string Batch;
  if (R.Model == CommModel::Batched && RS.GroupEnd - RS.Cursor > 1)
    Batch = fmt::format(" (in a batch of {})", RS.GroupEnd - RS.Cursor);
  uint32_t Y = M.Partner[gid(Rank, I)];
  if (Y == NoAction)
    return fmt::format("rank {} blocks at {}{}, which no {} ever matches", Rank,
                       describe(S, Rank, I), Batch,
                       ir::isSend(A.Kind) ? "receive" : "send");
  int32_t Q = A.Peer;
  return fmt::format("rank {} blocks at {}{} waiting for rank {} to post {}",
                     Rank, describe(S, Rank, I), Batch, Q,
                     describe(S, Q, M.Ids.indexOf(Y)));
}

DeadlockExplanation Report::explain(std::vector<size_t> &FirstBlocked) const {
  DeadlockExplanation X;
  // Each blocked rank's unsatisfied operations and the ranks they wait for.
  std::vector<llvm::SmallVector<int32_t, 2>> Adj(NumRanks);
  FirstBlocked.assign(NumRanks, SIZE_MAX);
  for (int32_t Rk = 0; Rk < NumRanks; ++Rk) {
    const DeadlockResult::RankState &RS = R.Ranks[Rk];
    if (RS.Cursor >= S.Ranks[Rk].Actions.size())
      continue;
    for (size_t I : postedOps(Rk)) {
      if (satisfied(Rk, RS.Cursor, RS.GroupEnd, I))
        continue;
      if (FirstBlocked[Rk] == SIZE_MAX)
        FirstBlocked[Rk] = I;
      if (M.Partner[gid(Rk, I)] == NoAction)
        continue;
      int32_t Q = S.Ranks[Rk].Actions[I].Peer;
      if (std::find(Adj[Rk].begin(), Adj[Rk].end(), Q) == Adj[Rk].end())
        Adj[Rk].push_back(Q);
    }
    if (FirstBlocked[Rk] == SIZE_MAX)
      FirstBlocked[Rk] = RS.Cursor; // defensive: name the group's first op
  }
  X.Cycle = shortestCycle(Adj);
  // On the cycle a rank is shown at the operation that waits for the next
  // rank of the cycle; elsewhere at its first unsatisfied one.
  std::vector<int32_t> Next(NumRanks, -1);
  for (size_t K = 0; K < X.Cycle.size(); ++K)
    Next[X.Cycle[K]] = X.Cycle[(K + 1) % X.Cycle.size()];
  for (int32_t Rk = 0; Rk < NumRanks; ++Rk) {
    if (FirstBlocked[Rk] == SIZE_MAX)
      continue;
    size_t I = Next[Rk] >= 0 ? waitOp(Rk, Next[Rk], FirstBlocked[Rk])
                             : FirstBlocked[Rk];
    DeadlockExplanation::Blocked B;
    B.Rank = Rk;
    B.Index = uint32_t(I);
    uint32_t Y = M.Partner[gid(Rk, I)];
    if (Y != NoAction) {
      B.WaitsFor = S.Ranks[Rk].Actions[I].Peer;
      B.PartnerIndex = uint32_t(M.Ids.indexOf(Y));
    }
    X.Ranks.push_back(B);
  }
  return X;
}

llvm::SmallVector<size_t, 4> Report::postedOps(int32_t Rk) const {
  llvm::SmallVector<size_t, 4> Ops;
  if (perPeer(R)) {
    Ops.append(R.StuckOps[Rk].begin(), R.StuckOps[Rk].end());
    return Ops;
  }
  const DeadlockResult::RankState &RS = R.Ranks[Rk];
  for (size_t I = RS.Cursor; I < RS.GroupEnd; ++I)
    Ops.push_back(I);
  return Ops;
}

size_t Report::waitOp(int32_t Rk, int32_t Q, size_t Fallback) const {
  const DeadlockResult::RankState &RS = R.Ranks[Rk];
  for (size_t I : postedOps(Rk))
    if (!satisfied(Rk, RS.Cursor, RS.GroupEnd, I) &&
        M.Partner[gid(Rk, I)] != NoAction && S.Ranks[Rk].Actions[I].Peer == Q)
      return I;
  return Fallback;
}

void Report::run(DiagnosticEngine &D) const {
  std::vector<size_t> FirstBlocked;
  DeadlockExplanation X = explain(FirstBlocked);
  std::vector<int32_t> Stuck;
  for (const DeadlockExplanation::Blocked &B : X.Ranks)
    Stuck.push_back(B.Rank);
  if (Stuck.empty())
    return;
  const std::vector<int32_t> &Cycle = X.Cycle;
  // The operation of Rk's group that waits for rank Q.
  auto WaitOp = [&](int32_t Rk, int32_t Q) {
    return waitOp(Rk, Q, FirstBlocked[Rk]);
  };
  auto Loc = [&](int32_t Rk, size_t I) {
    return locOf(S, S.Ranks[Rk].Actions[I]);
  };
  std::string ModelName = ir::commDescription(R.Model, R.Stream);

  Diagnostic *Dg = nullptr;
  std::vector<uint8_t> OnCycle(NumRanks, 0);
  if (!Cycle.empty()) {
    std::string Ranks;
    for (size_t K = 0; K < Cycle.size(); ++K) {
      OnCycle[Cycle[K]] = 1;
      Ranks += (K ? (K + 1 == Cycle.size() ? " and " : ", ") : "") +
               std::to_string(Cycle[K]);
    }
    int32_t R0 = Cycle.front();
    int32_t R1 = Cycle.size() > 1 ? Cycle[1] : R0;
    std::string What =
        Cycle.size() == 1   ? fmt::format("rank {} waits on itself", R0)
        : Cycle.size() == 2 ? fmt::format("ranks {} wait on each other", Ranks)
                            : fmt::format("ranks {} wait in a cycle", Ranks);
    Dg = &D.report(DiagKind::Deadlock, Loc(R0, WaitOp(R0, R1)),
                   fmt::format("deadlock under the {}: {}", ModelName, What));
    for (size_t K = 0; K < Cycle.size(); ++K) {
      int32_t Rk = Cycle[K], Q = Cycle[(K + 1) % Cycle.size()];
      size_t I = WaitOp(Rk, Q);
      Dg->note(Loc(Rk, I), blockedSentence(Rk, I));
      size_t YL = M.Ids.indexOf(M.Partner[gid(Rk, I)]);
      int32_t QNext = Cycle[(K + 2) % Cycle.size()];
      size_t QI = WaitOp(Q, QNext);
      noteOnlyAfter(*Dg, S, Q, YL, QI, "posts");
    }
  } else {
    // No cycle: every chain of waits ends at an operation nothing matches.
    Dg = &D.report(DiagKind::UnmatchedRecv,
                   Loc(Stuck.front(), FirstBlocked[Stuck.front()]),
                   fmt::format("the schedule cannot finish under the {}: "
                               "{} rank{} forever",
                               ModelName, Stuck.size(),
                               Stuck.size() > 1 ? "s block" : " blocks"));
    for (int32_t Rk : Stuck)
      if (M.Partner[gid(Rk, FirstBlocked[Rk])] == NoAction &&
          ir::isSend(S.Ranks[Rk].Actions[FirstBlocked[Rk]].Kind)) {
        Dg->Kind = DiagKind::UnmatchedSend;
        break;
      }
  }
  unsigned Extra = 0, Shown = 0;
  for (int32_t Rk : Stuck) {
    if (OnCycle[Rk])
      continue;
    if (Shown == 8) {
      ++Extra;
      continue;
    }
    ++Shown;
    Dg->note(Loc(Rk, FirstBlocked[Rk]), blockedSentence(Rk, FirstBlocked[Rk]));
  }
  if (Extra)
    Dg->note(S.DeclLoc, fmt::format("{} more ranks are blocked", Extra));
}

} // namespace

DeadlockResult checkDeadlock(const ir::Schedule &S, const Matching &M,
                             CommModel Model,
                             std::optional<ir::CommStream> Stream) {
  DeadlockResult R;
  R.Model = Model;
  R.Stream = Stream ? *Stream : S.Stream;
  R.Free = perPeer(R) ? walkPeer(S, M, R) : walk(S, M, R);
  return R;
}

DeadlockExplanation explainDeadlock(const ir::Schedule &S, const Matching &M,
                                    const DeadlockResult &R) {
  if (R.Free)
    return {};
  std::vector<size_t> FirstBlocked;
  return Report(S, M, R).explain(FirstBlocked);
}

void reportDeadlock(const ir::Schedule &S, const Matching &M,
                    const DeadlockResult &R, DiagnosticEngine &D) {
  if (R.Free)
    return;
  Report(S, M, R).run(D);
}

void noteOnlyAfter(Diagnostic &D, const ir::Schedule &S, int32_t Peer,
                   size_t Needed, size_t Blocked, llvm::StringRef Verb) {
  if (Needed == Blocked)
    return;
  D.note(locOf(S, S.Ranks[size_t(Peer)].Actions[Needed]),
         fmt::format("rank {} {} {} only after {}", Peer, Verb.str(),
                     describe(S, Peer, Needed), describe(S, Peer, Blocked)));
}

std::vector<int32_t>
shortestCycle(llvm::ArrayRef<llvm::SmallVector<int32_t, 2>> Adj) {
  size_t N = Adj.size();
  for (size_t R = 0; R < N; ++R)
    for (int32_t Q : Adj[R])
      if (Q == int32_t(R))
        return {int32_t(R)};
  std::vector<int32_t> Best;
  std::vector<int32_t> Dist(N, -1), Parent(N, -1), Queue;
  Queue.reserve(N);
  uint64_t Work = 0;
  const uint64_t WorkLimit = 50'000'000;
  for (size_t Src = 0; Src < N && Work < WorkLimit; ++Src) {
    if (Adj[Src].empty())
      continue;
    std::fill(Dist.begin(), Dist.end(), -1);
    Queue.clear();
    Dist[Src] = 0;
    Queue.push_back(int32_t(Src));
    int32_t Closing = -1;
    for (size_t Head = 0; Head < Queue.size() && Closing < 0; ++Head) {
      int32_t V = Queue[Head];
      if (!Best.empty() && Dist[V] + 1 >= int32_t(Best.size()))
        break; // cannot beat the best cycle any more
      for (int32_t Q : Adj[V]) {
        ++Work;
        if (Q == int32_t(Src)) {
          Closing = V;
          break;
        }
        if (Dist[Q] < 0) {
          Dist[Q] = Dist[V] + 1;
          Parent[Q] = V;
          Queue.push_back(Q);
        }
      }
    }
    if (Closing < 0)
      continue;
    std::vector<int32_t> Cycle;
    for (int32_t V = Closing; V != int32_t(Src); V = Parent[V])
      Cycle.push_back(V);
    Cycle.push_back(int32_t(Src));
    std::reverse(Cycle.begin(), Cycle.end());
    if (Best.empty() || Cycle.size() < Best.size())
      Best = std::move(Cycle);
    if (Best.size() <= 2)
      break;
  }
  return Best;
}

} // namespace pps::analysis
