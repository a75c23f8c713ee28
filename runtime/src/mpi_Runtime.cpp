//===- mpi_Runtime.cpp - the MPI transport and launcher (pps_runtime_mpi) -===//
#include "ppsrt/Main.h"
#include "ppsrt/MpiTransport.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace ppsrt {

static constexpr int NoticeTag = 1;

/// The tag a message carries: the receive it is meant for, hashed into the
/// legal tag range (direction, microbatch, stage of the receive).
static int matchTag(const Action &Recv, int32_t Stages, int TagUb) {
  uint64_t Key = (uint64_t(uint32_t(Recv.mb)) * uint64_t(Stages + 1) +
                  uint64_t(uint32_t(Recv.stage))) *
                     2 +
                 (Recv.kind == Kind::RecvB ? 1 : 0);
  return int(Key % uint64_t(TagUb));
}

MpiTransport::MpiTransport(RunState &RS, MPI_Comm Comm, bool Rendezvous)
    : RS(RS), Rendezvous(Rendezvous) {
  MPI_Comm_dup(Comm, &Data);
  MPI_Comm_dup(Comm, &Ctrl);
  // Errors (e.g. a message longer than the receive the kernels sized) come
  // back as codes and are reported with the action, not as an abort.
  MPI_Comm_set_errhandler(Data, MPI_ERRORS_RETURN);
  MPI_Comm_rank(Data, &Me);
  MPI_Comm_size(Data, &Size);
  int *Ub = nullptr, Flag = 0;
  MPI_Comm_get_attr(Data, MPI_TAG_UB, &Ub, &Flag);
  if (Flag && Ub)
    TagUb = *Ub;
  SendSeq.assign(size_t(Size), 0);
  RecvSeq.assign(size_t(Size), 0);
  NoticeBuf.assign(1, 0);
  MPI_Irecv(NoticeBuf.data(), 1, MPI_INT, MPI_ANY_SOURCE, NoticeTag, Ctrl,
            &NoticeReq);
}

MpiTransport::~MpiTransport() {
  if (NoticeReq != MPI_REQUEST_NULL) {
    MPI_Cancel(&NoticeReq);
    MPI_Request_free(&NoticeReq);
  }
  MPI_Comm_free(&Ctrl);
  MPI_Comm_free(&Data);
}

int64_t MpiTransport::slot() {
  if (!FreeSlots.empty()) {
    int64_t S = FreeSlots.back();
    FreeSlots.pop_back();
    return S;
  }
  Reqs.push_back(MPI_REQUEST_NULL);
  return int64_t(Reqs.size() - 1);
}

void MpiTransport::postSend(int32_t, Request &R) {
  R.impl = slot();
  R.seq = SendSeq[size_t(R.peer)]++;
  int Tag = matchTag(matchingComm(R.action, Me), RS.schedule().stages, TagUb);
  int Bytes = int(R.buf.bytes());
  if (Rendezvous)
    MPI_Issend(R.buf.data(), Bytes, MPI_BYTE, R.peer, Tag, Data,
               &Reqs[size_t(R.impl)]);
  else
    MPI_Isend(R.buf.data(), Bytes, MPI_BYTE, R.peer, Tag, Data,
              &Reqs[size_t(R.impl)]);
  R.done = false;
}

void MpiTransport::postRecv(int32_t, Request &R) {
  R.impl = slot();
  R.seq = RecvSeq[size_t(R.peer)]++;
  R.buf.resizeBytes(R.bytes);
  // MPI_ANY_TAG: matching is by order (non-overtaking), the tag is checked.
  MPI_Irecv(R.buf.data(), int(R.bytes), MPI_BYTE, R.peer, MPI_ANY_TAG, Data,
            &Reqs[size_t(R.impl)]);
  R.done = false;
}

