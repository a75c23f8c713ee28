//===- Simulator.cpp - the event-driven cost-model simulator --------------===//
//
// Each rank runs two cursors over its action vector: the compute cursor
// (computes, idle, control) and the comm cursor (sends and receives, grouped
// into batches: one op under rendezvous/eager, a maximal run of consecutive
// comms under batched). In blocking mode one cursor does both. A cursor
// advances until it needs a time that is not known yet (a receive that has
// not matched, a producer on another rank); the rank then waits until the
// event it needs happens and wakes it. Woken ranks are visited in up/down
// sweeps over a window of neighbouring ranks (see run()), which keeps the
// window's state in cache. Every action is finished once and every wake-up
// follows a finished action, so the work is linear in the number of
// actions. Times are max-plus over the dependencies, which is what
// a discrete-event simulation of this model computes: no resource is shared
// between ranks and each track serves its actions in program order.
//
//===----------------------------------------------------------------------===//
#include "pps/sim/Simulator.h"

#include "pps/analysis/Memory.h"
#include "pps/passes/Deadlock.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

namespace pps::sim {

using ir::Action;
using ir::ActionKind;

namespace {

constexpr double NaN = std::numeric_limits<double>::quiet_NaN();
constexpr uint64_t NoRef = ~uint64_t(0);

inline uint64_t pack(int32_t Rank, uint32_t Idx) {
  return (uint64_t(uint32_t(Rank)) << 32) | Idx;
}
inline int32_t refRank(uint64_t R) { return int32_t(R >> 32); }
inline uint32_t refIdx(uint64_t R) { return uint32_t(R); }
inline bool known(double T) { return T == T; }

/// The first side of a message to be posted waits here for the other.
struct Slot {
  double Ready = 0;  // when the first side was posted
  double XStart = 0; // eager send: transfer start
  double End = 0;    // eager send: transfer end
  uint64_t Ref = NoRef;
  // The action's kind, microbatch and stage, so matching does not read the
  // other rank's action vector (cold by then).
  int32_t Mb = -1, Stage = -1;
  uint16_t Stream = 0; // the poster's stream on its rank
  ActionKind Kind = ActionKind::Idle;
  bool IsSend = false;
};

/// FIFO matching on one (source, destination) channel: the n-th send is
/// matched with the n-th receive.
struct Channel {
  int32_t Src = 0, Dst = 0;
  uint64_t Sends = 0, Recvs = 0; // posted so far
  uint64_t Messages = 0;
  double Bytes = 0;
  /// Posted, not yet matched ops; all from the same side (the side ahead).
  std::vector<Slot> Pending;
  size_t Head = 0;

  void push(const Slot &S) { Pending.push_back(S); }
  Slot pop() {
    Slot S = Pending[Head++];
    if (Head == Pending.size()) {
      Pending.clear();
      Head = 0;
    }
    return S;
  }
  bool empty() const { return Head == Pending.size(); }
};

/// A receive or a producer and when it completed. At: NaN = none seen,
/// +inf = a receive seen but not complete yet, else the completion time.
struct Event {
  double At = NaN;
  int32_t Rank = -1;
  uint32_t Idx = 0;
  uint64_t ref() const { return pack(Rank, Idx); }
};
constexpr double Pending = std::numeric_limits<double>::infinity();

/// One comm track of a rank: under async rendezvous/eager one per peer (the
/// ops between two ranks progress in program order, ops to different peers
/// independently); under batched, and when blocking, one for all comms.
struct Stream {
  int32_t Peer = -1;
  std::vector<uint32_t> Ops; // action indices, program order
  uint32_t Pos = 0;          // first op not finished
  uint32_t BatchEnd = 0;     // [Pos, BatchEnd) posted while Posted
  uint32_t Remaining = 0;    // unmatched ops of the posted batch
  bool Posted = false;
  /// Async: when the last batch's transfers began (the next may not begin
  /// earlier); blocking: when it completed.
  double Free = 0;
  uint64_t FreeRef = NoRef;
  double BatchDone = 0; // completion of the last finished batch
  uint64_t BatchDoneRef = NoRef;
  int32_t OutPeer = -1, InPeer = -1;
  uint32_t OutChan = 0, InChan = 0;
};

struct RankState {
  llvm::ArrayRef<Action> Acts;
  uint32_t CIdx = 0; // compute cursor (the only cursor when blocking)
  double ComputeFree = 0;
  uint64_t LastCompute = NoRef;
  llvm::SmallVector<Stream, 2> Streams;
};

class Sim {
public:
  Sim(const ir::Schedule &S, const SimOptions &O, DiagnosticEngine *D)
      : S(S), Opts(O), Diags(D), P(S.Topo.Ranks), NS(S.Topo.Stages),
        NM(S.Topo.Microbatches) {}

