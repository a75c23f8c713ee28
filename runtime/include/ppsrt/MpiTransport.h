//===- MpiTransport.h - the MPI transport: one process per rank -----------===//
//
// Data messages travel on a private duplicate of MPI_COMM_WORLD and are
// received with MPI_ANY_TAG, so MPI's non-overtaking rule gives exactly the
// FIFO matching per (source, destination) of DESIGN.md; the tag carries the
// sender's (direction, microbatch, stage) so a receive can check that its
// FIFO partner is the send it expects. Sends are MPI_Issend under rendezvous
// (complete once the receive is posted, like NCCL) and MPI_Isend under eager;
// receives are MPI_Irecv, posted at the RECV action and waited on at the
// consumer. Waits poll (MPI_Test) so that the watchdog and stall notices from
// other ranks are handled while blocked: when any rank stalls, every rank
// prints its own status line and the stalled rank aborts the job.
//
// Only the main thread calls MPI (MPI_THREAD_FUNNELED).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/RunState.h"
#include "ppsrt/Transport.h"

#include <mpi.h>

#include <atomic>
#include <vector>

namespace ppsrt {

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

  /// Polls an arbitrary MPI request with the same stall handling as wait().
  void waitRaw(MPI_Request &Req);
  /// Set by the watchdog thread; the main thread acts on it while waiting.
  void stallDetected() { Stalled.store(true); }
  double watchdogSeconds = 10;

private:
  int64_t slot();
  void poll();
  /// The polling loop of wait() and waitRaw(): returns once IsDone() is true,
  /// polling for stall notices and throwing Aborted if the run is aborted.
  template <class Done> void waitUntil(Done IsDone);
  [[noreturn]] void onStall();

  RunState &RS;
  MPI_Comm Data, Ctrl;
  bool Rendezvous;
  int Me = 0, Size = 0;
  int TagUb = 32767;
  std::vector<MPI_Request> Reqs;
  std::vector<int64_t> FreeSlots;
  std::vector<uint64_t> SendSeq, RecvSeq;
  std::atomic<bool> Stalled{false};
  bool Reported = false;
  bool NoticeSeen = false;
  std::vector<int> NoticeBuf;
  MPI_Request NoticeReq = MPI_REQUEST_NULL;
};

} // namespace ppsrt
