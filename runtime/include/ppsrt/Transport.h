//===- Transport.h - point-to-point transports behind one interface -------===//
//
// A transport moves Buffers between ranks. Matching is FIFO per (source,
// destination) rank pair: the n-th send from a to b meets the n-th receive
// at b from a (docs/architecture.md, "Communication models"). Receives are
// non-blocking: the executor posts them at the RECV action and waits just
// before the consuming compute (deferred wait). Under the rendezvous model a
// send completes only once the peer has posted the matching receive, as NCCL
// send/recv do, so a schedule that hangs on GPUs hangs here too (and the
// watchdog reports it); under eager a send completes at once, and so does
// one marked eager (Request::eager: the stream rule's threshold).
//
// Every blocking wait checks RunState::aborted() and throws Aborted, so an
// error on one rank never leaves another hanging.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/Buffer.h"
#include "ppsrt/RunState.h"
#include "ppsrt/Schedule.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace ppsrt {

/// One outstanding send or receive.
struct Request {
  Action action;            ///< the local comm action
  int64_t actionIndex = -1; ///< its index in the rank's table
  int32_t peer = -1;
  Buffer buf; ///< send: the payload; receive: filled on completion
  /// Size the receiver expects (Kernels::messageBytes), set on both sides;
  /// 0: variable, the MPI transport then frames the message (header + size).
  size_t bytes = 0;
  uint64_t seq = 0; ///< position in the channel's FIFO order
  bool done = false;
  double postMicros = 0;
  double doneMicros = 0;
  /// When the rank began to block on it (-1: it was complete when first
  /// waited for); the profile's message times need it.
  double waitMicros = -1;
  int64_t impl = -1; ///< transport-private (MPI request slot)
  /// A send outside the schedule's table (Executor::exchange), whose
  /// action names what it carries (e.g. `reduce_grad 3`) and is no send.
  bool extraSend = false;
  /// A send that completes without waiting for its receive, whatever the
  /// transport's model (the stream rule's eager threshold admits its size).
  bool eager = false;
  /// Set by CommStreams, under its lock, once the request completed on its
  /// stream (the executor reads it there, not `done`, which the stream's
  /// thread writes).
  bool completed = false;

  /// True if the request sends (a send action, or an extra send).
  bool sending() const { return isSend(action.kind) || extraSend; }
};

class Transport {
public:
  virtual ~Transport();
  virtual const char *name() const = 0;
  /// Posts a send of R.buf to R.peer from rank Self.
  virtual void postSend(int32_t Self, Request &R) = 0;
  /// Posts a receive from R.peer at rank Self.
  virtual void postRecv(int32_t Self, Request &R) = 0;
  /// Non-blocking: true once R is complete (a receive then holds R.buf).
  virtual bool test(int32_t Self, Request &R) = 0;
  /// Blocks until R is complete; throws Aborted if the run is aborted.
  virtual void wait(int32_t Self, Request &R) = 0;
  /// Blocks until one of the N requests is complete, or Interrupt is set;
  /// throws Aborted if the run is aborted (CommStreams' thread).
  virtual void waitAny(int32_t Self, Request *const *Rs, size_t N,
                       const std::atomic<bool> &Interrupt) = 0;
  /// Wakes a waitAny of rank Self so it looks at Interrupt (a transport
  /// whose waitAny polls need not).
  virtual void interrupt(int32_t Self) { (void)Self; }
};

/// In-process transport: one thread per rank, one FIFO channel per ordered
/// rank pair, buffers handed over by move (zero copy).
class ThreadsTransport : public Transport {
public:
  ThreadsTransport(RunState &RS, int32_t Ranks, bool Rendezvous);
  ~ThreadsTransport() override;
  const char *name() const override { return "threads"; }
  void postSend(int32_t Self, Request &R) override;
  void postRecv(int32_t Self, Request &R) override;
  bool test(int32_t Self, Request &R) override;
  void wait(int32_t Self, Request &R) override;
  void waitAny(int32_t Self, Request *const *Rs, size_t N,
               const std::atomic<bool> &Interrupt) override;
  void interrupt(int32_t Self) override;

private:
  /// Counts posts, so waitAny sleeps until something it may wait for
  /// happened (its requests are on different channels).
  void progressed();
  struct Msg {
    Buffer buf;
    Action sent; ///< the sender's action, checked against the receive
    bool taken = false;
  };
  struct Channel {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Msg> msgs; ///< sent, not yet taken; msgs[0] has seq base
    uint64_t base = 0;
    int waiters = 0;
    std::atomic<uint64_t> sent{0};
    std::atomic<uint64_t> posted{0};
  };
  Channel &channel(int32_t From, int32_t To) {
    return *Channels[size_t(From) * size_t(Ranks) + size_t(To)];
  }
  bool complete(int32_t Self, Request &R);
  void take(int32_t Self, Request &R);

  RunState &RS;
  int32_t Ranks;
  bool Rendezvous;
  std::vector<std::unique_ptr<Channel>> Channels;
  std::mutex ProgressMu;
  std::condition_variable ProgressCv;
  uint64_t Progress = 0; ///< guarded by ProgressMu
  std::atomic<int> ProgressWaiters{0};
};

/// The FIFO identity check: a receive must be matched by the send that
/// carries (kind, microbatch, stage) it expects; a message outside the
/// table (Executor::exchange, named by a non-comm action) by one with the
/// same action. Seq is the position of the
/// pair on its channel. Returns an empty string if they match, else the
/// error message (in the lint's words).
std::string checkMatch(int32_t SendRank, const Action &Sent, int32_t RecvRank,
                       const Action &Recv, uint64_t Seq);

} // namespace ppsrt