bool MpiTransport::test(int32_t Self, Request &R) {
  if (R.done)
    return true;
  int Flag = 0;
  MPI_Status St;
  int Rc = MPI_Test(&Reqs[size_t(R.impl)], &Flag, &St);
  if (Rc != MPI_SUCCESS) {
    char Text[MPI_MAX_ERROR_STRING];
    int Len = 0;
    int Code = Rc == MPI_ERR_IN_STATUS ? St.MPI_ERROR : Rc;
    MPI_Error_string(Code, Text, &Len);
    RS.fail(
        ExitError,
        fmt::format("rank {}: `{}` failed in MPI: {}{}", Self,
                    formatAction(R.action), std::string(Text, size_t(Len)),
                    isRecv(R.action.kind)
                        ? fmt::format(" (the kernels expect {} bytes)", R.bytes)
                        : std::string()));
    throw Aborted();
  }
  if (!Flag)
    return false;
  R.done = true;
  FreeSlots.push_back(R.impl);
  R.impl = -1;
  if (isSend(R.action.kind))
    return true;
  int Expected = matchTag(R.action, RS.schedule().stages, TagUb);
  if (St.MPI_TAG != Expected) {
    // Decode the tag back into the receive the sender meant (exact unless
    // the tag range wrapped) and say it in the lint's words.
    uint64_t Key = uint64_t(St.MPI_TAG);
    uint64_t Stages1 = uint64_t(RS.schedule().stages) + 1;
    Action Meant;
    Meant.kind = Key % 2 ? Kind::RecvB : Kind::RecvF;
    Meant.stage = int32_t((Key / 2) % Stages1);
    Meant.mb = int32_t((Key / 2) / Stages1);
    Meant.peer = R.peer;
    Action Sent = matchingComm(Meant, Self);
    Sent.peer = Self;
    RS.fail(ExitError, checkMatch(R.peer, Sent, Self, R.action, R.seq));
    throw Aborted();
  }
  int Count = 0;
  MPI_Get_count(&St, MPI_BYTE, &Count);
  if (size_t(Count) != R.bytes) {
    RS.fail(ExitError,
            fmt::format("rank {}: `{}` received {} bytes, the kernels "
                        "expect {}",
                        Self, formatAction(R.action), Count, R.bytes));
    throw Aborted();
  }
  return true;
}

void MpiTransport::poll() {
  int Flag = 0;
  MPI_Test(&NoticeReq, &Flag, MPI_STATUS_IGNORE);
  if (Flag) {
    // Another rank stalled: say where this one stands (once); that rank
    // leads the report and aborts the job.
    NoticeSeen = true;
    if (!Reported) {
      Reported = true;
      std::string Line = RS.describe(Me) + "\n";
      fmt::print(stderr, "  {}", Line);
      std::fflush(stderr);
    }
    MPI_Irecv(NoticeBuf.data(), 1, MPI_INT, MPI_ANY_SOURCE, NoticeTag, Ctrl,
              &NoticeReq);
  }
  if (Stalled.load() && !NoticeSeen)
    onStall();
}

