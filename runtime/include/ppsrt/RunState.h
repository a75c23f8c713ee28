//===- RunState.h - shared run state: progress, per-rank status, abort ----===//
//
// Every rank publishes what it is doing with a few relaxed atomics (no
// allocation, no lock on the hot path). The watchdog reads them to detect
// "no progress for N seconds", or a kernel that has run past the kernel
// timeout, and to write its report; the first error (kernel exception, FIFO
// mismatch, watchdog) aborts the run, and every wait in the transports
// checks the abort flag so nothing hangs. A kernel that never returns cannot
// be interrupted: the launchers end the process after a grace period
// instead (docs/reliability.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/Schedule.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ppsrt {

/// Exit codes of generated executors.
enum ExitCode : int {
  ExitOk = 0,
  ExitError = 1,    ///< a kernel threw, a FIFO mismatch, a failed check
  ExitUsage = 2,    ///< bad command line
  ExitDeadlock = 3, ///< the watchdog saw no progress
};

/// What a rank is blocked on (RankStatus::waitKind).
enum class WaitKind : int32_t {
  None,      ///< running its current action
  SendMatch, ///< a send waits for the peer to post the matching receive
  RecvData,  ///< a receive waits for the peer's matching send
  Drain,     ///< all actions done; waits for outstanding comms
};

enum class Phase : int32_t {
  NotStarted,
  Starting, ///< waits for every rank to start (MPI); counts as waiting
  Running,
  Finished,
  Failed
};

/// What one rank is doing, readable from any thread.
struct RankStatus {
  std::atomic<int64_t> action{-1}; ///< index of the current action
  std::atomic<int32_t> phase{int32_t(Phase::NotStarted)};
  std::atomic<int32_t> waitKind{int32_t(WaitKind::None)};
  std::atomic<int64_t> waitAction{-1}; ///< the comm action waited on
  /// Under a stream rule: the comm action at the head of the stream the
  /// waited one is queued behind (-1: none, it is the head itself).
  std::atomic<int64_t> heldBehind{-1};
  std::atomic<int32_t> step{0};
  /// When the rank entered the kernel it is running (nowMicros()), or 0
  /// when it is not inside one.
  std::atomic<double> kernelSince{0};
};

/// Marks a rank as inside a kernel for the lifetime of the guard (the
/// kernel timeout counts from here).
class KernelClock {
public:
  explicit KernelClock(RankStatus &St);
  ~KernelClock() { St.kernelSince.store(0, std::memory_order_relaxed); }
  KernelClock(const KernelClock &) = delete;
  KernelClock &operator=(const KernelClock &) = delete;

private:
  RankStatus &St;
};

/// Thrown inside a rank when the run was aborted elsewhere.
struct Aborted : std::runtime_error {
  Aborted() : std::runtime_error("run aborted") {}
};

/// Shared by the ranks of one process.
class RunState {
public:
  explicit RunState(const ScheduleDesc &S, int32_t FirstRank, int32_t NumRanks);

  const ScheduleDesc &schedule() const { return S; }
  RankStatus &status(int32_t Rank) { return Status[Rank - FirstRank]; }
  int32_t firstRank() const { return FirstRank; }
  int32_t numRanks() const { return int32_t(Status.size()); }

  bool aborted() const { return Abort.load(std::memory_order_relaxed); }
  void throwIfAborted() const {
    if (aborted())
      throw Aborted();
  }
  /// Counts progress (an action finished, a message matched).
  void tick() { Progress.fetch_add(1, std::memory_order_relaxed); }
  uint64_t progress() const { return Progress.load(std::memory_order_relaxed); }

  /// Records the first failure and aborts the run. Later calls are ignored.
  void fail(int Code, std::string Message);
  int exitCode() const { return Code; }
  std::string errorMessage() const;

  /// One line per local rank: "rank 1 blocks at `send F0@1 -> 0` waiting
  /// for rank 0 to post `recv F0@2 <- 1`", in the lint's words; a rank
  /// inside a kernel says for how long ("rank 2 is running `F3@2` (action
  /// 7 of 12) for 12.5 s").
  std::string describe(int32_t Rank);
  std::string describeAll();

private:
  const ScheduleDesc &S;
  int32_t FirstRank;
  std::vector<RankStatus> Status;
  std::atomic<bool> Abort{false};
  std::atomic<uint64_t> Progress{0};
  mutable std::mutex Mu;
  int Code = ExitOk;
  std::string Error;
};

/// Why the watchdog fired.
struct Stall {
  /// -1: no progress for the timeout while every unfinished rank waits on
  /// communication; else the rank whose kernel ran past the kernel timeout.
  int32_t KernelRank = -1;
  /// "no rank made progress for 10 s", or "rank 2 has been running `F3@2`
  /// for 12.0 s, past the kernel timeout of 12 s (--kernel-timeout)".
  std::string Why;
};

/// Watches a RunState from its own thread: if progress() does not change for
/// Timeout seconds while a rank is still running and none is inside a
/// kernel, or a rank has been inside one kernel for KernelTimeout seconds,
/// calls OnStall once.
class Watchdog {
public:
  /// Timeout <= 0 disables the progress check; KernelTimeout <= 0 the
  /// kernel check.
  Watchdog(RunState &RS, double TimeoutSeconds, double KernelTimeoutSeconds = 0)
      : RS(RS), Timeout(TimeoutSeconds), KernelTimeout(KernelTimeoutSeconds) {}
  ~Watchdog() { stop(); }
  /// Starts the thread; OnStall runs on it.
  void start(std::function<void(const Stall &)> OnStall);
  void stop();
  bool fired() const { return Fired.load(); }

private:
  RunState &RS;
  double Timeout;
  double KernelTimeout;
  std::function<void(const Stall &)> OnStall;
  std::atomic<bool> Stop{false};
  std::atomic<bool> Fired{false};
  std::mutex Mu;
  std::condition_variable Cv;
  std::thread Thread;
};

/// Monotonic wall clock in microseconds (comparable across processes on
/// one machine).
inline double nowMicros() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch())
      .count();
}

} // namespace ppsrt
