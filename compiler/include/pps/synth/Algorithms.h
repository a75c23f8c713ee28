//===- Algorithms.h - the synthesis algorithms and the portfolio ----------===//
//
// Each algorithm lives in its own file under compiler/synth/:
//
//  * GreedyList.cpp   greedy list scheduler (any placement): an event-driven
//                     simulation that, whenever a rank is free, picks the
//                     next job by a parameterised rule and places W jobs to
//                     fill gaps that would otherwise be bubbles, under the
//                     memory limit; a sweep over the rule's parameters.
//  * VPattern.cpp     the repeating-pattern search of "Pipeline Parallelism
//                     with Controllable Memory" for V placement: offsets of
//                     F f B b W w per stage, warmup squeeze and cooldown
//                     reorganisation without raising peak memory.
//  * ZbGreedy.cpp     the published zero-bubble heuristic for loop placement
//                     (sail-sg/zero-bubble-pipeline-parallelism
//                     auto_schedule.py, initial_solution; the stdlib's
//                     zb_auto.pps in C++): in the portfolio, and the
//                     baseline the tests compare against.
//  * Templates.cpp    stdlib schedules (gpipe, 1F1B, ZB-H1, ZB-H2 at every
//                     activation cap, interleaved 1F1B, looped BFS, ZB-V)
//                     as orders: the portfolio's floor.
//  * Exact.cpp        exact search for small sizes: a time-indexed breadth
//                     first search with duplicate detection and a lower
//                     bound, proving the optimal makespan.
//  * Synthesizer.cpp  runs the algorithms that apply and keeps the best.
//
// Every algorithm returns orders that respect the memory limit (in chunk
// units) or reports that it found none.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/synth/Problem.h"

#include <optional>
#include <string>

namespace pps::synth {

/// A synthesised order and its figures.
struct Result {
  Order Ord;
  Evaluation Eval;
  /// Which algorithm (and variant) produced it, e.g. "greedy(w=gap,warm=2)".
  std::string Algorithm;
};

/// The greedy list scheduler: the best order over its parameter sweep.
/// Empty if no variant fits the memory limit. Threads: how many variants
/// run at once (0: one per core, at most 4); the result does not depend on
/// it.
std::optional<Result> greedyList(const Problem &P, unsigned Threads = 0);

/// Hill climbing by adjacent swaps on one rank (LocalSearch.cpp): true if
/// R got better; at most MaxEvals evaluations.
bool improveBySwaps(const Problem &P, Result &R, uint64_t MaxEvals);

/// The repeating-pattern search of "Pipeline Parallelism with Controllable
/// Memory" (Qi et al., NeurIPS 2024; sail-sg/zero-bubble-pipeline-
/// parallelism, v-schedule) for V placement with stages = 2 ranks.
/// Empty if the placement is not V or no pattern fits the memory limit.
/// Threads: how many candidates are built at once (0: one per core, at
/// most 4); the result does not depend on it.
std::optional<Result> vPatternSearch(const Problem &P, unsigned Threads = 0);

/// The published zero-bubble heuristic (loop placement, one stage per
/// rank): best of its eight flag combinations. Empty when it cannot fit
/// the memory limit (it raises "Cannot fit memory" there).
std::optional<Result> zeroBubbleHeuristic(const Problem &P);

/// The heuristic's order for one combination of its flags (the paper's
/// allow_bubble_before_first_b, prioritize_b, no_bubble_greedy), or empty
/// where it cannot fit the memory limit or P is not one stage per rank.
std::optional<Order> zeroBubbleOrder(const Problem &P, bool AllowBubble,
                                     bool PrioritizeB, bool NoBubbleGreedy);

/// The compute orders of the stdlib schedules that apply to P's topology
/// (loop, one stage per rank: gpipe, one_f_one_b, zb_h1, zb_h2 with each
/// cap from 1 to min(limit, M); loop, several: interleaved_1f1b,
/// looped_bfs; V with two stages per rank: zb_v, and v_half and v_min
/// compiled from the stdlib in StdlibDir (empty: the front end's search
/// path) when their peaks can fit), timed under P's costs and latency;
/// peaks may exceed the limit. Empty for other placements.
std::vector<Result> stdlibTemplates(const Problem &P,
                                    const std::string &StdlibDir = {},
                                    unsigned Threads = 0);

struct ExactOptions {
  /// Give up after expanding this many states.
  uint64_t StateBudget = 20'000'000;
  /// A known makespan to beat (the search proves nothing better exists
  /// when it finds nothing); +inf if none.
  double UpperBound = 1e300;
};

struct ExactResult {
  /// True if the search finished: Best is optimal (or, when empty, no
  /// order beats UpperBound, which is then optimal).
  bool Complete = false;
  /// Why the search does not apply, when it does not.
  std::string Skipped;
  std::optional<Result> Best;
  /// The optimal makespan when Complete (min of Best and UpperBound).
  double Optimum = 0;
  uint64_t StatesExpanded = 0;
};

/// True if the exact search applies: ranks <= 4, microbatches <= 8, no
/// latency, and costs that are multiples of a common tick (at most 8 ticks
/// per job).
bool exactApplies(const Problem &P, std::string *Why = nullptr);

/// Exact search for the minimum makespan under the memory limit.
ExactResult exactSearch(const Problem &P, const ExactOptions &Opts = {});

struct SynthOptions {
  /// Use the exact search when it applies (p <= 4, m <= 8; with two
  /// stages per rank only up to p * m = 16 unless the budget is raised
  /// above 1M states) and the heuristics miss the lower bound.
  bool UseExact = true;
  /// Use the heuristics (greedy list, V pattern search).
  bool UseHeuristics = true;
  /// States the exact search may expand (about 1-10 us each); it gives up
  /// beyond, keeping the heuristics' result. Deterministic, unlike a timer.
  uint64_t ExactStateBudget = 100'000;
  /// Threads the heuristics may use (0: one per core, at most 4). The
  /// result is the same for any number.
  unsigned Threads = 0;
  /// Where the stdlib's V-Half and V-Min are compiled from for the floor
  /// (empty: the front end's search path).
  std::string StdlibDir;
};

/// The best order any applicable algorithm finds, or empty (infeasible:
/// the limit is below what any schedule needs). Why says which.
std::optional<Result> synthesize(const Problem &P, const SynthOptions &Opts,
                                 std::string *Why = nullptr);

/// A lower bound on the makespan: every rank's work after the first
/// microbatch can reach it (the forwards of the stages before it, with
/// latency). A result that meets it is optimal.
double makespanLowerBound(const Problem &P);

/// A lower bound on the largest per-rank span: the busiest rank's work.
double spanLowerBound(const Problem &P);

/// The lower bound of the problem's objective.
inline double objectiveLowerBound(const Problem &P) {
  return P.Goal == Objective::Span ? spanLowerBound(P) : makespanLowerBound(P);
}

/// The smallest memory limit any schedule can meet: 1 chunk per rank for
/// loop placement (F I W one microbatch at a time), 2 for V placement
/// (rank 0 holds stages 0 and S-1 at once before the first backward ...).
int64_t minimumMemory(const Problem &P);

} // namespace pps::synth
