//===- CommStreams.h - a rank's in-order comm streams, as NCCL runs them --===//
//
// Under a stream rule (pps::schema::CommStream, Scope != None) a rank's
// sends and receives run on in-order streams, one per rank or one per peer,
// as ProcessGroupNCCL runs point-to-point operations: an operation starts
// once the one before it on its stream has completed, so a receive that
// cannot complete holds back every operation behind it (the head-of-line
// delay of PyTorch #188833), and a batched group (batch_isend_irecv) is one
// operation that completes when all of its sends and receives have. The
// schema's comment on CommStream is the rule; the compiler's timing engine
// times the same rule (docs/simulation.md, "Streams").
//
// The executor issues an operation when it reaches it in its table and
// goes on: sends are waited for at the end of the step, receives by the
// compute that consumes them. The streams advance on a thread of their own
// (a GPU's comm stream runs while the compute stream computes), which alone
// calls the transport while a step runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/RunState.h"
#include "ppsrt/Schedule.h"
#include "ppsrt/Transport.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace ppsrt {

class CommStreams {
public:
  /// Rule.Scope must not be None.
  CommStreams(int32_t Ranks, int32_t Rank, Transport &T, RunState &RS,
              pps::schema::CommStream Rule);
  ~CommStreams();
  CommStreams(const CommStreams &) = delete;
  CommStreams &operator=(const CommStreams &) = delete;

  /// Queues one operation on its stream: one request, or a batched group
  /// (all its requests complete together). The requests must stay where
  /// they are until they completed; the caller does not touch them until
  /// completed() says so.
  void issue(std::vector<Request *> Group);
  /// True once R completed on its stream.
  bool completed(const Request &R);
  /// Blocks until R completed; throws Aborted if the run is aborted. While
  /// it waits, HeldBehind is the action index of the operation at the head
  /// of R's stream when that is not R's (-1 otherwise), for the watchdog.
  void wait(const Request &R, std::atomic<int64_t> &HeldBehind);

private:
  struct Op {
    std::vector<Request *> Reqs;
    bool Started = false;
  };
  struct Stream {
    std::deque<Op> Ops;
  };
  size_t streamOf(const Request &R) const;
  void run();
  /// Starts the head operation of every stream that has one not started;
  /// returns the requests of started heads that are not yet complete.
  void startHeads(std::vector<Request *> &Open);
  /// Completes every head whose requests are all complete; true if any.
  bool finishHeads();

  int32_t Rank;
  Transport &T;
  RunState &RS;
  pps::schema::CommStream Rule;

  std::mutex Mu;
  std::condition_variable Done; ///< the executor waits here
  std::condition_variable Work; ///< the stream thread waits here
  std::vector<Stream> Streams;  ///< one (rank scope) or one per peer
  bool Stop = false;
  std::atomic<bool> NewWork{false};
  std::thread Thread;
};

} // namespace ppsrt
