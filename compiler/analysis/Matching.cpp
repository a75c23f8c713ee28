//===- Matching.cpp - FIFO matching of sends and receives -----------------===//
//
// Two linear passes: the first checks every comm's peer and lists each
// channel's sends in the sender's program order; the second pairs the n-th
// receive on a channel with the n-th send and checks that they carry the
// same message. Each pass is one walk per rank (a rank writes only its own
// channels), on a few threads for big schedules; the channels are numbered
// in between, in rank order, so the result does not depend on the threads.
// Channel lookups go through a small direct-mapped cache in front of a hash
// map (a pipeline rank talks to few peers).
//
//===----------------------------------------------------------------------===//
#include "pps/analysis/Matching.h"

#include "pps/analysis/Describe.h"
#include "pps/support/Parallel.h"

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

/// Each rank's half of the matching runs on its own (on a few threads for
/// big schedules): pass 1 lists the rank's sends per destination, pass 2
/// pairs the rank's receives with the lists of their sources. Between the
/// two, the channels get their global numbers in the order a walk over the
/// ranks would meet them, so the result does not depend on the threads.
class Matcher {
public:
  Matcher(const ir::Schedule &S, Matching &M)
      : S(S), M(M), NumRanks(int32_t(S.Ranks.size())), Sides(S.Ranks.size()) {}
  void run();

private:
  /// A rank's channels: those it sends on (pass 1), then those only its
  /// receives use (pass 2; they have no sends).
  struct Side {
    llvm::DenseMap<int32_t, uint32_t> OutIndex; // peer -> Out position
    std::vector<int32_t> OutPeers;
    std::vector<std::vector<uint32_t>> OutSends; // program order
    llvm::DenseMap<int32_t, uint32_t> OpenedIndex;
    std::vector<ChannelMatch> Opened;
  };
  /// A rank talks to few peers: a small direct-mapped cache keyed by the
  /// peer sits in front of the maps.
  struct Cache {
    int32_t Peer[8];
    uint32_t Value[8];
    Cache() { std::fill(std::begin(Peer), std::end(Peer), -1); }
    template <typename Fn> uint32_t get(int32_t Key, const Fn &Miss) {
      unsigned Slot = unsigned(Key) & 7;
      if (Peer[Slot] != Key) {
        Peer[Slot] = Key;
        Value[Slot] = Miss();
      }
      return Value[Slot];
    }
  };
  /// Cached value of a receive's channel: a global channel, or (top bit)
  /// one of the rank's opened channels.
  static constexpr uint32_t OpenedBit = uint32_t(1) << 31;

  PeerProblem checkPeer(int32_t R, const Action &A) const;
  void listSends(int32_t R);
  void numberChannels();
  void matchRecvs(int32_t R);

  const ir::Schedule &S;
  Matching &M;
  int32_t NumRanks;
  bool Placed = false;
  std::vector<Side> Sides;
  llvm::DenseMap<uint64_t, uint32_t> ChanIndex; // (src, dst) -> channel
  std::vector<std::vector<uint32_t>> ChanSends; // per channel, in order
};

