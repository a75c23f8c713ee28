//===- Schema.h - the action schema shared by compiler and runtime --------===//
//
// One definition of each rule about actions that more than one component
// applies: the compiler (pps::ir, the passes, the simulator, the backends),
// the runtime generated executors link (ppsrt) and the executors
// themselves. Everything is generated from ActionKinds.def or written once
// here:
//
//  * the kind enum and its numbering (pps::ir::ActionKind and ppsrt::Kind
//    are this enum), the class predicates, the name tables (kind name,
//    .pps keyword, PyTorch's CSV spelling, trace category);
//  * the text form of one action ("send F3@5 -> 2");
//  * routes (which stages microbatch m traverses) and the producer rule:
//    F(m,s) needs F(m,s-1); I/B(m,s) needs I/B(m,s+1), or F(m,s) on the
//    microbatch's last stage; W(m,s) needs I(m,s); and the comm that
//    carries a cross-stage input or output;
//  * the partner rule SEND_F(m,s) <-> RECV_F(m,s+1), SEND_B(m,s) <->
//    RECV_B(m,s-1), the FIFO identity check and the one wording of a FIFO
//    mismatch;
//  * the activation memory rule (what acquires and what releases) and the
//    memory model's arithmetic (how much);
//  * the table row encoding of generated executors.
//
// Header-only, plain C++17, no dependencies: generated executors and the
// runtime include it and must not need LLVM or fmt.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pps::schema {

//===----------------------------------------------------------------------===//
// Kinds
//===----------------------------------------------------------------------===//

/// The enums the compiler and the runtime share are declared in a namespace
/// that has no functions: argument-dependent lookup on a Kind then finds
/// nothing of the schema's, so a program's own helper (say a kindName(Kind)
/// of its own) is never ambiguous with one declared here.
namespace types {
/// Action kinds, numbered in the order of ActionKinds.def. Generated
/// executors encode this number in their tables.
enum class Kind : uint8_t {
#define PPS_ACTION_KIND(Id, ...) Id,
#include "ppsrt/ActionKinds.def"
};
/// Communication model (docs/architecture.md "Communication models").
enum class CommModel : uint8_t { Rendezvous, Eager, Batched };
/// The stream rule's scope (docs/simulation.md "Streams"): None, the
/// abstract model (a rank's comms to one peer start their transfers in
/// program order and complete independently); Peer, one in-order stream
/// per (rank, peer) pair; Rank, one in-order stream per rank for all peers.
enum class StreamScope : uint8_t { None, Peer, Rank };
} // namespace types
using types::CommModel;
using types::Kind;
using types::StreamScope;

/// Number of kinds.
constexpr unsigned NumKinds = 0
// NOLINTNEXTLINE(bugprone-macro-parentheses): each row adds one to the sum
#define PPS_ACTION_KIND(...) +1
#include "ppsrt/ActionKinds.def"
    ;

enum class KindClass : uint8_t { Compute, Comm, Control, Idle };
enum class Role : uint8_t { None, Send, Recv };
enum class Direction : uint8_t { None, Forward, Backward };

/// One row of ActionKinds.def.
struct KindInfo {
  const char *Name;
  const char *Keyword;
  const char *Torch;
  KindClass Class;
  Role CommRole;
  Direction Dir;
  Kind Partner;
  int8_t PartnerDelta;
};

inline constexpr KindInfo KindTable[NumKinds] = {
#define PPS_ACTION_KIND(Id, Name, Keyword, Torch, Class, R, Dir, Partner,      \
                        Delta)                                                 \
  {Name,    Keyword,        Torch,         KindClass::Class,                   \
   Role::R, Direction::Dir, Kind::Partner, Delta},
#include "ppsrt/ActionKinds.def"
};

/// The row of K.
constexpr const KindInfo &info(Kind K) { return KindTable[unsigned(K)]; }

constexpr bool isCompute(Kind K) { return info(K).Class == KindClass::Compute; }
constexpr bool isComm(Kind K) { return info(K).Class == KindClass::Comm; }
constexpr bool isControl(Kind K) { return info(K).Class == KindClass::Control; }
constexpr bool isIdle(Kind K) { return info(K).Class == KindClass::Idle; }
constexpr bool isSend(Kind K) { return info(K).CommRole == Role::Send; }
constexpr bool isRecv(Kind K) { return info(K).CommRole == Role::Recv; }
/// F and the comms that carry its data (vs I, W, B and theirs).
constexpr bool isForward(Kind K) { return info(K).Dir == Direction::Forward; }
constexpr bool isForwardComm(Kind K) { return isComm(K) && isForward(K); }
/// B or I: the backward whose input gradient flows to the stage before.
constexpr bool isInputBackward(Kind K) { return K == Kind::B || K == Kind::I; }

