//===- Executor.h - walks one rank's action table -------------------------===//
//
// One Executor per rank. It walks the rank's table in order:
//  * compute F/I/W/B -> the user kernels, with the StageIO of (m, s);
//  * recv -> posts a non-blocking receive; the wait happens just before the
//    compute that consumes it (deferred wait);
//  * send -> posts the send; under rendezvous waits for the match, under
//    eager completes at the end of the step;
//  * batched comm model: a maximal run of consecutive comm actions is posted
//    together and completes when all of it has matched;
//  * under a stream rule (ExecOptions::stream, ppsrt/CommStreams.h) every
//    comm is issued to the rank's in-order streams and the walk goes on:
//    sends are waited for at the end of the step, receives by their
//    consumer; a batched run is one operation of the stream;
//  * a send whose size the stream rule's eager threshold admits (the
//    schedule's declared message bytes, as the compiler's timing reads
//    them) does not wait for its receive;
//  * overlap pairs and control actions go to custom handlers when installed
//    (Kernels::installHandlers), else run their built-in behaviour.
// The StageIO of (m, s) is created at F(m, s) and released at its last
// backward (B, or W after I, or I when no W follows); peakActivations() is the
// measured peak of live StageIOs, peakMemory() the same walk counted in the
// schedule's memory model (ScheduleDesc::memory: I may free part of what F
// allocated), both to be compared with the memory analysis.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/CommStreams.h"
#include "ppsrt/Kernels.h"
#include "ppsrt/Profile.h"
#include "ppsrt/RunState.h"
#include "ppsrt/Schedule.h"
#include "ppsrt/Trace.h"
#include "ppsrt/Transport.h"

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

namespace ppsrt {

class Executor;

/// Replaces the built-in behaviour of one action kind. Call
/// Executor::runDefault(A) from inside to keep it (e.g. to wrap it).
using Handler = std::function<void(const Action &, Executor &)>;
/// Runs an overlap pair (first, second). Without one, the pair runs one
/// after the other.
using OverlapHandler =
    std::function<void(const Action &, const Action &, Executor &)>;

/// A message outside the schedule's table (Executor::exchange).
struct ExtraMessage {
  int32_t peer = -1;
  /// What it carries, checked against the receiver's as a FIFO mismatch
  /// would be: a non-comm action, e.g. `reduce_grad 3` for the gradients of
  /// stage 3's weights.
  Action what;
  /// Send: the payload; receive: filled by exchange().
  Buffer buf;
  /// Bytes the receiver expects; 0: any size (a framed message).
  size_t bytes = 0;
};

struct ExecOptions {
  CommModel comm = CommModel::Rendezvous;
  /// The stream rule (the schema's): in-order streams and the eager
  /// threshold.
  pps::schema::CommStream stream;
  /// Wait for each receive at the RECV action itself instead of at its
  /// consumer: the lint's model, where a receive blocks in program order.
  bool blockingRecv = false;
  bool trace = false;
  /// Record the profile's events (ppsrt/Profile.h): kernel times, message
  /// times, activation bytes; B of odd microbatches runs as I then W.
  bool profile = false;
  /// Common start of the run (nowMicros()); trace times are relative to it.
  double startMicros = 0;
};

class Executor {
public:
  Executor(const ScheduleDesc &S, int32_t Rank, Transport &T, Kernels &K,
           RunState &RS, const ExecOptions &O);
  ~Executor();

  void setHandler(Kind K, Handler H) { Handlers[size_t(K)] = std::move(H); }
  void setOverlapHandler(OverlapHandler H) { Overlap = std::move(H); }
  /// Sets the common start time (nowMicros()) trace times are relative to.
  void setStart(double Micros) { O.startMicros = Micros; }

  /// Runs the rank's whole table once (one training step). On an error it
  /// records it in the RunState and throws Aborted.
  void runStep(int Step);
  /// The built-in behaviour of one action.
  void runDefault(const Action &A);

  /// Moves messages outside the schedule's table through the run's
  /// transport, between steps (from Kernels::endStep: e.g. summing the
  /// gradients of stages that hold copies of the same weights): posts every
  /// receive, then every send, then waits for all of them. They follow the
  /// step's own messages on each channel, so FIFO order holds as long as
  /// each pair of ranks lists the messages between them in the same order.
  /// On an error it records it in the RunState and throws Aborted.
  void exchange(std::vector<ExtraMessage> &Sends,
                std::vector<ExtraMessage> &Recvs);

