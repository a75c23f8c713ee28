//===- TimingEngine.h - the timing engine's state (private) ---------------===//
//
// Private to compiler/analysis: the event-driven engine behind
// computeTiming (pps/analysis/Timing.h). Timing.cpp sets it up and runs the
// visit loop; TimingTracks.cpp holds the cursors that advance a rank's
// compute and comm tracks and the matching of posted comms.
//
// Each rank runs two cursors over its action vector: the compute cursor
// (computes, idle, control) and the comm cursor (sends and receives, grouped
// into batches: one op under rendezvous/eager, a maximal run of consecutive
// comms under batched). With blocking or executor timing one cursor does
// both. A cursor advances until it needs a time that is not known yet (a
// receive that has not matched, a producer on another rank); the rank then
// waits until the event it needs happens and wakes it. Every action is
// finished once and every wake-up follows a finished action, so the work is
// linear in the number of actions. Times are max-plus over the
// dependencies, which is what a discrete-event simulation of this model
// computes: no resource is shared between ranks and each track serves its
// actions in program order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/analysis/Timing.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace pps::analysis::timing {

using ir::Action;
using ir::ActionKind;

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
  uint16_t Stream = 0; // the poster's stream on its rank
  ActionKind Kind = ActionKind::Idle;
  bool IsSend = false;
  bool Eager = false; // a send that does not wait for its receive
  /// When the rank issued it (<= Ready; less when its track held it back;
  /// what held it is in RankTimeline::HeldBy when kept).
  double Issue = 0;
};

/// FIFO matching on one (source, destination) channel: the n-th send is
/// matched with the n-th receive.
struct Channel {
  int32_t Src = 0, Dst = 0;
  uint64_t Messages = 0;
  double Bytes = 0;
  /// Posted, not yet matched ops; all from the same side (the side ahead).
  std::vector<Slot> Pending;
  size_t Head = 0;

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
/// Under the stream rule a track is a stream: one per rank (scope rank,
/// or batched) or one per peer (scope peer), whose next operation waits for
/// the previous one to complete.
/// Executor timing has one track for the comms that hold the rank and one
/// for those that do not (deferred receives, eager sends), whose ops are
/// posted one by one and complete independently.
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

constexpr uint16_t NoStream = 0xffff;

struct RankState {
  llvm::ArrayRef<Action> Acts;
  uint32_t CIdx = 0; // compute cursor (the only cursor when blocking)
  double ComputeFree = 0;
  uint64_t LastCompute = NoRef;
  /// Async timing: the receive entry the compute cursor stopped at, until
  /// it changes (changed()); null while the cursor may move.
  const Event *WaitOn = nullptr;
  llvm::SmallVector<Stream, 2> Streams;
  /// Executor timing: the index of the track of comms that do not hold the
  /// rank, or NoStream.
  uint16_t Deferred = NoStream;
};

class Engine {
public:
  Engine(const ir::Schedule &S, const TimingOptions &O)
      : S(S), Opts(O), P(S.Topo.Ranks), NS(S.Topo.Stages),
        NM(S.Topo.Microbatches) {}