/// The kind of the comm that matches K on the other rank (K for non-comms).
constexpr Kind partnerKind(Kind K) { return info(K).Partner; }
/// The stage of the comm that matches comm K on stage Stage: Stage + 1 for
/// SEND_F and RECV_B, Stage - 1 for RECV_F and SEND_B; -1 for non-comms.
constexpr int32_t partnerStage(Kind K, int32_t Stage) {
  return isComm(K) ? Stage + info(K).PartnerDelta : -1;
}

/// The kind's own name ("F", "send_f", "unshard"): JSON, trace "kind".
constexpr const char *kindName(Kind K) { return info(K).Name; }
/// The keyword the text form spells it with ("F", "send", "unshard").
constexpr const char *keyword(Kind K) { return info(K).Keyword; }
/// PyTorch's CSV spelling ("F", "SEND_F", "UNSHARD"); "" for idle.
constexpr const char *torchName(Kind K) { return info(K).Torch; }
/// Trace category: the compute's letter, "send", "recv", "control" or
/// "idle".
constexpr const char *traceCategory(Kind K) {
  return isControl(K) ? "control" : isComm(K) ? keyword(K) : kindName(K);
}
/// The kind PyTorch spells Name, if any ("" is not a kind).
inline std::optional<Kind> kindFromTorchName(std::string_view Name) {
  for (unsigned I = 0; I < NumKinds; ++I)
    if (!Name.empty() && Name == KindTable[I].Torch)
      return Kind(I);
  return std::nullopt;
}
/// PyTorch's spellings of every kind it has, ", "-separated, in order.
inline std::string torchNameList() {
  std::string Out;
  for (unsigned I = 0; I < NumKinds; ++I) {
    if (!*KindTable[I].Torch)
      continue;
    Out += Out.empty() ? "" : ", ";
    Out += KindTable[I].Torch;
  }
  return Out;
}

/// Action flag: this compute runs overlapped with the next (a compute too).
constexpr uint8_t FlagOverlapNext = 1 << 0;

//===----------------------------------------------------------------------===//
// Text form
//===----------------------------------------------------------------------===//

/// The text form of one action: "F3@5", "send F3@5 -> 2", "recv B3@6 <- 1",
/// "unshard 5", "idle". WithStage = false drops the "@stage" (a rank's only
/// stage); a comm peer < 0 (not yet known) is left out.
inline std::string actionText(Kind K, int32_t Mb, int32_t Stage, int32_t Peer,
                              bool WithStage = true) {
  std::string Out;
  auto Data = [&](const char *Letter) {
    Out += Letter;
    Out += std::to_string(Mb);
    if (WithStage) {
      Out += '@';
      Out += std::to_string(Stage);
    }
  };
  switch (info(K).Class) {
  case KindClass::Compute:
    Data(keyword(K));
    break;
  case KindClass::Comm:
    Out += keyword(K);
    Out += ' ';
    Data(isForward(K) ? "F" : "B");
    if (Peer >= 0) {
      Out += isSend(K) ? " -> " : " <- ";
      Out += std::to_string(Peer);
    }
    break;
  case KindClass::Control:
    Out += keyword(K);
    Out += ' ';
    Out += std::to_string(Stage);
    break;
  case KindClass::Idle:
    Out += keyword(K);
    break;
  }
  return Out;
}

/// "1st", "2nd", "3rd", "4th", "11th", "21st", ...
inline std::string ordinal(uint64_t N) {
  const char *Suffix = "th";
  if (N % 100 < 11 || N % 100 > 13) {
    if (N % 10 == 1)
      Suffix = "st";
    else if (N % 10 == 2)
      Suffix = "nd";
    else if (N % 10 == 3)
      Suffix = "rd";
  }
  return std::to_string(N) + Suffix;
}

//===----------------------------------------------------------------------===//
// Routes and the producer rule
//===----------------------------------------------------------------------===//

