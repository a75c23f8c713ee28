//===- Timing.cpp - the timing engine: setup, visit loop, results ---------===//
//
// See TimingEngine.h for how the engine works; the cursors and the comm
// matching are in TimingTracks.cpp.
//
//===----------------------------------------------------------------------===//
#include "TimingEngine.h"

#include "pps/analysis/Describe.h"
#include "pps/support/Parallel.h"

#include <fmt/format.h>

#include <algorithm>

namespace pps::analysis {

using namespace timing;

namespace timing {

uint32_t Engine::channel(int32_t Src, int32_t Dst) {
  uint64_t K = (uint64_t(uint32_t(Src)) << 32) | uint32_t(Dst);
  auto It = ChannelIds.find(K);
  if (It != ChannelIds.end())
    return It->second;
  uint32_t Id = Channels.size();
  Channels.emplace_back();
  Channels.back().Src = Src;
  Channels.back().Dst = Dst;
  ChannelIds[K] = Id;
  return Id;
}

void Engine::buildStreams(int32_t R) {
  RankState &St = Ranks[R];
  size_t N = St.Acts.size();
  // A rank talks to few peers, and consecutive comms mostly to the same
  // one: remember the last track, search a few others linearly, hash many.
  llvm::DenseMap<int32_t, uint16_t> ByPeer; // used past 8 tracks
  int32_t LastKey = 0;
  uint16_t Last = 0xffff;
  for (uint32_t I = 0; I < N; ++I) {
    const Action &A = St.Acts[I];
    if (!ir::isComm(A.Kind))
      continue;
    // Executor timing: one track for the comms that hold the rank (-1), one
    // for those that do not (-2).
    int32_t Key = Executor && deferred(A) ? -2 : OneStream ? -1 : A.Peer;
    if (Last == 0xffff || Key != LastKey) {
      uint16_t Found = 0xffff;
      if (St.Streams.size() <= 8) {
        for (size_t K = 0, E = St.Streams.size(); K < E; ++K)
          if (St.Streams[K].Peer == Key) {
            Found = uint16_t(K);
            break;
          }
      } else {
        auto It = ByPeer.find(Key);
        if (It != ByPeer.end())
          Found = It->second;
      }
      if (Found == 0xffff) {
        if (St.Streams.size() >= 0xffff) {
          Found = 0; // absurdly many peers: share the first track
        } else {
          Found = uint16_t(St.Streams.size());
          ByPeer[Key] = Found;
          St.Streams.emplace_back();
          St.Streams.back().Peer = Key;
        }
      }
      Last = Found;
      LastKey = Key;
    }
    St.Streams[Last].Ops.push_back(I);
  }
  for (size_t K = 0; K < St.Streams.size(); ++K)
    if (St.Streams[K].Peer == -2)
      St.Deferred = uint16_t(K);
}

TimingResult Engine::run() {
  Model = Opts.Model;
  Cost = Opts.Cost ? *Opts.Cost : S.Cost;
  MsgF = Cost.messageTime(ActionKind::SendF);
  MsgB = Cost.messageTime(ActionKind::SendB);
  Executor = Opts.Timing == CommTiming::Executor;
  Blocking = Opts.Timing != CommTiming::Async;
  Dataflow = Opts.Dataflow;
  Route = S.Topo.route();
  StreamRule = Opts.Stream ? *Opts.Stream : S.Stream;
  // Executor timing is what ppsrt::Executor does without a stream rule
  // (--stream=none): it posts comms in program order on the rank's thread;
  // the eager threshold still decides which sends wait for their receive.
  // With a stream rule the executor runs as the asynchronous timing does.
  if (Executor)
    StreamRule.Scope = ir::StreamScope::None;
  EagerF = schema::sendIsEager(Model, StreamRule,
                               Cost.messageBytes(ActionKind::SendF));
  EagerB = schema::sendIsEager(Model, StreamRule,
                               Cost.messageBytes(ActionKind::SendB));
  InOrder = !Blocking && StreamRule.inOrder();
  OneStream = Blocking || Model == ir::CommModel::Batched ||
              (InOrder && StreamRule.Scope == ir::StreamScope::Rank);

  P = int32_t(S.Ranks.size());
  Ranks.resize(P);
  Res.Times.resize(P);
  Res.Ranks.resize(P);
  if (Opts.KeepPreds)
    Res.Preds.resize(P);
  size_t Total = S.numActions();
  // Each rank's tables and tracks are its own: set up on a few threads
  // (pps/support/Parallel.h), the same result on any number.
  parallelFor(size_t(P), threadsForActions(Total), [&](size_t Ri, unsigned) {
    auto R = int32_t(Ri);
    Ranks[R].Acts = S.Ranks[R].Actions;
    size_t N = Ranks[R].Acts.size();
    Res.Times[R].Start.assign(N, NaN);
    Res.Times[R].End.assign(N, NaN);
    Res.Times[R].TransferStart.assign(N, NaN);
    if (Opts.KeepHeld && !Blocking && !Dataflow) {
      Res.Times[R].Held.assign(N, 0.0);
      Res.Times[R].HeldBy.assign(N, NoRef);
    }
    if (Opts.KeepPreds)
      Res.Preds[R].reset(new uint64_t[N]);
    if (!Dataflow)
      buildStreams(R);
  });
  NMK = NM;
  if (NS > 0 && NM > 0 &&
      uint64_t(NS) * uint64_t(NM) > std::max<uint64_t>(4 * Total, 1 << 20)) {
    Sparse = true;
    for (const ir::RankProgram &RP : S.Ranks)
      for (const Action &A : RP.Actions)
        if (validMb(A.Microbatch))
          MbIndex.try_emplace(A.Microbatch, int32_t(MbIndex.size()));
    NMK = int32_t(MbIndex.size());
  }
  size_t Keys = NS > 0 && NMK > 0 ? size_t(NS) * size_t(NMK) : 0;
  ProdF.assign(Keys, Event());
  ProdBI.assign(Keys, Event());
  if (Dataflow) {
    HasF.resize(Keys);
    HasBI.resize(Keys);
    for (const ir::RankProgram &RP : S.Ranks)
      for (const Action &A : RP.Actions) {
        if (!validKey(A))
          continue;
        if (A.Kind == ActionKind::F)
          HasF.set(key(A.Microbatch, A.Stage));
        else if (A.Kind == ActionKind::B || A.Kind == ActionKind::I)
          HasBI.set(key(A.Microbatch, A.Stage));
      }
  } else {
    RecvF.assign(Keys, Event());
    RecvB.assign(Keys, Event());
  }

  // Visit the woken ranks in sweeps over the rank numbers, alternately up
  // and down, within a window of SweepWindow neighbouring ranks until none
  // of them can progress; then slide the window by half its width (and
  // back to rank 0 after the last). A rank woken ahead of the sweep is
  // visited in the same sweep, so a forward wavefront (F from rank r to
  // r+1) crosses the window in one upward sweep and a backward one in one
  // downward sweep; and the window's state (action, time and per-key
  // entries at each cursor, channels, tracks) stays in cache while it
  // advances, where a first-in-first-out worklist over 1024 ranks cycled
  // through more state than the cache holds (1.5x the time). The times do
  // not depend on the order of visits (max-plus over the dependencies;
  // matching is FIFO per channel in program order), only the cost does.
  Woken.assign((size_t(P) + 63) / 64, 0);
  for (int32_t R = 0; R < P; ++R)
    wake(R);
  int32_t Lo = 0, Hi = std::min(P, SweepWindow);
  bool Up = true, Found = false;
  int32_t From = 0;
  while (NumWoken) {
    int32_t R = nextWoken(From, Up, Lo, Hi);
    if (R < 0) {
      if (!Found) {
        // Nothing woken in the window in either direction: slide it by
        // half, or, when the next window has nothing to do either, jump to
        // the one holding the next woken rank (wrapping around).
        constexpr int32_t Step = SweepWindow / 2;
        int32_t Next = Lo + Step >= P ? 0 : Lo + Step;
        int32_t Any = nextWoken(Next, true, 0, P);
        if (Any < 0)
          Any = nextWoken(0, true, 0, P);
        if (Any < Next || Any >= Next + SweepWindow)
          Next = Any / Step * Step;
        Lo = Next;
        Hi = std::min(P, Lo + SweepWindow);
      }
      Found = false;
      Up = !Up;
      From = Up ? Lo : Hi - 1;
      continue;
    }
    Found = true;
    Woken[size_t(R) >> 6] &= ~(uint64_t(1) << (R & 63));
    --NumWoken;
    advance(R);
    prefetchResume(R);
    From = Up ? R + 1 : R - 1;
  }
  Res.StuckAt.assign(P, 0);
  for (int32_t R = 0; R < P; ++R) {
    Res.StuckAt[R] = stuckAt(R);
    if (Res.StuckAt[R] < Ranks[R].Acts.size())
      Res.Deadlocked = true;
  }
  for (const Channel &C : Channels)
    if (C.Messages)
      Res.Channels.push_back({C.Src, C.Dst, C.Messages, C.Bytes});
  return std::move(Res);
}

int32_t Engine::nextWoken(int32_t From, bool Up, int32_t Lo, int32_t Hi) const {
  if (From < Lo || From >= Hi)
    return -1;
  size_t Wd = size_t(From) >> 6;
  unsigned Bit = unsigned(From) & 63;
  if (Up) {
    uint64_t W = Woken[Wd] & (~uint64_t(0) << Bit);
    while (!W) {
      if (++Wd == Woken.size())
        return -1;
      W = Woken[Wd];
    }
    int32_t R = int32_t(Wd * 64 + unsigned(__builtin_ctzll(W)));
    return R < Hi ? R : -1;
  }
  uint64_t W =
      Woken[Wd] & (Bit == 63 ? ~uint64_t(0) : (uint64_t(1) << (Bit + 1)) - 1);
  while (!W) {
    if (Wd-- == 0)
      return -1;
    W = Woken[Wd];
  }
  int32_t R = int32_t(Wd * 64 + 63 - unsigned(__builtin_clzll(W)));
  return R >= Lo ? R : -1;
}

uint32_t Engine::stuckAt(int32_t R) const {
  const RankState &St = Ranks[R];
  uint32_t At = St.CIdx;
  if (Dataflow)
    return At;
  if (Blocking) {
    // Executor timing: a comm that does not hold the rank may still be
    // waiting for its partner.
    if (St.Deferred != NoStream)
      for (uint32_t I : St.Streams[St.Deferred].Ops)
        if (!known(Res.Times[R].End[I]))
          return std::min(At, I);
    return At;
  }
  for (const Stream &Sm : St.Streams)
    if (Sm.Pos < Sm.Ops.size())
      At = std::min(At, Sm.Ops[Sm.Pos]);
  return At;
}

} // namespace timing

std::vector<ActionRef> TimingResult::criticalPath() const {
  std::vector<ActionRef> Path;
  if (Deadlocked || Preds.size() != Times.size())
    return Path;
  uint64_t Last = NoRef;
  double Best = -1;
  int32_t P = int32_t(Times.size());
  for (int32_t R = 0; R < P; ++R) {
    // The first action (in rank, then index order) that ends last; a rank
    // whose last end (RankTiming::End, the max over its actions) is not
    // later than the best so far cannot hold it.
    if (!(Ranks[R].End > Best))
      continue;
    const RankTimeline &T = Times[R];
    for (size_t I = 0; I < T.End.size(); ++I)
      if (T.End[I] > Best) {
        Best = T.End[I];
        Last = pack(R, uint32_t(I));
      }
  }
  // Walk the binding predecessors back; bounded by the number of actions
  // (each step goes to an action that ended no later and was set earlier).
  size_t Bound = 1;
  for (const RankTimeline &T : Times)
    Bound += T.End.size();
  for (uint64_t Cur = Last; Cur != NoRef && Bound--;) {
    Path.push_back({refRank(Cur), refIdx(Cur)});
    Cur = Preds[refRank(Cur)][refIdx(Cur)];
  }
  std::reverse(Path.begin(), Path.end());
  return Path;
}

void reportStuckRun(const ir::Schedule &S, const TimingResult &T,
                    DiagnosticEngine &D) {
  // One error at the first stuck rank, a note for every other one.
  Diagnostic *Dg = nullptr;
  for (int32_t R = 0; R < int32_t(T.StuckAt.size()); ++R) {
    uint32_t At = T.StuckAt[R];
    if (At >= S.Ranks[R].Actions.size())
      continue;
    // Say what the rank waits on: a pending comm, or a compute's input.
    uint32_t Wait = At;
    const Action &A = S.Ranks[R].Actions[Wait];
    std::string What;
    if (ir::isRecv(A.Kind))
      What = fmt::format("rank {} waits in '{}' for a send that never comes", R,
                         ir::actionText(A));
    else if (ir::isSend(A.Kind))
      What = fmt::format("rank {} waits in '{}' for a receive that is never "
                         "posted",
                         R, ir::actionText(A));
    else
      What = fmt::format("rank {} cannot start '{}': its input never arrives",
                         R, ir::actionText(A));
    if (!Dg) {
      Dg = &D.report(DiagKind::Deadlock, locOf(S, A),
                     fmt::format("simulation deadlocks: no rank can "
                                 "progress; {}",
                                 What));
      continue;
    }
    Dg->note(locOf(S, A), What);
  }
}

TimingResult computeTiming(const ir::Schedule &S, const TimingOptions &Opts) {
  return Engine(S, Opts).run();
}

} // namespace pps::analysis