  SimResult run();

private:
  // --- setup and helpers --------------------------------------------------
  bool validStage(int32_t St) const { return St >= 0 && St < NS; }
  /// CostModel::messageTime, computed once per direction.
  double msgTime(ActionKind K) const {
    return ir::isForwardComm(K) ? MsgF : MsgB;
  }
  bool validMb(int32_t Mb) const { return Mb >= 0 && Mb < NM; }
  /// Stage-major, so a rank's consecutive computes (same stage, next
  /// microbatch) touch neighbouring entries of the per-key tables.
  size_t key(int32_t Mb, int32_t St) const {
    size_t M = Sparse ? size_t(MbIndex.lookup(Mb)) : size_t(Mb);
    return size_t(St) * size_t(NMK) + M;
  }
  bool validKey(const Action &A) const {
    return validStage(A.Stage) && validMb(A.Microbatch);
  }
  int32_t rankOfStage(int32_t St) const {
    return St >= 0 && St < int32_t(S.Topo.StageToRank.size())
               ? S.Topo.StageToRank[St]
               : -1;
  }
  bool validPeer(int32_t R, const Action &A) const {
    return A.Peer >= 0 && A.Peer < P && A.Peer != R;
  }
  double &endOf(uint64_t Ref) {
    return Res.Times[refRank(Ref)].End[refIdx(Ref)];
  }
  double &xstartOf(uint64_t Ref) {
    return Res.Times[refRank(Ref)].TransferStart[refIdx(Ref)];
  }
  uint64_t predOf(uint64_t Ref) const {
    return Opts.CriticalPath ? Preds[refRank(Ref)][refIdx(Ref)] : NoRef;
  }
  void setPred(uint64_t Ref, uint64_t Pred) {
    if (Opts.CriticalPath)
      Preds[refRank(Ref)][refIdx(Ref)] = Pred;
  }
  /// Marks a rank to advance. The woken ranks are visited in sweeps over
  /// the rank numbers, alternately up and down (see run()).
  void wake(int32_t R) {
    if (R < 0 || R >= P)
      return;
    uint64_t &W = Woken[size_t(R) >> 6], Bit = uint64_t(1) << (R & 63);
    if (W & Bit)
      return;
    W |= Bit;
    ++NumWoken;
  }
  /// The first woken rank at or above From (up) or at or below it (down),
  /// or -1.
  int32_t nextWoken(int32_t From, bool Up, int32_t Lo, int32_t Hi) const;
  /// Ranks per sweep window (measured best of 16-128 at 1024 ranks).
  static constexpr int32_t SweepWindow = 32;
  uint32_t channel(int32_t Src, int32_t Dst);
  void buildStreams(int32_t R);

  // --- the cursors --------------------------------------------------------
  void advance(int32_t R);
  bool advanceCompute(int32_t R);
  bool advanceStreams(int32_t R);
  bool advanceBlocking(int32_t R);
  /// Tries to run the compute (or overlap pair) at CIdx. False if blocked.
  bool runCompute(int32_t R);
  /// Posts the batch starting at the stream's Pos at time Ready.
  void postBatch(int32_t R, Stream &Sm, double Ready, uint64_t ReadyRef);
  void post(int32_t R, Stream &Sm, uint32_t Idx, double Ready,
            uint64_t ReadyRef);
  void matched(const Slot &Send, const Slot &Recv);
  void opDone(uint64_t Ref, uint16_t StreamIdx, double End);
  /// Finishes the posted batch once every op matched; true if it did.
  bool finishBatch(int32_t R, Stream &Sm);
  /// A receive completed: its consumer may start from E.
  void recvDone(int32_t R, uint32_t J, double E);

  // --- after the run ------------------------------------------------------
  uint32_t stuckAt(int32_t R) const;
  void figures();
  void criticalPath();
  void reportDeadlock();
  LocId locOf(const Action &A) const { return A.Loc ? A.Loc : S.DeclLoc; }

  const ir::Schedule &S;
  const SimOptions &Opts;
  DiagnosticEngine *Diags;
  int32_t P, NS, NM;
  bool Blocking = false, Dataflow = false, OneStream = false;
  ir::CommModel Model = ir::CommModel::Rendezvous;
  ir::CostModel Cost;
  double MsgF = 0, MsgB = 0;

