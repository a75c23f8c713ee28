//===- Deadlock.cpp - deadlock: matching and happens-before cycle check ---===//
//
// 1. Per comm: self-comm and wrong-peer (against the topology).
// 2. FIFO matching per (source, destination) channel: one pass lists each
//    channel's sends in order, a second pairs the n-th receive with the n-th
//    send. Pairs whose kind/microbatch/stage disagree are FIFO
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
  struct ChannelCache;
  void checkPeer(int32_t R, size_t I);
  void match();
  void reportMatching();
  bool execute();
  void reportStuck();

  uint32_t channel(int32_t Src, int32_t Dst);
  int32_t rankOfGid(uint32_t G) const {
    return int32_t(std::upper_bound(Base.begin(), Base.end(), G) -
                   Base.begin()) -
           1;
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

  bool Placed = false;
  std::vector<uint32_t> Base;    // global id of each rank's first action
  std::vector<uint8_t> Flags;    // per action
  std::vector<uint32_t> Partner; // per action: matched comm, or None
  llvm::DenseMap<uint64_t, uint32_t> ChanIndex;
  std::vector<int32_t> ChanSrc, ChanDst;
  std::vector<std::vector<uint32_t>> ChanSends; // per channel, in order
  std::vector<uint32_t> RecvCnt;
  // Per channel: the first mismatched pair and unmatched op, with counts,
  // so one off-by-one does not flood the output.
  std::vector<uint32_t> FirstBad, BadCount, BadOrdinal, FirstLoose, LooseCount;

  // Execution state per rank, packed so a look at a partner rank touches
  // one cache line.
  struct RankState {
    uint32_t Cursor = 0, GroupEnd = 0, Remaining = 0;
    uint8_t Posted = 0;
  };
  std::vector<RankState> St;
};

uint32_t Checker::channel(int32_t Src, int32_t Dst) {
  uint64_t Key = (uint64_t(uint32_t(Src)) << 32) | uint32_t(Dst);
  auto [It, New] = ChanIndex.try_emplace(Key, uint32_t(ChanSrc.size()));
  if (New) {
    ChanSrc.push_back(Src);
    ChanDst.push_back(Dst);
    ChanSends.emplace_back();
    RecvCnt.push_back(0);
    FirstBad.push_back(None);
    BadCount.push_back(0);
    BadOrdinal.push_back(0);
    FirstLoose.push_back(None);
    LooseCount.push_back(0);
  }
  return It->second;
}

/// Channel lookups with a small direct-mapped cache in front of the hash
/// map: a pipeline rank talks to few peers.
struct Checker::ChannelCache {
  int32_t Peer[8];
  uint32_t Chan[8];
  ChannelCache() { std::fill(std::begin(Peer), std::end(Peer), -1); }
  uint32_t get(Checker &C, int32_t Src, int32_t Dst, int32_t Key) {
    unsigned Slot = unsigned(Key) & 7;
    if (Peer[Slot] != Key) {
      Peer[Slot] = Key;
      Chan[Slot] = C.channel(Src, Dst);
    }
    return Chan[Slot];
  }
};

void Checker::checkPeer(int32_t R, size_t I) {
  const Topology &T = S.Topo;
  const Action &A = S.Ranks[R].Actions[I];
  uint32_t G = Base[R] + uint32_t(I);
  const char *Dir = isSend(A.Kind) ? "sends to" : "receives from";
  if (A.Peer < 0 || A.Peer >= NumRanks) {
    D.report(DiagKind::WrongPeer, locOf(S, A),
             fmt::format("{} {} rank {}, which does not exist (the pipeline "
                         "has {} ranks)",
                         describe(S, R, I), Dir, A.Peer, NumRanks));
    Flags[G] |= BadPeer | Reported;
    return;
  }
  int32_t PS = partnerStage(A);
  bool Known =
      Placed && A.Stage >= 0 && A.Stage < T.Stages && PS >= 0 && PS < T.Stages;
  if (A.Peer == R) {
    std::string Why =
        Known && T.rankOf(PS) == R
            ? fmt::format(": stages {} and {} are both on rank {}, which needs "
                          "no message",
                          A.Stage, PS, R)
            : std::string();
    D.report(DiagKind::SelfComm, locOf(S, A),
             fmt::format("{} {} its own rank{}", describe(S, R, I), Dir, Why));
    Flags[G] |= Reported;
    return;
  }
  if (Known && T.rankOf(PS) != A.Peer) {
    std::string Where = T.rankOf(PS) == R
                            ? std::string("this rank: no message is needed")
                            : fmt::format("rank {}", T.rankOf(PS));
    D.report(DiagKind::WrongPeer, locOf(S, A),
             fmt::format("{} {} rank {}, but its partner stage {} is on {}",
                         describe(S, R, I), Dir, A.Peer, PS, Where));
    Flags[G] |= Reported;
  }
}

