//===- mpi_Main.cpp - runMpi: one process per rank (pps_runtime_mpi) ------===//
//
// The MPI launcher: starts the ranks together, runs the steps on this
// process's rank through the MPI transport (mpi_Runtime.cpp), then gathers
// the figures, the trace and the profile on rank 0, which prints and writes
// them (as runThreads and executorMain do for threads, Main.cpp).
//
//===----------------------------------------------------------------------===//
#include "ppsrt/Main.h"
#include "ppsrt/MpiTransport.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace ppsrt {

namespace {
/// Ends the process if the collectives after the run (figures, trace,
/// MPI_Finalize) take longer than the watchdog time plus a margin: they
/// block, so a peer cut off after the run would otherwise hang this rank.
class PostRunGuard {
public:
  PostRunGuard(int Me, double WatchdogSeconds) {
    if (WatchdogSeconds <= 0)
      return;
    double Limit = WatchdogSeconds + 10;
    Thread = std::thread([this, Me, Limit] {
      std::unique_lock<std::mutex> L(Mu);
      if (Cv.wait_for(L, std::chrono::duration<double>(Limit),
                      [this] { return Done; }))
        return;
      fmt::print(stderr,
                 "error: rank {}: collecting the results took more than {} s "
                 "(a peer may be cut off); ending this rank\n",
                 Me, Limit);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(ExitDeadlock);
    });
  }
  ~PostRunGuard() {
    {
      std::lock_guard<std::mutex> L(Mu);
      Done = true;
    }
    Cv.notify_all();
    if (Thread.joinable())
      Thread.join();
  }

private:
  std::mutex Mu;
  std::condition_variable Cv;
  bool Done = false;
  std::thread Thread;
};
} // namespace