  SimResult Res;
  llvm::SmallVector<RankState, 8> Ranks;
  /// Per rank, per action: the action whose end bound its start. Not
  /// initialised: every action that runs sets it, and the critical path is
  /// only walked when every action ran.
  std::vector<std::unique_ptr<uint64_t[]>> Preds;
  std::vector<Channel> Channels;
  llvm::DenseMap<uint64_t, uint32_t> ChannelIds;
  std::vector<uint64_t> Woken; // one bit per rank
  size_t NumWoken = 0;

  // Per (microbatch, stage): the receive serving F / B-or-I on its rank,
  // and the compute that produced F / B-or-I, with their times, so the hot
  // paths read one entry instead of chasing a reference.
  std::vector<Event> RecvF, RecvB;
  std::vector<Event> ProdF, ProdBI;
  llvm::BitVector HasF, HasBI; // dataflow: which producers exist
  uint64_t Mismatches = 0;
  // When microbatch numbers are sparse (a huge M with few actions), the
  // per-key tables are indexed by the rank of each microbatch number that
  // occurs instead, so their size stays proportional to the schedule.
  bool Sparse = false;
  int32_t NMK = 0;
  llvm::DenseMap<int32_t, int32_t> MbIndex;
};

uint32_t Sim::channel(int32_t Src, int32_t Dst) {
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

void Sim::buildStreams(int32_t R) {
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
    int32_t Key = OneStream ? -1 : A.Peer;
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
}

SimResult Sim::run() {
  Model = Opts.CommModel.value_or(S.Comm);
  Cost = S.Cost;
  if (Opts.Latency)
    Cost.Latency = *Opts.Latency;
  MsgF = Cost.messageTime(ActionKind::SendF);
  MsgB = Cost.messageTime(ActionKind::SendB);
  Blocking = Opts.BlockingComm.value_or(!S.Cost.AsyncComm);
  Dataflow = Opts.Dataflow == DataflowMode::Dataflow ||
             (Opts.Dataflow == DataflowMode::Auto && !S.hasComms());
  OneStream = Blocking || Model == ir::CommModel::Batched;
  Res.Comm = Model;
  Res.Blocking = Blocking;
  Res.UsedDataflow = Dataflow;

  P = int32_t(S.Ranks.size());
  Ranks.resize(P);
  Res.Times.resize(P);
  Res.Ranks.resize(P);
  if (Opts.CriticalPath)
    Preds.resize(P);
  for (int32_t R = 0; R < P; ++R) {
    Ranks[R].Acts = S.Ranks[R].Actions;
    size_t N = Ranks[R].Acts.size();
    Res.Times[R].Start.assign(N, NaN);
    Res.Times[R].End.assign(N, NaN);
    Res.Times[R].TransferStart.assign(N, NaN);
    if (Opts.CriticalPath)
      Preds[R].reset(new uint64_t[N]);
    if (!Dataflow)
      buildStreams(R);
  }
  NMK = NM;
  size_t Total = S.numActions();
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
    From = Up ? R + 1 : R - 1;
  }
  Res.StuckAt.assign(P, 0);
  for (int32_t R = 0; R < P; ++R) {
    Res.StuckAt[R] = stuckAt(R);
    if (Res.StuckAt[R] < Ranks[R].Acts.size())
      Res.Deadlocked = true;
  }
  // Eager sends nobody received are not a hang, but they are wrong.
  if (Diags && !Res.Deadlocked)
    for (const Channel &C : Channels)
      if (!C.empty() && C.Pending[C.Head].IsSend) {
        const Slot &Sl = C.Pending[C.Head];
        const Action &A = S.Ranks[refRank(Sl.Ref)].Actions[refIdx(Sl.Ref)];
        Diags->report(DiagKind::UnmatchedSend, locOf(A),
                      fmt::format("'{}' on rank {} is never received",
                                  ir::actionText(A), refRank(Sl.Ref)));
      }
  if (Res.Deadlocked)
    reportDeadlock();
  figures();
  if (Opts.CriticalPath && !Res.Deadlocked)
    criticalPath();
  if (!Opts.KeepTimes)
    Res.Times.clear();
  return std::move(Res);
}

int32_t Sim::nextWoken(int32_t From, bool Up, int32_t Lo, int32_t Hi) const {
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

uint32_t Sim::stuckAt(int32_t R) const {
  const RankState &St = Ranks[R];
  uint32_t At = St.CIdx;
  if (Blocking || Dataflow)
    return At;
  for (const Stream &Sm : St.Streams)
    if (Sm.Pos < Sm.Ops.size())
      At = std::min(At, Sm.Ops[Sm.Pos]);
  return At;
}

void Sim::advance(int32_t R) {
  if (Blocking || Dataflow) {
    advanceBlocking(R);
  } else {
    // Alternate the tracks until none moves.
    while (advanceCompute(R) | advanceStreams(R)) {
    }
  }
}

bool Sim::runCompute(int32_t R) {
  RankState &St = Ranks[R];
  llvm::ArrayRef<Action> Acts = St.Acts;
  uint32_t I = St.CIdx;
  uint32_t N = 1;
  if (Acts[I].overlapsNext() && I + 1 < Acts.size() &&
      ir::isCompute(Acts[I + 1].Kind))
    N = 2;
  double Begin = St.ComputeFree;
  uint64_t Bind = St.LastCompute;
  auto Need = [&](const Event &Ev, double Delay) {
    double E = Ev.At + Delay;
    if (E > Begin) {
      Begin = E;
      Bind = Ev.ref();
    }
  };
  for (uint32_t J = I; J < I + N; ++J) {
    const Action &A = Acts[J];
    if (!validKey(A))
      continue;
    size_t K = key(A.Microbatch, A.Stage);
    if (!Dataflow) {
      if (A.Kind == ActionKind::W)
        continue;
      const Event &Rv = A.Kind == ActionKind::F ? RecvF[K] : RecvB[K];
      if (Rv.Rank != R || !known(Rv.At))
        continue; // no receive serves it here
      // Set once its batch has finished (under batched, the whole batch
      // completes together).
      if (Rv.At == Pending)
        return false;
      Need(Rv, 0);
      continue;
    }
    // Dataflow: wait for the producer, plus a message if it ran elsewhere.
    auto Producer = [&](bool IsF, int32_t Mb, int32_t Stage,
                        ActionKind MsgKind) {
      if (!validStage(Stage))
        return true;
      size_t PK = key(Mb, Stage);
      if (!(IsF ? HasF[PK] : HasBI[PK]))
        return true; // not in the schedule: nothing to wait for
      const Event &Ev = IsF ? ProdF[PK] : ProdBI[PK];
      if (!known(Ev.At))
        return false;
      Need(Ev, Ev.Rank == R ? 0 : msgTime(MsgKind));
      return true;
    };
    bool Ok = true;
    switch (A.Kind) {
    case ActionKind::F:
      Ok = A.Stage > S.Topo.firstStage(A.Microbatch)
               ? Producer(true, A.Microbatch, A.Stage - 1, ActionKind::SendF)
               : true;
      break;
    case ActionKind::B:
    case ActionKind::I:
      Ok = A.Stage >= S.Topo.lastStage(A.Microbatch)
               ? Producer(true, A.Microbatch, A.Stage, ActionKind::SendF)
               : Producer(false, A.Microbatch, A.Stage + 1, ActionKind::SendB);
      break;
    case ActionKind::W:
      Ok = Producer(false, A.Microbatch, A.Stage, ActionKind::SendB);
      break;
    default:
      break;
    }
    if (!Ok)
      return false;
  }
  double Dur;
  if (N == 2 && Cost.Overlap) {
    Dur = *Cost.Overlap;
  } else {
    Dur = 0;
    for (uint32_t J = I; J < I + N; ++J)
      Dur += Cost.computeCost(Acts[J].Kind, Acts[J].Stage);
  }
  double End = Begin + Dur;
  RankTimeline &T = Res.Times[R];
  for (uint32_t J = I; J < I + N; ++J) {
    T.Start[J] = Begin;
    T.TransferStart[J] = Begin;
    T.End[J] = End;
    setPred(pack(R, J), J == I ? Bind : pack(R, I));
    const Action &A = Acts[J];
    if (!validKey(A))
      continue;
    size_t K = key(A.Microbatch, A.Stage);
    if (A.Kind == ActionKind::F) {
      ProdF[K] = Event{End, R, J};
      if (Dataflow && A.Stage < S.Topo.lastStage(A.Microbatch))
        wake(rankOfStage(A.Stage + 1));
    } else if (A.Kind == ActionKind::B || A.Kind == ActionKind::I) {
      ProdBI[K] = Event{End, R, J};
      if (Dataflow && A.Stage > S.Topo.firstStage(A.Microbatch))
        wake(rankOfStage(A.Stage - 1));
    }
  }
  RankStats &RS = Res.Ranks[R];
  RS.ComputeBusy += Dur;
  RS.Computes += N;
  if (End > RS.End)
    RS.End = End;
  if (End > Res.Makespan)
    Res.Makespan = End;
  St.ComputeFree = End;
  St.LastCompute = pack(R, I + N - 1);
  St.CIdx = I + N;
  return true;
}

bool Sim::advanceCompute(int32_t R) {
  RankState &St = Ranks[R];
  llvm::ArrayRef<Action> Acts = St.Acts;
  RankTimeline &T = Res.Times[R];
  bool Moved = false;
  while (St.CIdx < Acts.size()) {
    uint32_t I = St.CIdx;
    const Action &A = Acts[I];
    if (ir::isComm(A.Kind)) {
      // Remember when the computes before it finished: a send's data is
      // ready then at the latest, and a batch is posted then.
      // (A comm posted already has its start: the time it was posted.)
      if (!known(T.Start[I])) {
        T.Start[I] = St.ComputeFree;
        setPred(pack(R, I), St.LastCompute);
      }
      if (ir::isRecv(A.Kind) && validKey(A)) {
        size_t K = key(A.Microbatch, A.Stage);
        Event &Ev = A.Kind == ActionKind::RecvF ? RecvF[K] : RecvB[K];
        if (!known(Ev.At) || Ev.Rank != R)
          Ev = Event{Pending, R, I};
      }
      ++St.CIdx;
      Moved = true;
      continue;
    }
    if (!ir::isCompute(A.Kind)) {
      // Idle and control actions take no time on the compute track.
      T.Start[I] = T.End[I] = T.TransferStart[I] = St.ComputeFree;
      setPred(pack(R, I), St.LastCompute);
      ++St.CIdx;
      Moved = true;
      continue;
    }
    if (!runCompute(R))
      return Moved;
    Moved = true;
  }
  return Moved;
}

bool Sim::advanceStreams(int32_t R) {
  RankState &St = Ranks[R];
  RankTimeline &T = Res.Times[R];
  bool Moved = false;
  for (Stream &Sm : St.Streams) {
    while (true) {
      if (Sm.Posted) {
        if (!finishBatch(R, Sm))
          break;
        Moved = true;
        continue;
      }
      if (Sm.Pos >= Sm.Ops.size())
        break;
      uint32_t I = Sm.Ops[Sm.Pos];
      const Action &A = St.Acts[I];
      double Ready = Sm.Free;
      uint64_t ReadyRef = Sm.FreeRef;
      auto Later = [&](double Tm, uint64_t Ref) {
        if (Tm > Ready) {
          Ready = Tm;
          ReadyRef = Ref;
        }
      };
      if (OneStream) {
        // Batched: the batch is posted when the computes before it finish.
        if (St.CIdx <= I)
          break;
        Later(T.Start[I], predOf(pack(R, I)));
      } else if (ir::isSend(A.Kind)) {
        // A send goes when its data is ready: at the end of the compute it
        // serves if that ran on this rank, else when the computes before
        // it in program order have finished.
        const Event *Prod = nullptr;
        if (validKey(A)) {
          size_t K = key(A.Microbatch, A.Stage);
          Prod = A.Kind == ActionKind::SendF ? &ProdF[K] : &ProdBI[K];
          if (Prod->Rank != R || !known(Prod->At))
            Prod = nullptr;
        }
        if (Prod) {
          Later(Prod->At, Prod->ref());
        } else {
          if (St.CIdx <= I)
            break;
          Later(T.Start[I], predOf(pack(R, I)));
        }
      }
      // A receive is posted as soon as its track is free.
      postBatch(R, Sm, Ready, ReadyRef);
      Moved = true;
    }
  }
  return Moved;
}

bool Sim::advanceBlocking(int32_t R) {
  RankState &St = Ranks[R];
  llvm::ArrayRef<Action> Acts = St.Acts;
  RankTimeline &T = Res.Times[R];
  bool Moved = false;
  while (St.CIdx < Acts.size()) {
    uint32_t I = St.CIdx;
    const Action &A = Acts[I];
    if (ir::isComm(A.Kind) && !Dataflow) {
      Stream &Sm = St.Streams.front(); // blocking: one stream
      if (!Sm.Posted) {
        if (ir::isRecv(A.Kind) && validKey(A)) {
          size_t K = key(A.Microbatch, A.Stage);
          Event &Ev = A.Kind == ActionKind::RecvF ? RecvF[K] : RecvB[K];
          if (!known(Ev.At) || Ev.Rank != R)
            Ev = Event{Pending, R, I};
        }
        postBatch(R, Sm, St.ComputeFree, St.LastCompute);
        Moved = true;
      }
      uint32_t Last = Sm.Ops[Sm.BatchEnd - 1];
      if (!finishBatch(R, Sm))
        return Moved;
      // The batch held the rank until it completed.
      St.ComputeFree = Sm.BatchDone;
      St.LastCompute = Sm.BatchDoneRef;
      St.CIdx = Last + 1;
      Moved = true;
      continue;
    }
    if (ir::isCompute(A.Kind)) {
      if (!runCompute(R))
        return Moved;
      Moved = true;
      continue;
    }
    // Idle, control, and comms ignored in dataflow mode: no time.
    T.Start[I] = T.End[I] = T.TransferStart[I] = St.ComputeFree;
    setPred(pack(R, I), St.LastCompute);
    ++St.CIdx;
    Moved = true;
  }
  return Moved;
}

void Sim::postBatch(int32_t R, Stream &Sm, double Ready, uint64_t ReadyRef) {
  // Under batched, a batch is a maximal run of consecutive comm actions.
  uint32_t E = Sm.Pos + 1;
  if (Model == ir::CommModel::Batched)
    while (E < Sm.Ops.size() && Sm.Ops[E] == Sm.Ops[E - 1] + 1)
      ++E;
  Sm.BatchEnd = E;
  Sm.Posted = true;
  Sm.Remaining = E - Sm.Pos;
  for (uint32_t K = Sm.Pos; K < E; ++K)
    post(R, Sm, Sm.Ops[K], Ready, ReadyRef);
}

void Sim::post(int32_t R, Stream &Sm, uint32_t Idx, double Ready,
               uint64_t ReadyRef) {
  RankState &St = Ranks[R];
  const Action &A = St.Acts[Idx];
  RankTimeline &T = Res.Times[R];
  T.Start[Idx] = Ready;
  uint64_t Me = pack(R, Idx);
  uint16_t SI = uint16_t(&Sm - St.Streams.data());
  setPred(Me, ReadyRef);
  if (!validPeer(R, A)) {
    // Nothing to talk to: a no-op (the verifier reports it).
    T.TransferStart[Idx] = Ready;
    opDone(Me, SI, Ready);
    return;
  }
  bool IsSend = ir::isSend(A.Kind);
  uint32_t C;
  if (IsSend) {
    if (Sm.OutPeer != A.Peer) {
      Sm.OutPeer = A.Peer;
      Sm.OutChan = channel(R, A.Peer);
    }
    C = Sm.OutChan;
  } else {
    if (Sm.InPeer != A.Peer) {
      Sm.InPeer = A.Peer;
      Sm.InChan = channel(A.Peer, R);
    }
    C = Sm.InChan;
  }
  Channel &Ch = Channels[C];
  Slot Mine;
  Mine.Ready = Ready;
  Mine.Ref = Me;
  Mine.IsSend = IsSend;
  Mine.Stream = SI;
  Mine.Kind = A.Kind;
  Mine.Mb = A.Microbatch;
  Mine.Stage = A.Stage;
  if (IsSend) {
    ++Ch.Messages;
    Ch.Bytes += A.Kind == ActionKind::SendF || Cost.GradientBytes < 0
                    ? Cost.ActivationBytes
                    : Cost.GradientBytes;
    ++Res.Ranks[R].Sends;
    if (Model == ir::CommModel::Eager) {
      // Eager: the send goes now and never waits for its receive.
      Mine.XStart = Ready;
      Mine.End = Ready + msgTime(A.Kind);
      T.TransferStart[Idx] = Mine.XStart;
      opDone(Me, SI, Mine.End);
    }
  } else {
    ++Res.Ranks[R].Recvs;
  }
  // Is the other side already posted? A channel's pending ops all come
  // from the side that is ahead.
  if (!Ch.empty() && Ch.Pending[Ch.Head].IsSend != IsSend) {
    Slot Other = Ch.pop();
    if (IsSend)
      matched(Mine, Other);
    else
      matched(Other, Mine);
    return;
  }
  Ch.push(Mine);
}

void Sim::matched(const Slot &SendSlot, const Slot &RecvSlot) {
  uint64_t SendRef = SendSlot.Ref, RecvRef = RecvSlot.Ref;
  double SendReady = SendSlot.Ready, RecvReady = RecvSlot.Ready;
  const Slot &SA = SendSlot, &RA = RecvSlot;
  bool Ok =
      schema::commsMatch(SA.Kind, SA.Mb, SA.Stage, RA.Kind, RA.Mb, RA.Stage);
  if (!Ok) {
    const Action &SAct = S.Ranks[refRank(SendRef)].Actions[refIdx(SendRef)];
    const Action &RAct = S.Ranks[refRank(RecvRef)].Actions[refIdx(RecvRef)];
    ++Mismatches;
    if (Diags && Mismatches == 1)
      Diags
          ->report(DiagKind::FifoMismatch, locOf(RAct),
                   fmt::format("'{}' on rank {} is matched in FIFO order with "
                               "'{}' from rank {}",
                               ir::actionText(RAct), refRank(RecvRef),
                               ir::actionText(SAct), refRank(SendRef)))
          .note(locOf(SAct), "the send is here");
  }
  if (Model == ir::CommModel::Eager) {
    // The send is done; the receive ends when the data is there.
    double X = std::max(RecvReady, SendSlot.XStart);
    double E = std::max(RecvReady, SendSlot.End);
    xstartOf(RecvRef) = std::min(X, E);
    if (SendSlot.End > RecvReady)
      setPred(RecvRef, SendRef);
    opDone(RecvRef, RecvSlot.Stream, E);
    return;
  }
  double Begin = std::max(SendReady, RecvReady);
  double E = Begin + msgTime(SA.Kind);
  xstartOf(SendRef) = Begin;
  xstartOf(RecvRef) = Begin;
  // The side that was ready first waited for the other.
  if (SendReady > RecvReady)
    setPred(RecvRef, SendRef);
  else if (RecvReady > SendReady)
    setPred(SendRef, RecvRef);
  opDone(SendRef, SendSlot.Stream, E);
  opDone(RecvRef, RecvSlot.Stream, E);
}

void Sim::opDone(uint64_t Ref, uint16_t StreamIdx, double End) {
  int32_t R = refRank(Ref);
  endOf(Ref) = End;
  if (End > Res.Ranks[R].End)
    Res.Ranks[R].End = End;
  if (End > Res.Makespan)
    Res.Makespan = End;
  Stream &Sm = Ranks[R].Streams[StreamIdx];
  if (--Sm.Remaining == 0)
    wake(R);
}

void Sim::recvDone(int32_t R, uint32_t J, double E) {
  const Action &A = Ranks[R].Acts[J];
  if (!ir::isRecv(A.Kind) || !validKey(A))
    return;
  size_t K = key(A.Microbatch, A.Stage);
  (A.Kind == ActionKind::RecvF ? RecvF[K] : RecvB[K]) = Event{E, R, J};
}

bool Sim::finishBatch(int32_t R, Stream &Sm) {
  if (Sm.Remaining != 0)
    return false;
  RankTimeline &T = Res.Times[R];
  RankStats &RS = Res.Ranks[R];
  if (Sm.BatchEnd == Sm.Pos + 1) {
    // One op (rendezvous, eager, or a batch of one): no batch bookkeeping.
    uint32_t J = Sm.Ops[Sm.Pos];
    double X = T.TransferStart[J], E = T.End[J];
    RS.CommBusy += E - X;
    RS.CommWait += X - T.Start[J];
    recvDone(R, J, E);
    Sm.BatchDone = E;
    Sm.BatchDoneRef = pack(R, J);
    Sm.Free = Blocking ? E : X;
    Sm.FreeRef = Sm.BatchDoneRef;
    Sm.Pos = Sm.BatchEnd;
    Sm.Posted = false;
    return true;
  }
  double MaxEnd = -std::numeric_limits<double>::infinity();
  double MaxX = MaxEnd;
  uint32_t Arg = Sm.Ops[Sm.Pos], ArgX = Arg;
  for (uint32_t K = Sm.Pos; K < Sm.BatchEnd; ++K) {
    uint32_t J = Sm.Ops[K];
    if (T.End[J] > MaxEnd) {
      MaxEnd = T.End[J];
      Arg = J;
    }
    if (T.TransferStart[J] > MaxX) {
      MaxX = T.TransferStart[J];
      ArgX = J;
    }
  }
  for (uint32_t K = Sm.Pos; K < Sm.BatchEnd; ++K) {
    uint32_t J = Sm.Ops[K];
    RS.CommBusy += T.End[J] - T.TransferStart[J];
    RS.CommWait += T.TransferStart[J] - T.Start[J];
    if (J != Arg) {
      T.End[J] = MaxEnd; // the batch completes as a whole
      setPred(pack(R, J), pack(R, Arg));
    }
    recvDone(R, J, MaxEnd);
  }
  // Async: a track orders the *start* of transfers (the rendezvous point);
  // messages already under way overlap the next one. Blocking: the rank is
  // held until the batch has completed.
  Sm.BatchDone = MaxEnd;
  Sm.BatchDoneRef = pack(R, Arg);
  Sm.Free = Blocking ? MaxEnd : MaxX;
  Sm.FreeRef = pack(R, Blocking ? Arg : ArgX);
  Sm.Pos = Sm.BatchEnd;
  Sm.Posted = false;
  return true;
}

void Sim::figures() {
  double Makespan = Res.Makespan; // tracked as actions finished
  double Ideal = 0, SumBusy = 0;
  // Memory is the analysis layer's (the one rule, chunk units).
  analysis::MemoryProfile Mem = analysis::analyzeMemory(S);
  for (int32_t R = 0; R < P; ++R) {
    RankStats &RS = Res.Ranks[R];
    RS.Idle = Makespan - RS.ComputeBusy;
    Ideal = std::max(Ideal, RS.ComputeBusy);
    SumBusy += RS.ComputeBusy;
    RS.PeakMemory = analysis::wholeUnits(Mem.Ranks[R].Peak);
    RS.PeakMemoryAt = Mem.Ranks[R].PeakAt;
    Res.PeakMemory = std::max(Res.PeakMemory, RS.PeakMemory);
  }
  Res.Ideal = Ideal;
  if (Makespan > 0) {
    Res.BubbleOverMakespan = (Makespan - Ideal) / Makespan;
    Res.MeanIdleFraction = P > 0 ? 1.0 - SumBusy / (double(P) * Makespan) : 0;
  }
  if (Ideal > 0)
    Res.BubbleOverIdeal = (Makespan - Ideal) / Ideal;
  // Channels sorted by (src, dst).
  Res.Channels.reserve(Channels.size());
  for (const Channel &C : Channels) {
    if (C.Messages == 0)
      continue;
    Res.Channels.push_back({C.Src, C.Dst, C.Messages, C.Bytes});
    Res.Messages += C.Messages;
    Res.Bytes += C.Bytes;
  }
  llvm::sort(Res.Channels, [](const ChannelStats &A, const ChannelStats &B) {
    return std::make_pair(A.Src, A.Dst) < std::make_pair(B.Src, B.Dst);
  });
}

void Sim::criticalPath() {
  uint64_t Last = NoRef;
  double Best = -1;
  for (int32_t R = 0; R < P; ++R) {
    // The first action (in rank, then index order) that ends last; a rank
    // whose last end (RankStats::End, the max over its actions) is not
    // later than the best so far cannot hold it.
    if (!(Res.Ranks[R].End > Best))
      continue;
    const RankTimeline &T = Res.Times[R];
    for (size_t I = 0; I < T.End.size(); ++I)
      if (T.End[I] > Best) {
        Best = T.End[I];
        Last = pack(R, uint32_t(I));
      }
  }
  // Walk the binding predecessors back; bounded by the number of actions
  // (each step goes to an action that ended no later and was set earlier).
  size_t Bound = S.numActions() + 1;
  for (uint64_t Cur = Last; Cur != NoRef && Bound--;) {
    Res.CriticalPath.push_back({refRank(Cur), refIdx(Cur)});
    Cur = Preds[refRank(Cur)][refIdx(Cur)];
  }
  std::reverse(Res.CriticalPath.begin(), Res.CriticalPath.end());
}

void Sim::reportDeadlock() {
  if (!Diags)
    return;
  // With comms, the deadlock pass explains the hang as a cycle of waits
  // (with locations); the simulator only speaks when the pass finds
  // nothing to say (dataflow mode, or a stall the pass does not model).
  if (!Dataflow) {
    unsigned Before = Diags->numErrors();
    ir::Schedule Copy = S;
    passes::PassContext Ctx{*Diags, {}};
    passes::DeadlockOptions DO;
    DO.Model = Model;
    passes::createDeadlockPass(DO)->run(Copy, Ctx);
    if (Diags->numErrors() > Before)
      return;
  }
  // One error at the first stuck rank, a note for every other one.
  Diagnostic *D = nullptr;
  for (int32_t R = 0; R < P; ++R) {
    uint32_t At = Res.StuckAt[R];
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
    if (!D) {
      D = &Diags->report(DiagKind::Deadlock, locOf(A),
                         fmt::format("simulation deadlocks: no rank can "
                                     "progress; {}",
                                     What));
      continue;
    }
    D->note(locOf(A), What);
  }
}

} // namespace

SimResult simulate(const ir::Schedule &S, const SimOptions &Opts,
                   DiagnosticEngine *Diags) {
  Sim Engine(S, Opts, Diags);
  return Engine.run();
}

} // namespace pps::sim
