//===- TimingTracks.cpp - the timing engine's cursors and comm matching ---===//
//
// The compute cursor, the comm tracks (async), the single cursor of
// blocking and executor timing, and what happens when a comm is posted,
// matched and finished. See TimingEngine.h.
//
//===----------------------------------------------------------------------===//
#include "TimingEngine.h"

#include "pps/support/Prefetch.h"

#include <algorithm>

namespace pps::analysis::timing {

void Engine::advance(int32_t R) {
  if (Blocking || Dataflow) {
    advanceBlocking(R);
  } else {
    // Alternate the tracks until neither can move. Each cursor stops at
    // its own fixpoint. The compute cursor waits only for a receive, so it
    // runs again only once the one it stopped at has changed (WaitOn, see
    // changed()); the comm tracks (the rank was woken: a batch completed)
    // run again only after the compute cursor moved.
    RankState &St = Ranks[R];
    bool Streams = true;
    while (true) {
      if (!St.WaitOn && advanceCompute(R))
        Streams = true;
      if (!Streams)
        return;
      Streams = false;
      advanceStreams(R);
      if (St.WaitOn)
        return;
    }
  }
}

void Engine::prefetchResume(int32_t R) const {
  // The rank resumes at its cursors on a later visit, after the other
  // ranks' visits, and walks on from there: with many ranks interleaved
  // the hardware prefetcher loses these streams (one per rank and array),
  // so fetch the next lines of each now. (Fetching each comm track's next
  // op as well was measured and gained nothing.)
  const RankState &St = Ranks[R];
  const RankTimeline &T = Res.Times[R];
  uint32_t I = St.CIdx;
  if (I >= St.Acts.size())
    return;
  prefetchRead(St.Acts.data(), I + 3);
  prefetchWrite(T.Start.data(), I + 8);
  prefetchWrite(T.End.data(), I + 8);
  prefetchWrite(T.TransferStart.data(), I + 8);
  if (Opts.KeepPreds)
    prefetchWrite(Res.Preds[R].get(), I + 8);
}

bool Engine::runCompute(int32_t R) {
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
      if (Rv.At == Pending) {
        St.WaitOn = &Rv;
        return false;
      }
      Need(Rv, 0);
      continue;
    }
    // Dataflow: wait for the producer (the schema's rule), plus a message
    // if it ran on another rank.
    schema::Producer Pr =
        schema::producerOf(A.Kind, A.Microbatch, A.Stage, Route);
    bool Ok = true;
    if (Pr.What != schema::Needs::Nothing && validStage(Pr.Stage)) {
      size_t PK = key(Pr.Mb, Pr.Stage);
      bool IsF = Pr.What == schema::Needs::F;
      // A producer not in the schedule: nothing to wait for.
      if (IsF ? HasF[PK] : HasBI[PK]) {
        const Event &Ev = IsF ? ProdF[PK] : ProdBI[PK];
        if (!known(Ev.At))
          Ok = false;
        else
          Need(Ev, Ev.Rank == R
                       ? 0
                       : msgTime(IsF ? ActionKind::SendF : ActionKind::SendB));
      }
    }
    if (!Ok)
      return false;
  }
  double Dur;
  if (N == 2) {
    Dur = Cost.overlapCost(Acts[I], Acts[I + 1]);
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
    // As for the receives (recvPostedSlow): the next microbatch's entry
    // is most likely the next this rank writes.
    if (A.Kind == ActionKind::F) {
      ProdF[K] = Event{End, R, J};
      prefetchWrite(ProdF.data(), K + 4);
    } else if (schema::isInputBackward(A.Kind)) {
      ProdBI[K] = Event{End, R, J};
      prefetchWrite(ProdBI.data(), K + 4);
    }
    // Dataflow: the consumer of the output may be waiting on another rank.
    if (Dataflow)
      wake(rankOfStage(
          schema::consumerStage(A.Kind, A.Microbatch, A.Stage, Route)));
  }
  RankTiming &RS = Res.Ranks[R];
  if (RS.Computes == 0 || Begin < RS.ComputeStart)
    RS.ComputeStart = Begin;
  RS.ComputeEnd = std::max(RS.ComputeEnd, End);
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