void MpiTransport::onStall() {
  std::string Line = RS.describe(Me);
  fmt::print(stderr,
             "error: watchdog: rank {} made no progress for {} s; the "
             "schedule is stuck (every rank reports where it stands):\n  {}\n",
             Me, watchdogSeconds, Line);
  std::fflush(stderr);
  Reported = true;
  static int One = 1;
  std::vector<MPI_Request> Sent;
  for (int R = 0; R < Size; ++R) {
    if (R == Me)
      continue;
    Sent.emplace_back();
    MPI_Isend(&One, 1, MPI_INT, R, NoticeTag, Ctrl, &Sent.back());
  }
  // Give the other ranks time to answer with their own lines.
  auto End = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  while (std::chrono::steady_clock::now() < End) {
    int Flag;
    for (MPI_Request &Q : Sent)
      if (Q != MPI_REQUEST_NULL)
        MPI_Test(&Q, &Flag, MPI_STATUS_IGNORE);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  MPI_Abort(MPI_COMM_WORLD, ExitDeadlock);
  std::abort();
}

/// Pause policy of the polling loops: spin, then yield the core (the peer may
/// need it on an oversubscribed machine), and only after 10 ms of waiting
/// sleep briefly, so a long wait does not burn a core but a short one stays
/// fast.
static void pause(uint64_t I, std::chrono::steady_clock::time_point &Since) {
  if (I < 128)
    return;
  if (I == 128)
    Since = std::chrono::steady_clock::now();
  if (I % 256 != 0 || std::chrono::steady_clock::now() - Since <
                          std::chrono::milliseconds(10)) {
    std::this_thread::yield();
    return;
  }
  std::this_thread::sleep_for(std::chrono::microseconds(50));
}

template <class Done> void MpiTransport::waitUntil(Done IsDone) {
  std::chrono::steady_clock::time_point Since;
  for (uint64_t I = 0;; ++I) {
    if (IsDone())
      return;
    if (I % 64 == 63)
      poll();
    if (RS.aborted())
      throw Aborted();
    pause(I, Since);
  }
}

void MpiTransport::waitRaw(MPI_Request &Req) {
  waitUntil([&] {
    int Flag = 0;
    MPI_Test(&Req, &Flag, MPI_STATUS_IGNORE);
    return Flag != 0;
  });
}

void MpiTransport::wait(int32_t Self, Request &R) {
  waitUntil([&] { return test(Self, R); });
}

int runMpi(const ScheduleDesc &S, Kernels &K, const RunOptions &O, int *Argc,
           char ***Argv) {
  int Provided = 0;
  MPI_Init_thread(Argc, Argv, MPI_THREAD_FUNNELED, &Provided);
  int Me = 0, Size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &Me);
  MPI_Comm_size(MPI_COMM_WORLD, &Size);
  if (Size != S.ranks) {
    if (Me == 0)
      fmt::print(stderr,
                 "error: this executor runs {} ranks; start it with "
                 "`mpirun -n {}` (got {} processes)\n",
                 S.ranks, S.ranks, Size);
    MPI_Finalize();
    return ExitUsage;
  }
  CommModel Comm = O.commSet ? O.comm : S.comm;
  if (Me == 0 && !O.quiet)
    fmt::print("pipeline {}: {} ranks, {} stages, {} microbatches; transport "
               "mpi, comm {}, {} step{}\n",
               S.name, S.ranks, S.stages, S.microbatches, commModelName(Comm),
               O.steps, O.steps == 1 ? "" : "s");
  std::fflush(stdout);

  RunState RS(S, Me, 1);
  int Code = ExitOk;
  std::vector<TraceEvent> Events;
  double Finish = 0;
  int64_t Peak = 0;
  {
    MpiTransport T(RS, MPI_COMM_WORLD, Comm != CommModel::Eager);
    T.watchdogSeconds = O.watchdogSeconds;
    KernelContext Ctx = kernelContextFor(S, O);
    ExecOptions EO = execOptionsFor(Comm, O);
    RankStatus &St = RS.status(Me);
    int Step = 0;
    try {
      K.setup(Ctx, Me);
      Executor E(S, Me, T, K, RS, EO);
      K.installHandlers(E);
      Watchdog W(RS, O.watchdogSeconds);
      W.start([&T] { T.stallDetected(); });
      MPI_Barrier(MPI_COMM_WORLD);
      E.setStart(nowMicros());
      for (; Step < O.steps; ++Step) {
        K.beginStep(Me, Step);
        E.runStep(Step);
        K.endStep(Me, Step);
      }
      K.finish(Me);
      St.phase.store(int32_t(Phase::Finished));
      Finish = E.finishMicros();
      Peak = E.peakActivations();
      Events = std::move(E.trace());
      // Wait for everyone while still answering stall notices.
      MPI_Request Bar;
      MPI_Ibarrier(MPI_COMM_WORLD, &Bar);
      T.waitRaw(Bar);
      W.stop();
    } catch (Aborted &) {
      Code = RS.exitCode();
    } catch (std::exception &X) {
      RS.fail(ExitError,
              fmt::format("rank {}: step {}: {}", Me, Step, X.what()));
      Code = RS.exitCode();
    }
    if (Code != ExitOk) {
      fmt::print(stderr, "error: {}\n", RS.errorMessage());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, Code);
      return Code;
    }
  }

  // Everyone finished: gather the figures (and the trace) on rank 0.
  double Makespan = 0;
  MPI_Reduce(&Finish, &Makespan, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  std::vector<int64_t> Peaks(static_cast<size_t>(Size));
  MPI_Gather(&Peak, 1, MPI_INT64_T, Peaks.data(), 1, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  if (!O.traceFile.empty()) {
    int Bytes = int(Events.size() * sizeof(TraceEvent));
    std::vector<int> Counts(static_cast<size_t>(Size)),
        Displs(static_cast<size_t>(Size));
    MPI_Gather(&Bytes, 1, MPI_INT, Counts.data(), 1, MPI_INT, 0,
               MPI_COMM_WORLD);
    int Total = 0;
    for (int R = 0; R < Size; ++R) {
      Displs[size_t(R)] = Total;
      Total += Counts[size_t(R)];
    }
    std::vector<TraceEvent> All(Me == 0 ? size_t(Total) / sizeof(TraceEvent)
                                        : 0);
    MPI_Gatherv(Events.data(), Bytes, MPI_BYTE, All.data(), Counts.data(),
                Displs.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (Me == 0) {
      std::string Err;
      if (!writeChromeTrace(O.traceFile, S, All, O.timeScale * 1000.0, Err)) {
        fmt::print(stderr, "error: {}\n", Err);
        Code = ExitError;
      }
    }
  }
  if (Me == 0) {
    if (!O.quiet)
      printMakespan(S, Comm, O, Makespan,
                    dynamic_cast<BusyWaitKernels *>(&K) != nullptr);
    if (!checkPeaks(S, Peaks, O.quiet))
      Code = ExitError;
    if (Code == ExitOk && !O.quiet)
      fmt::print("ok\n");
  }
  MPI_Bcast(&Code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return Code;
}

} // namespace ppsrt
