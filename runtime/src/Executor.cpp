//===- Executor.cpp - walks one rank's action table -----------------------===//
#include "ppsrt/Executor.h"

#include <fmt/format.h>

#include <exception>

namespace ppsrt {

Executor::Executor(const ScheduleDesc &S, int32_t Rank, Transport &T,
                   Kernels &K, RunState &RS, const ExecOptions &O)
    : S(S), Rank(Rank), T(T), K(K), RS(RS), Status(RS.status(Rank)), O(O) {
  Rows = S.rankTables[Rank].rows;
  Count = S.rankTables[Rank].count;
  LocalIndex.assign(size_t(S.stages), -1);
  for (int32_t St = 0; St < S.stages; ++St)
    if (S.stageToRank[St] == Rank)
      LocalIndex[size_t(St)] = LocalStages++;
  size_t N = size_t(S.microbatches) * size_t(LocalStages);
  Slots.assign(N, nullptr);
  InputDone.assign(N, 0);
  OutF.resize(N);
  OutB.resize(N);
  HasOutF.assign(N, 0);
  HasOutB.assign(N, 0);
  RecvF.assign(N, -1);
  RecvB.assign(N, -1);
  // Whether a W(m, s) is in the table decides whether I(m, s) is the last
  // backward (the schema's memory rule, which the memory analysis applies).
  HasW.assign(N, 0);
  for (int64_t I = 0; I < Count; ++I) {
    Action A = decodeRow(Rows + I * RowWords);
    if (A.kind == Kind::W && A.mb >= 0 && A.mb < S.microbatches &&
        A.stage >= 0 && A.stage < S.stages && LocalIndex[size_t(A.stage)] >= 0)
      HasW[size_t(A.mb) * size_t(LocalStages) +
           size_t(LocalIndex[size_t(A.stage)])] = 1;
  }
  if (O.trace)
    Events.reserve(size_t(Count) + 16);
  ProbeCount.assign(size_t(LocalStages), 0);
  // Eagerness by the declared sizes, as the compiler's timing decides it
  // (CostModel::messageBytes: gradients as big as activations unless
  // declared).
  EagerF = pps::schema::sendIsEager(O.comm, O.stream, S.activationBytes);
  EagerB = pps::schema::sendIsEager(O.comm, O.stream,
                                    S.gradientBytes < 0 ? S.activationBytes
                                                        : S.gradientBytes);
  if (O.stream.inOrder())
    Streams = std::make_unique<CommStreams>(S.ranks, Rank, T, RS, O.stream);
}

Executor::~Executor() = default;

void Executor::error(const std::string &Msg) {
  Action A = Current >= 0 && Current < Count
                 ? decodeRow(Rows + Current * RowWords)
                 : Action{};
  RS.fail(ExitError, fmt::format("rank {}: action {} `{}`: {}", Rank, Current,
                                 formatAction(A), Msg));
  throw Aborted();
}

size_t Executor::key(int32_t Mb, int32_t Stage) const {
  if (Mb < 0 || Mb >= S.microbatches || Stage < 0 || Stage >= S.stages)
    const_cast<Executor *>(this)->error(
        fmt::format("microbatch {} / stage {} out of range", Mb, Stage));
  int32_t L = LocalIndex[size_t(Stage)];
  if (L < 0)
    const_cast<Executor *>(this)->error(
        fmt::format("stage {} is not held by rank {}", Stage, Rank));
  return size_t(Mb) * size_t(LocalStages) + size_t(L);
}

StageIO *Executor::io(int32_t Mb, int32_t Stage) {
  if (Mb < 0 || Mb >= S.microbatches || Stage < 0 || Stage >= S.stages ||
      LocalIndex[size_t(Stage)] < 0)
    return nullptr;
  return Slots[size_t(Mb) * size_t(LocalStages) +
               size_t(LocalIndex[size_t(Stage)])];
}

StageIO *Executor::acquire(int32_t Mb, int32_t Stage) {
  size_t Key = key(Mb, Stage);
  if (Slots[Key])
    error(fmt::format("F{}@{} runs again while its activations are live", Mb,
                      Stage));
  StageIO *IO;
  if (FreeIO.empty()) {
    Pool.push_back(std::make_unique<StageIO>());
    IO = Pool.back().get();
  } else {
    IO = FreeIO.back();
    FreeIO.pop_back();
  }
  IO->microbatch = Mb;
  IO->stage = Stage;
  IO->loss = 0;
  IO->activationBytes = -1;
  countMemory(Key, Stage, pps::schema::MemoryEffect::Acquire);
  Slots[Key] = IO;
  if (++Live > Peak)
    Peak = Live;
  return IO;
}

void Executor::countMemory(size_t Key, int32_t Stage,
                           pps::schema::MemoryEffect E) {
  // The schema's arithmetic on this rank's own state: whether (m, s) is
  // live (its StageIO) and whether its I already freed its part.
  LiveMemory += pps::schema::memoryDelta(
      memoryOf(S, Stage), E, Slots[Key] != nullptr, InputDone[Key] != 0);
  if (E == pps::schema::MemoryEffect::ReleaseInput && Slots[Key])
    InputDone[Key] = 1;
  else if (E == pps::schema::MemoryEffect::Release)
    InputDone[Key] = 0;
  // The slack the memory analysis compares with, so both name the same
  // action as the peak under fractional amounts.
  if (LiveMemory > PeakMemory + 1e-9)
    PeakMemory = LiveMemory;
}

void Executor::release(int32_t Mb, int32_t Stage) {
  size_t Key = key(Mb, Stage);
  StageIO *IO = Slots[Key];
  countMemory(Key, Stage, pps::schema::MemoryEffect::Release);
  Slots[Key] = nullptr;
  --Live;
  // Keep the buffers' memory for the next microbatch, drop the contents
  // (and the kernels' state of (m, s): this is where its memory goes).
  IO->reset();
  FreeIO.push_back(IO);
}

ProfileEvent Executor::profileEvent(const Action &A, Kind K,
                                    uint8_t Flags) const {
  ProfileEvent E;
  E.step = Step;
  E.rank = Rank;
  E.kind = K;
  E.flags = Flags;
  E.mb = A.mb;
  E.stage = A.stage;
  E.peer = A.peer;
  return E;
}

void Executor::profileComm(const Request &Q) {
  if (!O.profile)
    return;
  ProfileEvent E = profileEvent(Q.action, Q.action.kind, 0);
  E.peer = Q.peer;
  E.seq = Q.seq;
  E.start = Q.postMicros - O.startMicros;
  E.end = Q.doneMicros - O.startMicros;
  E.waitStart = Q.waitMicros < 0 ? -1 : Q.waitMicros - O.startMicros;
  Profiled.push_back(E);
}

void Executor::record(int64_t Index, int32_t Lane, double T0, double T1,
                      int32_t Flow, uint64_t FlowId) {
  if (!O.trace)
    return;
  Events.push_back(TraceEvent{Index, Rank, Step, Lane, Flow, FlowId,
                              T0 - O.startMicros, T1 - O.startMicros});
}

int32_t Executor::newRequest() {
  if (!FreeRequests.empty()) {
    int32_t R = FreeRequests.back();
    FreeRequests.pop_back();
    return R;
  }
  Requests.emplace_back();
  return int32_t(Requests.size() - 1);
}

void Executor::freeRequest(int32_t R) {
  Request &Q = Requests[size_t(R)];
  Q.buf = Buffer();
  Q.done = false;
  Q.completed = false;
  Q.eager = false;
  Q.impl = -1;
  FreeRequests.push_back(R);
}

void Executor::waitRequest(int32_t R, WaitKind W) {
  Request &Q = Requests[size_t(R)];
  if (Streams) {
    // The stream's thread completes it; until then only it touches Q's
    // transport state.
    if (!Streams->completed(Q)) {
      Status.waitAction.store(Q.actionIndex, std::memory_order_relaxed);
      Status.waitKind.store(int32_t(W), std::memory_order_release);
      Q.waitMicros = nowMicros();
      Streams->wait(Q, Status.heldBehind);
      Status.waitKind.store(int32_t(WaitKind::None), std::memory_order_release);
    }
    RS.tick();
    return;
  }
  if (!Q.done && !T.test(Rank, Q)) {
    Status.waitAction.store(Q.actionIndex, std::memory_order_relaxed);
    Status.waitKind.store(int32_t(W), std::memory_order_release);
    Q.waitMicros = nowMicros();
    T.wait(Rank, Q);
    Status.waitKind.store(int32_t(WaitKind::None), std::memory_order_release);
  }
  if (Q.doneMicros == 0)
    Q.doneMicros = nowMicros();
  RS.tick();
}

Buffer Executor::takeInput(const Action &A, bool Gradient) {
  // The producer (the schema's rule): F(m, s-1) for a forward, B/I(m, s+1)
  // for a backward.
  int32_t From =
      pps::schema::producerOf(A.kind, A.mb, A.stage, routeOf(S)).Stage;
  if (S.stageToRank[From] == Rank) {
    size_t Key = key(A.mb, From);
    std::vector<uint8_t> &Has = Gradient ? HasOutB : HasOutF;
    if (!Has[Key])
      error(fmt::format("needs the {} of `{}{}@{}`, which has not run on "
                        "this rank before it",
                        Gradient ? "input gradient" : "output",
                        Gradient ? "B" : "F", A.mb, From));
    Has[Key] = 0;
    return std::move(Gradient ? OutB[Key] : OutF[Key]);
  }
  size_t Key = key(A.mb, A.stage);
  std::vector<int32_t> &Posted = Gradient ? RecvB : RecvF;
  int32_t R = Posted[Key];
  if (R < 0) {
    Action Need = inputRecvOf(S, A);
    error(fmt::format("needs `{}` before it, but no such receive was posted",
                      formatAction(Need)));
  }
  Posted[Key] = -1;
  waitRequest(R, WaitKind::RecvData);
  Request &Q = Requests[size_t(R)];
  record(Q.actionIndex, 1, Q.postMicros, Q.doneMicros, 2,
         flowId(Q.peer, Rank, S.ranks, Q.seq));
  profileComm(Q);
  Buffer B = std::move(Q.buf);
  freeRequest(R);
  return B;
}

void Executor::compute(const Action &A) {
  int64_t Index = Current;
  if (PairSecond && &A == PairSecond)
    ++Index;
  // The halves of an overlap pair (a handler may run them together) are
  // not times of their own kinds.
  uint8_t Flags = PairSecond ? ProfileEvent::Overlapped : 0;
  double T0 = nowMicros();
  switch (A.kind) {
  case Kind::F: {
    StageIO *IO = acquire(A.mb, A.stage);
    if (A.stage > firstStage(S, A.mb))
      IO->input = takeInput(A, false);
    bool Last = A.stage == lastStage(S, A.mb);
    timed(
        A, Kind::F, Flags,
        [&] {
          K.forward(*IO);
          if (Last)
            K.loss(*IO);
        },
        IO);
    if (Last) {
      LossSum += IO->loss;
      break;
    }
    size_t Key = key(A.mb, A.stage);
    OutF[Key] = std::move(IO->output);
    HasOutF[Key] = 1;
    break;
  }
  case Kind::I:
  case Kind::B: {
    StageIO *IO = io(A.mb, A.stage);
    if (!IO)
      error(fmt::format("runs before `F{}@{}` (no live activations)", A.mb,
                        A.stage));
    if (A.stage < lastStage(S, A.mb))
      IO->gradOutput = takeInput(A, true);
    if (A.kind == Kind::B && O.profile && !Flags &&
        (ProbeCount[size_t(LocalIndex[size_t(A.stage)])]++ & 1)) {
      // The profile times the split: every other B of a stage runs as I
      // then W (Kernels::backward's contract).
      timed(A, Kind::I, ProfileEvent::Probe, [&] { K.backwardInput(*IO); });
      timed(A, Kind::W, ProfileEvent::Probe, [&] { K.backwardWeight(*IO); });
    } else if (A.kind == Kind::B) {
      timed(A, Kind::B, Flags, [&] { K.backward(*IO); });
    } else {
      timed(A, Kind::I, Flags, [&] { K.backwardInput(*IO); });
    }
    if (A.stage > firstStage(S, A.mb)) {
      size_t Key = key(A.mb, A.stage);
      OutB[Key] = std::move(IO->gradInput);
      HasOutB[Key] = 1;
    }
    pps::schema::MemoryEffect Effect =
        pps::schema::memoryEffect(A.kind, HasW[key(A.mb, A.stage)]);
    if (Effect == pps::schema::MemoryEffect::Release)
      release(A.mb, A.stage);
    else
      countMemory(key(A.mb, A.stage), A.stage, Effect);
    break;
  }
  case Kind::W: {
    StageIO *IO = io(A.mb, A.stage);
    if (!IO)
      error(fmt::format("runs before `F{}@{}` (no live activations)", A.mb,
                        A.stage));
    timed(A, Kind::W, Flags, [&] { K.backwardWeight(*IO); });
    if (pps::schema::memoryEffect(A.kind, true) ==
        pps::schema::MemoryEffect::Release)
      release(A.mb, A.stage);
    break;
  }
  default:
    break;
  }
  record(Index, 0, T0, nowMicros());
}

void Executor::postComm(const Action &A) {
  bool Send = isSend(A.kind);
  bool Forward = pps::schema::isForward(A.kind);
  size_t Key = key(A.mb, A.stage);
  if (A.peer < 0 || A.peer >= S.ranks || A.peer == Rank)
    error(fmt::format("bad peer rank {}", A.peer));
  int32_t R = newRequest();
  Request &Q = Requests[size_t(R)];
  Q.action = A;
  Q.actionIndex = Current;
  Q.peer = A.peer;
  Q.done = false;
  Q.doneMicros = 0;
  Q.waitMicros = -1;
  Q.postMicros = nowMicros();
  if (Send) {
    std::vector<uint8_t> &Has = Forward ? HasOutF : HasOutB;
    if (!Has[Key]) {
      freeRequest(R);
      error(fmt::format("has no data to send: `{}{}@{}` has not run before it",
                        Forward ? "F" : "B", A.mb, A.stage));
    }
    Has[Key] = 0;
    Q.buf = std::move(Forward ? OutF[Key] : OutB[Key]);
    // What the receiver expects (0: a framed message of any size).
    Q.bytes = K.messageBytes(A.stage, !Forward);
    Q.eager = Forward ? EagerF : EagerB;
    if (O.comm == CommModel::Batched) {
      if (!Streams)
        T.postSend(Rank, Q);
      Batch.push_back(R);
      return;
    }
    if (Streams) {
      // Issued to its stream; waited for at the end of the step.
      Streams->issue({&Q});
      OpenSends.push_back(R);
      return;
    }
    T.postSend(Rank, Q);
    if (O.comm == CommModel::Eager || Q.eager) {
      OpenSends.push_back(R);
      return;
    }
    waitRequest(R, WaitKind::SendMatch);
    sendDone(R);
    return;
  }
  std::vector<int32_t> &Posted = Forward ? RecvF : RecvB;
  if (Posted[Key] >= 0) {
    freeRequest(R);
    error("the same receive is posted twice");
  }
  // RECV_F(m, s) carries F(m, s-1)'s output, RECV_B(m, s) the gradient of
  // s+1: the stage of the matching send.
  Q.bytes =
      K.messageBytes(pps::schema::partnerStage(A.kind, A.stage), !Forward);
  Posted[Key] = R;
  if (O.comm == CommModel::Batched) {
    if (!Streams)
      T.postRecv(Rank, Q);
    Batch.push_back(R);
    return;
  }
  if (Streams)
    Streams->issue({&Q});
  else
    T.postRecv(Rank, Q);
  if (O.blockingRecv)
    waitRequest(R, WaitKind::RecvData);
}

void Executor::sendDone(int32_t R) {
  Request &D = Requests[size_t(R)];
  record(D.actionIndex, 1, D.postMicros, D.doneMicros, 1,
         flowId(Rank, D.peer, S.ranks, D.seq));
  profileComm(D);
  freeRequest(R);
}

void Executor::issueBatch() {
  // One operation of the stream (batch_isend_irecv): its sends are waited
  // for at the end of the step, its receives by their consumers.
  std::vector<Request *> Group;
  for (int32_t R : Batch) {
    Request &Q = Requests[size_t(R)];
    Group.push_back(&Q);
    if (Q.sending())
      OpenSends.push_back(R);
  }
  Streams->issue(std::move(Group));
  Batch.clear();
}

void Executor::drainBatch() {
  if (Streams) {
    issueBatch();
    return;
  }
  for (int32_t R : Batch) {
    Request &Q = Requests[size_t(R)];
    bool Send = isSend(Q.action.kind);
    Current = Q.actionIndex;
    Status.action.store(Current, std::memory_order_relaxed);
    waitRequest(R, Send ? WaitKind::SendMatch : WaitKind::RecvData);
    if (Send)
      sendDone(R);
  }
  Batch.clear();
}

void Executor::drainSends() {
  for (int32_t R : OpenSends) {
    waitRequest(R, WaitKind::Drain);
    sendDone(R);
  }
  OpenSends.clear();
}

void Executor::runDefault(const Action &A) {
  switch (A.kind) {
  case Kind::F:
  case Kind::I:
  case Kind::W:
  case Kind::B:
    compute(A);
    return;
  case Kind::SendF:
  case Kind::SendB:
  case Kind::RecvF:
  case Kind::RecvB:
    postComm(A);
    return;
  case Kind::Unshard:
    runKernel([&] { K.unshard(Rank, A.stage); });
    return;
  case Kind::Reshard:
    runKernel([&] { K.reshard(Rank, A.stage); });
    return;
  case Kind::ReduceGrad:
    runKernel([&] { K.reduceGrad(Rank, A.stage); });
    return;
  case Kind::Idle:
    return;
  }
}

void Executor::exchange(std::vector<ExtraMessage> &Sends,
                        std::vector<ExtraMessage> &Recvs) {
  // Requests stay where they are while the transport holds them.
  std::vector<Request> Q(Recvs.size() + Sends.size());
  auto Post = [&](Request &R, ExtraMessage &M, bool Send) {
    if (M.peer < 0 || M.peer >= S.ranks || M.peer == Rank ||
        isComm(M.what.kind))
      error(fmt::format("an extra message to rank {} named `{}`", M.peer,
                        formatAction(M.what)));
    R.action = M.what;
    R.action.peer = M.peer;
    R.peer = M.peer;
    R.bytes = M.bytes;
    R.extraSend = Send;
    R.postMicros = nowMicros();
    if (Send) {
      R.buf = std::move(M.buf);
      T.postSend(Rank, R);
    } else {
      T.postRecv(Rank, R);
    }
  };
  for (size_t I = 0; I < Recvs.size(); ++I)
    Post(Q[I], Recvs[I], false);
  for (size_t I = 0; I < Sends.size(); ++I)
    Post(Q[Recvs.size() + I], Sends[I], true);
  for (Request &R : Q) {
    if (!R.done)
      T.wait(Rank, R);
    RS.tick();
  }
  for (size_t I = 0; I < Recvs.size(); ++I)
    Recvs[I].buf = std::move(Q[I].buf);
}

void Executor::runAction(int64_t, const Action &A) {
  const Handler &H = Handlers[size_t(A.kind)];
  if (H)
    H(A, *this);
  else
    runDefault(A);
}

void Executor::runStep(int StepNo) {
  Step = StepNo;
  LossSum = 0;
  double Begin = nowMicros();
  Status.step.store(StepNo, std::memory_order_relaxed);
  Status.phase.store(int32_t(Phase::Running), std::memory_order_release);
  try {
    for (int64_t I = 0; I < Count; ++I) {
      Current = I;
      Status.action.store(I, std::memory_order_relaxed);
      Action A = decodeRow(Rows + I * RowWords);
      if (isCompute(A.kind) && A.overlapsNext() && I + 1 < Count) {
        PairFirst = A;
        PairNext = decodeRow(Rows + (I + 1) * RowWords);
        PairSecond = &PairNext;
        if (Overlap) {
          Overlap(PairFirst, PairNext, *this);
        } else {
          runAction(I, PairFirst);
          Current = I + 1;
          Status.action.store(I + 1, std::memory_order_relaxed);
          runAction(I + 1, PairNext);
        }
        PairSecond = nullptr;
        ++I;
        RS.tick();
        continue;
      }
      runAction(I, A);
      RS.tick();
      if (O.comm == CommModel::Batched && !Batch.empty() &&
          (I + 1 == Count ||
           !isComm(decodeRow(Rows + (I + 1) * RowWords).kind)))
        drainBatch();
    }
    Current = Count - 1;
    drainSends();
    // Receives nothing consumed still have to complete (their senders
    // block until they do); their data is dropped.
    for (std::vector<int32_t> *Posted : {&RecvF, &RecvB})
      for (int32_t &R : *Posted) {
        if (R < 0)
          continue;
        waitRequest(R, WaitKind::Drain);
        profileComm(Requests[size_t(R)]);
        freeRequest(R);
        R = -1;
      }
  } catch (Aborted &) {
    Status.phase.store(int32_t(Phase::Failed));
    throw;
  } catch (std::exception &E) {
    Status.phase.store(int32_t(Phase::Failed));
    Action A = Current >= 0 && Current < Count
                   ? decodeRow(Rows + Current * RowWords)
                   : Action{};
    RS.fail(ExitError, fmt::format("rank {}: action {} `{}` threw: {}", Rank,
                                   Current, formatAction(A), E.what()));
    throw Aborted();
  } catch (...) {
    Status.phase.store(int32_t(Phase::Failed));
    RS.fail(ExitError, fmt::format("rank {}: action {} threw an unknown "
                                   "exception",
                                   Rank, Current));
    throw Aborted();
  }
  FinishMicros = nowMicros() - O.startMicros;
  if (O.profile) {
    ProfileEvent E = profileEvent(Action{}, Kind::Idle, ProfileEvent::StepMark);
    E.start = Begin - O.startMicros;
    E.end = FinishMicros;
    Profiled.push_back(E);
  }
}

} // namespace ppsrt
