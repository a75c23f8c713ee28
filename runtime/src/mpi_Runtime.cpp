//===- mpi_Runtime.cpp - the MPI transport (pps_runtime_mpi) --------------===//
#include "ppsrt/Main.h"
#include "ppsrt/MpiTransport.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <unistd.h>

#ifdef PPSRT_KEEP_SHARED_OBJECTS
// Sanitized builds only (PPS_SANITIZE, .ci/sanitize): Open MPI loads its
// components (mca_*.so) with dlopen and unloads them in MPI_Finalize, and
// the allocations they keep until exit by design are then reported by
// LeakSanitizer with frames in no module, which .ci/lsan.supp cannot name.
// With every shared object kept loaded, the reports name mca_*.so and the
// suppressions hold; a leak with a pps frame is still reported. This
// definition overrides the C library's for the whole process (the
// executable's symbols come first), so it is in the MPI transport, which
// every MPI executor links, and never in a release build.
extern "C" int dlclose(void *) noexcept { return 0; }
#endif

namespace ppsrt {

static constexpr int NoticeTag = 1;
/// A rank's status line, answering a notice.
static constexpr int ReplyTag = 2;
static constexpr int ReplyBytes = 512;
/// How long abortJob lets MPI_Abort try before ending the process itself.
static constexpr double AbortBackstopSeconds = 3;

void abortJob(int Code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::thread([Code] {
    std::this_thread::sleep_for(
        std::chrono::duration<double>(AbortBackstopSeconds));
    std::fflush(stderr);
    _exit(Code);
  }).detach();
  MPI_Abort(MPI_COMM_WORLD, Code);
  _exit(Code);
}

/// The tag a message carries: the receive it is meant for, hashed into the
/// legal tag range (direction, microbatch, stage of the receive; a message
/// outside the table, named by a control action, its own class).
static int matchTag(const Action &Recv, int32_t Stages, int TagUb) {
  uint64_t Class = Recv.kind == Kind::RecvB ? 1 : isControl(Recv.kind) ? 2 : 0;
  uint64_t Key = (uint64_t(uint32_t(Recv.mb)) * uint64_t(Stages + 1) +
                  uint64_t(uint32_t(Recv.stage))) *
                     4 +
                 Class;
  return int(Key % uint64_t(TagUb));
}

MpiTransport::MpiTransport(RunState &RS, MPI_Comm Comm, bool Rendezvous)
    : RS(RS), Rendezvous(Rendezvous) {
  MPI_Comm_dup(Comm, &Data);
  MPI_Comm_dup(Comm, &Ctrl);
  MPI_Comm_dup(Comm, &Body);
  // Errors (e.g. a message longer than the receive the kernels sized) come
  // back as codes and are reported with the action, not as an abort.
  MPI_Comm_set_errhandler(Data, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(Body, MPI_ERRORS_RETURN);
  MPI_Comm_rank(Data, &Me);
  MPI_Comm_size(Data, &Size);
  int *Ub = nullptr, Flag = 0;
  MPI_Comm_get_attr(Data, MPI_TAG_UB, &Ub, &Flag);
  if (Flag && Ub)
    TagUb = *Ub;
  SendSeq.assign(size_t(Size), 0);
  RecvSeq.assign(size_t(Size), 0);
  NoticeBuf.assign(1, 0);
  MPI_Comm Local;
  MPI_Comm_split_type(Comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &Local);
  MPI_Comm_size(Local, &Here);
  MPI_Comm_free(&Local);
  Oversubscribed = moreRanksThanCores(Here);
  MPI_Irecv(NoticeBuf.data(), 1, MPI_INT, MPI_ANY_SOURCE, NoticeTag, Ctrl,
            &NoticeReq);
}

MpiTransport::~MpiTransport() {
  if (NoticeReq != MPI_REQUEST_NULL) {
    MPI_Cancel(&NoticeReq);
    MPI_Request_free(&NoticeReq);
  }
  MPI_Comm_free(&Body);
  MPI_Comm_free(&Ctrl);
  MPI_Comm_free(&Data);
}

namespace {
/// The fixed part of a frame; the Buffer's header and (if it fits) the body
/// follow it.
struct FrameHead {
  uint32_t magic;
  uint32_t headerBytes;
  uint64_t bodyBytes;
  uint32_t inlineBody;
  uint32_t reserved;
};
constexpr uint32_t FrameMagic = 0x66737070; // "ppsf"
} // namespace

/// The tag of a framed message's separate body: its position on the channel
/// (the frame carries the FIFO check, the body only has to find its frame).
static int bodyTag(uint64_t Seq, int TagUb) {
  return int(Seq % uint64_t(TagUb));
}

/// The bytes a Buffer sends: its payload's, else its own.
static const void *sendBytes(const Buffer &B, size_t &Bytes) {
  if (B.payload())
    return B.payload()->contiguousBytes(Bytes);
  Bytes = B.bytes();
  return B.data();
}

int64_t MpiTransport::slot() {
  if (!FreeSlots.empty()) {
    int64_t S = FreeSlots.back();
    FreeSlots.pop_back();
    return S;
  }
  Slots.emplace_back();
  return int64_t(Slots.size() - 1);
}

void MpiTransport::freeSlot(int64_t I) {
  Slot &S = Slots[size_t(I)];
  S.req = S.body = MPI_REQUEST_NULL;
  S.frame.reset();
  S.data = Buffer();
  FreeSlots.push_back(I);
}

void MpiTransport::postSend(int32_t Self, Request &R) {
  R.impl = slot();
  Slot &S = Slots[size_t(R.impl)];
  R.seq = SendSeq[size_t(R.peer)]++;
  S.recv = false;
  S.framed = R.bytes == 0;
  S.action = R.action;
  S.peer = R.peer;
  S.seq = R.seq;
  R.done = false;
  int Tag = matchTag(matchingComm(R.action, Me), RS.schedule().stages, TagUb);
  size_t Bytes = 0;
  const void *Src = sendBytes(R.buf, Bytes);
  if (Bytes > size_t(std::numeric_limits<int>::max())) {
    RS.fail(ExitError,
            fmt::format("rank {}: `{}` sends {} bytes, more than one MPI "
                        "message carries",
                        Self, formatAction(R.action), Bytes));
    throw Aborted();
  }
  auto issue = [&](const void *Data_, size_t N, MPI_Request &Req) {
    if (Rendezvous && !R.eager)
      MPI_Issend(Data_, int(N), MPI_BYTE, R.peer, Tag, Data, &Req);
    else
      MPI_Isend(Data_, int(N), MPI_BYTE, R.peer, Tag, Data, &Req);
  };
  if (!S.framed) {
    issue(Src, Bytes, S.req);
    return;
  }
  std::string Header =
      R.buf.payload() ? R.buf.payload()->header() : R.buf.header();
  if (Header.size() > MaxHeaderBytes) {
    RS.fail(ExitError,
            fmt::format("rank {}: `{}`: the message header has {} bytes, "
                        "more than {}",
                        Self, formatAction(R.action), Header.size(),
                        MaxHeaderBytes));
    throw Aborted();
  }
  bool Inline = sizeof(FrameHead) + Header.size() + Bytes <= FrameBytes;
  FrameHead H{FrameMagic, uint32_t(Header.size()), uint64_t(Bytes),
              Inline ? 1u : 0u, 0};
  S.frame.resizeBytes(sizeof(FrameHead) + Header.size() + (Inline ? Bytes : 0));
  std::memcpy(S.frame.data(), &H, sizeof(H));
  if (!Header.empty())
    std::memcpy(S.frame.data() + sizeof(H), Header.data(), Header.size());
  if (Inline && Bytes)
    std::memcpy(S.frame.data() + sizeof(H) + Header.size(), Src, Bytes);
  issue(S.frame.data(), S.frame.bytes(), S.req);
  // The body goes out at once; its receive is posted when the frame lands.
  if (!Inline)
    MPI_Isend(Src, int(Bytes), MPI_BYTE, R.peer, bodyTag(R.seq, TagUb), Body,
              &S.body);
}

void MpiTransport::postRecv(int32_t, Request &R) {
  R.impl = slot();
  Slot &S = Slots[size_t(R.impl)];
  R.seq = RecvSeq[size_t(R.peer)]++;
  S.recv = true;
  S.framed = R.bytes == 0;
  S.frameDone = false;
  S.action = R.action;
  S.peer = R.peer;
  S.seq = R.seq;
  R.done = false;
  // MPI_ANY_TAG: matching is by order (non-overtaking), the tag is checked.
  if (!S.framed) {
    R.buf.resizeBytes(R.bytes);
    MPI_Irecv(R.buf.data(), int(R.bytes), MPI_BYTE, R.peer, MPI_ANY_TAG, Data,
              &S.req);
    return;
  }
  S.frame.resizeBytes(FrameBytes);
  MPI_Irecv(S.frame.data(), int(FrameBytes), MPI_BYTE, R.peer, MPI_ANY_TAG,
            Data, &S.req);
  OpenFrames.push_back(R.impl);
}

void MpiTransport::mpiFailed(int32_t Self, int Rc, const MPI_Status &St,
                             const Action &A, size_t Expected) {
  char Text[MPI_MAX_ERROR_STRING];
  int Len = 0;
  int Code = Rc == MPI_ERR_IN_STATUS ? St.MPI_ERROR : Rc;
  MPI_Error_string(Code, Text, &Len);
  RS.fail(
      ExitError,
      fmt::format("rank {}: `{}` failed in MPI: {}{}", Self, formatAction(A),
                  std::string(Text, size_t(Len)),
                  isRecv(A.kind) && Expected
                      ? fmt::format(" (the kernels expect {} bytes)", Expected)
                      : std::string()));
  throw Aborted();
}

void MpiTransport::checkTag(int32_t Self, const Action &A, int32_t Peer,
                            uint64_t Seq, int Tag) {
  int Expected = matchTag(A, RS.schedule().stages, TagUb);
  if (Tag == Expected)
    return;
  // Decode the tag back into the receive the sender meant (exact unless
  // the tag range wrapped) and say it in the lint's words.
  uint64_t Key = uint64_t(Tag);
  uint64_t Stages1 = uint64_t(RS.schedule().stages) + 1;
  Action Meant;
  Meant.kind = Key % 4 == 1   ? Kind::RecvB
               : Key % 4 == 2 ? Kind::ReduceGrad
                              : Kind::RecvF;
  Meant.stage = int32_t((Key / 4) % Stages1);
  Meant.mb = int32_t((Key / 4) / Stages1);
  Meant.peer = Peer;
  Action Sent = matchingComm(Meant, Self);
  Sent.peer = Self;
  RS.fail(ExitError, checkMatch(Peer, Sent, Self, A, Seq));
  throw Aborted();
}

void MpiTransport::onFrame(int32_t Self, Slot &S, const MPI_Status &St) {
  S.frameDone = true;
  checkTag(Self, S.action, S.peer, S.seq, St.MPI_TAG);
  int Count = 0;
  MPI_Get_count(&St, MPI_BYTE, &Count);
  FrameHead H{};
  if (size_t(Count) >= sizeof(H))
    std::memcpy(&H, S.frame.data(), sizeof(H));
  size_t Have = size_t(Count) - std::min(size_t(Count), sizeof(H));
  if (size_t(Count) < sizeof(H) || H.magic != FrameMagic ||
      H.headerBytes > Have ||
      (H.inlineBody && H.bodyBytes > Have - H.headerBytes)) {
    RS.fail(ExitError,
            fmt::format("rank {}: `{}` received a {}-byte message from rank "
                        "{} that is not a frame: the sender's kernels give "
                        "this message a fixed size, this rank's a variable "
                        "one (Kernels::messageBytes must agree on all ranks)",
                        Self, formatAction(S.action), Count, S.peer));
    throw Aborted();
  }
  const unsigned char *P = S.frame.data() + sizeof(H);
  S.data.setHeader(
      std::string(reinterpret_cast<const char *>(P), H.headerBytes));
  S.data.resizeBytes(size_t(H.bodyBytes));
  if (H.inlineBody) {
    if (H.bodyBytes)
      std::memcpy(S.data.data(), P + H.headerBytes, size_t(H.bodyBytes));
    return;
  }
  int Rc = MPI_Irecv(S.data.data(), int(H.bodyBytes), MPI_BYTE, S.peer,
                     bodyTag(S.seq, TagUb), Body, &S.body);
  if (Rc != MPI_SUCCESS)
    mpiFailed(Self, Rc, St, S.action, 0);
}

void MpiTransport::progress() {
  for (size_t I = 0; I < OpenFrames.size();) {
    Slot &S = Slots[size_t(OpenFrames[I])];
    int Flag = 0;
    MPI_Status St;
    int Rc = MPI_Test(&S.req, &Flag, &St);
    if (Rc != MPI_SUCCESS)
      mpiFailed(Me, Rc, St, S.action, 0);
    if (!Flag) {
      ++I;
      continue;
    }
    OpenFrames[I] = OpenFrames.back();
    OpenFrames.pop_back();
    onFrame(Me, S, St);
  }
}

bool MpiTransport::test(int32_t Self, Request &R) {
  if (R.done)
    return true;
  // Frames that arrived for other receives get their bodies posted now.
  progress();
  Slot &S = Slots[size_t(R.impl)];
  int Flag = 0;
  MPI_Status St;
  if (S.framed) {
    // The frame (posted bodies first) and then the body: an MPI_Test on a
    // finished (null) request reports it complete.
    if (S.recv && !S.frameDone)
      return false;
    for (MPI_Request *Q : {&S.req, &S.body}) {
      int Rc = MPI_Test(Q, &Flag, &St);
      if (Rc != MPI_SUCCESS)
        mpiFailed(Self, Rc, St, R.action, 0);
      if (!Flag)
        return false;
    }
    R.done = true;
    if (S.recv)
      R.buf = std::move(S.data);
    freeSlot(R.impl);
    R.impl = -1;
    return true;
  }
  int Rc = MPI_Test(&S.req, &Flag, &St);
  if (Rc != MPI_SUCCESS)
    mpiFailed(Self, Rc, St, R.action, R.bytes);
  if (!Flag)
    return false;
  R.done = true;
  freeSlot(R.impl);
  R.impl = -1;
  if (R.sending())
    return true;
  checkTag(Self, R.action, R.peer, R.seq, St.MPI_TAG);
  int Count = 0;
  MPI_Get_count(&St, MPI_BYTE, &Count);
  if (size_t(Count) != R.bytes) {
    RS.fail(ExitError,
            fmt::format("rank {}: `{}` received {} bytes, the kernels "
                        "expect {}",
                        Self, formatAction(R.action), Count, R.bytes));
    throw Aborted();
  }
  return true;
}

void MpiTransport::answerNotice(const MPI_Status &St) {
  // Answer every rank that asks (two may have seen the stall at once);
  // the first notice starts this rank's deadline.
  if (NoticeFrom < 0) {
    NoticeFrom = St.MPI_SOURCE;
    NoticeAt = nowMicros();
    ReplyText = RS.describe(Me).substr(0, ReplyBytes - 1);
  }
  Replies.emplace_back();
  MPI_Isend(ReplyText.data(), int(ReplyText.size()), MPI_CHAR, St.MPI_SOURCE,
            ReplyTag, Ctrl, &Replies.back());
  MPI_Irecv(NoticeBuf.data(), 1, MPI_INT, MPI_ANY_SOURCE, NoticeTag, Ctrl,
            &NoticeReq);
}

void MpiTransport::poll() {
  int Flag = 0;
  MPI_Status St;
  MPI_Test(&NoticeReq, &Flag, &St);
  if (Flag)
    answerNotice(St);
  for (MPI_Request &Q : Replies)
    if (Q != MPI_REQUEST_NULL)
      MPI_Test(&Q, &Flag, MPI_STATUS_IGNORE);
  if (NoticeFrom >= 0 && nowMicros() - NoticeAt > NoticeDeadlineSeconds * 1e6)
    endAfterNotice();
  if (Stalled.load(std::memory_order_acquire) && NoticeFrom < 0)
    onStall();
}

void MpiTransport::onStall() {
  fmt::print(stderr,
             "error: watchdog: rank {} {}; the schedule is stuck (the ranks "
             "that can be reached report where they stand):\n  {}\n",
             Me, StallWhy, RS.describe(Me));
  std::fflush(stderr);
  // Ask every other rank for its line, and collect what comes back within
  // the grace period.
  static int From;
  From = Me;
  std::vector<MPI_Request> Sent(size_t(Size), MPI_REQUEST_NULL);
  std::vector<MPI_Request> Got(size_t(Size), MPI_REQUEST_NULL);
  std::vector<std::vector<char>> Lines(size_t(Size),
                                       std::vector<char>(ReplyBytes, 0));
  std::vector<int> Answered(size_t(Size), 0);
  for (int R = 0; R < Size; ++R) {
    if (R == Me)
      continue;
    MPI_Isend(&From, 1, MPI_INT, R, NoticeTag, Ctrl, &Sent[size_t(R)]);
    MPI_Irecv(Lines[size_t(R)].data(), ReplyBytes - 1, MPI_CHAR, R, ReplyTag,
              Ctrl, &Got[size_t(R)]);
  }
  auto End = std::chrono::steady_clock::now() +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                 std::chrono::duration<double>(NoticeGraceSeconds));
  int Missing = Size - 1;
  while (Missing > 0 && std::chrono::steady_clock::now() < End) {
    int Flag = 0;
    MPI_Status St;
    for (int R = 0; R < Size; ++R) {
      if (R == Me)
        continue;
      if (Sent[size_t(R)] != MPI_REQUEST_NULL)
        MPI_Test(&Sent[size_t(R)], &Flag, MPI_STATUS_IGNORE);
      if (!Answered[size_t(R)] &&
          MPI_Test(&Got[size_t(R)], &Flag, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
          Flag) {
        Answered[size_t(R)] = 1;
        --Missing;
      }
    }
    // Another rank that saw the stall too gets this rank's line.
    if (MPI_Test(&NoticeReq, &Flag, &St) == MPI_SUCCESS && Flag)
      answerNotice(St);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string Report;
  for (int R = 0; R < Size; ++R) {
    if (R == Me)
      continue;
    if (Answered[size_t(R)])
      Report += fmt::format("  {}\n", Lines[size_t(R)].data());
    else
      Report += fmt::format("  rank {} did not answer within {} s (cut off "
                            "from rank {}, stopped, dead, or inside a "
                            "kernel)\n",
                            R, NoticeGraceSeconds, Me);
  }
  fmt::print(stderr, "{}", Report);
  abortJob(ExitDeadlock);
}

void MpiTransport::endAfterNotice() {
  fmt::print(stderr,
             "error: rank {}: rank {} reported a stall {:.1f} s ago and the "
             "job has not ended (rank {} or the launcher may be cut off); "
             "ending this rank:\n  {}\n",
             Me, NoticeFrom, (nowMicros() - NoticeAt) / 1e6, NoticeFrom,
             RS.describe(Me));
  abortJob(ExitDeadlock);
}

/// Pause policy of the polling loops: spin, then yield the core (the peer may
/// need it), and only after 10 ms of waiting sleep briefly, so a long wait
/// does not burn a core but a short one stays fast. With more ranks on this
/// machine than cores (Open MPI's --oversubscribe) a rank sleeps as soon as
/// its spin is over: one that yields is scheduled again at once when the
/// other threads wait too, so eight yielding ranks on two cores keep both
/// busy, and a kernel that wakes (a sleep kernel, a stream thread's notify)
/// waits for a core behind them. Open MPI's own progress engine yields when
/// idle under oversubscription for the same reason (mpi_yield_when_idle).
void MpiTransport::pause(uint64_t I,
                         std::chrono::steady_clock::time_point &Since) const {
  if (I < 128)
    return;
  if (!Oversubscribed) {
    if (I == 128)
      Since = std::chrono::steady_clock::now();
    if (I % 256 != 0 || std::chrono::steady_clock::now() - Since <
                            std::chrono::milliseconds(10)) {
      std::this_thread::yield();
      return;
    }
  }
  std::this_thread::sleep_for(std::chrono::microseconds(50));
}

template <class Done> void MpiTransport::waitUntil(Done IsDone) {
  std::chrono::steady_clock::time_point Since;
  for (uint64_t I = 0;; ++I) {
    if (IsDone())
      return;
    if (I % 64 == 63)
      poll();
    if (RS.aborted())
      throw Aborted();
    pause(I, Since);
  }
}

void MpiTransport::waitRaw(MPI_Request &Req) {
  waitUntil([&] {
    int Flag = 0;
    MPI_Test(&Req, &Flag, MPI_STATUS_IGNORE);
    return Flag != 0;
  });
}

void MpiTransport::wait(int32_t Self, Request &R) {
  waitUntil([&] { return test(Self, R); });
}

void MpiTransport::waitAny(int32_t Self, Request *const *Rs, size_t N,
                           const std::atomic<bool> &Interrupt) {
  waitUntil([&] {
    for (size_t K = 0; K < N; ++K)
      if (test(Self, *Rs[K]))
        return true;
    return Interrupt.load(std::memory_order_acquire);
  });
}

} // namespace ppsrt