bool Engine::advanceCompute(int32_t R) {
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
      recvPosted(R, I);
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

bool Engine::advanceStreams(int32_t R) {
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
      // When the rank issues it (Issue; -inf: as soon as its track is
      // free), and when its track lets it go (Sm.Free).
      double Issue = -std::numeric_limits<double>::infinity();
      uint64_t IssueRef = NoRef;
      if (OneStream || InOrder) {
        // In-order streams (and batched groups) are posted when the
        // computes before them finish: ProcessGroupNCCL makes the comm
        // stream wait for the compute stream at issue.
        if (St.CIdx <= I)
          break;
        Issue = T.Start[I];
        IssueRef = predOf(pack(R, I));
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
          Issue = Prod->At;
          IssueRef = Prod->ref();
        } else {
          if (St.CIdx <= I)
            break;
          Issue = T.Start[I];
          IssueRef = predOf(pack(R, I));
        }
      }
      double Ready = Sm.Free;
      uint64_t ReadyRef = Sm.FreeRef;
      PostIssue = Issue;
      PostBy = NoRef;
      if (Issue >= Ready) {
        Ready = Issue;
        ReadyRef = IssueRef;
      } else if (Issue > -std::numeric_limits<double>::infinity()) {
        PostBy = blame(R, Sm); // the track held it back
      } else {
        PostIssue = Ready; // a receive is posted as soon as its track is free
      }
      postBatch(R, Sm, Ready, ReadyRef);
      PostIssue = -std::numeric_limits<double>::infinity();
      PostBy = NoRef;
      Moved = true;
    }
  }
  return Moved;
}

