//===- MpiTransport.h - the MPI transport: one process per rank -----------===//
//
// Data messages travel on a private duplicate of MPI_COMM_WORLD and are
// received with MPI_ANY_TAG, so MPI's non-overtaking rule gives exactly the
// FIFO matching per (source, destination) of docs/architecture.md; the tag
// carries the sender's (direction, microbatch, stage) so a receive can check
// that its FIFO partner is the send it expects. Sends are MPI_Issend under
// rendezvous (complete once the receive is posted, like NCCL) and MPI_Isend
// under eager; receives are MPI_Irecv, posted at the RECV action and waited
// on at the consumer. Waits poll (MPI_Test) so that the watchdog and stall
// notices from other ranks are handled while blocked.
//
// A stall ends every rank within a bounded time, whoever saw it first: the
// rank whose watchdog fired sends a notice to every other rank, collects
// their status lines for NoticeGraceSeconds, prints the report (naming the
// ranks that did not answer: cut off by the network, stopped, dead, or
// inside a kernel) and aborts the job. A rank that got a notice answers it
// and, if the job has not ended NoticeDeadlineSeconds later (the aborting
// rank or the launcher is cut off), ends itself. Every abort has a backstop
// that ends the process if MPI_Abort itself does not return.
//
// Messages of a size the kernels fix in advance (Kernels::messageBytes > 0)
// are one MPI message of exactly that size. Variable-size messages
// (messageBytes == 0, e.g. tensors of any dtype and shape) are *framed*: the
// receive posted at the RECV action is for a small frame (a magic word, the
// Buffer's header, the body size, and the body itself when it fits); a larger
// body follows as a second message on a third communicator, tagged with the
// message's position on its channel, and its receive is posted as soon as
// the frame has arrived (by whichever wait or test of this rank sees it
// first), so a framed send completes as soon as the frame would have
// alone. The frame carries the FIFO tag, so matching and its check are the
// same as for plain messages.
//
// One thread at a time calls MPI (MPI_THREAD_SERIALIZED): the main thread,
// or under a stream rule the rank's stream thread (CommStreams), which
// alone moves the step's messages while the main thread runs kernels.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/RunState.h"
#include "ppsrt/Transport.h"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace ppsrt {

/// Ends this process with Code: flushes, calls MPI_Abort, and ends the
/// process anyway (_exit) if MPI_Abort has not within a few seconds (a
/// launcher cut off by the network cannot kill the job).
[[noreturn]] void abortJob(int Code);

class MpiTransport : public Transport {
public:
  /// Comm must be a communicator of S.ranks processes private to the
  /// transport (it is duplicated for control messages).
  MpiTransport(RunState &RS, MPI_Comm Comm, bool Rendezvous);
  ~MpiTransport() override;
  const char *name() const override { return "mpi"; }
  void postSend(int32_t Self, Request &R) override;
  void postRecv(int32_t Self, Request &R) override;
  bool test(int32_t Self, Request &R) override;
  void wait(int32_t Self, Request &R) override;
  void waitAny(int32_t Self, Request *const *Rs, size_t N,
               const std::atomic<bool> &Interrupt) override;

  /// Polls an arbitrary MPI request with the same stall handling as wait().
  void waitRaw(MPI_Request &Req);
  /// Set by the watchdog thread; the main thread acts on it while waiting.
  void stallDetected(std::string Why) {
    StallWhy = std::move(Why);
    Stalled.store(true, std::memory_order_release);
  }
  double watchdogSeconds = 10;
  /// The ranks of the communicator that share this machine
  /// (MPI_COMM_TYPE_SHARED).
  int ranksHere() const { return Here; }

  /// How long the rank that saw a stall waits for the others' lines.
  static constexpr double NoticeGraceSeconds = 1.5;
  /// How long after a notice a rank waits for the job to be ended before
  /// it ends itself.
  static constexpr double NoticeDeadlineSeconds = 6;

  /// Bytes of a frame (framed messages): a body up to about this size is
  /// sent inside it.
  static constexpr size_t FrameBytes = 1024;

private:
  /// One outstanding operation. Framed ones have a frame and maybe a body.
  struct Slot {
    MPI_Request req = MPI_REQUEST_NULL;  ///< the message, or the frame
    MPI_Request body = MPI_REQUEST_NULL; ///< framed: the separate body
    bool framed = false;
    bool recv = false;
    bool frameDone = false; ///< framed receive: the frame has arrived
    Action action;          ///< the local comm action (for messages)
    int32_t peer = -1;
    uint64_t seq = 0;
    Buffer frame; ///< framed: the frame (sent, or received)
    Buffer data;  ///< framed receive: the body (then the whole result)
  };
  int64_t slot();
  void freeSlot(int64_t S);
  [[noreturn]] void mpiFailed(int32_t Self, int Rc, const MPI_Status &St,
                              const Action &A, size_t Expected);
  /// Checks that a completed receive was meant for this receive (its tag).
  void checkTag(int32_t Self, const Action &A, int32_t Peer, uint64_t Seq,
                int Tag);
  /// A framed receive's frame arrived: check and parse it, post the body.
  void onFrame(int32_t Self, Slot &S, const MPI_Status &St);
  /// Tests the frames of open framed receives (posts their bodies).
  void progress();
  void poll();
  /// Answers a stall notice that arrived (status: NoticeReq's).
  void answerNotice(const MPI_Status &St);
  /// The polling loop of wait() and waitRaw(): returns once IsDone() is true,
  /// polling for stall notices and throwing Aborted if the run is aborted.
  template <class Done> void waitUntil(Done IsDone);
  /// The pause after the I-th look of a polling loop (Since: when it began
  /// to yield).
  void pause(uint64_t I, std::chrono::steady_clock::time_point &Since) const;
  [[noreturn]] void onStall();
  /// A notice came NoticeDeadlineSeconds ago and the job is still running.
  [[noreturn]] void endAfterNotice();

  RunState &RS;
  MPI_Comm Data, Ctrl, Body;
  bool Rendezvous;
  int Me = 0, Size = 0;
  int TagUb = 32767;
  int Here = 1;
  /// More ranks share this machine than this process has cores
  /// (moreRanksThanCores): waits sleep instead of yielding (pause()).
  bool Oversubscribed = false;
  std::vector<Slot> Slots;
  std::vector<int64_t> FreeSlots;
  std::vector<int64_t> OpenFrames; ///< framed receives whose frame is due
  std::vector<uint64_t> SendSeq, RecvSeq;
  std::atomic<bool> Stalled{false};
  std::string StallWhy; ///< written before Stalled is set
  int NoticeFrom = -1;  ///< the first rank that sent a notice
  double NoticeAt = 0;  ///< when it arrived (nowMicros)
  std::string ReplyText;
  std::vector<MPI_Request> Replies; ///< answers sent (never waited on)
  std::vector<int> NoticeBuf;
  MPI_Request NoticeReq = MPI_REQUEST_NULL;
};

} // namespace ppsrt