  /// The StageIO of (Mb, Stage), or null if not live.
  StageIO *io(int32_t Mb, int32_t Stage);
  Kernels &kernels() { return K; }
  int32_t rank() const { return Rank; }
  const ScheduleDesc &schedule() const { return S; }
  int64_t liveActivations() const { return Live; }
  int64_t peakActivations() const { return Peak; }
  /// Live and peak memory in the memory model's units (ScheduleDesc::
  /// memory); with the chunk model the same as the activation counts.
  double liveMemory() const { return LiveMemory; }
  double peakMemory() const { return PeakMemory; }
  /// Sum of the losses of the last stage's microbatches in the last step.
  double lossSum() const { return LossSum; }
  /// Wall-clock time (since ExecOptions::startMicros) the last step ended.
  double finishMicros() const { return FinishMicros; }
  std::vector<TraceEvent> &trace() { return Events; }
  std::vector<ProfileEvent> &profile() { return Profiled; }

private:
  void runAction(int64_t Index, const Action &A);
  void compute(const Action &A);
  /// Runs one kernel call with the rank marked as inside a kernel (the
  /// watchdog's kernel timeout counts from here).
  template <class Fn> void runKernel(Fn &&Call) {
    KernelClock Clock(Status);
    Call();
  }
  void postComm(const Action &A);
  void waitRequest(int32_t Req, WaitKind W);
  void drainSends();
  void drainBatch();
  /// Issues the batched run of comms (Batch) as one stream operation.
  void issueBatch();
  /// Records a completed send (trace, profile) and frees it.
  void sendDone(int32_t R);
  int32_t newRequest();
  void freeRequest(int32_t Req);
  size_t key(int32_t Mb, int32_t Stage) const;
  StageIO *acquire(int32_t Mb, int32_t Stage);
  void release(int32_t Mb, int32_t Stage);
  /// Counts an action's memory effect on (m, s) (its key) in the model.
  void countMemory(size_t Key, int32_t Stage, pps::schema::MemoryEffect E);
  Buffer takeInput(const Action &A, bool Gradient);
  [[noreturn]] void error(const std::string &Msg);
  void record(int64_t Index, int32_t Lane, double T0, double T1,
              int32_t Flow = 0, uint64_t FlowId = 0);
  /// Runs one compute kernel, timed for the profile.
  template <class Fn>
  void timed(const Action &A, Kind K, uint8_t Flags, Fn &&Call,
             const StageIO *IO = nullptr) {
    if (!O.profile) {
      runKernel(Call);
      return;
    }
    double T0 = nowMicros(), C0 = threadCpuMicros();
    runKernel(Call);
    ProfileEvent E = profileEvent(A, K, Flags);
    E.cpu = threadCpuMicros() - C0;
    E.start = T0 - O.startMicros;
    E.end = nowMicros() - O.startMicros;
    if (IO)
      E.bytes = IO->activationBytes;
    Profiled.push_back(E);
  }
  ProfileEvent profileEvent(const Action &A, Kind K, uint8_t Flags) const;
  /// Records a completed send or receive for the profile.
  void profileComm(const Request &Q);

  const ScheduleDesc &S;
  int32_t Rank;
  Transport &T;
  Kernels &K;
  RunState &RS;
  RankStatus &Status;
  ExecOptions O;
  std::array<Handler, NumKinds> Handlers;
  OverlapHandler Overlap;

  const int32_t *Rows = nullptr;
  int64_t Count = 0;
  int64_t Current = -1;
  Action PairFirst, PairNext; ///< the overlap pair being run
  const Action *PairSecond = nullptr;
  int Step = 0;
  std::vector<int32_t> LocalIndex; ///< stage -> index among this rank's stages
  int32_t LocalStages = 0;

  // Per (microbatch, local stage).
  std::vector<StageIO *> Slots;
  std::vector<std::unique_ptr<StageIO>> Pool;
  std::vector<StageIO *> FreeIO;
  std::vector<Buffer> OutF, OutB; ///< outputs waiting for send/local use
  std::vector<uint8_t> HasOutF, HasOutB;
  std::vector<int32_t> RecvF, RecvB; ///< posted receive per (m, s), or -1
  std::vector<uint8_t> HasW;         ///< a W(m, s) is in the table
  std::vector<uint8_t> InputDone;    ///< I(m, s) freed its part

  /// A deque: requests stay where they are while the transport or the
  /// streams hold them.
  std::deque<Request> Requests;
  std::vector<int32_t> FreeRequests;
  std::vector<int32_t> OpenSends; ///< eager sends not yet complete
  std::vector<int32_t> Batch;     ///< comm requests of the current batch
  /// The rank's in-order streams, under a stream rule.
  std::unique_ptr<CommStreams> Streams;
  /// Declared message bytes (ScheduleDesc) of activations and gradients:
  /// whether a send is eager under the stream rule's threshold.
  bool EagerF = false, EagerB = false;

  int64_t Live = 0, Peak = 0;
  double LiveMemory = 0, PeakMemory = 0;
  double LossSum = 0;
  double FinishMicros = 0;
  std::vector<TraceEvent> Events;
  std::vector<ProfileEvent> Profiled;
  std::vector<int64_t> ProbeCount; ///< per local stage: B's run so far
};

} // namespace ppsrt
