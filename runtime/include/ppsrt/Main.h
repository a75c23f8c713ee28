//===- Main.h - the main() of generated executors -------------------------===//
//
// A generated executor's main() is one call:
//
//   int main(int argc, char **argv) { return ppsrt::executorMain(kSchedule,
//   argc, argv); }
//
// Options:
//   --transport=threads|mpi  threads (default): one thread per rank in this
//                            process; mpi: one process per rank, run with
//                            `mpirun -n RANKS ./exec --transport=mpi`
//   --ranks=N                check that the schedule has N ranks
//   --steps=N                training steps (each runs the whole table; 1)
//   --watchdog=SECONDS       abort with a report after this long without
//                            progress (10; 0 disables)
//   --kernel-timeout=SECONDS a kernel (F, I, W, B, FSDP control) running
//                            this long is a stall (default: ten times the
//                            longest predicted action at this time scale,
//                            at least the watchdog time; 0 disables)
//   --trace=FILE             write the measured timeline (Chrome trace JSON)
//   --profile=FILE           write the measured costs per stage as a .pps
//                            costs file (ppsrt/Profile.h)
//   --profile-warmup=N       steps not counted in the profile (1)
//   --profile-clock=wall|cpu time kernels by the wall clock (default) or by
//                            their thread's CPU time
//   --time-scale=X           built-in workload: one cost unit lasts X ms (1)
//   --comm=rendezvous|eager|batched   override the schedule's comm model
//   --recv=deferred|blocking deferred (default): a receive is waited on by
//                            the compute that needs it; blocking: at the
//                            RECV action, as the lint's model has it
//   --message-bytes=N        built-in workload message size (64)
//   --kernel=spin|sleep      built-in workload: spin (default) or sleep for
//                            each action's time (sleep: timing runs with
//                            more ranks than free cores)
//   --quiet                  print only errors
//   -- ARGS...               the rest goes to the kernels (KernelContext::args)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/Executor.h"
#include "ppsrt/Kernels.h"
#include "ppsrt/Schedule.h"

#include <optional>
#include <string>
#include <vector>