/// Which stages each microbatch traverses. Directions 1: every microbatch
/// traverses 0..S-1. Directions 2 (S and M even): microbatches [0, M/2)
/// traverse [0, S/2) and [M/2, M) traverse [S/2, S) (bidirectional
/// DualPipe). "First" and "last" stage always mean the microbatch's own.
struct Route {
  int32_t Stages = 0;
  int32_t Microbatches = 0;
  int32_t Directions = 1;

  constexpr int32_t firstStage(int32_t Mb) const {
    return Directions == 2 && Mb >= Microbatches / 2 ? Stages / 2 : 0;
  }
  constexpr int32_t lastStage(int32_t Mb) const {
    return Directions == 2 && Mb < Microbatches / 2 ? Stages / 2 - 1
                                                    : Stages - 1;
  }
  /// True if microbatch Mb traverses stage St.
  constexpr bool hasStage(int32_t Mb, int32_t St) const {
    return St >= firstStage(Mb) && St <= lastStage(Mb);
  }
};

/// What a compute waits for.
enum class Needs : uint8_t {
  Nothing,
  /// F(m, s') (the forward's output).
  F,
  /// B(m, s') or I(m, s'), whichever the schedule has (the input gradient).
  BorI,
  /// I(m, s') (W needs the intermediates I kept).
  I,
};

/// The producer of a compute's input.
struct Producer {
  Needs What = Needs::Nothing;
  int32_t Mb = -1;
  int32_t Stage = -1;
  /// The producer is on a neighbouring stage (s-1 for F, s+1 for B/I): its
  /// output may live on another rank and then reaches the compute through
  /// a send/recv pair. False for the same-stage producers (the last
  /// stage's F for its B/I, I for W).
  bool CrossStage = false;
};

/// The producer rule: F(m,s) needs F(m,s-1) (nothing on m's first stage);
/// B/I(m,s) needs B/I(m,s+1), or F(m,s) on m's last stage; W(m,s) needs
/// I(m,s). Nothing for non-computes.
constexpr Producer producerOf(Kind K, int32_t Mb, int32_t Stage,
                              const Route &R) {
  switch (K) {
  case Kind::F:
    if (Stage > R.firstStage(Mb))
      return {Needs::F, Mb, Stage - 1, true};
    return {};
  case Kind::I:
  case Kind::B:
    if (Stage < R.lastStage(Mb))
      return {Needs::BorI, Mb, Stage + 1, true};
    return {Needs::F, Mb, Stage, false};
  case Kind::W:
    return {Needs::I, Mb, Stage, false};
  default:
    return {};
  }
}

/// The stage that consumes a compute's cross-stage output (s+1 for F, s-1
/// for B/I), or -1 if none (m's last stage for F, first for B/I; W).
constexpr int32_t consumerStage(Kind K, int32_t Mb, int32_t Stage,
                                const Route &R) {
  if (K == Kind::F)
    return Stage < R.lastStage(Mb) ? Stage + 1 : -1;
  if (isInputBackward(K))
    return Stage > R.firstStage(Mb) ? Stage - 1 : -1;
  return -1;
}

/// The receive that carries a compute's cross-stage input: RECV_F(m, s)
/// for F(m, s), RECV_B(m, s) for B/I(m, s); Kind::Idle if the compute
/// needs nothing from a neighbouring stage.
constexpr Kind inputRecvKind(Kind K, int32_t Mb, int32_t Stage,
                             const Route &R) {
  if (!producerOf(K, Mb, Stage, R).CrossStage)
    return Kind::Idle;
  return K == Kind::F ? Kind::RecvF : Kind::RecvB;
}

/// The send that carries a compute's cross-stage output: SEND_F(m, s) for
/// F(m, s), SEND_B(m, s) for B/I(m, s); Kind::Idle if nothing consumes it
/// on a neighbouring stage.
constexpr Kind outputSendKind(Kind K, int32_t Mb, int32_t Stage,
                              const Route &R) {
  if (consumerStage(K, Mb, Stage, R) < 0)
    return Kind::Idle;
  return K == Kind::F ? Kind::SendF : Kind::SendB;
}

//===----------------------------------------------------------------------===//
// Matching
//===----------------------------------------------------------------------===//

