//===- Matching.cpp - FIFO matching of sends and receives -----------------===//
//
// Two linear passes: the first checks every comm's peer and lists each
// channel's sends in the sender's program order; the second pairs the n-th
// receive on a channel with the n-th send and checks that they carry the
// same message. Channel lookups go through a small direct-mapped cache in
// front of a hash map (a pipeline rank talks to few peers).
//
//===----------------------------------------------------------------------===//
#include "pps/analysis/Matching.h"

#include "pps/analysis/Describe.h"

#include "llvm/ADT/DenseMap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace pps::analysis {

using ir::Action;

void ActionIds::build(const ir::Schedule &S) {
  Base.assign(S.Ranks.size() + 1, 0);
  uint32_t N = 0;
  for (size_t R = 0; R < S.Ranks.size(); ++R) {
    Base[R] = N;
    N += uint32_t(S.Ranks[R].Actions.size());
  }
  Base.back() = N;
}

int32_t ActionIds::rankOf(uint32_t G) const {
  return int32_t(std::upper_bound(Base.begin(), Base.end(), G) - Base.begin()) -
         1;
}

bool Matching::clean() const {
  for (PeerProblem P : Peer)
    if (P != PeerProblem::None)
      return false;
  for (const ChannelMatch &C : Channels)
    if (C.FirstBad != NoAction || C.LooseCount)
      return false;
  return true;
}

namespace {

class Matcher {
public:
  Matcher(const ir::Schedule &S, Matching &M)
      : S(S), M(M), NumRanks(int32_t(S.Ranks.size())) {}
  void run();

private:
  struct Cache;
  uint32_t channel(int32_t Src, int32_t Dst);
  PeerProblem checkPeer(int32_t R, const Action &A) const;

