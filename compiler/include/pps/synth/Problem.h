//===- Problem.h - schedule synthesis: the problem and a fast evaluator ---===//
//
// Synthesis works on pure compute orders: per rank, an ordered list of
// jobs F(m,s), I(m,s), W(m,s) (the backward is always split, as in the
// zero-bubble papers). The evaluator times such an order with the dataflow
// semantics of the simulator (a compute starts when its rank is free and
// its producers have finished, plus the message latency when the producer
// sits on another rank) and counts activation memory by the memory
// analysis' rule in program order, under the problem's memory model (the
// schema's; by default +1 at F(m,s), -1 at W(m,s), one unit being one
// stage's activations of one microbatch, i.e. one chunk with V placement;
// the zero-bubble papers' model frees half at I). Memory is counted in
// whole ticks: the model's amounts and the limit times Problem::MemScale.
//
// The evaluator is allocation-light and linear in the number of jobs, so
// the search loops can call it thousands of times.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pps::synth {

/// The three computes synthesis places.
enum class JobKind : uint8_t { F = 0, I = 1, W = 2 };

/// The IR kind of a job.
inline ir::ActionKind actionKind(JobKind K) {
  return K == JobKind::F   ? ir::ActionKind::F
         : K == JobKind::I ? ir::ActionKind::I
                           : ir::ActionKind::W;
}

/// One compute: kind, microbatch, stage.
struct Job {
  JobKind Kind = JobKind::F;
  int32_t Mb = 0;
  int32_t Stage = 0;
  bool operator==(const Job &O) const {
    return Kind == O.Kind && Mb == O.Mb && Stage == O.Stage;
  }
};

/// Costs of one stage in time units (I = input-gradient backward, the
/// zero-bubble papers' "B").
struct JobCost {
  double F = 1.0;
  double I = 1.0;
  double W = 1.0;
};

/// What synthesis minimises: the makespan (end of the last job), or the
/// largest per-rank span (a rank's first job start to its last job end,
/// the iteration time the zero-bubble papers report). Ties go to the other
/// figure, then to lower peak memory.
enum class Objective { Makespan, Span };

/// What to synthesise: topology, costs, latency, the memory limit and the
/// objective.
struct Problem {
  int32_t Ranks = 0;
  int32_t Stages = 0;
  int32_t Microbatches = 0;
  ir::Placement Place = ir::Placement::Loop;
  /// Stage -> rank (filled by make()).
  llvm::SmallVector<int32_t, 16> StageToRank;
  /// One entry per stage.
  llvm::SmallVector<JobCost, 16> Cost;
  /// Time of one message between ranks (time units).
  double Latency = 0.0;
  /// Peak activation memory per rank, in memory ticks (MemScale ticks per
  /// unit of the memory model; with the chunk model, chunks).
  int64_t MemoryLimit = 0;
  /// The memory model of one stage in whole ticks: what F(m, s), I(m, s)
  /// and W(m, s) add to their rank's memory in a synthesis order (F > 0, I
  /// and W <= 0, F + I + W = 0). The chunk model is {1, 0, -1}.
  struct MemTicks {
    int64_t F = 1, I = 0, W = -1;
    bool operator==(const MemTicks &O) const {
      return F == O.F && I == O.I && W == O.W;
    }
  };
  /// Per stage (make() and setMemory() size it; a stage past its end
  /// counts by the chunk model).
  llvm::SmallVector<MemTicks, 16> Mem;
  /// The stage with the largest F: what the heuristics size their warm-ups
  /// by (the evaluator and every limit check count each stage's own).
  int64_t MemF = 1, MemI = 0, MemW = -1;
  /// Ticks per unit of the memory model (the limit's unit).
  int64_t MemScale = 1;
  /// The amounts and the limit are bytes (ir::MemorySpec::Bytes).
  bool MemBytes = false;
  /// Why the memory model could not be set (validate() reports it).
  std::string MemoryError;
  /// What "better" means (better(), the heuristics, the bounds).
  Objective Goal = Objective::Makespan;

  /// A problem with uniform costs and loop or V placement; Stages = 0 means
  /// one stage per rank for loop, two for V.
  static Problem make(int32_t Ranks, int32_t Microbatches, ir::Placement P,
                      JobCost C, int64_t MemoryLimit, double Latency = 0.0,
                      int32_t Stages = 0);
  /// The problem a schedule's topology, cost model and memory model
  /// describe; MemoryLimit in the memory model's units.
  static Problem fromSchedule(const ir::Schedule &S, int64_t MemoryLimit);

  /// Counts memory by M (a model per stage, or one for all) with a limit of
  /// LimitUnits of its units: picks the fewest ticks per unit (at most
  /// 1024) that make every amount whole, so the searches count exactly.
  /// False (MemoryError set) if none does.
  bool setMemory(const ir::MemorySpec &M, int64_t LimitUnits);
  bool setMemory(const schema::MemoryModel &M, int64_t LimitUnits) {
    return setMemory(ir::MemorySpec(M), LimitUnits);
  }
  /// The memory model in its own units.
  ir::MemorySpec memoryModel() const;
  /// The ticks of Stage.
  const MemTicks &memTicks(int32_t Stage) const {
    static const MemTicks Chunk;
    return size_t(Stage) < Mem.size() ? Mem[size_t(Stage)] : Chunk;
  }
  /// What a job of Stage adds to its rank's memory, in ticks: the memory
  /// analysis' rule (pps/analysis/Memory.h) for a valid order, where every
  /// (m, s) has its F, I and W once, in dependency order: F acquires, I
  /// frees its part (W follows), W frees the rest.
  int64_t memoryDelta(JobKind K, int32_t Stage) const {
    const MemTicks &T = memTicks(Stage);
    return K == JobKind::F ? T.F : K == JobKind::I ? T.I : T.W;
  }
  /// The largest stage's amounts (MemF, MemI, MemW), for heuristics.
  int64_t largestDelta(JobKind K) const {
    return K == JobKind::F ? MemF : K == JobKind::I ? MemI : MemW;
  }
  /// What stays live between an (m, s)'s I and its W, in ticks: the least
  /// over stages (a bound on how many fit).
  int64_t memoryAfterInput() const;
  /// The least F over stages, in ticks.
  int64_t smallestF() const;
  /// Ticks in the memory model's units.
  double memoryUnits(int64_t Ticks) const {
    return double(Ticks) / double(MemScale);
  }