/// The FIFO identity check: true if a receive (RecvKind, RecvMb, RecvStage)
/// is the partner of a send (SendKind, SendMb, SendStage). Matching is FIFO
/// per (source rank, destination rank) channel: the n-th send from a to b
/// pairs with the n-th receive at b from a, and must carry what it expects.
constexpr bool commsMatch(Kind SendKind, int32_t SendMb, int32_t SendStage,
                          Kind RecvKind, int32_t RecvMb, int32_t RecvStage) {
  return isSend(SendKind) && RecvKind == partnerKind(SendKind) &&
         RecvMb == SendMb && RecvStage == partnerStage(SendKind, SendStage);
}

/// Why a FIFO mismatch is an error, for a note or a parenthesis.
constexpr const char *FifoRule = "messages on one channel are matched in order";

/// The one wording of a FIFO mismatch (lint, simulator and runtimes): Index
/// is the pair's 0-based position on the channel; the descriptions are the
/// actions' text in backquotes (the compiler may add where to find them).
inline std::string fifoMismatchMessage(uint64_t Index, int32_t SendRank,
                                       int32_t RecvRank,
                                       const std::string &SendDesc,
                                       const std::string &RecvDesc) {
  std::string N = ordinal(Index + 1);
  return "the " + N + " send from rank " + std::to_string(SendRank) +
         " to rank " + std::to_string(RecvRank) + " is " + SendDesc +
         ", but the " + N + " receive at rank " + std::to_string(RecvRank) +
         " from rank " + std::to_string(SendRank) + " is " + RecvDesc;
}

//===----------------------------------------------------------------------===//
// Activation memory
//===----------------------------------------------------------------------===//

/// What an action does to the activations of its (microbatch, stage).
enum class MemoryEffect : uint8_t {
  None,
  /// F(m, s): the activations become live (once: an (m, s) already live
  /// is not counted again).
  Acquire,
  /// I(m, s) when a W(m, s) follows: W still needs what I kept; a memory
  /// model may let I free part of it (the chunk model frees nothing).
  ReleaseInput,
  /// The last backward of (m, s): whatever is still live is freed.
  Release,
};

/// The activation memory rule: +1 at F(m, s); released at the last
/// backward of (m, s): B, or W, or I when no W of (m, s) exists (HasW says
/// whether one does, on the same rank).
constexpr MemoryEffect memoryEffect(Kind K, bool HasW) {
  switch (K) {
  case Kind::F:
    return MemoryEffect::Acquire;
  case Kind::B:
  case Kind::W:
    return MemoryEffect::Release;
  case Kind::I:
    return HasW ? MemoryEffect::ReleaseInput : MemoryEffect::Release;
  default:
    return MemoryEffect::None;
  }
}

/// How much memory the actions of one (microbatch, stage) hold: the
/// activation memory model (`memory { F = 1; I = -0.5; W = -0.5; }` in the
/// language). F(m, s) allocates Forward; I(m, s) frees InputGrad of it when
/// a W(m, s) follows (the zero-bubble papers' I = -0.5: the input gradient
/// no longer needs the activations W does not use); the last backward frees
/// the rest, so every (m, s) returns to zero. The chunk model (the default)
/// counts one unit per live (m, s) and frees nothing at I.
struct MemoryModel {
  /// What F(m, s) allocates (> 0).
  double Forward = 1.0;
  /// What I(m, s) frees when a W(m, s) follows, 0 <= InputGrad <= Forward.
  double InputGrad = 0.0;

  /// One unit per live (m, s): the model the runtime counts by default.
  static constexpr MemoryModel chunks() { return {}; }
  constexpr bool isChunks() const { return Forward == 1.0 && InputGrad == 0.0; }
  /// What W(m, s) frees after its I: the rest.
  constexpr double weightGrad() const { return Forward - InputGrad; }
  /// What I and W add, as `memory { F = ..; I = ..; W = ..; }` writes
  /// them (<= 0; a zero is +0, never -0).
  constexpr double inputAmount() const {
    return InputGrad == 0 ? 0.0 : -InputGrad;
  }
  constexpr double weightAmount() const {
    return weightGrad() == 0 ? 0.0 : -weightGrad();
  }
  constexpr bool operator==(const MemoryModel &O) const {
    return Forward == O.Forward && InputGrad == O.InputGrad;
  }
  constexpr bool operator!=(const MemoryModel &O) const {
    return !(*this == O);
  }
};

