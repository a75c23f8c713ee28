//===- Schedule.h - the pps IR: per-rank ordered action lists -------------===//
//
// A compiled schedule is, per rank, an ordered list of compact actions
// (20 bytes each, no per-action heap allocation) plus the topology
// (stage -> rank), the cost model and a reference to the source map.
//
// Conventions every pass relies on:
//  * Compute F/I/W/B(m, s): microbatch m, stage s.
//  * An overlap pair is two consecutive compute actions; the first carries
//    ActionFlags::OverlapNext ("overlap(a, b)" in the text form).
//  * Comm actions name the *local* compute they serve, as PyTorch does:
//      SEND_F(m, s) -> peer   sends the output of F(m, s) to rank_of(s+1)
//      RECV_F(m, s) <- peer   receives the input of F(m, s) from rank_of(s-1)
//      SEND_B(m, s) -> peer   sends the input-gradient of B/I(m, s) to
//      rank_of(s-1) RECV_B(m, s) <- peer   receives the gradient B/I(m, s)
//      needs from rank_of(s+1)
//    so SEND_F(m, s) matches RECV_F(m, s+1), SEND_B(m, s) matches RECV_B(m,
//    s-1).
//  * Routes: microbatch m traverses stages Topo.firstStage(m) ..
//    Topo.lastStage(m) (all stages unless Topo.Directions == 2); "first" and
//    "last" stage always mean the microbatch's own.
//  * Control UNSHARD/RESHARD/REDUCE_GRAD(s): Microbatch = -1.
//  * IDLE is an explicit bubble (a no-op for execution); its length in time
//    units is idleTime().
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/support/SourceManager.h"
#include "ppsrt/Schema.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace pps::ir {

/// The action kinds: the schema's (runtime/include/ppsrt/ActionKinds.def),
/// so the compiler and the generated executors cannot number them
/// differently.
using ActionKind = schema::Kind;
constexpr unsigned NumActionKinds = schema::NumKinds;

/// The most actions a schedule may hold unless the user raises the limit
/// (--max-actions), sends and receives included: 2^24, some 16.7M. An
/// action takes 20 bytes in the IR and about 65 in lint and sim, so a
/// schedule at the limit is evaluated in about 350 MB and simulated in
/// about 1.1 GB. The front ends stop emitting at it, and every pass that
/// adds actions (insert-comms, align-bubbles, fsdp) checks what it would
/// build before building it.
constexpr uint64_t DefaultMaxActions = uint64_t(1) << 24;

namespace ActionFlags {
enum : uint8_t {
  None = 0,
  /// This compute runs overlapped with the next action (also a compute).
  OverlapNext = schema::FlagOverlapNext,
};
} // namespace ActionFlags

// The class predicates (isCompute, isComm, isSend, isRecv, isControl,
// isForwardComm: F's comms vs the backward's) are the schema's.
using schema::isComm;
using schema::isCompute;
using schema::isControl;
using schema::isForwardComm;
using schema::isRecv;
using schema::isSend;

/// The kind's own name: "F", "send_f", "unshard", ... (JSON, traces).
inline llvm::StringRef actionKindName(ActionKind K) {
  return schema::kindName(K);
}
/// PyTorch's spelling: "F", "SEND_F", "UNSHARD", ...; "" for idle.
inline llvm::StringRef actionKindTorchName(ActionKind K) {
  return schema::torchName(K);
}

struct Action {
  ActionKind Kind = ActionKind::Idle;
  uint8_t Flags = ActionFlags::None;
  uint16_t Reserved = 0;
  int32_t Microbatch = -1;
  int32_t Stage = -1;
  int32_t Peer = -1; // comm: the other rank; IDLE: bit pattern of a float
  LocId Loc = NoLoc;

  static Action compute(ActionKind K, int32_t Mb, int32_t Stage,
                        LocId Loc = NoLoc) {
    return Action{K, 0, 0, Mb, Stage, -1, Loc};
  }
  static Action comm(ActionKind K, int32_t Mb, int32_t Stage, int32_t Peer,
                     LocId Loc = NoLoc) {
    return Action{K, 0, 0, Mb, Stage, Peer, Loc};
  }
  static Action control(ActionKind K, int32_t Stage, LocId Loc = NoLoc) {
    return Action{K, 0, 0, -1, Stage, -1, Loc};
  }
  static Action idle(float Time, LocId Loc = NoLoc) {
    Action A{ActionKind::Idle, 0, 0, -1, -1, 0, Loc};
    std::memcpy(&A.Peer, &Time, sizeof(float));
    return A;
  }

  float idleTime() const {
    float T;
    std::memcpy(&T, &Peer, sizeof(float));
    return T;
  }
  bool overlapsNext() const { return Flags & ActionFlags::OverlapNext; }

  /// Same kind, microbatch, stage, peer and flags (locations ignored).
  bool sameAs(const Action &O) const {
    return Kind == O.Kind && Flags == O.Flags && Microbatch == O.Microbatch &&
           Stage == O.Stage && Peer == O.Peer;
  }
};
static_assert(sizeof(Action) == 20, "actions must stay compact");