/// Gathers every rank's items (plain data, sent as bytes) on rank 0.
template <class T>
static std::vector<T> gatherOnRank0(const std::vector<T> &Mine, int Me,
                                    int Size) {
  int Bytes = int(Mine.size() * sizeof(T));
  std::vector<int> Counts(static_cast<size_t>(Size)),
      Displs(static_cast<size_t>(Size));
  MPI_Gather(&Bytes, 1, MPI_INT, Counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int Total = 0;
  for (int R = 0; R < Size; ++R) {
    Displs[size_t(R)] = Total;
    Total += Counts[size_t(R)];
  }
  std::vector<T> All(Me == 0 ? size_t(Total) / sizeof(T) : 0);
  MPI_Gatherv(Mine.data(), Bytes, MPI_BYTE, All.data(), Counts.data(),
              Displs.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
  return All;
}

int runMpi(const ScheduleDesc &S, Kernels &K, const RunOptions &O, int *Argc,
           char ***Argv) {
  int Provided = 0;
  // Serialized: under a stream rule the rank's stream thread moves the
  // step's messages while the main thread runs kernels (ppsrt/
  // CommStreams.h); the two never call MPI at the same time.
  MPI_Init_thread(Argc, Argv, MPI_THREAD_SERIALIZED, &Provided);
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
  RunComm Comm = runCommFor(S, O);
  if (Comm.stream.inOrder() && Provided < MPI_THREAD_SERIALIZED) {
    if (Me == 0)
      fmt::print(stderr,
                 "error: this MPI library does not let a second thread call "
                 "MPI (MPI_THREAD_SERIALIZED), which the stream rule '{}' "
                 "needs; run with --stream=none\n",
                 describeComm(Comm));
    MPI_Finalize();
    return ExitUsage;
  }
  if (Me == 0 && !O.quiet)
    fmt::print("pipeline {}: {} ranks, {} stages, {} microbatches; transport "
               "mpi, comm {}, {} step{}\n",
               S.name, S.ranks, S.stages, S.microbatches, describeComm(Comm),
               O.steps, O.steps == 1 ? "" : "s");
  std::fflush(stdout);

  RunState RS(S, Me, 1);
  int Code = ExitOk;
  std::vector<TraceEvent> Events;
  std::vector<ProfileEvent> Profiled;
  double Finish = 0;
  int64_t Peak = 0;
  double PeakMem = 0;
  ActivationBytes Bytes;
  int Here = 0;
  {
    MpiTransport T(RS, MPI_COMM_WORLD, Comm.model != CommModel::Eager);
    Here = T.ranksHere();
    T.watchdogSeconds = O.watchdogSeconds;
    double KernelTimeout = kernelTimeoutFor(S, O);
    KernelContext Ctx = kernelContextFor(S, O);
    ExecOptions EO = execOptionsFor(Comm, O);
    RankStatus &St = RS.status(Me);
    int Step = 0;
    try {
      K.setup(Ctx, Me);
      Executor E(S, Me, T, K, RS, EO);
      K.installHandlers(E);
      Watchdog W(RS, O.watchdogSeconds, KernelTimeout);
      W.start([&T, &RS, &O, Me](const Stall &Why) {
        if (Why.KernelRank < 0) {
          // The main thread is waiting on communication: it reports.
          T.stallDetected(
              fmt::format("made no progress for {} s", O.watchdogSeconds));
          return;
        }
        // The main thread is inside a kernel that does not return and
        // cannot call MPI: say so here and end the process; the launcher
        // ends the job when it sees a rank fail.
        fmt::print(stderr, "error: watchdog: {}:\n  {}\n", Why.Why,
                   RS.describe(Me));
        std::fflush(stdout);
        std::fflush(stderr);
        _exit(ExitDeadlock);
      });
      // Start together, still answering stall notices (a rank that never
      // arrives is a stall, not a hang).
      MPI_Request Start;
      MPI_Ibarrier(MPI_COMM_WORLD, &Start);
      St.phase.store(int32_t(Phase::Starting));
      T.waitRaw(Start);
      St.phase.store(int32_t(Phase::NotStarted));
      E.setStart(nowMicros());
      for (; Step < O.steps; ++Step) {
        K.beginStep(Me, Step);
        E.runStep(Step);
        K.endStep(Me, Step);
      }
      K.finish(Me);
      Bytes = K.activationBytes(Me);
      St.phase.store(int32_t(Phase::Finished));
      Finish = E.finishMicros();
      Peak = E.peakActivations();
      PeakMem = E.peakMemory();
      Events = std::move(E.trace());
      Profiled = std::move(E.profile());
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
      abortJob(Code);
    }
  }

  // Everyone finished: gather the figures (and the trace) on rank 0. These
  // collectives block; a network cut now is caught by a timer instead.
  PostRunGuard Guard(Me, O.watchdogSeconds);
  std::string TraceError;
  double Makespan = 0;
  MPI_Reduce(&Finish, &Makespan, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  std::vector<int64_t> Peaks(static_cast<size_t>(Size));
  MPI_Gather(&Peak, 1, MPI_INT64_T, Peaks.data(), 1, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  std::vector<double> PeakMems(static_cast<size_t>(Size));
  MPI_Gather(&PeakMem, 1, MPI_DOUBLE, PeakMems.data(), 1, MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
  int64_t Mine[6] = {Bytes.peak,
                     Bytes.expected,
                     Bytes.minPerActivation,
                     Bytes.maxPerActivation,
                     Bytes.strict ? 1 : 0,
                     Bytes.nonActivationPeak};
  std::vector<int64_t> AllBytes(size_t(Size) * 6);
  MPI_Gather(Mine, 6, MPI_INT64_T, AllBytes.data(), 6, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  std::vector<ProfileEvent> AllProfiled;
  if (!O.profileFile.empty())
    AllProfiled = gatherOnRank0(Profiled, Me, Size);
  if (!O.traceFile.empty()) {
    std::vector<TraceEvent> All = gatherOnRank0(Events, Me, Size);
    if (Me == 0) {
      std::string Err;
      if (!writeChromeTrace(O.traceFile, S, All, O.timeScale * 1000.0, Err))
        TraceError = Err;
    }
  }
  if (Me == 0) {
    if (!O.quiet)
      printMakespan(S, Comm, O, Makespan,
                    dynamic_cast<BusyWaitKernels *>(&K) != nullptr, Here);
    if (!checkPeaks(S, Peaks, O.quiet))
      Code = ExitError;
    if (!checkMemory(S, PeakMems, O.quiet))
      Code = ExitError;
    std::vector<ActivationBytes> PerRank(static_cast<size_t>(Size));
    for (size_t R = 0; R < PerRank.size(); ++R) {
      const int64_t *V = AllBytes.data() + R * 6;
      PerRank[R] = ActivationBytes{V[0], V[1], V[2], V[3], V[4] != 0, V[5]};
    }
    if (!checkActivationBytes(Peaks, PerRank, O.quiet))
      Code = ExitError;
    if (!O.profileFile.empty()) {
      std::string Err = finishProfile(S, O, Comm, (*Argv)[0], AllProfiled,
                                      PerRank, Peaks, Here);
      if (!Err.empty()) {
        std::fflush(stdout);
        fmt::print(stderr, "error: {}\n", Err);
        Code = ExitError;
      }
    }
    // The figures are out; a trace that could not be written fails the run
    // without hiding them.
    if (!TraceError.empty()) {
      std::fflush(stdout);
      fmt::print(stderr, "error: {}\n", TraceError);
      Code = ExitError;
    }
    if (Code == ExitOk && !O.quiet)
      fmt::print("ok\n");
  }
  MPI_Bcast(&Code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return Code;
}

} // namespace ppsrt