uint64_t channelKey(int32_t Src, int32_t Dst) {
  return (uint64_t(uint32_t(Src)) << 32) | uint32_t(Dst);
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

/// Pass 1 on rank R: every comm's peer, and R's sends per destination.
void Matcher::listSends(int32_t R) {
  const Action *Acts = S.Ranks[R].Actions.data();
  size_t Size = S.Ranks[R].Actions.size();
  uint32_t Base = M.Ids.Base[size_t(R)];
  PeerProblem *Peer = M.Peer.data();
  Side &Sd = Sides[size_t(R)];
  Cache C;
  for (size_t I = 0; I < Size; ++I) {
    const Action &A = Acts[I];
    if (!ir::isComm(A.Kind))
      continue;
    uint32_t G = Base + uint32_t(I);
    PeerProblem P = checkPeer(R, A);
    Peer[G] = P;
    if (P == PeerProblem::NoSuchRank || !ir::isSend(A.Kind))
      continue;
    uint32_t Out = C.get(A.Peer, [&] {
      auto [It, New] =
          Sd.OutIndex.try_emplace(A.Peer, uint32_t(Sd.OutPeers.size()));
      if (New) {
        Sd.OutPeers.push_back(A.Peer);
        Sd.OutSends.emplace_back();
      }
      return It->second;
    });
    Sd.OutSends[Out].push_back(G);
  }
}

/// The channels with sends, numbered rank by rank in the order each rank
/// first sends on them.
void Matcher::numberChannels() {
  for (int32_t R = 0; R < NumRanks; ++R) {
    Side &Sd = Sides[size_t(R)];
    for (size_t K = 0; K < Sd.OutPeers.size(); ++K) {
      ChanIndex[channelKey(R, Sd.OutPeers[K])] = uint32_t(M.Channels.size());
      ChannelMatch &CM = M.Channels.emplace_back();
      CM.Src = R;
      CM.Dst = Sd.OutPeers[K];
      ChanSends.push_back(std::move(Sd.OutSends[K]));
    }
    Sd.OutIndex.clear();
    Sd.OutSends.clear();
  }
}

/// Pass 2 on rank R: the n-th receive on a channel pairs with the n-th
/// send; they must carry the same message. Only R's receives touch the
/// channels into R, so ranks do not share what they write. (A receive may
/// open a channel no send uses.)
void Matcher::matchRecvs(int32_t R) {
  const Action *Acts = S.Ranks[R].Actions.data();
  size_t Size = S.Ranks[R].Actions.size();
  uint32_t Base = M.Ids.Base[size_t(R)];
  uint32_t *Partner = M.Partner.data();
  const PeerProblem *Peer = M.Peer.data();
  Side &Sd = Sides[size_t(R)];
  static const std::vector<uint32_t> NoSends;
  Cache C;
  for (size_t I = 0; I < Size; ++I) {
    const Action &A = Acts[I];
    if (!ir::isRecv(A.Kind))
      continue;
    uint32_t G = Base + uint32_t(I);
    if (Peer[G] == PeerProblem::NoSuchRank)
      continue;
    uint32_t Ch = C.get(A.Peer, [&] {
      auto It = ChanIndex.find(channelKey(A.Peer, R));
      if (It != ChanIndex.end())
        return It->second;
      auto [Op, New] =
          Sd.OpenedIndex.try_emplace(A.Peer, uint32_t(Sd.Opened.size()));
      if (New) {
        ChannelMatch &CM = Sd.Opened.emplace_back();
        CM.Src = A.Peer;
        CM.Dst = R;
      }
      return Op->second | OpenedBit;
    });
    bool Opened = Ch & OpenedBit;
    ChannelMatch &CM = Opened ? Sd.Opened[Ch & ~OpenedBit] : M.Channels[Ch];
    const std::vector<uint32_t> &Sends = Opened ? NoSends : ChanSends[Ch];
    uint32_t Ord = CM.Recvs++;
    if (Ord >= Sends.size()) {
      if (Peer[G] == PeerProblem::None && CM.LooseCount++ == 0)
        CM.FirstLoose = G;
      continue;
    }
    uint32_t Snd = Sends[Ord];
    Partner[G] = Snd;
    Partner[Snd] = G;
    const Action &SA = S.Ranks[A.Peer].Actions[M.Ids.indexOn(A.Peer, Snd)];
    if (!schema::commsMatch(SA.Kind, SA.Microbatch, SA.Stage, A.Kind,
                            A.Microbatch, A.Stage) &&
        CM.BadCount++ == 0) {
      CM.FirstBad = G;
      CM.BadOrdinal = Ord;
    }
  }
}

void Matcher::run() {
  M.Ids.build(S);
  uint32_t N = M.Ids.size();
  M.Partner.assign(N, NoAction);
  M.Peer.assign(N, PeerProblem::None);
  Placed = int32_t(S.Topo.StageToRank.size()) == S.Topo.Stages;
  unsigned Threads = threadsForActions(N);
  parallelFor(size_t(NumRanks), Threads,
              [&](size_t R, unsigned) { listSends(int32_t(R)); });
  numberChannels();
  parallelFor(size_t(NumRanks), Threads,
              [&](size_t R, unsigned) { matchRecvs(int32_t(R)); });
  // The channels only receives use come after those with sends, rank by
  // rank, as a walk over the ranks would open them.
  for (Side &Sd : Sides) {
    for (ChannelMatch &CM : Sd.Opened) {
      M.Channels.push_back(CM);
      ChanSends.emplace_back();
    }
  }
  // Sends past the last receive of their channel are unmatched.
  for (size_t Ch = 0; Ch < M.Channels.size(); ++Ch) {
    ChannelMatch &CM = M.Channels[Ch];
    CM.Sends = uint32_t(ChanSends[Ch].size());
    for (size_t K = CM.Recvs; K < ChanSends[Ch].size(); ++K) {
      uint32_t G = ChanSends[Ch][K];
      if (M.Peer[G] == PeerProblem::None && CM.LooseCount++ == 0)
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