namespace ppsrt {

/// The ranges parseRunOptions accepts.
constexpr double MaxRanks = 1 << 16;
constexpr double MaxSteps = 1e9;
/// Watchdog and kernel timeouts, in seconds (over eleven days).
constexpr double MaxSeconds = 1e6;
/// Milliseconds per cost unit: costs are at most 1e9 units (ppsc checks),
/// so a kernel's time stays a valid duration.
constexpr double MaxTimeScale = 1e3;
/// Bytes per message of the built-in workload (MPI counts are int).
constexpr double MaxMessageBytes = 2147483647.0;

struct RunOptions {
  std::string transport = "threads";
  int ranks = -1;
  int steps = 1;
  double watchdogSeconds = 10;
  /// A kernel running longer than this is a stall (0 disables); negative:
  /// derived from the schedule's costs (kernelTimeoutFor).
  double kernelTimeoutSeconds = -1;
  std::string traceFile;
  std::string profileFile;
  int profileWarmup = 1;
  bool profileCpu = false; ///< --profile-clock=cpu
  double timeScale = 1.0;  ///< ms per cost unit for the built-in workload
  CommModel comm = CommModel::Rendezvous;
  bool commSet = false;
  /// --comm=nccl: the preset's stream rule; --stream, --eager-threshold:
  /// one part of it. Unset parts are the schedule's (runCommFor).
  std::optional<pps::schema::CommStream> preset;
  std::optional<pps::schema::StreamScope> scope;
  std::optional<double> eagerThreshold;
  bool blockingRecv = false;
  size_t messageBytes = 64;
  bool sleepKernels = false;
  bool quiet = false;
  /// Arguments after `--`, passed to the kernels.
  std::vector<std::string> kernelArgs;
};

/// The kernel context and executor options a run's options imply (shared
/// by the threads and MPI entry points).
inline KernelContext kernelContextFor(const ScheduleDesc &S,
                                      const RunOptions &O) {
  KernelContext Ctx;
  Ctx.schedule = &S;
  Ctx.secondsPerUnit = O.timeScale * 1e-3;
  Ctx.messageBytes = O.messageBytes;
  Ctx.sleep = O.sleepKernels;
  Ctx.steps = O.steps;
  Ctx.args = O.kernelArgs;
  return Ctx;
}
/// The comm model and stream rule of a run.
struct RunComm {
  CommModel model = CommModel::Rendezvous;
  pps::schema::CommStream stream;
};
/// The schedule's, changed by --comm, --stream and --eager-threshold as
/// ppsc's --comm-model, --stream and --eager-threshold change a schedule.
RunComm runCommFor(const ScheduleDesc &S, const RunOptions &O);
/// "rendezvous", "nccl", "rendezvous, one stream per peer, sends of up to
/// 1024 bytes eager": the run's comm as the banner says it.
std::string describeComm(const RunComm &C);
/// The predicted makespan (time units) of one step of the executor under
/// C, from the compiler's figures; < 0 if none was computed for C.
double executorPrediction(const ScheduleDesc &S, const RunComm &C,
                          bool BlockingRecv);

inline ExecOptions execOptionsFor(const RunComm &Comm, const RunOptions &O) {
  ExecOptions EO;
  EO.comm = Comm.model;
  EO.stream = Comm.stream;
  EO.blockingRecv = O.blockingRecv;
  EO.trace = !O.traceFile.empty();
  EO.profile = !O.profileFile.empty();
  return EO;
}

/// Parses the options above. Returns false with Error set on a bad option.
bool parseRunOptions(int Argc, char **Argv, RunOptions &O, std::string &Error);
/// Parses --comm, --stream or --eager-threshold (Name) into O (RunComm.cpp).
bool parseCommOption(const std::string &Name, const std::string &Value,
                     RunOptions &O, std::string &Error);

/// Measured figures of a finished run (the threads transport fills all of
/// them; under MPI only rank 0's copy is complete).
struct RunResult {
  int exitCode = ExitOk;
  std::string error;
  double makespanMicros = 0;            ///< all steps, wall clock
  std::vector<int64_t> peakActivations; ///< per rank
  /// Per rank, the peak in the memory model's units (ScheduleDesc::memory).
  std::vector<double> peakMemory;
  double lossSum = 0; ///< last step
  /// Set when the run finished but its trace could not be written.
  std::string traceError;
  /// Per rank, if the kernels measure activation bytes.
  std::vector<ActivationBytes> activationBytes;
  /// Every rank's profile events (--profile).
  std::vector<ProfileEvent> profile;
};

/// How long the launchers wait, once a run is aborted, for ranks to stop
/// before ending the process without them (a kernel that never returns).
constexpr double AbortGraceSeconds = 2;

/// The kernel timeout of a run: --kernel-timeout if given, else (when the
/// watchdog is on) ten times the longest action the cost model predicts at
/// --time-scale, at least the watchdog time; 0 = none.
double kernelTimeoutFor(const ScheduleDesc &S, const RunOptions &O);

/// The cores this process may run on (its CPU affinity, which taskset and
/// container cpusets narrow; hardware_concurrency counts the machine's).
unsigned usableCores();

/// Whether more ranks run on this machine than this process has cores
/// (RanksHere: the ranks on this machine, 0 if unknown).
bool moreRanksThanCores(int RanksHere);

/// Runs S on in-process threads with the given kernels.
RunResult runThreads(const ScheduleDesc &S, Kernels &K, const RunOptions &O);

/// Runs S as this MPI process's rank (pps_runtime_mpi; pps_runtime's
/// version reports that the executor was built without MPI).
int runMpi(const ScheduleDesc &S, Kernels &K, const RunOptions &O, int *Argc,
           char ***Argv);

/// Parses the command line, makes the kernels (makeKernels), runs, prints
/// the summary and returns the exit code.
int executorMain(const ScheduleDesc &S, int Argc, char **Argv);

/// Compares measured peaks with S.predictedPeak; prints an error and
/// returns false on a mismatch (prints the figures unless Quiet).
bool checkPeaks(const ScheduleDesc &S, const std::vector<int64_t> &Peaks,
                bool Quiet);
/// Under a memory model other than the chunk model (S.predictedMemory
/// set): compares the measured peaks in its units with the memory
/// analysis'; prints an error and returns false on a mismatch (prints the
/// figures unless Quiet). True otherwise.
bool checkMemory(const ScheduleDesc &S, const std::vector<double> &Peaks,
                 bool Quiet);
/// Prints the measured activation bytes per rank next to what the memory
/// analysis predicts (if the kernels measure them); returns false if a rank
/// differs and its kernels asked for the check.
bool checkActivationBytes(const std::vector<int64_t> &Peaks,
                          const std::vector<ActivationBytes> &Bytes,
                          bool Quiet);
/// Writes the profile of a finished run (--profile) and prints its line;
/// empty string on success, else the error. RanksHere: the ranks that ran
/// on this machine (S.ranks on threads, MpiTransport::ranksHere()).
std::string finishProfile(const ScheduleDesc &S, const RunOptions &O,
                          const RunComm &Comm, const char *Program,
                          const std::vector<ProfileEvent> &Events,
                          const std::vector<ActivationBytes> &Bytes,
                          const std::vector<int64_t> &Peaks, int RanksHere);
/// Prints the measured makespan per step, next to the compiler's
/// predictions (ppsc sim's figure and the executor timing's, both computed
/// by the compiler and carried in S) when the built-in workload (whose
/// kernels last the cost model's times) ran. RanksHere as for
/// finishProfile.
void printMakespan(const ScheduleDesc &S, const RunComm &Comm,
                   const RunOptions &O, double MakespanMicros, bool BuiltIn,
                   int RanksHere);

} // namespace ppsrt
