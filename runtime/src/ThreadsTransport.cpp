//===- ThreadsTransport.cpp - in-process FIFO channels --------------------===//
//
// One channel per ordered rank pair. A send appends its buffer (moved, not
// copied) and bumps `sent`; a receive takes a ticket from `posted`. The n-th
// receive is complete once sent > n and takes message n; under rendezvous
// the n-th send is complete once posted > n. Waits spin briefly (the common
// case on an idle core is a hand-off within microseconds), then sleep on the
// channel's condition variable with a timeout so an abort is always seen.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/Transport.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

namespace ppsrt {

Transport::~Transport() = default;

std::string checkMatch(int32_t SendRank, const Action &Sent, int32_t RecvRank,
                       const Action &Recv, uint64_t Seq) {
  if (pps::schema::commsMatch(Sent.kind, Sent.mb, Sent.stage, Recv.kind,
                              Recv.mb, Recv.stage))
    return {};
  // Messages outside the table carry the same (non-comm) action both ends.
  if (!isComm(Sent.kind) && Sent.kind == Recv.kind && Sent.mb == Recv.mb &&
      Sent.stage == Recv.stage)
    return {};
  return fmt::format(
      "{} ({}) [fifo-mismatch]",
      pps::schema::fifoMismatchMessage(Seq, SendRank, RecvRank,
                                       "`" + formatAction(Sent) + "`",
                                       "`" + formatAction(Recv) + "`"),
      pps::schema::FifoRule);
}

ThreadsTransport::ThreadsTransport(RunState &RS, int32_t Ranks, bool Rendezvous)
    : RS(RS), Ranks(Ranks), Rendezvous(Rendezvous) {
  Channels.reserve(size_t(Ranks) * size_t(Ranks));
  for (int64_t I = 0, E = int64_t(Ranks) * Ranks; I < E; ++I)
    Channels.push_back(std::make_unique<Channel>());
}

ThreadsTransport::~ThreadsTransport() = default;

void ThreadsTransport::postSend(int32_t Self, Request &R) {
  Channel &C = channel(Self, R.peer);
  bool Wake;
  {
    std::lock_guard<std::mutex> L(C.mu);
    R.seq = C.sent.load(std::memory_order_relaxed);
    C.msgs.push_back(Msg{std::move(R.buf), R.action, false});
    C.sent.store(R.seq + 1, std::memory_order_release);
    Wake = C.waiters > 0;
  }
  if (Wake)
    C.cv.notify_all();
  R.done = !Rendezvous || R.eager;
  progressed();
}

void ThreadsTransport::postRecv(int32_t Self, Request &R) {
  Channel &C = channel(R.peer, Self);
  bool Wake;
  {
    std::lock_guard<std::mutex> L(C.mu);
    R.seq = C.posted.load(std::memory_order_relaxed);
    C.posted.store(R.seq + 1, std::memory_order_release);
    Wake = C.waiters > 0;
  }
  if (Wake)
    C.cv.notify_all();
  R.done = false;
  progressed();
}

void ThreadsTransport::progressed() {
  if (ProgressWaiters.load(std::memory_order_acquire) == 0)
    return;
  {
    std::lock_guard<std::mutex> L(ProgressMu);
    ++Progress;
  }
  ProgressCv.notify_all();
}

void ThreadsTransport::interrupt(int32_t) {
  {
    std::lock_guard<std::mutex> L(ProgressMu);
    ++Progress;
  }
  ProgressCv.notify_all();
}

void ThreadsTransport::take(int32_t Self, Request &R) {
  Channel &C = channel(R.peer, Self);
  std::string Mismatch;
  {
    std::lock_guard<std::mutex> L(C.mu);
    Msg &M = C.msgs[size_t(R.seq - C.base)];
    Mismatch = checkMatch(R.peer, M.sent, Self, R.action, R.seq);
    R.buf = std::move(M.buf);
    M.taken = true;
    while (!C.msgs.empty() && C.msgs.front().taken) {
      C.msgs.pop_front();
      ++C.base;
    }
  }
  R.done = true;
  if (!Mismatch.empty()) {
    RS.fail(ExitError, Mismatch);
    throw Aborted();
  }
}

bool ThreadsTransport::complete(int32_t Self, Request &R) {
  if (R.done)
    return true;
  if (R.sending()) {
    if (channel(Self, R.peer).posted.load(std::memory_order_acquire) > R.seq)
      R.done = true;
    return R.done;
  }
  if (channel(R.peer, Self).sent.load(std::memory_order_acquire) > R.seq) {
    take(Self, R);
    return true;
  }
  return false;
}

bool ThreadsTransport::test(int32_t Self, Request &R) {
  return complete(Self, R);
}

void ThreadsTransport::waitAny(int32_t Self, Request *const *Rs, size_t N,
                               const std::atomic<bool> &Interrupt) {
  // The requests are on different channels: sleep until some post (or
  // interrupt) happened since the last look, so a rank's stream thread
  // takes no core while it waits. The count is read before the look, so a
  // post between the look and the sleep is not missed; the timeout is a
  // backstop for aborts.
  while (true) {
    ProgressWaiters.fetch_add(1, std::memory_order_acq_rel);
    uint64_t Seen;
    {
      std::lock_guard<std::mutex> L(ProgressMu);
      Seen = Progress;
    }
    bool Ready = Interrupt.load(std::memory_order_acquire);
    for (size_t K = 0; K < N && !Ready; ++K)
      Ready = complete(Self, *Rs[K]);
    if (!Ready && !RS.aborted()) {
      std::unique_lock<std::mutex> L(ProgressMu);
      ProgressCv.wait_for(L, std::chrono::milliseconds(10), [&] {
        return Progress != Seen || RS.aborted() ||
               Interrupt.load(std::memory_order_acquire);
      });
    }
    ProgressWaiters.fetch_sub(1, std::memory_order_acq_rel);
    RS.throwIfAborted();
    if (Ready)
      return;
  }
}

void ThreadsTransport::wait(int32_t Self, Request &R) {
  if (complete(Self, R))
    return;
  // Spin a little: a peer that is about to post answers within microseconds.
  for (int I = 0; I < 2000; ++I) {
    if (complete(Self, R))
      return;
    if (I % 64 == 63)
      std::this_thread::yield();
  }
  bool Send = R.sending();
  Channel &C = Send ? channel(Self, R.peer) : channel(R.peer, Self);
  while (true) {
    {
      std::unique_lock<std::mutex> L(C.mu);
      ++C.waiters;
      while (!(Send ? C.posted.load() > R.seq : C.sent.load() > R.seq) &&
             !RS.aborted())
        C.cv.wait_for(L, std::chrono::milliseconds(10));
      --C.waiters;
    }
    RS.throwIfAborted();
    if (complete(Self, R))
      return;
  }
}

} // namespace ppsrt