  const ir::Schedule &S;
  Matching &M;
  int32_t NumRanks;
  bool Placed = false;
  llvm::DenseMap<uint64_t, uint32_t> ChanIndex;
  std::vector<std::vector<uint32_t>> ChanSends; // per channel, in order
};

/// Channel lookups with a small direct-mapped cache in front of the hash
/// map.
struct Matcher::Cache {
  int32_t Peer[8];
  uint32_t Chan[8];
  Cache() { std::fill(std::begin(Peer), std::end(Peer), -1); }
  uint32_t get(Matcher &X, int32_t Src, int32_t Dst, int32_t Key) {
    unsigned Slot = unsigned(Key) & 7;
    if (Peer[Slot] != Key) {
      Peer[Slot] = Key;
      Chan[Slot] = X.channel(Src, Dst);
    }
    return Chan[Slot];
  }
};

uint32_t Matcher::channel(int32_t Src, int32_t Dst) {
  uint64_t Key = (uint64_t(uint32_t(Src)) << 32) | uint32_t(Dst);
  auto [It, New] = ChanIndex.try_emplace(Key, uint32_t(M.Channels.size()));
  if (New) {
    M.Channels.emplace_back();
    M.Channels.back().Src = Src;
    M.Channels.back().Dst = Dst;
    ChanSends.emplace_back();
  }
  return It->second;
}

PeerProblem Matcher::checkPeer(int32_t R, const Action &A) const {
  const ir::Topology &T = S.Topo;
  if (A.Peer < 0 || A.Peer >= NumRanks)
    return PeerProblem::NoSuchRank;
  if (A.Peer == R)
    return PeerProblem::Self;
  int32_t PS = schema::partnerStage(A.Kind, A.Stage);
  bool Known =
      Placed && A.Stage >= 0 && A.Stage < T.Stages && PS >= 0 && PS < T.Stages;
  if (Known && T.StageToRank[PS] != A.Peer)
    return PeerProblem::WrongPeer;
  return PeerProblem::None;
}

void Matcher::run() {
  M.Ids.build(S);
  uint32_t N = M.Ids.size();
  M.Partner.assign(N, NoAction);
  M.Peer.assign(N, PeerProblem::None);
  Placed = int32_t(S.Topo.StageToRank.size()) == S.Topo.Stages;
  uint32_t *Partner = M.Partner.data();
  PeerProblem *Peer = M.Peer.data();
  // Pass 1: peers, and every channel's sends in the sender's program order.
  for (int32_t R = 0; R < NumRanks; ++R) {
    const Action *Acts = S.Ranks[R].Actions.data();
    size_t Size = S.Ranks[R].Actions.size();
    uint32_t Base = M.Ids.Base[size_t(R)];
    Cache C;
    for (size_t I = 0; I < Size; ++I) {
      const Action &A = Acts[I];
      if (!ir::isComm(A.Kind))
        continue;
      uint32_t G = Base + uint32_t(I);
      PeerProblem P = checkPeer(R, A);
      Peer[G] = P;
      if (P == PeerProblem::NoSuchRank)
        continue;
      if (ir::isSend(A.Kind))
        ChanSends[C.get(*this, R, A.Peer, A.Peer)].push_back(G);
    }
  }
  // Pass 2: the n-th receive on a channel pairs with the n-th send; they
  // must carry the same message. (A receive may open a channel no send
  // uses.)
  for (int32_t R = 0; R < NumRanks; ++R) {
    const Action *Acts = S.Ranks[R].Actions.data();
    size_t Size = S.Ranks[R].Actions.size();
    uint32_t Base = M.Ids.Base[size_t(R)];
    Cache C;
    for (size_t I = 0; I < Size; ++I) {
      const Action &A = Acts[I];
      if (!ir::isRecv(A.Kind))
        continue;
      uint32_t G = Base + uint32_t(I);
      if (Peer[G] == PeerProblem::NoSuchRank)
        continue;
      uint32_t Ch = C.get(*this, A.Peer, R, A.Peer);
      ChannelMatch &CM = M.Channels[Ch];
      const std::vector<uint32_t> &Sends = ChanSends[Ch];
      uint32_t Ord = CM.Recvs++;
      if (Ord >= Sends.size()) {
        if (Peer[G] == PeerProblem::None && CM.LooseCount++ == 0)
          CM.FirstLoose = G;
        continue;
      }
      uint32_t Sd = Sends[Ord];
      Partner[G] = Sd;
      Partner[Sd] = G;
      const Action &SA = S.Ranks[A.Peer].Actions[M.Ids.indexOn(A.Peer, Sd)];
      if (!schema::commsMatch(SA.Kind, SA.Microbatch, SA.Stage, A.Kind,
                              A.Microbatch, A.Stage) &&
          CM.BadCount++ == 0) {
        CM.FirstBad = G;
        CM.BadOrdinal = Ord;
      }
    }
  }
  // Sends past the last receive of their channel are unmatched.
  for (size_t Ch = 0; Ch < M.Channels.size(); ++Ch) {
    ChannelMatch &CM = M.Channels[Ch];
    CM.Sends = uint32_t(ChanSends[Ch].size());
    for (size_t K = CM.Recvs; K < ChanSends[Ch].size(); ++K) {
      uint32_t G = ChanSends[Ch][K];
      if (Peer[G] == PeerProblem::None && CM.LooseCount++ == 0)
        CM.FirstLoose = G;
    }
  }
}

/// The first action from G on with a peer problem, or the number of
/// actions (the scan reads eight entries at a time: they are almost always
/// all None).
uint32_t nextPeerProblem(const Matching &M, uint32_t G) {
  static_assert(sizeof(PeerProblem) == 1 && uint8_t(PeerProblem::None) == 0,
                "the scan reads PeerProblem as bytes, None as 0");
  const auto *P = reinterpret_cast<const uint8_t *>(M.Peer.data());
  uint32_t N = uint32_t(M.Peer.size());
  for (; G + 8 <= N; G += 8) {
    uint64_t Word;
    std::memcpy(&Word, P + G, 8);
    if (Word)
      break;
  }
  while (G < N && !P[G])
    ++G;
  return G;
}

/// "1 receive", "2 receives".
std::string plural(uint64_t N, const char *Noun) {
  return fmt::format("{} {}{}", N, Noun, N == 1 ? "" : "s");
}

void reportPeer(const ir::Schedule &S, int32_t R, size_t I, PeerProblem P,
                DiagnosticEngine &D) {
  const ir::Topology &T = S.Topo;
  const Action &A = S.Ranks[R].Actions[I];
  const char *Dir = ir::isSend(A.Kind) ? "sends to" : "receives from";
  int32_t PS = schema::partnerStage(A.Kind, A.Stage);
  bool Known = int32_t(T.StageToRank.size()) == T.Stages && A.Stage >= 0 &&
               A.Stage < T.Stages && PS >= 0 && PS < T.Stages;
  switch (P) {
  case PeerProblem::None:
    return;
  case PeerProblem::NoSuchRank:
    D.report(DiagKind::WrongPeer, locOf(S, A),
             fmt::format("{} {} rank {}, which does not exist (the pipeline "
                         "has {} ranks)",
                         describe(S, R, I), Dir, A.Peer, S.Ranks.size()));
    return;
  case PeerProblem::Self: {
    std::string Why =
        Known && T.rankOf(PS) == R
            ? fmt::format(": stages {} and {} are both on rank {}, which needs "
                          "no message",
                          A.Stage, PS, R)
            : std::string();
    D.report(DiagKind::SelfComm, locOf(S, A),
             fmt::format("{} {} its own rank{}", describe(S, R, I), Dir, Why));
    return;
  }
  case PeerProblem::WrongPeer: {
    std::string Where = T.rankOf(PS) == R
                            ? std::string("this rank: no message is needed")
                            : fmt::format("rank {}", T.rankOf(PS));
    D.report(DiagKind::WrongPeer, locOf(S, A),
             fmt::format("{} {} rank {}, but its partner stage {} is on {}",
                         describe(S, R, I), Dir, A.Peer, PS, Where));
    return;
  }
  }
}

} // namespace

