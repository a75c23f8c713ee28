//===- Deadlock.cpp - deadlock: matching and happens-before cycle check ---===//
//
// 1. Per comm: self-comm and wrong-peer (against the topology).
// 2. FIFO matching per (source, destination) channel with a counting pass
//    and a CSR array of each channel's sends: the n-th send pairs with the
//    n-th receive. Pairs whose kind/microbatch/stage disagree are FIFO
//    mismatches; the rest are unmatched.
// 3. The happens-before graph, walked in topological order (Kahn's
//    algorithm with the edges left implicit): node = an action, or a comm
//    group (one comm, or under batched a maximal run of consecutive comms);
//    edges = program order, and for each matched pair (x in G, y in H)
//    post(H) -> done(G) and post(G) -> done(H) (rendezvous: the pair is one
//    event; batched: a group completes when all its operations are matched),
//    or only post(send) -> done(recv) under eager. Each rank keeps a cursor;
//    a posted group counts its unmatched partners and is woken when the
//    count reaches zero, so every action and every edge is visited once.
// 4. If some rank cannot finish, the ranks wait on each other: the wait-for
//    graph over the blocked ranks gives the shortest cycle (a deadlock) and
//    every rank's blocked action.
//
//===----------------------------------------------------------------------===//
#include "pps/passes/Deadlock.h"

#include "PassUtil.h"

#include "llvm/ADT/DenseMap.h"

#include <fmt/format.h>

#include <algorithm>

namespace pps::passes {

using namespace ir;
using namespace detail;

namespace {

/// "1 receive", "2 receives".
std::string plural(uint64_t N, const char *Noun) {
  return fmt::format("{} {}{}", N, Noun, N == 1 ? "" : "s");
}

/// Flags per comm action.
enum : uint8_t { BadPeer = 1, Reported = 2 };

class Checker {
public:
  Checker(const Schedule &S, DiagnosticEngine &D, CommModel Model)
      : S(S), D(D), Model(Model), NumRanks(int32_t(S.Ranks.size())) {}
  bool run();

private:
  void checkPeers();
  void match();
  void checkContents();
  bool execute();
  void reportStuck();

  uint32_t channel(int32_t Src, int32_t Dst);
  int32_t rankOfGid(uint32_t G) const {
    return int32_t(std::upper_bound(Base.begin(), Base.end(), G) - Base.begin()) - 1;
  }
  const Action &act(uint32_t G) const {
    int32_t R = rankOfGid(G);
    return S.Ranks[R].Actions[G - Base[R]];
  }
  std::string desc(uint32_t G) const {
    int32_t R = rankOfGid(G);
    return describe(S, R, G - Base[R]);
  }
  LocId loc(uint32_t G) const { return locOf(S, act(G)); }
  bool satisfied(int32_t R, size_t Start, size_t End, size_t I) const;
  std::string blockedSentence(int32_t R, size_t I) const;
  llvm::StringRef modelName() const { return commModelName(Model); }

  const Schedule &S;
  DiagnosticEngine &D;
  CommModel Model;
  int32_t NumRanks;

  std::vector<uint32_t> Base;    // global id of each rank's first action
  std::vector<uint8_t> Flags;    // per action
  std::vector<uint32_t> Partner; // per action: matched comm, or None
  std::vector<uint32_t> Ordinal; // per action: position in its channel
  std::vector<uint32_t> ChanOf;  // per action: channel, or None
  llvm::DenseMap<uint64_t, uint32_t> ChanIndex;
  std::vector<int32_t> ChanSrc, ChanDst;
  std::vector<uint32_t> SendCnt, RecvCnt;