/// The change of live memory when an action whose effect is E runs on an
/// (m, s): Live says whether (m, s) is live before it, InputDone whether
/// its I already ran (and freed its part). The arithmetic of the rule, for
/// every component that counts memory (the memory analysis, synthesis, the
/// runtimes); each keeps the per-(m, s) state itself.
constexpr double memoryDelta(const MemoryModel &M, MemoryEffect E, bool Live,
                             bool InputDone) {
  switch (E) {
  case MemoryEffect::Acquire:
    return Live ? 0.0 : M.Forward;
  case MemoryEffect::ReleaseInput:
    return Live && !InputDone ? -M.InputGrad : 0.0;
  case MemoryEffect::Release:
    return Live ? -(M.Forward - (InputDone ? M.InputGrad : 0.0)) : 0.0;
  case MemoryEffect::None:
    return 0.0;
  }
  return 0.0;
}

//===----------------------------------------------------------------------===//
// Communication models
//===----------------------------------------------------------------------===//

constexpr unsigned NumCommModels = 3;

/// "rendezvous", "eager", "batched".
constexpr const char *nameOf(CommModel C) {
  return C == CommModel::Rendezvous ? "rendezvous"
         : C == CommModel::Eager    ? "eager"
                                    : "batched";
}

constexpr unsigned NumStreamScopes = 3;

/// "none", "peer", "rank".
constexpr const char *nameOf(StreamScope S) {
  return S == StreamScope::None   ? "none"
         : S == StreamScope::Peer ? "peer"
                                  : "rank";
}

/// The stream dimension of a comm model, as NCCL runs point-to-point
/// operations (docs/simulation.md "Streams" has the sources):
///  * Scope != None: a rank's comm operations run on in-order streams (one
///    per rank, or one per peer). An operation starts once the one before
///    it on its stream has completed and the computes issued before it
///    have finished (ProcessGroupNCCL makes the comm stream wait for the
///    compute stream at issue); a receive that cannot complete holds back
///    everything behind it. A batched group (batch_isend_irecv) is one
///    operation of the stream that completes when all of its sends and
///    receives have.
///  * EagerThreshold >= 0: a send of at most that many bytes completes once
///    its data is buffered at the receiver, without waiting for the
///    receive to be posted (NCCL's connection buffers); larger sends
///    rendezvous. A message whose size is not declared (0 bytes) is taken
///    as larger than any threshold.
struct CommStream {
  StreamScope Scope = StreamScope::None;
  /// Bytes; < 0: no threshold (the matching model alone decides).
  double EagerThreshold = -1;

  constexpr bool operator==(const CommStream &O) const {
    return Scope == O.Scope && EagerThreshold == O.EagerThreshold;
  }
  constexpr bool operator!=(const CommStream &O) const { return !(*this == O); }
  constexpr bool inOrder() const { return Scope != StreamScope::None; }
};

/// The eager threshold of `model nccl`: 64 KiB (docs/simulation.md says
/// why this value and how to measure one's own).
constexpr double NcclEagerThreshold = 64 * 1024;

/// The stream rule of `model nccl`: rendezvous on one in-order stream per
/// rank, sends of up to NcclEagerThreshold bytes eager.
constexpr CommStream NcclStream{StreamScope::Rank, NcclEagerThreshold};

/// Why a comm model and a stream rule cannot go together (nullptr if they
/// can): a batched group (batch_isend_irecv) runs on the rank's one stream,
/// so `model batched` with `stream peer` says two different things.
constexpr const char *commConfigProblem(CommModel Model, const CommStream &St) {
  return Model == CommModel::Batched && St.Scope == StreamScope::Peer
             ? "a batched group (batch_isend_irecv) runs on the rank's one "
               "stream, whatever its peers: use `stream rank` with `model "
               "batched`"
             : nullptr;
}

/// True if a send of Bytes bytes completes without waiting for its receive:
/// always under the eager model, never under rendezvous or batched unless
/// the stream rule's threshold admits its size.
constexpr bool sendIsEager(CommModel Model, const CommStream &St,
                           double Bytes) {
  return Model == CommModel::Eager ||
         (St.EagerThreshold >= 0 && Bytes > 0 && Bytes <= St.EagerThreshold);
}

//===----------------------------------------------------------------------===//
// Table rows of generated executors
//===----------------------------------------------------------------------===//

namespace types {
/// One decoded action (the runtime's view: no source location).
struct Action {
  Kind kind = Kind::Idle;
  uint8_t flags = 0;
  int32_t peer = -1;
  int32_t mb = -1;
  int32_t stage = -1;