void Checker::match() {
  const Topology &T = S.Topo;
  Placed = int32_t(T.StageToRank.size()) == T.Stages;
  // Pass 1: peers, and every channel's sends in the sender's program order.
  for (int32_t R = 0; R < NumRanks; ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    ChannelCache Cache;
    for (size_t I = 0; I < Acts.size(); ++I) {
      const Action &A = Acts[I];
      if (!isComm(A.Kind))
        continue;
      // The common case needs no diagnostic: a known peer that holds the
      // partner stage.
      int32_t PS = partnerStage(A);
      bool Fine = A.Peer >= 0 && A.Peer < NumRanks && A.Peer != R && Placed &&
                  A.Stage >= 0 && A.Stage < T.Stages && PS >= 0 &&
                  PS < T.Stages && T.StageToRank[PS] == A.Peer;
      if (!Fine) {
        checkPeer(R, I);
        if (Flags[Base[R] + uint32_t(I)] & BadPeer)
          continue;
      }
      if (isSend(A.Kind))
        ChanSends[Cache.get(*this, R, A.Peer, A.Peer)].push_back(Base[R] +
                                                                 uint32_t(I));
    }
  }
  // Pass 2: the n-th receive on a channel pairs with the n-th send; check
  // that they carry the same message.
  // (A receive may open a channel no send uses.)
  for (int32_t R = 0; R < NumRanks; ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    ChannelCache Cache;
    for (size_t I = 0; I < Acts.size(); ++I) {
      const Action &A = Acts[I];
      if (!isRecv(A.Kind))
        continue;
      uint32_t G = Base[R] + uint32_t(I);
      if (Flags[G] & BadPeer)
        continue;
      uint32_t Ch = Cache.get(*this, A.Peer, R, A.Peer);
      uint32_t Ord = RecvCnt[Ch]++;
      if (Ord >= ChanSends[Ch].size()) {
        if (!(Flags[G] & Reported) && LooseCount[Ch]++ == 0)
          FirstLoose[Ch] = G;
        continue;
      }
      uint32_t Sd = ChanSends[Ch][Ord];
      Partner[G] = Sd;
      Partner[Sd] = G;
      const Action &SA = S.Ranks[A.Peer].Actions[Sd - Base[A.Peer]];
      bool Same = schema::commsMatch(SA.Kind, SA.Microbatch, SA.Stage, A.Kind,
                                     A.Microbatch, A.Stage);
      if (!Same && BadCount[Ch]++ == 0) {
        FirstBad[Ch] = G;
        BadOrdinal[Ch] = Ord;
      }
    }
  }
  // Sends past the last receive of their channel are unmatched.
  for (size_t Ch = 0; Ch < ChanSrc.size(); ++Ch)
    for (size_t K = RecvCnt[Ch]; K < ChanSends[Ch].size(); ++K) {
      uint32_t G = ChanSends[Ch][K];
      if (!(Flags[G] & Reported) && LooseCount[Ch]++ == 0)
        FirstLoose[Ch] = G;
    }
}