Matching matchComms(const ir::Schedule &S) {
  Matching M;
  Matcher(S, M).run();
  return M;
}

void reportMatching(const ir::Schedule &S, const Matching &M,
                    DiagnosticEngine &D) {
  for (uint32_t G = nextPeerProblem(M, 0); G < M.Peer.size();
       G = nextPeerProblem(M, G + 1))
    reportPeer(S, M.Ids.rankOf(G), M.Ids.indexOf(G), M.Peer[G], D);
  auto Desc = [&](uint32_t G) {
    return describe(S, M.Ids.rankOf(G), M.Ids.indexOf(G));
  };
  auto Loc = [&](uint32_t G) {
    return locOf(S, S.Ranks[M.Ids.rankOf(G)].Actions[M.Ids.indexOf(G)]);
  };
  for (const ChannelMatch &C : M.Channels) {
    if (C.FirstBad != NoAction) {
      uint32_t Rv = C.FirstBad, Sd = M.Partner[Rv];
      Diagnostic &Dg =
          D.report(DiagKind::FifoMismatch, Loc(Rv),
                   schema::fifoMismatchMessage(C.BadOrdinal, C.Src, C.Dst,
                                               Desc(Sd), Desc(Rv)));
      Dg.note(Loc(Sd),
              fmt::format("{} is here; {}", Desc(Sd), schema::FifoRule));
      if (C.BadCount > 1)
        Dg.note(Loc(Rv), fmt::format("{} more mismatched pair{} on this "
                                     "channel",
                                     C.BadCount - 1,
                                     C.BadCount > 2 ? "s follow" : " follows"));
    }
    if (C.FirstLoose != NoAction) {
      uint32_t G = C.FirstLoose;
      bool Snd =
          ir::isSend(S.Ranks[M.Ids.rankOf(G)].Actions[M.Ids.indexOf(G)].Kind);
      Diagnostic &Dg = D.report(
          Snd ? DiagKind::UnmatchedSend : DiagKind::UnmatchedRecv, Loc(G),
          Snd ? fmt::format("{} is never received: rank {} sends {} to rank "
                            "{}, which posts {} from it",
                            Desc(G), C.Src, plural(C.Sends, "message"), C.Dst,
                            plural(C.Recvs, "receive"))
              : fmt::format("{} is never sent: rank {} posts {} from rank {}, "
                            "which sends it {}",
                            Desc(G), C.Dst, plural(C.Recvs, "receive"), C.Src,
                            plural(C.Sends, "message")));
      if (C.LooseCount > 1)
        Dg.note(Loc(G),
                fmt::format("{} more {} on this channel {} unmatched",
                            C.LooseCount - 1,
                            C.LooseCount > 2 ? "operations" : "operation",
                            C.LooseCount > 2 ? "are" : "is"));
    }
  }
}

} // namespace pps::analysis