  // Execution state per rank.
  std::vector<size_t> Cursor, GroupEnd;
  std::vector<uint8_t> Posted;
  std::vector<uint32_t> Remaining;
};

uint32_t Checker::channel(int32_t Src, int32_t Dst) {
  uint64_t Key = (uint64_t(uint32_t(Src)) << 32) | uint32_t(Dst);
  auto [It, New] = ChanIndex.try_emplace(Key, uint32_t(ChanSrc.size()));
  if (New) {
    ChanSrc.push_back(Src);
    ChanDst.push_back(Dst);
    SendCnt.push_back(0);
    RecvCnt.push_back(0);
  }
  return It->second;
}

void Checker::checkPeers() {
  const Topology &T = S.Topo;
  bool Placed = int32_t(T.StageToRank.size()) == T.Stages;
  for (int32_t R = 0; R < NumRanks; ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    for (size_t I = 0; I < Acts.size(); ++I) {
      const Action &A = Acts[I];
      if (!isComm(A.Kind))
        continue;
      uint32_t G = Base[R] + uint32_t(I);
      const char *Dir = isSend(A.Kind) ? "sends to" : "receives from";
      if (A.Peer < 0 || A.Peer >= NumRanks) {
        D.report(DiagKind::WrongPeer, locOf(S, A),
                 fmt::format("{} {} rank {}, which does not exist (the pipeline "
                             "has {} ranks)",
                             describe(S, R, I), Dir, A.Peer, NumRanks));
        Flags[G] |= BadPeer | Reported;
        continue;
      }
      int32_t PS = partnerStage(A);
      bool Known = Placed && A.Stage >= 0 && A.Stage < T.Stages && PS >= 0 &&
                   PS < T.Stages;
      if (A.Peer == R) {
        std::string Why =
            Known && T.rankOf(PS) == R
                ? fmt::format(": stages {} and {} are both on rank {}, which "
                              "needs no message",
                              A.Stage, PS, R)
                : std::string();
        D.report(DiagKind::SelfComm, locOf(S, A),
                 fmt::format("{} {} its own rank{}", describe(S, R, I), Dir, Why));
        Flags[G] |= Reported;
        continue;
      }
      if (Known && T.rankOf(PS) != A.Peer) {
        D.report(DiagKind::WrongPeer, locOf(S, A),
                 fmt::format("{} {} rank {}, but its partner stage {} is on rank {}",
                             describe(S, R, I), Dir, A.Peer, PS, T.rankOf(PS)));
        Flags[G] |= Reported;
      }
    }
  }
}

void Checker::match() {
  // Count per channel; remember each comm's channel and ordinal.
  for (int32_t R = 0; R < NumRanks; ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    // A small direct-mapped cache: pipelines talk to few peers per rank.
    int32_t CachePeer[8];
    uint32_t CacheChan[8];
    std::fill(std::begin(CachePeer), std::end(CachePeer), -1);
    for (size_t I = 0; I < Acts.size(); ++I) {
      const Action &A = Acts[I];
      if (!isComm(A.Kind))
        continue;
      uint32_t G = Base[R] + uint32_t(I);
      if (Flags[G] & BadPeer)
        continue;
      bool Snd = isSend(A.Kind);
      unsigned Slot = unsigned(A.Peer * 2 + Snd) & 7;
      uint32_t Ch;
      if (CachePeer[Slot] == A.Peer * 2 + Snd) {
        Ch = CacheChan[Slot];
      } else {
        Ch = Snd ? channel(R, A.Peer) : channel(A.Peer, R);
        CachePeer[Slot] = A.Peer * 2 + Snd;
        CacheChan[Slot] = Ch;
      }
      ChanOf[G] = Ch;
      Ordinal[G] = Snd ? SendCnt[Ch]++ : RecvCnt[Ch]++;
    }
  }
  // CSR of each channel's sends, in program order of the sending rank.
  size_t NumChans = ChanSrc.size();
  std::vector<uint32_t> Off(NumChans + 1, 0);
  for (size_t C = 0; C < NumChans; ++C)
    Off[C + 1] = Off[C] + SendCnt[C];
  std::vector<uint32_t> Sends(Off.back());
  for (int32_t R = 0; R < NumRanks; ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    for (size_t I = 0; I < Acts.size(); ++I) {
      uint32_t G = Base[R] + uint32_t(I);
      if (isSend(Acts[I].Kind) && ChanOf[G] != None)
        Sends[Off[ChanOf[G]] + Ordinal[G]] = G;
    }
  }
  for (int32_t R = 0; R < NumRanks; ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    for (size_t I = 0; I < Acts.size(); ++I) {
      uint32_t G = Base[R] + uint32_t(I);
      if (!isRecv(Acts[I].Kind) || ChanOf[G] == None)
        continue;
      uint32_t Ch = ChanOf[G];
      if (Ordinal[G] < SendCnt[Ch]) {
        uint32_t Sd = Sends[Off[Ch] + Ordinal[G]];
        Partner[G] = Sd;
        Partner[Sd] = G;
      }
    }
  }
}

void Checker::checkContents() {
  // First mismatch and first unmatched op per channel, with counts, so one
  // off-by-one does not flood the output.
  size_t NumChans = ChanSrc.size();
  std::vector<uint32_t> FirstBad(NumChans, None), BadCount(NumChans, 0);
  std::vector<uint32_t> FirstLoose(NumChans, None), LooseCount(NumChans, 0);
  for (int32_t R = 0; R < NumRanks; ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    for (size_t I = 0; I < Acts.size(); ++I) {
      const Action &A = Acts[I];
      uint32_t G = Base[R] + uint32_t(I);
      if (!isComm(A.Kind) || ChanOf[G] == None)
        continue;
      uint32_t Ch = ChanOf[G];
      if (Partner[G] == None) {
        if (Flags[G] & Reported)
          continue;
        if (LooseCount[Ch]++ == 0)
          FirstLoose[Ch] = G;
        continue;
      }
      if (!isRecv(A.Kind))
        continue;
      const Action &Sd = act(Partner[G]);
      bool Same = A.Kind == partnerKind(Sd.Kind) && A.Microbatch == Sd.Microbatch &&
                  A.Stage == partnerStage(Sd);
      if (!Same && BadCount[Ch]++ == 0)
        FirstBad[Ch] = G;
    }
  }
  for (size_t Ch = 0; Ch < NumChans; ++Ch) {
    if (FirstBad[Ch] != None) {
      uint32_t Rv = FirstBad[Ch], Sd = Partner[Rv];
      std::string N = ordinal(Ordinal[Rv] + 1);
      Diagnostic &Dg = D.report(
          DiagKind::FifoMismatch, loc(Rv),
          fmt::format("the {} send from rank {} to rank {} is {}, but the {} "
                      "receive at rank {} from rank {} is {}",
                      N, ChanSrc[Ch], ChanDst[Ch], desc(Sd), N, ChanDst[Ch],
                      ChanSrc[Ch], desc(Rv)));
      Dg.note(loc(Sd), fmt::format("{} is here; messages on one channel are "
                                   "matched in order",
                                   desc(Sd)));
      if (BadCount[Ch] > 1)
        Dg.note(loc(Rv), fmt::format("{} more mismatched pair{} on this channel",
                                     BadCount[Ch] - 1, BadCount[Ch] > 2 ? "s follow" : " follows"));
    }
    if (FirstLoose[Ch] != None) {
      uint32_t G = FirstLoose[Ch];
      bool Snd = isSend(act(G).Kind);
      Diagnostic &Dg = D.report(
          Snd ? DiagKind::UnmatchedSend : DiagKind::UnmatchedRecv, loc(G),
          Snd ? fmt::format("{} is never received: rank {} sends {} to rank {}, "
                            "which posts {} from it",
                            desc(G), ChanSrc[Ch], plural(SendCnt[Ch], "message"),
                            ChanDst[Ch], plural(RecvCnt[Ch], "receive"))
              : fmt::format("{} is never sent: rank {} posts {} from rank {}, "
                            "which sends it {}",
                            desc(G), ChanDst[Ch], plural(RecvCnt[Ch], "receive"),
                            ChanSrc[Ch], plural(SendCnt[Ch], "message")));
      if (LooseCount[Ch] > 1)
        Dg.note(loc(G), fmt::format("{} more {} on this channel {} unmatched",
                                    LooseCount[Ch] - 1,
                                    LooseCount[Ch] > 2 ? "operations" : "operation",
                                    LooseCount[Ch] > 2 ? "are" : "is"));
    }
  }
}

bool Checker::satisfied(int32_t R, size_t Start, size_t End, size_t I) const {
  uint32_t G = Base[R] + uint32_t(I);
  bool Snd = isSend(S.Ranks[R].Actions[I].Kind);
  if (Model == CommModel::Eager && Snd)
    return true;
  uint32_t Y = Partner[G];
  if (Y == None)
    return false;
  int32_t Q = S.Ranks[R].Actions[I].Peer;
  size_t YL = Y - Base[Q];
  if (Q == R && YL >= Start && YL < End)
    return true; // both ends in the group being posted
  return Cursor[Q] > YL || (Posted[Q] && YL < GroupEnd[Q]);
}

bool Checker::execute() {
  Cursor.assign(NumRanks, 0);
  GroupEnd.assign(NumRanks, 0);
  Posted.assign(NumRanks, 0);
  Remaining.assign(NumRanks, 0);
  std::vector<int32_t> Work;
  Work.reserve(NumRanks);
  for (int32_t R = NumRanks; R-- > 0;)
    Work.push_back(R);
  bool Batched = Model == CommModel::Batched;
  bool Eager = Model == CommModel::Eager;

  while (!Work.empty()) {
    int32_t R = Work.back();
    Work.pop_back();
    const auto &Acts = S.Ranks[R].Actions;
    size_t N = Acts.size();
    size_t &C = Cursor[R];
    for (;;) {
      if (Posted[R]) {
        if (Remaining[R] > 0)
          break;
        C = GroupEnd[R];
        Posted[R] = 0;
      }
      while (C < N && !isComm(Acts[C].Kind))
        ++C;
      if (C == N)
        break;
      size_t Start = C, End = C + 1;
      if (Batched)
        while (End < N && isComm(Acts[End].Kind))
          ++End;
      GroupEnd[R] = End;
      Posted[R] = 1;
      uint32_t Rem = 0;
      for (size_t I = Start; I < End; ++I)
        Rem += !satisfied(R, Start, End, I);
      Remaining[R] = Rem;
      // Wake partners whose posted groups were waiting for this post.
      for (size_t I = Start; I < End; ++I) {
        uint32_t Y = Partner[Base[R] + uint32_t(I)];
        if (Y == None || (Eager && !isSend(Acts[I].Kind)))
          continue;
        int32_t Q = Acts[I].Peer;
        size_t YL = Y - Base[Q];
        if (Q == R && YL >= Start && YL < End)
          continue;
        if (Posted[Q] && YL >= Cursor[Q] && YL < GroupEnd[Q] && Remaining[Q] > 0)
          if (--Remaining[Q] == 0 && Q != R)
            Work.push_back(Q);
      }
    }
  }
  for (int32_t R = 0; R < NumRanks; ++R)
    if (Cursor[R] < S.Ranks[R].Actions.size())
      return false;
  return true;
}

std::string Checker::blockedSentence(int32_t R, size_t I) const {
  const Action &A = S.Ranks[R].Actions[I];
  uint32_t G = Base[R] + uint32_t(I);
  std::string Batch;
  if (Model == CommModel::Batched && GroupEnd[R] - Cursor[R] > 1)
    Batch = fmt::format(" (in a batch of {})", GroupEnd[R] - Cursor[R]);
  if (Partner[G] == None)
    return fmt::format("rank {} blocks at {}{}, which no {} ever matches", R,
                       describe(S, R, I), Batch, isSend(A.Kind) ? "receive" : "send");
  int32_t Q = A.Peer;
  return fmt::format("rank {} blocks at {}{} waiting for rank {} to post {}", R,
                     describe(S, R, I), Batch, Q, describe(S, Q, Partner[G] - Base[Q]));
}

void Checker::reportStuck() {
  // Each blocked rank's unsatisfied operations and the ranks they wait for.
  std::vector<llvm::SmallVector<int32_t, 2>> Adj(NumRanks);
  std::vector<size_t> FirstBlocked(NumRanks, SIZE_MAX);
  std::vector<int32_t> Stuck;
  for (int32_t R = 0; R < NumRanks; ++R) {
    if (Cursor[R] >= S.Ranks[R].Actions.size())
      continue;
    Stuck.push_back(R);
    for (size_t I = Cursor[R]; I < GroupEnd[R]; ++I) {
      if (satisfied(R, Cursor[R], GroupEnd[R], I))
        continue;
      if (FirstBlocked[R] == SIZE_MAX)
        FirstBlocked[R] = I;
      if (Partner[Base[R] + uint32_t(I)] == None)
        continue;
      int32_t Q = S.Ranks[R].Actions[I].Peer;
      if (std::find(Adj[R].begin(), Adj[R].end(), Q) == Adj[R].end())
        Adj[R].push_back(Q);
    }
    if (FirstBlocked[R] == SIZE_MAX)
      FirstBlocked[R] = Cursor[R]; // defensive: name the group's first op
  }
  std::vector<int32_t> Cycle = shortestCycle(Adj);
  // The operation of R's group that waits for rank Q.
  auto WaitOp = [&](int32_t R, int32_t Q) {
    for (size_t I = Cursor[R]; I < GroupEnd[R]; ++I)
      if (!satisfied(R, Cursor[R], GroupEnd[R], I) &&
          Partner[Base[R] + uint32_t(I)] != None && S.Ranks[R].Actions[I].Peer == Q)
        return I;
    return FirstBlocked[R];
  };
  auto Loc = [&](int32_t R, size_t I) { return locOf(S, S.Ranks[R].Actions[I]); };

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
        Cycle.size() == 1
            ? fmt::format("rank {} waits on itself", R0)
            : Cycle.size() == 2 ? fmt::format("ranks {} wait on each other", Ranks)
                                : fmt::format("ranks {} wait in a cycle", Ranks);
    Dg = &D.report(DiagKind::Deadlock, Loc(R0, WaitOp(R0, R1)),
                   fmt::format("deadlock under the {} model: {}", modelName(), What));
    for (size_t K = 0; K < Cycle.size(); ++K) {
      int32_t R = Cycle[K], Q = Cycle[(K + 1) % Cycle.size()];
      size_t I = WaitOp(R, Q);
      Dg->note(Loc(R, I), blockedSentence(R, I));
      uint32_t Y = Partner[Base[R] + uint32_t(I)];
      size_t YL = Y - Base[Q];
      int32_t QNext = Cycle[(K + 2) % Cycle.size()];
      size_t QI = WaitOp(Q, QNext);
      Dg->note(Loc(Q, YL), fmt::format("rank {} posts {} only after {}", Q,
                                       describe(S, Q, YL), describe(S, Q, QI)));
    }
  } else {
    // No cycle: every chain of waits ends at an operation nothing matches.
    Dg = &D.report(DiagKind::UnmatchedRecv, Loc(Stuck.front(), FirstBlocked[Stuck.front()]),
                   fmt::format("the schedule cannot finish under the {} model: "
                               "{} rank{} forever",
                               modelName(), Stuck.size(),
                               Stuck.size() > 1 ? "s block" : " blocks"));
    for (int32_t R : Stuck)
      if (Partner[Base[R] + uint32_t(FirstBlocked[R])] == None &&
          isSend(S.Ranks[R].Actions[FirstBlocked[R]].Kind)) {
        Dg->Kind = DiagKind::UnmatchedSend;
        break;
      }
  }
  unsigned Extra = 0, Shown = 0;
  for (int32_t R : Stuck) {
    if (OnCycle[R])
      continue;
    if (Shown == 8) {
      ++Extra;
      continue;
    }
    ++Shown;
    Dg->note(Loc(R, FirstBlocked[R]), blockedSentence(R, FirstBlocked[R]));
  }
  if (Extra)
    Dg->note(S.DeclLoc, fmt::format("{} more ranks are blocked", Extra));
}

bool Checker::run() {
  Base.resize(NumRanks + 1);
  uint32_t N = 0;
  for (int32_t R = 0; R < NumRanks; ++R) {
    Base[R] = N;
    N += uint32_t(S.Ranks[R].Actions.size());
  }
  Base[NumRanks] = N;
  Flags.assign(N, 0);
  Partner.assign(N, None);
  Ordinal.assign(N, 0);
  ChanOf.assign(N, None);
  checkPeers();
  match();
  checkContents();
  bool Done = execute();
  if (!Done)
    reportStuck();
  return Done;
}

class DeadlockPass : public Pass {
public:
  explicit DeadlockPass(DeadlockOptions Opts) : Opts(Opts) {}
  llvm::StringRef name() const override { return "deadlock"; }
  llvm::StringRef description() const override {
    return "match sends and receives and prove the schedule free of deadlock";
  }
  void run(Schedule &S, PassContext &Ctx) override {
    CommModel M = Opts.Model ? *Opts.Model : S.Comm;
    Ctx.Results.DeadlockFree = Checker(S, Ctx.Diags, M).run();
  }
  bool runsAfterErrors() const override { return true; }

private:
  DeadlockOptions Opts;
};

} // namespace

std::unique_ptr<Pass> createDeadlockPass(DeadlockOptions Opts) {
  return std::make_unique<DeadlockPass>(Opts);
}

} // namespace pps::passes