/// The text form of one action, as the lowered .pps spells it: "F3@5",
/// "send F3@5 -> 2", "recv B3@6 <- 1", "unshard 5", "idle", "idle(2.5)".
/// WithStage = false drops the "@stage" (a rank's only stage); a peer < 0
/// (not yet known) is left out. One spelling for the printer, the passes'
/// and the simulator's messages.
std::string actionText(const Action &A, bool WithStage = true);

enum class Placement : uint8_t { Loop, V, Explicit };
/// The comm models and the stream rule (the schema's, shared with the
/// runtime).
using CommModel = schema::CommModel;
using CommStream = schema::CommStream;
using StreamScope = schema::StreamScope;

llvm::StringRef placementName(Placement P);
llvm::StringRef commModelName(CommModel C);
llvm::StringRef streamScopeName(StreamScope S);
/// Why a comm model and stream rule cannot go together ("" if they can):
/// batched groups run on the rank's one stream, so `model batched` with
/// `stream peer` says two different things.
std::string commConfigProblem(CommModel C, const CommStream &St);
/// The comm model as messages name it: "rendezvous model", "nccl model"
/// (the preset), "rendezvous model with one stream per peer and sends of
/// up to 1024 bytes eager".
std::string commDescription(CommModel C, const CommStream &St);
/// True if (C, St) is what `model nccl;` sets.
bool isNcclPreset(CommModel C, const CommStream &St);

/// Ranks, stages, microbatches and where each stage lives.
struct Topology {
  int32_t Ranks = 0;
  int32_t Stages = 0;
  int32_t Microbatches = 0;
  Placement Place = Placement::Loop;
  /// Routes through the stages. 1: every microbatch traverses 0..S-1.
  /// 2 (S and M even): microbatches [0, M/2) traverse [0, S/2) and
  /// microbatches [M/2, M) traverse [S/2, S) (bidirectional DualPipe).
  int32_t Directions = 1;
  llvm::SmallVector<int32_t, 16> StageToRank;

  /// The routes as the schema states them (producer rule, comm kinds).
  schema::Route route() const { return {Stages, Microbatches, Directions}; }
  /// The first and last stage microbatch Mb traverses.
  int32_t firstStage(int32_t Mb) const { return route().firstStage(Mb); }
  int32_t lastStage(int32_t Mb) const { return route().lastStage(Mb); }
  /// True if microbatch Mb traverses stage St.
  bool hasStage(int32_t Mb, int32_t St) const {
    return route().hasStage(Mb, St);
  }

  int32_t rankOf(int32_t Stage) const { return StageToRank[Stage]; }
  /// Stages per rank (V in the language); 1 if stages do not divide evenly.
  int32_t chunks() const {
    return Ranks > 0 && Stages % Ranks == 0 ? Stages / Ranks : 1;
  }
  /// The stages a rank holds, ascending.
  llvm::SmallVector<int32_t, 4> stagesOf(int32_t Rank) const;
  /// The chunk-th stage (ascending) of a rank, or -1.
  int32_t stageOf(int32_t Rank, int32_t Chunk) const;

  /// Fills StageToRank for Loop or V placement. Returns false (leaving it
  /// empty) if V placement is asked for with stages not a multiple of ranks.
  bool place(Placement P);
};

/// Cost of each compute kind for one stage, in time units.
struct StageCost {
  double F = 1.0;
  double I = 1.0;
  double W = 1.0;
  double B = 2.0;
};

/// The cost model. Time is in abstract units; when bandwidth is given, one
/// unit is one millisecond (so bytes / bandwidth is converted to units).
struct CostModel {
  StageCost Default;
  /// Per-stage overrides; empty, or one entry per stage.
  llvm::SmallVector<StageCost, 8> PerStage;
  /// Time of an overlap(a, b) pair; unset means the sum of the two.
  std::optional<double> Overlap;
  /// Per-stage overlap times (`overlap[stage s] = t`), keyed by the stage
  /// of the pair's first compute, as the seed simulators key an overlapped
  /// operation by its first operation's stage; empty, or one entry per
  /// stage, unset where the stage has none (Overlap applies there).
  llvm::SmallVector<std::optional<double>, 0> StageOverlap;
  double Latency = 0.0;           // time units per message
  double BandwidthBytesPerMs = 0; // 0 = infinite
  double ActivationBytes = 0;     // bytes per activation message
  double GradientBytes = -1;      // bytes per gradient message; <0 = same
  bool AsyncComm = true;          // comm overlaps compute (vs blocking)

  const StageCost &stage(int32_t S) const {
    return PerStage.empty() ? Default : PerStage[S];
  }
  double computeCost(ActionKind K, int32_t S) const;
  /// Bytes of one message of the given kind (0: not declared).
  double messageBytes(ActionKind CommKind) const {
    return isForwardComm(CommKind) || GradientBytes < 0 ? ActivationBytes
                                                        : GradientBytes;
  }
  /// Time of overlap(First, Second): the first stage's overlap time, else
  /// Overlap, else the sum of the two computes' costs. Every component that
  /// times an overlap pair reads it here.
  double overlapCost(const Action &First, const Action &Second) const;
  /// The overlap time given for a pair whose first compute is on stage S
  /// (per stage, else Overlap), or none: the pair costs the sum.
  std::optional<double> overlapTime(int32_t S) const;
  /// True if some overlap time is given (Overlap or a per-stage one).
  bool hasOverlapTime() const;
  /// Time for one message of the given kind, in time units.
  double messageTime(ActionKind CommKind) const;
};