  TimingResult run();

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
    return Opts.KeepPreds ? Res.Preds[refRank(Ref)][refIdx(Ref)] : NoRef;
  }
  void setPred(uint64_t Ref, uint64_t Pred) {
    if (Opts.KeepPreds)
      Res.Preds[refRank(Ref)][refIdx(Ref)] = Pred;
  }
  /// Executor timing: a comm that does not hold the rank (a receive waited
  /// for by its consumer, an eager send).
  bool deferred(const Action &A) const {
    return Executor && Model != ir::CommModel::Batched &&
           (ir::isRecv(A.Kind) ? !Opts.BlockingRecv : eagerSend(A));
  }
  /// A send that completes without waiting for its receive: the eager
  /// model, or a message under the stream rule's eager threshold.
  bool eagerSend(const Action &A) const {
    return ir::isForwardComm(A.Kind) ? EagerF : EagerB;
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
  /// Fetches the lines the rank's cursors read and write next, as its visit
  /// ends (see the definition).
  void prefetchResume(int32_t R) const;
  bool advanceCompute(int32_t R);
  bool advanceStreams(int32_t R);
  bool advanceBlocking(int32_t R);
  /// Tries to run the compute (or overlap pair) at CIdx. False if blocked.
  bool runCompute(int32_t R);
  /// Posts the batch starting at the stream's Pos at time Ready: under
  /// batched a maximal run of consecutive comm actions (postRun), else the
  /// one op.
  void postBatch(int32_t R, Stream &Sm, double Ready, uint64_t ReadyRef) {
    if (Model == ir::CommModel::Batched)
      return postRun(R, Sm, Ready, ReadyRef);
    Sm.BatchEnd = Sm.Pos + 1;
    Sm.Posted = true;
    Sm.Remaining = 1;
    post(R, Sm, Sm.Ops[Sm.Pos], Ready, ReadyRef);
  }
  void postRun(int32_t R, Stream &Sm, double Ready, uint64_t ReadyRef);
  void post(int32_t R, Stream &Sm, uint32_t Idx, double Ready,
            uint64_t ReadyRef);
  /// The operation to blame for holding back the next batch of Sm.
  uint64_t blame(int32_t R, const Stream &Sm) const;
  /// Records what holding X back cost: its transfer began (or, a receive
  /// of an eager message, it ended) at Began, where with neither side held
  /// it would have at max(X.Issue, Alone), Alone being the other side's
  /// time if it was not held.
  void recordHeld(const Slot &X, double Began, double Alone) {
    if (X.Ready > X.Issue) // held at all (rare outside stream rules)
      recordHeldSlow(X, Began, Alone);
  }
  void recordHeldSlow(const Slot &X, double Began, double Alone);
  void matched(const Slot &Send, const Slot &Recv);
  void opDone(uint64_t Ref, uint16_t StreamIdx, double End);
  /// Finishes the posted batch once every op matched; true if it did.
  bool finishBatch(int32_t R, Stream &Sm) {
    return Sm.Remaining == 0 && finishMatched(R, Sm);
  }
  bool finishMatched(int32_t R, Stream &Sm);
  /// A receive completed: its consumer may start from E. (Called for every
  /// comm; only receives have an entry.)
  void recvDone(int32_t R, uint32_t J, double E) {
    if (ir::isRecv(Ranks[R].Acts[J].Kind))
      recvDoneSlow(R, J, E);
  }
  void recvDoneSlow(int32_t R, uint32_t J, double E);
  /// Executor timing: a comm that does not hold the rank completed.
  void deferredDone(int32_t R, uint32_t J, double E);
  /// Executor timing: posts a comm that does not hold the rank.
  void postDeferred(int32_t R, uint32_t I);
  /// The receive entry Ev is about to change: if its rank's compute cursor
  /// stopped at it, the cursor may move again (and true is returned).
  bool changed(const Event &Ev) {
    if (Ev.Rank < 0 || Ranks[Ev.Rank].WaitOn != &Ev)
      return false;
    Ranks[Ev.Rank].WaitOn = nullptr;
    return true;
  }
  /// Marks the receive at I as posted, so its consumer waits for it.
  /// (Called for every comm.)
  void recvPosted(int32_t R, uint32_t I) {
    if (ir::isRecv(Ranks[R].Acts[I].Kind))
      recvPostedSlow(R, I);
  }
  void recvPostedSlow(int32_t R, uint32_t I);

  // --- after the run ------------------------------------------------------
  uint32_t stuckAt(int32_t R) const;

  const ir::Schedule &S;
  const TimingOptions &Opts;
  int32_t P, NS, NM;
  bool Blocking = false, Executor = false, Dataflow = false, OneStream = false;
  /// Async timing under a stream scope: tracks are in-order streams.
  bool InOrder = false;
  ir::CommModel Model = ir::CommModel::Rendezvous;
  ir::CommStream StreamRule;
  /// Whether forward / backward sends are eager (schema::sendIsEager on
  /// their message sizes), computed once.
  bool EagerF = false, EagerB = false;
  /// The batch being posted: when the rank issued it, and what held it
  /// back (set around postBatch by advanceStreams).
  double PostIssue = -std::numeric_limits<double>::infinity();
  uint64_t PostBy = NoRef;
  ir::CostModel Cost;
  schema::Route Route;
  double MsgF = 0, MsgB = 0;

  TimingResult Res;
  llvm::SmallVector<RankState, 8> Ranks;
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
  // When microbatch numbers are sparse (a huge M with few actions), the
  // per-key tables are indexed by the rank of each microbatch number that
  // occurs instead, so their size stays proportional to the schedule.
  bool Sparse = false;
  int32_t NMK = 0;
  llvm::DenseMap<int32_t, int32_t> MbIndex;
};

} // namespace pps::analysis::timing