void Checker::reportMatching() {
  for (size_t Ch = 0; Ch < ChanSrc.size(); ++Ch) {
    uint32_t SendCnt = uint32_t(ChanSends[Ch].size());
    if (FirstBad[Ch] != None) {
      uint32_t Rv = FirstBad[Ch], Sd = Partner[Rv];
      std::string N = ordinal(BadOrdinal[Ch] + 1);
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
        Dg.note(loc(Rv),
                fmt::format("{} more mismatched pair{} on this channel",
                            BadCount[Ch] - 1,
                            BadCount[Ch] > 2 ? "s follow" : " follows"));
    }
    if (FirstLoose[Ch] != None) {
      uint32_t G = FirstLoose[Ch];
      bool Snd = isSend(act(G).Kind);
      Diagnostic &Dg = D.report(
          Snd ? DiagKind::UnmatchedSend : DiagKind::UnmatchedRecv, loc(G),
          Snd ? fmt::format(
                    "{} is never received: rank {} sends {} to rank {}, "
                    "which posts {} from it",
                    desc(G), ChanSrc[Ch], plural(SendCnt, "message"),
                    ChanDst[Ch], plural(RecvCnt[Ch], "receive"))
              : fmt::format("{} is never sent: rank {} posts {} from rank {}, "
                            "which sends it {}",
                            desc(G), ChanDst[Ch],
                            plural(RecvCnt[Ch], "receive"), ChanSrc[Ch],
                            plural(SendCnt, "message")));
      if (LooseCount[Ch] > 1)
        Dg.note(loc(G),
                fmt::format("{} more {} on this channel {} unmatched",
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
  return St[Q].Cursor > YL || (St[Q].Posted && YL < St[Q].GroupEnd);
}

bool Checker::execute() {
  St.assign(NumRanks, RankState());
  std::vector<int32_t> Work;
  Work.reserve(NumRanks);
  for (int32_t R = NumRanks; R-- > 0;)
    Work.push_back(R);
  bool Batched = Model == CommModel::Batched;
  bool Eager = Model == CommModel::Eager;

  while (!Work.empty()) {
    int32_t R = Work.back();
    Work.pop_back();
    const Action *Acts = S.Ranks[R].Actions.data();
    uint32_t N = uint32_t(S.Ranks[R].Actions.size());
    RankState &RS = St[R];
    uint32_t C = RS.Cursor;
    for (;;) {
      if (RS.Posted) {
        if (RS.Remaining > 0)
          break;
        C = RS.GroupEnd;
        RS.Posted = 0;
      }
      while (C < N && !isComm(Acts[C].Kind))
        ++C;
      if (C == N)
        break;
      uint32_t Start = C, End = C + 1;
      if (Batched)
        while (End < N && isComm(Acts[End].Kind))
          ++End;
      RS.Cursor = C;
      RS.GroupEnd = End;
      RS.Posted = 1;
      uint32_t Rem = 0;
      for (uint32_t I = Start; I < End; ++I)
        Rem += !satisfied(R, Start, End, I);
      RS.Remaining = Rem;
      // Wake partners whose posted groups were waiting for this post.
      for (uint32_t I = Start; I < End; ++I) {
        uint32_t Y = Partner[Base[R] + I];
        if (Y == None || (Eager && !isSend(Acts[I].Kind)))
          continue;
        int32_t Q = Acts[I].Peer;
        uint32_t YL = Y - Base[Q];
        if (Q == R && YL >= Start && YL < End)
          continue;
        RankState &QS = St[Q];
        if (QS.Posted && YL >= QS.Cursor && YL < QS.GroupEnd &&
            QS.Remaining > 0)
          if (--QS.Remaining == 0 && Q != R)
            Work.push_back(Q);
      }
    }
    RS.Cursor = C;
  }
  for (int32_t R = 0; R < NumRanks; ++R)
    if (St[R].Cursor < S.Ranks[R].Actions.size())
      return false;
  return true;
}

std::string Checker::blockedSentence(int32_t R, size_t I) const {
  const Action &A = S.Ranks[R].Actions[I];
  uint32_t G = Base[R] + uint32_t(I);
  std::string Batch;
  if (Model == CommModel::Batched && St[R].GroupEnd - St[R].Cursor > 1)
    Batch = fmt::format(" (in a batch of {})", St[R].GroupEnd - St[R].Cursor);
  if (Partner[G] == None)
    return fmt::format("rank {} blocks at {}{}, which no {} ever matches", R,
                       describe(S, R, I), Batch,
                       isSend(A.Kind) ? "receive" : "send");
  int32_t Q = A.Peer;
  return fmt::format("rank {} blocks at {}{} waiting for rank {} to post {}", R,
                     describe(S, R, I), Batch, Q,
                     describe(S, Q, Partner[G] - Base[Q]));
}

void Checker::reportStuck() {
  // Each blocked rank's unsatisfied operations and the ranks they wait for.
  std::vector<llvm::SmallVector<int32_t, 2>> Adj(NumRanks);
  std::vector<size_t> FirstBlocked(NumRanks, SIZE_MAX);
  std::vector<int32_t> Stuck;
  for (int32_t R = 0; R < NumRanks; ++R) {
    if (St[R].Cursor >= S.Ranks[R].Actions.size())
      continue;
    Stuck.push_back(R);
    for (size_t I = St[R].Cursor; I < St[R].GroupEnd; ++I) {
      if (satisfied(R, St[R].Cursor, St[R].GroupEnd, I))
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
      FirstBlocked[R] = St[R].Cursor; // defensive: name the group's first op
  }
  std::vector<int32_t> Cycle = shortestCycle(Adj);
  // The operation of R's group that waits for rank Q.
  auto WaitOp = [&](int32_t R, int32_t Q) {
    for (size_t I = St[R].Cursor; I < St[R].GroupEnd; ++I)
      if (!satisfied(R, St[R].Cursor, St[R].GroupEnd, I) &&
          Partner[Base[R] + uint32_t(I)] != None &&
          S.Ranks[R].Actions[I].Peer == Q)
        return I;
    return FirstBlocked[R];
  };
  auto Loc = [&](int32_t R, size_t I) {
    return locOf(S, S.Ranks[R].Actions[I]);
  };

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
    Dg = &D.report(
        DiagKind::Deadlock, Loc(R0, WaitOp(R0, R1)),
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
    Dg = &D.report(DiagKind::UnmatchedRecv,
                   Loc(Stuck.front(), FirstBlocked[Stuck.front()]),
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
  match();
  reportMatching();
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
