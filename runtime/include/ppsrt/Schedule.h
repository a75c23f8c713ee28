//===- Schedule.h - the action tables of generated executors --------------===//
//
// A generated executor (ppsc emit --target=cpp) describes its schedule with
// plain constant data: the topology, the cost model and, per rank, a compact
// table of actions (three 32-bit words each, so a million actions compile in
// seconds). This header decodes them. It mirrors the IR conventions of
// docs/architecture.md: comm actions name the *local* compute they serve,
// SEND_F(m, s) matches RECV_F(m, s+1) and SEND_B(m, s) matches RECV_B(m, s-1),
// matched in FIFO order per (source, destination) rank pair.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace ppsrt {

/// Action kinds, numbered as pps::ir::ActionKind (the emitter relies on it).
enum class Kind : uint8_t {
  F,
  I,
  W,
  B,
  SendF,
  RecvF,
  SendB,
  RecvB,
  Unshard,
  Reshard,
  ReduceGrad,
  Idle,
};
constexpr unsigned NumKinds = unsigned(Kind::Idle) + 1;

inline bool isCompute(Kind K) { return K <= Kind::B; }
inline bool isSend(Kind K) { return K == Kind::SendF || K == Kind::SendB; }
inline bool isRecv(Kind K) { return K == Kind::RecvF || K == Kind::RecvB; }
inline bool isComm(Kind K) { return K >= Kind::SendF && K <= Kind::RecvB; }
inline bool isControl(Kind K) {
  return K >= Kind::Unshard && K <= Kind::ReduceGrad;
}

/// Communication model (docs/architecture.md "Communication models").
enum class CommModel : uint8_t { Rendezvous, Eager, Batched };

/// Flag bit: this compute runs overlapped with the next one.
constexpr uint8_t FlagOverlapNext = 1;

/// One decoded action.
struct Action {
  Kind kind = Kind::Idle;
  uint8_t flags = 0;
  int32_t peer = -1;
  int32_t mb = -1;
  int32_t stage = -1;

  bool overlapsNext() const { return flags & FlagOverlapNext; }
};

/// Encoding of one table row: {kind | flags << 4 | (peer + 1) << 8, mb, stage}.
constexpr int RowWords = 3;
inline int32_t encodeWord0(Kind K, uint8_t Flags, int32_t Peer) {
  return int32_t(unsigned(K) | unsigned(Flags & 0xF) << 4 |
                 unsigned(Peer + 1) << 8);
}
inline Action decodeRow(const int32_t *Row) {
  Action A;
  uint32_t W0 = uint32_t(Row[0]);
  A.kind = Kind(W0 & 0xF);
  A.flags = uint8_t((W0 >> 4) & 0xF);
  A.peer = int32_t(W0 >> 8) - 1;
  A.mb = Row[1];
  A.stage = Row[2];
  return A;
}

/// One rank's action table: Count rows of RowWords words.
struct RankTable {
  const int32_t *rows;
  int64_t count;
};

/// Compute costs of one stage, in time units.
struct StageCost {
  double F, I, W, B;
};

/// Everything a generated executor knows about its schedule.
struct ScheduleDesc {
  const char *name;   ///< pipeline name (already escaped for C++ strings)
  const char *source; ///< source file it was compiled from
  int32_t ranks;
  int32_t stages;
  int32_t microbatches;
  const int32_t *stageToRank; ///< stages entries
  const StageCost *stageCost; ///< stages entries
  double overlapCost;         ///< time of an overlap pair; < 0 = sum
  double latency;             ///< time units per message
  double bandwidthBytesPerMs; ///< 0 = infinite
  double activationBytes;
  double gradientBytes;
  CommModel comm;
  const RankTable *rankTables;  ///< ranks entries
  const int64_t *predictedPeak; ///< ranks entries: the memory analysis
  double predictedMakespan;     ///< time units; < 0 if unknown
  /// 1: every microbatch traverses all stages; 2: microbatches [0, M/2)
  /// traverse stages [0, S/2) and the rest [S/2, S) (bidirectional).
  int32_t directions = 1;
};

/// The first and last stage microbatch Mb traverses.
inline int32_t firstStage(const ScheduleDesc &S, int32_t Mb) {
  return S.directions == 2 && Mb >= S.microbatches / 2 ? S.stages / 2 : 0;
}
inline int32_t lastStage(const ScheduleDesc &S, int32_t Mb) {
  return S.directions == 2 && Mb < S.microbatches / 2 ? S.stages / 2 - 1
                                                      : S.stages - 1;
}

/// Cost of one compute action in time units.
double computeCost(const ScheduleDesc &S, const Action &A);

/// The text form of an action, as the .pps printer and the lint write it:
/// "F3@5", "send F3@5 -> 2", "recv B3@6 <- 1", "unshard 5", "idle".
std::string formatAction(const Action &A);

/// The comm action on the peer that matches comm action A run by rank Self:
/// for `send F3@5 -> 2` on rank 1 that is `recv F3@6 <- 1`.
Action matchingComm(const Action &A, int32_t Self);

/// The comm action that carries the input a compute action needs from
/// another rank (RECV_F(m, s) for F(m, s), RECV_B(m, s) for I/B(m, s)), with
/// Kind::Idle if the compute needs nothing received.
Action inputRecvOf(const ScheduleDesc &S, const Action &Compute);

const char *commModelName(CommModel C);

} // namespace ppsrt