bool Engine::advanceBlocking(int32_t R) {
  RankState &St = Ranks[R];
  llvm::ArrayRef<Action> Acts = St.Acts;
  RankTimeline &T = Res.Times[R];
  bool Moved = false;
  while (St.CIdx < Acts.size()) {
    uint32_t I = St.CIdx;
    const Action &A = Acts[I];
    if (ir::isComm(A.Kind) && !Dataflow && Executor && deferred(A)) {
      postDeferred(R, I);
      ++St.CIdx;
      Moved = true;
      continue;
    }
    if (ir::isComm(A.Kind) && !Dataflow) {
      // Blocking: one stream (executor timing: the one of the comms that
      // hold the rank).
      Stream &Sm = St.Streams[St.Deferred == 0 ? 1 : 0];
      if (!Sm.Posted) {
        recvPosted(R, I);
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

void Engine::postRun(int32_t R, Stream &Sm, double Ready, uint64_t ReadyRef) {
  uint32_t E = Sm.Pos + 1;
  while (E < Sm.Ops.size() && Sm.Ops[E] == Sm.Ops[E - 1] + 1)
    ++E;
  Sm.BatchEnd = E;
  Sm.Posted = true;
  Sm.Remaining = E - Sm.Pos;
  for (uint32_t K = Sm.Pos; K < E; ++K)
    post(R, Sm, Sm.Ops[K], Ready, ReadyRef);
}

uint64_t Engine::blame(int32_t R, const Stream &Sm) const {
  // The batch about to be posted is held back by the operation that last
  // freed the track. The cause is the nearest operation of that chain that
  // waited for its partner (a receive posted before its data could come, a
  // rendezvous send before its receive): one that was itself only held
  // passes the blame on to what held it.
  const RankTimeline &T = Res.Times[R];
  uint64_t By = Sm.FreeRef;
  if (By != NoRef && refRank(By) == R && !T.HeldBy.empty()) {
    uint32_t J = refIdx(By);
    bool Waited = T.TransferStart[J] > T.Start[J];
    if (!Waited && T.Held[J] > 0 && T.HeldBy[J] != NoRef)
      By = T.HeldBy[J];
  }
  return By;
}

void Engine::recordHeldSlow(const Slot &X, double Began, double Alone) {
  // What the hold cost X: how much later its transfer began (or, a receive
  // of an eager message, it completed) than if both sides had been posted
  // when their ranks issued them, at most X's own hold. A receive held
  // behind another one whose data is late anyway loses nothing.
  double D = std::min(Began - std::max(X.Issue, Alone), X.Ready - X.Issue);
  if (!(D > 0))
    return;
  int32_t R = refRank(X.Ref);
  Res.Ranks[R].StreamHeld += D;
  RankTimeline &T = Res.Times[R];
  // HeldBy was set when it was posted (post()).
  if (!T.Held.empty())
    T.Held[refIdx(X.Ref)] = D;
}

void Engine::post(int32_t R, Stream &Sm, uint32_t Idx, double Ready,
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
  // Is the other side already posted? A channel's pending ops all come
  // from the side that is ahead. If not, the op waits in the channel:
  // built in place there (a copy from the stack stalled on its
  // store-to-load forwarding).
  bool Match = !Ch.empty() && Ch.Pending[Ch.Head].IsSend != IsSend;
  Slot Local;
  Slot &Mine = Match ? Local : Ch.Pending.emplace_back();
  Mine.Ready = Ready;
  Mine.Ref = Me;
  Mine.IsSend = IsSend;
  Mine.Stream = SI;
  Mine.Kind = A.Kind;
  // Posted by advanceStreams: when the rank issued it; else (blocking and
  // executor timing) nothing holds it but the rank itself.
  Mine.Issue = PostIssue > -std::numeric_limits<double>::infinity()
                   ? std::min(PostIssue, Ready)
                   : Ready;
  if (PostBy != NoRef && !T.HeldBy.empty())
    T.HeldBy[Idx] = PostBy;
  if (IsSend) {
    ++Ch.Messages;
    Ch.Bytes += A.Kind == ActionKind::SendF || Cost.GradientBytes < 0
                    ? Cost.ActivationBytes
                    : Cost.GradientBytes;
    ++Res.Ranks[R].Sends;
    Mine.Eager = eagerSend(A);
    if (Mine.Eager) {
      // Eager: the send goes now and never waits for its receive.
      Mine.XStart = Ready;
      Mine.End = Ready + msgTime(A.Kind);
      T.TransferStart[Idx] = Mine.XStart;
      recordHeld(Mine, Ready, -std::numeric_limits<double>::infinity());
      opDone(Me, SI, Mine.End);
    }
  } else {
    ++Res.Ranks[R].Recvs;
  }
  if (!Match)
    return;
  Slot Other = Ch.pop();
  if (IsSend)
    matched(Mine, Other);
  else
    matched(Other, Mine);
}

void Engine::matched(const Slot &SendSlot, const Slot &RecvSlot) {
  // FIFO per channel: the pair is the one pps/analysis/Matching.h pairs
  // (whether it carries the same message is that analysis' finding).
  uint64_t SendRef = SendSlot.Ref, RecvRef = RecvSlot.Ref;
  double SendReady = SendSlot.Ready, RecvReady = RecvSlot.Ready;
  if (SendSlot.Eager) {
    // The send is done; the receive ends when the data is there.
    double X = std::max(RecvReady, SendSlot.XStart);
    double E = std::max(RecvReady, SendSlot.End);
    xstartOf(RecvRef) = std::min(X, E);
    if (SendSlot.End > RecvReady)
      setPred(RecvRef, SendRef);
    recordHeld(RecvSlot, E, SendSlot.Issue + (SendSlot.End - SendSlot.XStart));
    opDone(RecvRef, RecvSlot.Stream, E);
    return;
  }
  double Begin = std::max(SendReady, RecvReady);
  double E = Begin + msgTime(SendSlot.Kind);
  xstartOf(SendRef) = Begin;
  xstartOf(RecvRef) = Begin;
  recordHeld(SendSlot, Begin, RecvSlot.Issue);
  recordHeld(RecvSlot, Begin, SendSlot.Issue);
  // The side that was ready first waited for the other.
  if (SendReady > RecvReady)
    setPred(RecvRef, SendRef);
  else if (RecvReady > SendReady)
    setPred(SendRef, RecvRef);
  opDone(SendRef, SendSlot.Stream, E);
  opDone(RecvRef, RecvSlot.Stream, E);
}

void Engine::opDone(uint64_t Ref, uint16_t StreamIdx, double End) {
  int32_t R = refRank(Ref);
  endOf(Ref) = End;
  if (End > Res.Ranks[R].End)
    Res.Ranks[R].End = End;
  if (End > Res.Makespan)
    Res.Makespan = End;
  if (StreamIdx == Ranks[R].Deferred) {
    deferredDone(R, refIdx(Ref), End);
    return;
  }
  Stream &Sm = Ranks[R].Streams[StreamIdx];
  if (--Sm.Remaining == 0)
    wake(R);
}

void Engine::recvPostedSlow(int32_t R, uint32_t I) {
  const Action &A = Ranks[R].Acts[I];
  if (!validKey(A))
    return;
  size_t K = key(A.Microbatch, A.Stage);
  Event &Ev = A.Kind == ActionKind::RecvF ? RecvF[K] : RecvB[K];
  // The rank's next receive of this kind and stage is most likely the next
  // microbatch's: fetch the line after this entry's.
  prefetchWrite(&Ev, 4);
  if (!known(Ev.At) || Ev.Rank != R) {
    if (Ev.Rank != R)
      changed(Ev); // no longer the other rank's receive to wait for
    Ev = Event{Pending, R, I};
  }
}

void Engine::postDeferred(int32_t R, uint32_t I) {
  RankState &St = Ranks[R];
  Stream &Dm = St.Streams[St.Deferred];
  recvPosted(R, I);
  // Counted before posting: the partner may be there already and complete
  // it at once.
  ++Dm.Remaining;
  post(R, Dm, I, St.ComputeFree, St.LastCompute);
}

void Engine::deferredDone(int32_t R, uint32_t J, double E) {
  RankTimeline &T = Res.Times[R];
  RankTiming &RS = Res.Ranks[R];
  RS.CommBusy += E - T.TransferStart[J];
  RS.CommWait += T.TransferStart[J] - T.Start[J];
  recvDone(R, J, E);
  --Ranks[R].Streams[Ranks[R].Deferred].Remaining;
  wake(R);
}

void Engine::recvDoneSlow(int32_t R, uint32_t J, double E) {
  const Action &A = Ranks[R].Acts[J];
  if (!validKey(A))
    return;
  size_t K = key(A.Microbatch, A.Stage);
  Event &Ev = A.Kind == ActionKind::RecvF ? RecvF[K] : RecvB[K];
  // (Another rank's entry when two ranks receive the same input, which
  // the verifier reports: that rank no longer waits for its own receive.)
  if (changed(Ev) && Ev.Rank != R)
    wake(Ev.Rank);
  Ev = Event{E, R, J};
}

bool Engine::finishMatched(int32_t R, Stream &Sm) {
  RankTimeline &T = Res.Times[R];
  RankTiming &RS = Res.Ranks[R];
  if (Sm.BatchEnd == Sm.Pos + 1) {
    // One op (rendezvous, eager, or a batch of one): no batch bookkeeping.
    uint32_t J = Sm.Ops[Sm.Pos];
    double X = T.TransferStart[J], E = T.End[J];
    RS.CommBusy += E - X;
    RS.CommWait += X - T.Start[J];
    recvDone(R, J, E);
    Sm.BatchDone = E;
    Sm.BatchDoneRef = pack(R, J);
    // In-order streams and blocking comm: the next operation starts once
    // this one has completed; the abstract model's tracks only order the
    // starts of transfers.
    Sm.Free = Blocking || InOrder ? E : X;
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
  Sm.Free = Blocking || InOrder ? MaxEnd : MaxX;
  Sm.FreeRef = pack(R, Blocking || InOrder ? Arg : ArgX);
  Sm.Pos = Sm.BatchEnd;
  Sm.Posted = false;
  return true;
}

} // namespace pps::analysis::timing
