//===- Profile.h - measured costs of a run, as a .pps costs file ----------===//
//
// With --profile=FILE every rank records, per step, how long each kernel
// took (F, I, W, B), when each message was posted and when the rank waiting
// for it got it, and the bytes each forward's activations hold. After the
// run the steps after --profile-warmup are summarised per stage (never as a
// median across stages) and written as a .pps file: the run's topology, its
// measured costs per stage (one time unit = 1 ms) and a request to
// synthesise a schedule for them, with the figures and their spread as
// comments. `ppsc synth FILE` re-plans for the measured costs; `ppsc sim
// --costs=FILE` / `ppsc synth --costs=FILE` time or plan any schedule of the
// same stages with them (docs/synthesis.md, "Re-planning from a profile").
//
// What is measured:
//  * a compute's time is its kernel call alone (an input's wait before it
//    is not counted), by the wall clock, or with --profile-clock=cpu by
//    the CPU time of the rank's thread (kernels that compute on that
//    thread only, on a machine whose cores the ranks share: waiting for a
//    core is then not counted); F includes the last stage's loss. With
//    --profile, every other B of a stage runs as I then W (the kernel interface
//    says B = I then W), so that every profiled schedule with a backward times
//    I, W and B, and the profile says whether the split pays (I + W
//    against B per stage);
//  * a message's time is from its send being posted (or its receive, if
//    later) to the receiving rank getting it, counted only when that rank
//    was already waiting for it (otherwise the data was there before
//    anyone looked, and its arrival is unknown). Ranks share the clock on
//    threads and on one host; across hosts the start barrier aligns them;
//  * a step's time is from its first compute starting to the last rank
//    ending it (the simulator's makespan: ranks that begin a step early
//    only wait);
//  * kernels that measure memory (the libtorch stages) give each forward's
//    activation bytes (StageIO::activationBytes) and each rank's peak of
//    other bytes (ActivationBytes::nonActivationPeak).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/Kernels.h"
#include "ppsrt/Schedule.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ppsrt {

/// One measured interval of a rank (plain data: MPI gathers it as bytes).
struct ProfileEvent {
  enum Flags : uint8_t {
    /// Half of a B(m, s) run as I then W to time the split.
    Probe = 1,
    /// Inside an overlap pair: not a time of its own kind.
    Overlapped = 2,
    /// The rank's whole step (start and end of runStep).
    StepMark = 4,
  };
  int32_t step = 0;
  int32_t rank = 0;
  Kind kind = Kind::Idle;
  uint8_t flags = 0;
  int32_t mb = -1, stage = -1, peer = -1;
  /// Comms: position on the channel (from, to), as the transport counts.
  uint64_t seq = 0;
  /// Since the common start of the run, in microseconds. Computes: the
  /// kernel call; comms: posted to complete; steps: the rank's step.
  double start = 0, end = 0;
  /// Receives: when the rank began to block on it (< 0: it did not block).
  double waitStart = -1;
  /// F: the bytes its activations hold (StageIO::activationBytes; < 0:
  /// not measured).
  int64_t bytes = -1;
  /// Computes: the rank thread's CPU time in the kernel, microseconds (the
  /// profile's clock under --profile-clock=cpu).
  double cpu = 0;
};

/// Mean and spread of one measured figure.
struct ProfileStat {
  int64_t samples = 0;
  double mean = 0;
  /// Standard deviation of the per-step means (0 with one step).
  double sdSteps = 0;
  double min = 0, max = 0;
};

/// A run's profile: the figures the file is written from.
struct ProfileSummary {
  struct Stage {
    ProfileStat F, I, W, B;
    /// Activation bytes per microbatch (samples 0: not measured).
    ProfileStat bytes;
  };
  struct Link {
    int32_t from = 0, to = 0;
    bool gradient = false;
    ProfileStat time;
    /// Messages whose receiver did not wait (no sample).
    int64_t unmeasured = 0;
  };
  std::vector<Stage> stages;
  std::vector<Link> links; ///< sorted by (from, to, gradient)
  ProfileStat messages;    ///< all measured messages
  ProfileStat stepTime;
  int firstStep = 0, steps = 0; ///< the measured steps
  int64_t probes = 0;           ///< B run as I then W
  int64_t overlapped = 0;       ///< computes in overlap pairs (not counted)
  /// Per rank (-1: not measured).
  std::vector<int64_t> nonActivationPeak;
  /// Per rank: the memory analysis' peak of activation bytes for this run
  /// (its live (m, s) set times each one's measured bytes; -1: not
  /// measured).
  std::vector<int64_t> activationPeak;
};

/// Summarises the events of all ranks, skipping the first Warmup steps;
/// computes by their CPU time if Cpu. Empty string on success, else why
/// there is nothing to summarise.
std::string summarizeProfile(const ScheduleDesc &S,
                             const std::vector<ProfileEvent> &Events,
                             const std::vector<ActivationBytes> &Bytes,
                             int Warmup, ProfileSummary &Out, bool Cpu = false);

/// What the file's header says about the run.
struct ProfileRun {
  std::string program;   ///< argv[0]
  std::string transport; ///< threads or mpi
  CommModel comm = CommModel::Rendezvous;
  int totalSteps = 0;
  bool cpuClock = false; ///< computes timed by CPU time (--profile-clock)
  /// Measured peak activations per rank (the synthesis request's limit).
  std::vector<int64_t> peaks;
  /// The compiler's makespans for this run, in the schedule's time units
  /// (< 0: unknown): ppsc sim's (asynchronous comm tracks) and the executor
  /// timing's (as this runtime runs it: a rank posts a send when it gets
  /// there). They are ms when the schedule was compiled from a profile.
  double simMakespan = -1, executorMakespan = -1;
  /// Said in the file and after the profile line (e.g. that the ranks
  /// shared fewer cores than there are ranks); empty: nothing.
  std::string note;
};

/// The .pps text of a profile (see above).
std::string formatProfile(const ScheduleDesc &S, const ProfileSummary &P,
                          const ProfileRun &Run);

/// Summarises, prints a line (unless Quiet) and writes Path. Empty string
/// on success, else the error (nothing written).
std::string writeProfile(const std::string &Path, const ScheduleDesc &S,
                         const std::vector<ProfileEvent> &Events,
                         const std::vector<ActivationBytes> &Bytes, int Warmup,
                         const ProfileRun &Run, bool Quiet);

/// CPU time of the calling thread, in microseconds.
double threadCpuMicros();

} // namespace ppsrt