  int32_t rankOf(int32_t Stage) const { return StageToRank[Stage]; }
  double cost(JobKind K, int32_t Stage) const {
    const JobCost &C = Cost[Stage];
    return K == JobKind::F ? C.F : K == JobKind::I ? C.I : C.W;
  }
  int32_t numJobs() const { return 3 * Stages * Microbatches; }
  /// Dense index of a job: (kind, stage, microbatch).
  int32_t index(JobKind K, int32_t Stage, int32_t Mb) const {
    return (int32_t(K) * Stages + Stage) * Microbatches + Mb;
  }
  /// The job of a dense index (index()'s inverse).
  Job job(int32_t Id) const {
    return {JobKind(Id / (Stages * Microbatches)), Id % Microbatches,
            (Id / Microbatches) % Stages};
  }
  /// The job J waits for (the schema's producer rule; the I of stage s+1
  /// stands for its backward), or none for F on the first stage.
  /// (Inline: the evaluator and the greedy search ask per job.)
  std::optional<Job> producerOf(const Job &J) const {
    schema::Producer Pr = schema::producerOf(actionKind(J.Kind), J.Mb, J.Stage,
                                             {Stages, Microbatches, 1});
    switch (Pr.What) {
    case schema::Needs::Nothing:
      return std::nullopt;
    case schema::Needs::F:
      return Job{JobKind::F, Pr.Mb, Pr.Stage};
    case schema::Needs::BorI:
    case schema::Needs::I:
      return Job{JobKind::I, Pr.Mb, Pr.Stage};
    }
    return std::nullopt;
  }
  /// Stages of a rank, ascending.
  llvm::SmallVector<int32_t, 4> stagesOf(int32_t Rank) const;
  /// Empty if the problem is well formed, else what is wrong (lowercase).
  std::string validate() const;
};

/// Per rank, the jobs in program order.
struct Order {
  std::vector<std::vector<Job>> Ranks;
};

/// The figures of a timed order.
struct Evaluation {
  /// False if the order misses or repeats jobs, puts a job on the wrong
  /// rank, or cannot run (a rank waits forever).
  bool Valid = false;
  std::string Error;
  /// End of the last job (the first job starts at 0).
  double Makespan = 0;
  /// Per rank: end of its last job minus start of its first.
  llvm::SmallVector<double, 8> Span;
  /// Per rank: Span - busy time.
  llvm::SmallVector<double, 8> Bubble;
  /// Per rank: time not busy within [0, Makespan].
  llvm::SmallVector<double, 8> Idle;
  /// Per rank peak memory (ticks: Problem::memoryUnits gives the model's
  /// units).
  llvm::SmallVector<int64_t, 8> PeakMemory;
  int64_t MaxPeakMemory = 0;
  /// max over ranks of Span (the zero-bubble papers' iteration time).
  double MaxSpan = 0;
  /// (ranks * Makespan - total busy) / (ranks * Makespan).
  double BubbleRate = 0;
  /// Start time per job, by Problem::index (only when asked for).
  std::vector<double> Start;
};

/// Times an order. KeepStarts fills Evaluation::Start.
Evaluation evaluate(const Problem &P, const Order &O, bool KeepStarts = false);

/// True if A is a better result than B under the objective: lower makespan
/// then lower max span (Makespan), or the other way round (Span), then
/// lower peak memory.
bool better(const Evaluation &A, const Evaluation &B,
            Objective G = Objective::Makespan);

/// The figure the objective minimises.
inline double objectiveValue(const Evaluation &E, Objective G) {
  return G == Objective::Span ? E.MaxSpan : E.Makespan;
}

/// Moves backward jobs into the idle gap in front of the job before them
/// when they fit and their input has arrived (what the align-bubbles lint
/// warns about as idle-ready-work). Never raises the makespan or the peak
/// memory; the result has no such gap. Returns the number of moves.
unsigned fillGaps(const Problem &P, Order &O);

/// Makes an order that waits on itself runnable with the fewest changes:
/// runs it, and whenever every rank is stuck moves the earliest job that
/// could run (an I or W first, else an F the memory limit allows) to the
/// head of its rank's remaining program. False if the jobs are not all
/// there once, no move helps, or it would take more than MaxMoves moves;
/// O is then unchanged. Work: linear in the jobs plus, per move, a heap
/// operation (and, for a move of an F, the rank's jobs up to it).
bool repairOrder(const Problem &P, Order &O, unsigned MaxMoves = ~0u);

/// The compute-only IR schedule of an order (costs: I and W per stage, B =
/// I + W; memory model and limit set; ranks hold the jobs in order, stages
/// explicit).
ir::Schedule toSchedule(const Problem &P, const Order &O,
                        const ir::Schedule *Base = nullptr);

/// The order of a compute-only schedule's F/I/W actions (B counts as I
/// followed by W). Actions of other kinds are skipped.
Order fromIr(const ir::Schedule &S);

} // namespace pps::synth
