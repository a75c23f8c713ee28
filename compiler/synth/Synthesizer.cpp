//===- Synthesizer.cpp - run the applicable algorithms, keep the best -----===//
//
// The portfolio: the greedy list scheduler (every placement), the pattern
// search of "Pipeline Parallelism with Controllable Memory" (V placement),
// the stdlib's schedules as a floor (Templates.cpp: synth never returns a
// schedule slower than one of them that fits the limit), and the exact
// search when the problem is small enough (its incumbent is the best result
// so far, so it only has to prove nothing is better, or find what is). The
// published zero-bubble heuristic (ZbGreedy.cpp, the stdlib's zb_auto) runs
// too, for one stage per rank: its figures are the zero-bubble paper's.
//
//===----------------------------------------------------------------------===//
#include "pps/synth/Algorithms.h"

#include "pps/support/Parallel.h"

#include <fmt/format.h>

#include <future>

namespace pps::synth {

int64_t minimumMemory(const Problem &P) {
  // A rank's first microbatch holds all its stages' F at once before its
  // first backward (the last stage's I needs every F before it).
  int64_t Min = 1;
  for (int32_t R = 0; R < P.Ranks; ++R) {
    int64_t All = 0;
    for (int32_t St : P.stagesOf(R))
      All += P.memoryDelta(JobKind::F, St);
    Min = std::max(Min, All);
  }
  return Min;
}

/// An amount of memory in the model's units, as the messages say it.
static std::string memoryText(const Problem &P, int64_t Ticks) {
  double V = P.memoryUnits(Ticks);
  if (P.MemBytes)
    return fmt::format("{} of activations",
                       ir::memoryAmountText(P.memoryModel(), V));
  bool One = V == 1.0;
  return fmt::format("{:g} activation{}", V, One ? "" : "s");
}

double spanLowerBound(const Problem &P) {
  // A rank's span holds all its work.
  double LB = 0;
  for (int32_t R = 0; R < P.Ranks; ++R) {
    double Work = 0;
    for (int32_t S : P.stagesOf(R))
      Work += P.Microbatches * (P.cost(JobKind::F, S) + P.cost(JobKind::I, S) +
                                P.cost(JobKind::W, S));
    LB = std::max(LB, Work);
  }
  return LB;
}

double makespanLowerBound(const Problem &P) {
  // Earliest start of each stage's first F.
  std::vector<double> Head(P.Stages, 0.0);
  for (int32_t S = 1; S < P.Stages; ++S)
    Head[S] = Head[S - 1] + P.cost(JobKind::F, S - 1) +
              (P.rankOf(S - 1) != P.rankOf(S) ? P.Latency : 0.0);
  double LB = 0;
  for (int32_t R = 0; R < P.Ranks; ++R) {
    double Work = 0, First = 1e300;
    for (int32_t S : P.stagesOf(R)) {
      Work += P.Microbatches * (P.cost(JobKind::F, S) + P.cost(JobKind::I, S) +
                                P.cost(JobKind::W, S));
      First = std::min(First, Head[S]);
    }
    LB = std::max(LB, First + Work);
  }
  return LB;
}

std::optional<Result> synthesize(const Problem &P, const SynthOptions &Opts,
                                 std::string *Why) {
  auto Fail = [&](std::string Msg) -> std::optional<Result> {
    if (Why)
      *Why = std::move(Msg);
    return std::nullopt;
  };
  std::string Bad = P.validate();
  if (!Bad.empty())
    return Fail(Bad);
  int64_t Min = minimumMemory(P);
  if (P.MemoryLimit < Min)
    return Fail(fmt::format(
        "no schedule fits {} per rank: {} placement needs at least {}",
        memoryText(P, P.MemoryLimit), ir::placementName(P.Place),
        P.MemBytes ? ir::memoryAmountText(P.memoryModel(), P.memoryUnits(Min))
                   : fmt::format("{:g}", P.memoryUnits(Min))));

  // The stdlib's schedules depend on the problem alone: under V placement
  // they are compiled from the stdlib (V-Half and V-Min, a sixth of
  // synth's instructions at P = 64), so that starts now, beside the
  // heuristics, unless everything is to run on this thread.
  std::future<std::vector<Result>> Templates;
  if (Opts.UseHeuristics)
    Templates = std::async(
        workerThreads(Opts.Threads) > 1 ? std::launch::async
                                        : std::launch::deferred,
        [&] { return stdlibTemplates(P, Opts.StdlibDir, Opts.Threads); });
  std::optional<Result> Best;
  auto Offer = [&](std::optional<Result> R) {
    if (R && R->Eval.Valid && R->Eval.MaxPeakMemory <= P.MemoryLimit &&
        (!Best || better(R->Eval, Best->Eval, P.Goal)))
      Best = std::move(R);
  };
  if (Opts.UseHeuristics) {
    // Each heuristic's best, polished by adjacent swaps on small problems
    // (each evaluation is linear in the jobs); polishing both matters, as
    // the better start does not always polish to the better end.
    const double LB = objectiveLowerBound(P);
    for (int Alg = 0; Alg < 3; ++Alg) {
      std::optional<Result> R =
          Alg == 0 ? greedyList(P, Opts.Threads)
          : Alg == 1
              ? (P.Place == ir::Placement::V ? vPatternSearch(P, Opts.Threads)
                                             : std::nullopt)
              : zeroBubbleHeuristic(P);
      if (R && objectiveValue(R->Eval, P.Goal) > LB + 1e-9 &&
          P.numJobs() <= 3000)
        improveBySwaps(P, *R, /*MaxEvals=*/20000);
      Offer(std::move(R));
    }
    // The stdlib's own schedules: when one beats the search it is polished
    // like the heuristics' best.
    std::optional<Result> Floor;
    for (Result &T : Templates.get())
      if (T.Eval.MaxPeakMemory <= P.MemoryLimit &&
          (!Floor || better(T.Eval, Floor->Eval, P.Goal)))
        Floor = std::move(T);
    if (Floor && (!Best || better(Floor->Eval, Best->Eval, P.Goal))) {
      if (objectiveValue(Floor->Eval, P.Goal) > LB + 1e-9 &&
          P.numJobs() <= 3000)
        improveBySwaps(P, *Floor, /*MaxEvals=*/20000);
      Offer(std::move(Floor));
    }
  }
  bool MeetsBound = Best && objectiveValue(Best->Eval, P.Goal) <=
                                objectiveLowerBound(P) + 1e-9;
  if (MeetsBound)
    Best->Algorithm += " (optimal: meets the lower bound)";
  // With two stages per rank the state space grows much faster: beyond
  // P * M = 16 the search rarely finishes within the default budget, so
  // synth does not start it (exactSearch itself still runs there).
  bool Deep = P.Stages > P.Ranks;
  bool Worthwhile = !Deep || int64_t(P.Ranks) * P.Microbatches <= 16 ||
                    Opts.ExactStateBudget > 1'000'000;
  // The exact search minimises the makespan only.
  if (Opts.UseExact && P.Goal == Objective::Makespan && !MeetsBound &&
      Worthwhile && exactApplies(P)) {
    ExactOptions EO;
    EO.StateBudget = Opts.ExactStateBudget;
    if (Best)
      EO.UpperBound = Best->Eval.Makespan;
    ExactResult ER = exactSearch(P, EO);
    if (ER.Best)
      Offer(std::move(ER.Best));
    else if (ER.Complete && Best)
      Best->Algorithm += " (proved optimal)";
  }
  if (!Best)
    return Fail(fmt::format("no algorithm found a schedule within {} per "
                            "rank",
                            memoryText(P, P.MemoryLimit)));
  // Lint-clean output: no rank idles while the backward job after the wait
  // could have run (never worse, see fillGaps).
  // Pulling a job into a gap can start a rank earlier, so under the span
  // objective a result whose span grew is not kept.
  Order Before = Best->Ord;
  if (fillGaps(P, Best->Ord) > 0) {
    Evaluation E = evaluate(P, Best->Ord);
    if (P.Goal == Objective::Span && E.MaxSpan > Best->Eval.MaxSpan + 1e-9)
      Best->Ord = std::move(Before);
    else
      Best->Eval = std::move(E);
  }
  return Best;
}

} // namespace pps::synth