  constexpr bool overlapsNext() const { return flags & FlagOverlapNext; }
};
} // namespace types
using types::Action;

/// The comm action on the peer that matches comm action A run by rank Self:
/// for `send F3@5 -> 2` on rank 1 that is `recv F3@6 <- 1`.
constexpr Action matchingComm(const Action &A, int32_t Self) {
  Action M = A;
  M.peer = Self;
  M.flags = 0;
  M.kind = partnerKind(A.kind);
  if (isComm(A.kind))
    M.stage = partnerStage(A.kind, A.stage);
  return M;
}

/// Words per table row: {kind | flags << 4 | (peer + 1) << 8, microbatch,
/// stage}. The peer is -1 for non-comms; idle rows hold microbatch and
/// stage 0.
constexpr int RowWords = 3;
static_assert(NumKinds <= 16, "a kind must fit the row's 4 bits");

constexpr int32_t encodeWord0(Kind K, uint8_t Flags, int32_t Peer) {
  return int32_t(unsigned(K) | unsigned(Flags & 0xF) << 4 |
                 unsigned(Peer + 1) << 8);
}
/// Writes the RowWords words of one action to Out.
constexpr void encodeRow(Kind K, uint8_t Flags, int32_t Peer, int32_t Mb,
                         int32_t Stage, int32_t *Out) {
  Out[0] = encodeWord0(K, Flags, isComm(K) ? Peer : -1);
  Out[1] = isIdle(K) ? 0 : Mb;
  Out[2] = isIdle(K) ? 0 : Stage;
}
constexpr Action decodeRow(const int32_t *Row) {
  Action A;
  uint32_t W0 = uint32_t(Row[0]);
  A.kind = Kind(W0 & 0xF);
  A.flags = uint8_t((W0 >> 4) & 0xF);
  A.peer = int32_t(W0 >> 8) - 1;
  A.mb = Row[1];
  A.stage = Row[2];
  return A;
}

//===----------------------------------------------------------------------===//
// Consistency of the table
//===----------------------------------------------------------------------===//

namespace detail {
constexpr bool tableIsConsistent() {
  for (unsigned I = 0; I < NumKinds; ++I) {
    Kind K = Kind(I);
    const KindInfo &X = info(K);
    // Comms have a role and a partner of the other role, one stage away,
    // in the same direction; the partner's partner is the kind itself.
    if (isComm(K) != (X.CommRole != Role::None))
      return false;
    if (!isComm(K) && (X.Partner != K || X.PartnerDelta != 0))
      return false;
    if (isComm(K)) {
      const KindInfo &P = info(X.Partner);
      if (P.Partner != K || P.PartnerDelta != -X.PartnerDelta ||
          P.CommRole == X.CommRole || P.Dir != X.Dir ||
          (X.PartnerDelta != 1 && X.PartnerDelta != -1))
        return false;
      // Forward data flows to the next stage, gradients to the previous.
      int Down = X.Dir == Direction::Forward ? 1 : -1;
      if (X.PartnerDelta != (X.CommRole == Role::Send ? Down : -Down))
        return false;
    }
    if ((X.Dir == Direction::None) != (isControl(K) || isIdle(K)))
      return false;
  }
  return true;
}
} // namespace detail
static_assert(detail::tableIsConsistent(),
              "ActionKinds.def: a comm's partner must be the matching comm "
              "one stage downstream (forward) or upstream (backward)");
static_assert(partnerStage(Kind::SendF, 5) == 6 &&
                  partnerStage(Kind::SendB, 5) == 4 &&
                  partnerKind(Kind::SendF) == Kind::RecvF,
              "SEND_F(m, s) <-> RECV_F(m, s+1), SEND_B(m, s) <-> "
              "RECV_B(m, s-1)");
namespace detail {
constexpr bool rowRoundTrips() {
  int32_t Row[RowWords] = {};
  encodeRow(Kind::SendB, FlagOverlapNext, 7, 3, 4, Row);
  Action A = decodeRow(Row);
  return A.kind == Kind::SendB && A.flags == FlagOverlapNext && A.peer == 7 &&
         A.mb == 3 && A.stage == 4;
}
} // namespace detail
static_assert(detail::rowRoundTrips(), "the row encoding round-trips");

} // namespace pps::schema