/// Per-rank ordered action list.
struct RankProgram {
  std::vector<Action> Actions;
};

/// Options of the FSDP annotation pass, stored with the schedule so the
/// text form can say them.
struct FsdpConfig {
  bool Enabled = false;
  int32_t Prefetch = 1;
};

/// `schedule synth(memory: N, ...)`: the front end records the request and
/// leaves the rank programs empty; the synth pass fills them in.
struct SynthRequest {
  int64_t MemoryLimit = 0;
  /// Extra named arguments as written (e.g. "exact" = 1), sorted by name.
  llvm::SmallVector<std::pair<std::string, int64_t>, 2> Args;
  LocId Loc = NoLoc;
};

/// The schedule's activation memory: the memory model of each stage and
/// the unit its amounts and the limit share (`memory { F = 1; I = -0.5; }`,
/// or per stage in bytes: `memory { F[stage 0] = 48 MiB; limit 2 GiB; }`).
/// Stages not given their own model take Default; with no per-stage model
/// every stage counts by Default. pps/analysis/Memory.h counts by it.
struct MemorySpec {
  schema::MemoryModel Default;
  /// Empty, or one model per stage.
  std::vector<schema::MemoryModel> Stages;
  /// The amounts and the limit are bytes (a byte unit was written), not
  /// abstract units.
  bool Bytes = false;

  MemorySpec() = default;
  /// M for every stage, in units (implicit: a model is a uniform spec).
  MemorySpec(const schema::MemoryModel &M) : Default(M) {}
  /// The chunk model for every stage, in units (the default).
  static MemorySpec chunks() { return {}; }
  /// The model of stage St.
  const schema::MemoryModel &of(int32_t St) const {
    return St >= 0 && size_t(St) < Stages.size() ? Stages[size_t(St)] : Default;
  }
  /// Every stage counts by the same model.
  bool isUniform() const {
    for (const schema::MemoryModel &M : Stages)
      if (M != Default)
        return false;
    return true;
  }
  /// The chunk model everywhere, in units.
  bool isChunks() const { return !Bytes && isUniform() && Default.isChunks(); }
  /// The canonical form every producer keeps, so equal specs compare
  /// equal: per-stage models that are all the same become Default; else
  /// Default (then unused) is the chunk model.
  void normalize() {
    if (Stages.empty())
      return;
    for (const schema::MemoryModel &M : Stages)
      if (M != Stages.front()) {
        Default = schema::MemoryModel::chunks();
        return;
      }
    Default = Stages.front();
    Stages.clear();
  }
  bool operator==(const MemorySpec &O) const {
    return Bytes == O.Bytes && Default == O.Default && Stages == O.Stages;
  }
  bool operator!=(const MemorySpec &O) const { return !(*this == O); }
};

/// An amount of memory of M as reports print it: in units, a whole count
/// or a decimal ("3", "2.5"); in bytes, with a binary unit ("48 MiB",
/// "1.50 GiB", "512 B").
std::string memoryAmountText(const MemorySpec &M, double V);

class Schedule {
public:
  std::string Name = "schedule";
  Topology Topo;
  CostModel Cost;
  CommModel Comm = CommModel::Rendezvous;
  /// The stream rule (`comm { stream rank; eager threshold 64 KiB; }`).
  CommStream Stream;
  /// The activation memory model of each stage (`memory { F = 1; I = -0.5;
  /// }`; the schema's, pps/analysis/Memory.h counts by it); the chunk model
  /// unless the file says otherwise.
  MemorySpec Memory;
  /// The memory limit per rank, in the model's units (`memory limit N;`;
  /// bytes when Memory.Bytes).
  std::optional<int64_t> MemoryLimit;
  /// Where the schedule's construction read its cost or memory model
  /// (cost_f(s), mem_f(), ...; NoLoc if it did not): its order was built
  /// for those figures, so changing them afterwards means building it
  /// again (the drivers give the front end their overrides for this).
  /// Provenance, not part of the schedule: equivalent() ignores it.
  LocId ReadsModelAt = NoLoc;
  FsdpConfig Fsdp;
  std::optional<SynthRequest> Synth;
  /// Where the pipeline was declared (diagnostics point here when an action
  /// has no location of its own).
  LocId DeclLoc = NoLoc;
  llvm::SmallVector<RankProgram, 8> Ranks;

  /// Sizes Ranks to Topo.Ranks.
  void resetRanks() {
    Ranks.clear();
    Ranks.resize(Topo.Ranks);
  }
  size_t numActions() const;
  bool hasComms() const;
  /// True if the two schedules have the same topology, costs, options and
  /// actions (locations and names ignored). Used by round-trip tests.
  bool equivalent(const Schedule &O, std::string *Why = nullptr) const;
};

} // namespace pps::ir
