//===- Main.cpp - option parsing, the threads launcher and executorMain ---===//
#include "ppsrt/Main.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#ifdef __linux__
#include <sched.h>
#endif

namespace ppsrt {

/// A finite decimal number, the whole of Text ("nan", "inf" and hex such
/// as "0x10" are not numbers here).
static bool parseNumber(const std::string &Text, double &Out) {
  if (Text.empty() ||
      Text.find_first_not_of("0123456789+-.eE") != std::string::npos)
    return false;
  char *End = nullptr;
  Out = std::strtod(Text.c_str(), &End);
  return End && *End == '\0' && std::isfinite(Out);
}

bool parseRunOptions(int Argc, char **Argv, RunOptions &O, std::string &Error) {
  for (int I = 1; I < Argc; ++I) {
    std::string Arg = Argv[I];
    if (Arg == "--") {
      O.kernelArgs.assign(Argv + I + 1, Argv + Argc);
      break;
    }
    std::string Name = Arg, Value;
    size_t Eq = Arg.find('=');
    if (Eq != std::string::npos) {
      Name = Arg.substr(0, Eq);
      Value = Arg.substr(Eq + 1);
    }
    // Every value is range-checked here, so the conversions after it
    // (to int, to a duration) are defined.
    auto number = [&](double Min, double Max, double &Out) {
      if (!parseNumber(Value, Out) || Out < Min || Out > Max) {
        Error = fmt::format("bad value '{}' for {} (expected a number from {} "
                            "to {})",
                            Value, Name, Min, Max);
        return false;
      }
      return true;
    };
    auto integer = [&](double Min, double Max, double &Out) {
      if (!number(Min, Max, Out))
        return false;
      if (Out != std::floor(Out)) {
        Error = fmt::format("bad value '{}' for {} (expected a whole number)",
                            Value, Name);
        return false;
      }
      return true;
    };
    double N = 0;
    if (Name == "--transport") {
      if (Value != "threads" && Value != "mpi") {
        Error = fmt::format("unknown transport '{}' (expected threads or mpi)",
                            Value);
        return false;
      }
      O.transport = Value;
    } else if (Name == "--ranks") {
      if (!integer(1, MaxRanks, N))
        return false;
      O.ranks = int(N);
    } else if (Name == "--steps") {
      if (!integer(1, MaxSteps, N))
        return false;
      O.steps = int(N);
    } else if (Name == "--watchdog") {
      if (!number(0, MaxSeconds, O.watchdogSeconds))
        return false;
    } else if (Name == "--kernel-timeout") {
      if (!number(0, MaxSeconds, N))
        return false;
      O.kernelTimeoutSeconds = N;
    } else if (Name == "--trace") {
      if (Value.empty()) {
        Error = "--trace needs a file name";
        return false;
      }
      O.traceFile = Value;
    } else if (Name == "--profile") {
      if (Value.empty()) {
        Error = "--profile needs a file name";
        return false;
      }
      O.profileFile = Value;
    } else if (Name == "--profile-clock") {
      if (Value != "wall" && Value != "cpu") {
        Error = fmt::format("unknown clock '{}' (expected wall or cpu)", Value);
        return false;
      }
      O.profileCpu = Value == "cpu";
    } else if (Name == "--profile-warmup") {
      if (!integer(0, MaxSteps, N))
        return false;
      O.profileWarmup = int(N);
    } else if (Name == "--time-scale") {
      if (!number(0, MaxTimeScale, O.timeScale))
        return false;
    } else if (Name == "--message-bytes") {
      if (!integer(0, MaxMessageBytes, N))
        return false;
      O.messageBytes = size_t(N);
    } else if (Name == "--comm" || Name == "--stream" ||
               Name == "--eager-threshold") {
      if (!parseCommOption(Name, Value, O, Error))
        return false;
    } else if (Name == "--recv") {
      if (Value != "deferred" && Value != "blocking") {
        Error = fmt::format(
            "unknown receive mode '{}' (expected deferred or blocking)", Value);
        return false;
      }
      O.blockingRecv = Value == "blocking";
    } else if (Name == "--kernel") {
      if (Value != "spin" && Value != "sleep") {
        Error =
            fmt::format("unknown kernel '{}' (expected spin or sleep)", Value);
        return false;
      }
      O.sleepKernels = Value == "sleep";
    } else if (Name == "--quiet" && Eq == std::string::npos) {
      O.quiet = true;
    } else if (Name == "--help" || Name == "-h") {
      Error = "help";
      return false;
    } else {
      Error = fmt::format("unknown option '{}'", Arg);
      return false;
    }
  }
  return true;
}

RunResult runThreads(const ScheduleDesc &S, Kernels &K, const RunOptions &O) {
  RunResult Res;
  RunState RS(S, 0, S.ranks);
  RunComm Comm = runCommFor(S, O);
  ThreadsTransport T(RS, S.ranks, Comm.model != CommModel::Eager);
  KernelContext Ctx = kernelContextFor(S, O);

  ExecOptions EO = execOptionsFor(Comm, O);
  std::vector<std::unique_ptr<Executor>> Execs;
  try {
    for (int32_t R = 0; R < S.ranks; ++R) {
      K.setup(Ctx, R);
      Execs.push_back(std::make_unique<Executor>(S, R, T, K, RS, EO));
      K.installHandlers(*Execs.back());
    }
  } catch (std::exception &E) {
    Res.exitCode = ExitError;
    Res.error = fmt::format("kernel setup failed: {}", E.what());
    return Res;
  }

  Watchdog W(RS, O.watchdogSeconds, kernelTimeoutFor(S, O));
  W.start([&](const Stall &Why) {
    std::string Report = fmt::format("watchdog: {}; the schedule is stuck:\n{}",
                                     Why.Why, RS.describeAll());
    RS.fail(ExitDeadlock, Report);
  });

  // Rank threads say when they are done, so a thread stuck in a kernel
  // that never returns does not keep the process alive after an abort.
  std::mutex DoneMu;
  std::condition_variable DoneCv;
  int32_t DoneCount = 0;
  double Start = nowMicros();
  std::vector<std::thread> Threads;
  for (int32_t R = 0; R < S.ranks; ++R) {
    Executor *E = Execs[size_t(R)].get();
    E->setStart(Start);
    Threads.emplace_back([&, E, R] {
      struct Finished {
        std::mutex &Mu;
        std::condition_variable &Cv;
        int32_t &Count;
        ~Finished() {
          {
            std::lock_guard<std::mutex> L(Mu);
            ++Count;
          }
          Cv.notify_all();
        }
      } Done{DoneMu, DoneCv, DoneCount};
      RankStatus &St = RS.status(R);
      int Step = 0;
      try {
        for (; Step < O.steps; ++Step) {
          K.beginStep(R, Step);
          E->runStep(Step);
          K.endStep(R, Step);
        }
        K.finish(R);
        St.phase.store(int32_t(Phase::Finished));
      } catch (Aborted &) {
        St.phase.store(int32_t(Phase::Failed));
      } catch (std::exception &X) {
        St.phase.store(int32_t(Phase::Failed));
        RS.fail(ExitError,
                fmt::format("rank {}: step {}: {}", R, Step, X.what()));
      }
    });
  }
  {
    std::unique_lock<std::mutex> L(DoneMu);
    std::optional<double> AbortedAt;
    while (DoneCount < S.ranks) {
      DoneCv.wait_for(L, std::chrono::milliseconds(20));
      if (DoneCount == S.ranks || !RS.aborted())
        continue;
      if (!AbortedAt)
        AbortedAt = nowMicros();
      if (nowMicros() - *AbortedAt < AbortGraceSeconds * 1e6)
        continue;
      // A rank thread is inside a kernel that does not return: it cannot
      // be interrupted, so the process ends without it.
      std::string Stuck;
      for (int32_t R = 0; R < S.ranks; ++R)
        if (Phase(RS.status(R).phase.load()) == Phase::Running)
          Stuck += "\n  " + RS.describe(R);
      fmt::print(stderr,
                 "error: {}\nerror: the run was aborted but these ranks did "
                 "not stop within {} s; exiting without them:{}\n",
                 RS.errorMessage(), AbortGraceSeconds, Stuck);
      std::fflush(stdout);
      std::fflush(stderr);
      std::_Exit(RS.exitCode());
    }
  }
  for (std::thread &Th : Threads)
    Th.join();
  W.stop();

  Res.exitCode = RS.exitCode();
  Res.error = RS.errorMessage();
  std::vector<TraceEvent> Events;
  for (auto &E : Execs) {
    Res.makespanMicros = std::max(Res.makespanMicros, E->finishMicros());
    Res.peakActivations.push_back(E->peakActivations());
    Res.peakMemory.push_back(E->peakMemory());
    Res.activationBytes.push_back(K.activationBytes(E->rank()));
    Res.lossSum += E->lossSum();
    if (EO.trace)
      Events.insert(Events.end(), E->trace().begin(), E->trace().end());
    if (EO.profile)
      Res.profile.insert(Res.profile.end(), E->profile().begin(),
                         E->profile().end());
  }
  if (EO.trace && Res.exitCode == ExitOk)
    writeChromeTrace(O.traceFile, S, Events, O.timeScale * 1000.0,
                     Res.traceError);
  return Res;
}

double kernelTimeoutFor(const ScheduleDesc &S, const RunOptions &O) {
  if (O.kernelTimeoutSeconds >= 0)
    return O.kernelTimeoutSeconds;
  if (O.watchdogSeconds <= 0)
    return 0;
  // Ten times the longest kernel the cost model predicts at this time
  // scale, and never below the watchdog's time: a kernel stuck since
  // before its peers began to wait for it is caught, and named, before
  // their watchdogs fire.
  double MaxUnits = maxOverlapCost(S);
  for (int32_t St = 0; St < S.stages; ++St) {
    const StageCost &C = S.stageCost[St];
    MaxUnits = std::max({MaxUnits, C.F, C.I, C.W, C.B});
  }
  double Seconds =
      std::max(O.watchdogSeconds, 10 * MaxUnits * O.timeScale / 1000);
  return std::isfinite(Seconds) ? std::min(Seconds, MaxSeconds) : MaxSeconds;
}

/// The usage line; with Long (--help, on stdout) what the executor is and
/// every option.
static void printUsage(const ScheduleDesc &S, const char *Argv0, bool Long) {
  std::FILE *Out = Long ? stdout : stderr;
  fmt::print(Out,
             "usage: {} [--transport=threads|mpi] [--ranks=N] [--steps=N] "
             "[--watchdog=SECONDS] [--kernel-timeout=SECONDS] [--trace=FILE] "
             "[--profile=FILE] [--profile-warmup=N] [--profile-clock=wall|cpu] "
             "[--time-scale=MS_PER_UNIT] "
             "[--comm=rendezvous|eager|batched|nccl] [--stream=none|peer|rank] "
             "[--eager-threshold=BYTES] [--recv=deferred|blocking] "
             "[--message-bytes=N] "
             "[--kernel=spin|sleep] [--quiet] [-- KERNEL-ARGS...]\n",
             Argv0);
  if (!Long) {
    fmt::print(Out, "run {} --help for what each option does\n", Argv0);
    return;
  }
  fmt::print(
      Out,
      "\nRuns pipeline '{}' ({} ranks, {} stages, {} microbatches), compiled "
      "by ppsc emit --target=cpp.\nWith MPI: mpirun -n {} {} "
      "--transport=mpi\n\noptions:\n",
      S.name, S.ranks, S.stages, S.microbatches, S.ranks, Argv0);
  static const char *const Options[][2] = {
      {"--transport=threads|mpi",
       "threads (default): one thread per rank in this process; mpi: one "
       "process per rank (under mpirun)"},
      {"--ranks=N", "check that the executor was compiled for N ranks"},
      {"--steps=N", "training steps to run, each the whole schedule (1)"},
      {"--watchdog=SECONDS",
       "abort a run that makes no progress for this long, with a report of "
       "what each rank waits for (10; 0 = off)"},
      {"--kernel-timeout=SECONDS",
       "a kernel running this long is a stall (default: ten times the "
       "longest predicted action at this time scale, at least the watchdog "
       "time; 0 = off)"},
      {"--trace=FILE", "write the measured timeline as Chrome trace JSON"},
      {"--profile=FILE",
       "write the measured costs per stage (F, I, W, B, messages, bytes) as "
       ".pps for ppsc synth / ppsc sim --costs=FILE"},
      {"--profile-warmup=N", "steps the profile does not count (1)"},
      {"--profile-clock=wall|cpu",
       "time kernels by the wall clock (default) or by their thread's CPU "
       "time (ranks sharing cores)"},
      {"--time-scale=MS_PER_UNIT",
       "built-in workload: how long one cost unit lasts, in ms (1)"},
      {"--comm=rendezvous|eager|batched|nccl",
       "run under this comm model instead of the schedule's; nccl: "
       "rendezvous on one in-order stream per rank, sends of up to 64 KiB "
       "eager"},
      {"--stream=none|peer|rank",
       "the stream rule instead of the schedule's: comms complete in issue "
       "order on one stream per peer or per rank, as NCCL runs them (a "
       "receive that cannot complete holds back the comms behind it); none: "
       "each comm on its own"},
      {"--eager-threshold=BYTES",
       "sends of at most this many bytes (the schedule's declared message "
       "size; suffix K, M or G) do not wait for their receive; none: no "
       "threshold"},
      {"--recv=deferred|blocking",
       "deferred (default): a receive is waited for by the compute that "
       "needs it; blocking: at the receive itself, as ppsc lint models"},
      {"--message-bytes=N", "built-in workload: bytes per message (64)"},
      {"--kernel=spin|sleep",
       "built-in workload: spin (busy-wait, default) or sleep; sleep is "
       "fairer when there are more ranks than cores"},
      {"--quiet", "print only errors"},
      {"--help, -h", "print this help"},
      {"-- KERNEL-ARGS...",
       "everything after -- goes to the kernels (e.g. a model's own options)"},
  };
  for (const auto &O : Options)
    fmt::print(Out, "  {:<34} {}\n", O[0], O[1]);
  fmt::print(Out, "\nexit codes: 0 ok, 1 error, 2 usage, 3 the watchdog "
                  "stopped a stuck run (no progress, a kernel past its "
                  "timeout, a rank cut off)\n");
}

unsigned usableCores() {
#ifdef __linux__
  cpu_set_t Set;
  if (sched_getaffinity(0, sizeof(Set), &Set) == 0)
    return unsigned(CPU_COUNT(&Set));
#endif
  return std::thread::hardware_concurrency();
}

bool moreRanksThanCores(int RanksHere) {
  unsigned Cores = usableCores();
  return Cores > 0 && RanksHere > int(Cores);
}

/// Compares measured peaks with the memory analysis; prints and returns
/// false on a mismatch.
bool checkPeaks(const ScheduleDesc &S, const std::vector<int64_t> &Peaks,
                bool Quiet) {
  if (!S.predictedPeak)
    return true;
  bool Ok = true;
  std::string Measured, Predicted;
  for (size_t R = 0; R < Peaks.size(); ++R) {
    Measured += fmt::format("{}{}", R ? " " : "", Peaks[R]);
    Predicted += fmt::format("{}{}", R ? " " : "", S.predictedPeak[R]);
    Ok &= Peaks[R] == S.predictedPeak[R];
  }
  if (!Ok)
    fmt::print(stderr,
               "error: measured peak activations per rank [{}] differ from "
               "the memory analysis [{}]\n",
               Measured, Predicted);
  else if (!Quiet)
    fmt::print("peak activations per rank: {} (memory analysis: {})\n",
               Measured, Predicted);
  return Ok;
}

bool checkMemory(const ScheduleDesc &S, const std::vector<double> &Peaks,
                 bool Quiet) {
  if (!S.predictedMemory)
    return true;
  bool Ok = true;
  std::string Measured, Predicted;
  for (size_t R = 0; R < Peaks.size(); ++R) {
    Measured += fmt::format("{}{}", R ? " " : "", Peaks[R]);
    Predicted += fmt::format("{}{}", R ? " " : "", S.predictedMemory[R]);
    // The same amounts added in the same order: equal up to the slack
    // both sides compare peaks with.
    Ok &= std::fabs(Peaks[R] - S.predictedMemory[R]) <= 1e-6;
  }
  // The model the figures count by, as the memory block says it.
  std::string Model = S.stageMemory
                          ? "a memory model per stage"
                          : fmt::format("F = {}, I = {}", S.memory.Forward,
                                        S.memory.inputAmount());
  if (S.memoryBytes)
    Model += ", in bytes";
  if (!Ok)
    fmt::print(stderr,
               "error: measured peak memory per rank [{}] differs from the "
               "memory analysis [{}] (memory model {})\n",
               Measured, Predicted, Model);
  else if (!Quiet)
    fmt::print("peak memory per rank: {} (memory analysis: {}; {})\n", Measured,
               Predicted, Model);
  return Ok;
}

static std::string humanBytes(int64_t B) {
  if (B >= (int64_t(1) << 20))
    return fmt::format("{:.2f} MiB", double(B) / double(1 << 20));
  if (B >= 1024)
    return fmt::format("{:.1f} KiB", double(B) / 1024.0);
  return fmt::format("{} B", B);
}

bool checkActivationBytes(const std::vector<int64_t> &Peaks,
                          const std::vector<ActivationBytes> &Bytes,
                          bool Quiet) {
  bool Any = false, Ok = true;
  for (const ActivationBytes &B : Bytes)
    Any |= B.peak >= 0;
  if (!Any)
    return true;
  std::string Measured, Predicted;
  for (size_t R = 0; R < Bytes.size(); ++R) {
    const ActivationBytes &B = Bytes[R];
    const char *Sep = R ? ", " : "";
    Measured += fmt::format("{}{}", Sep, B.peak);
    int64_t Count = R < Peaks.size() ? Peaks[R] : 0;
    // One activation size: the analysis' count times it; several (stages of
    // different sizes on one rank): the analysis' live set weighted.
    if (B.minPerActivation == B.maxPerActivation)
      Predicted += fmt::format("{}{} x {} = {}", Sep, Count, B.maxPerActivation,
                               B.expected);
    else
      Predicted +=
          fmt::format("{}{} of {}..{} = {}", Sep, Count, B.minPerActivation,
                      B.maxPerActivation, B.expected);
    if (B.strict && B.peak != B.expected)
      Ok = false;
  }
  if (!Ok) {
    fmt::print(stderr,
               "error: measured peak activation bytes per rank [{}] differ "
               "from the memory analysis [{}]\n",
               Measured, Predicted);
    return false;
  }
  if (!Quiet) {
    int64_t Max = 0;
    for (const ActivationBytes &B : Bytes)
      Max = std::max(Max, B.peak);
    fmt::print("peak activation bytes per rank: {} (memory analysis: "
               "activations x bytes: {}); largest {}\n",
               Measured, Predicted, humanBytes(Max));
  }
  return true;
}

std::string finishProfile(const ScheduleDesc &S, const RunOptions &O,
                          const RunComm &Comm, const char *Program,
                          const std::vector<ProfileEvent> &Events,
                          const std::vector<ActivationBytes> &Bytes,
                          const std::vector<int64_t> &Peaks, int RanksHere) {
  ProfileRun Run;
  Run.program = Program;
  Run.transport = O.transport;
  Run.comm = Comm.model;
  Run.totalSteps = O.steps;
  Run.cpuClock = O.profileCpu;
  Run.peaks = Peaks;
  if (S.predictedMakespan > 0 && Comm.model == S.comm &&
      Comm.stream == S.stream && !O.blockingRecv)
    Run.simMakespan = S.predictedMakespan;
  Run.executorMakespan = executorPrediction(S, Comm, O.blockingRecv);
  // Ranks that take turns on the cores wait for one, which no prediction
  // counts (and which the wall clock puts into every kernel's time).
  unsigned Cores = usableCores();
  if (moreRanksThanCores(RanksHere) && !O.sleepKernels)
    Run.note = fmt::format(
        "{} ranks ran on {} core{} here: kernels that compute (rather than "
        "wait) took turns, so the step time exceeds what ranks running in "
        "parallel would take{}",
        RanksHere, Cores, Cores == 1 ? "" : "s",
        O.profileCpu ? ""
                     : ", and their times include waiting for a core "
                       "(--profile-clock=cpu leaves that out)");
  return writeProfile(O.profileFile, S, Events, Bytes, O.profileWarmup, Run,
                      O.quiet);
}

void printMakespan(const ScheduleDesc &S, const RunComm &Comm,
                   const RunOptions &O, double MakespanMicros, bool BuiltIn,
                   int RanksHere) {
  double PerStep = MakespanMicros / O.steps;
  double Units = O.timeScale > 0 ? PerStep / (O.timeScale * 1000.0) : 0;
  fmt::print("measured makespan: {:.3f} ms per step", PerStep / 1000.0);
  if (BuiltIn && O.timeScale > 0) {
    fmt::print(" = {:.3f} units at {} ms/unit", Units, O.timeScale);
    // Both figures are the compiler's timing engine, stored by the emitter:
    // ppsc sim's models asynchronous comm tracks; the executor timing has
    // sends block the rank, as this executor does. Both are shown when they
    // differ.
    double Sim = S.predictedMakespan;
    double Own = executorPrediction(S, Comm, O.blockingRecv);
    bool SimValid = Sim > 0 && Comm.model == S.comm &&
                    Comm.stream == S.stream && !O.blockingRecv;
    if (SimValid)
      fmt::print("; predicted {:.3f} units by ppsc sim ({:+.2f}%)", Sim,
                 100.0 * (Units - Sim) / Sim);
    if (Own > 0 && (!SimValid || Own != Sim))
      fmt::print("{} {:.3f} units by the executor's model ({:+.2f}%)",
                 SimValid ? "," : "; predicted", Own,
                 100.0 * (Units - Own) / Own);
    fmt::print("\n");
    // Spinning ranks on fewer cores take turns: time no model predicts.
    double Predicted = SimValid ? Sim : Own;
    if (!O.sleepKernels && Predicted > 0 && Units > 1.1 * Predicted &&
        moreRanksThanCores(RanksHere)) {
      unsigned Cores = usableCores();
      fmt::print("note: {} ranks spin on {} core{} here, so they take turns "
                 "and the run is slower than predicted; --kernel=sleep "
                 "(waits instead of spinning) or fewer ranks per machine "
                 "compare with the prediction fairly\n",
                 RanksHere, Cores, Cores == 1 ? "" : "s");
    }
    return;
  }
  fmt::print("\n");
}

int executorMain(const ScheduleDesc &S, int Argc, char **Argv) {
  RunOptions O;
  std::string Error;
  if (!parseRunOptions(Argc, Argv, O, Error)) {
    if (Error != "help")
      fmt::print(stderr, "error: {}\n", Error);
    printUsage(S, Argv[0], Error == "help");
    return Error == "help" ? ExitOk : ExitUsage;
  }
  if (O.ranks >= 0 && O.ranks != S.ranks) {
    fmt::print(stderr,
               "error: this executor was compiled for {} ranks, not {} "
               "(recompile with ppsc emit --ranks={})\n",
               S.ranks, O.ranks, O.ranks);
    return ExitUsage;
  }
  // Said before anything runs (on every process under MPI).
  if (S.unverified)
    fmt::print(stderr, "warning: this executor's schedule: {}\n", S.unverified);
  RunComm Comm = runCommFor(S, O);
  if (const char *Why =
          pps::schema::commConfigProblem(Comm.model, Comm.stream)) {
    fmt::print(stderr, "error: the comm options say: {}\n", Why);
    return ExitUsage;
  }
  std::unique_ptr<Kernels> K = makeKernels(S);
  if (!K)
    K = std::make_unique<BusyWaitKernels>();
  if (O.transport == "mpi")
    return runMpi(S, *K, O, &Argc, &Argv);

  if (!O.quiet)
    fmt::print("pipeline {}: {} ranks, {} stages, {} microbatches; transport "
               "threads, comm {}, {} step{}\n",
               S.name, S.ranks, S.stages, S.microbatches, describeComm(Comm),
               O.steps, O.steps == 1 ? "" : "s");
  // Whatever happens next (a process that has to end without a stuck
  // kernel thread), the banner is out.
  std::fflush(stdout);
  RunResult Res = runThreads(S, *K, O);
  if (Res.exitCode != ExitOk) {
    fmt::print(stderr, "error: {}\n", Res.error);
    return Res.exitCode;
  }
  if (!O.quiet)
    printMakespan(S, Comm, O, Res.makespanMicros,
                  dynamic_cast<BusyWaitKernels *>(K.get()) != nullptr, S.ranks);
  if (!checkPeaks(S, Res.peakActivations, O.quiet))
    return ExitError;
  if (!checkMemory(S, Res.peakMemory, O.quiet))
    return ExitError;
  if (!checkActivationBytes(Res.peakActivations, Res.activationBytes, O.quiet))
    return ExitError;
  if (!O.profileFile.empty()) {
    std::string Err =
        finishProfile(S, O, Comm, Argv[0], Res.profile, Res.activationBytes,
                      Res.peakActivations, S.ranks);
    if (!Err.empty()) {
      std::fflush(stdout);
      fmt::print(stderr, "error: {}\n", Err);
      return ExitError;
    }
  }
  // The run's figures are out; a trace that could not be written fails the
  // command without hiding them.
  if (!Res.traceError.empty()) {
    std::fflush(stdout);
    fmt::print(stderr, "error: {}\n", Res.traceError);
    return ExitError;
  }
  if (!O.quiet)
    fmt::print("ok\n");
  return ExitOk;
}

} // namespace ppsrt
