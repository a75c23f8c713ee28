//===- LocalSearch.cpp - improve an order by adjacent swaps ---------------===//
//
// Hill climbing over the heuristics' best order: swap two adjacent jobs of
// one rank when the result is valid, within the memory limit, and better
// (lower makespan, or the same makespan with a lower sum of rank spans,
// which tightens ranks off the critical path and opens the way to a lower
// makespan). First improvement, repeated until no swap helps or the
// evaluation budget is spent. Deterministic.
//
//===----------------------------------------------------------------------===//
#include "pps/synth/Algorithms.h"

#include <numeric>

namespace pps::synth {

namespace {

struct Score {
  /// The objective's figure (Problem::Goal), then the sum of rank spans.
  double Primary, EndSum;
  bool operator<(const Score &O) const {
    const double Eps = 1e-9;
    if (Primary < O.Primary - Eps)
      return true;
    if (Primary > O.Primary + Eps)
      return false;
    return EndSum < O.EndSum - Eps;
  }
};

std::optional<Score> score(const Problem &P, const Order &O) {
  Evaluation E = evaluate(P, O);
  if (!E.Valid || E.MaxPeakMemory > P.MemoryLimit)
    return std::nullopt;
  double Sum = 0;
  for (int32_t R = 0; R < P.Ranks; ++R)
    Sum += E.Span[R];
  return Score{objectiveValue(E, P.Goal), Sum};
}

} // namespace

bool improveBySwaps(const Problem &P, Result &R, uint64_t MaxEvals) {
  std::optional<Score> Cur = score(P, R.Ord);
  if (!Cur)
    return false;
  bool Improved = false;
  uint64_t Evals = 0;
  bool Again = true;
  while (Again && Evals < MaxEvals) {
    Again = false;
    for (int32_t Rk = 0; Rk < P.Ranks && Evals < MaxEvals; ++Rk) {
      std::vector<Job> &Jobs = R.Ord.Ranks[Rk];
      for (size_t K = 0; K + 1 < Jobs.size() && Evals < MaxEvals; ++K) {
        if (Jobs[K] == Jobs[K + 1])
          continue;
        std::swap(Jobs[K], Jobs[K + 1]);
        ++Evals;
        std::optional<Score> S = score(P, R.Ord);
        if (S && *S < *Cur) {
          Cur = S;
          Improved = Again = true;
          continue;
        }
        std::swap(Jobs[K], Jobs[K + 1]);
      }
    }
  }
  if (Improved) {
    R.Eval = evaluate(P, R.Ord);
    R.Algorithm += " + swaps";
  }
  return Improved;
}

} // namespace pps::synth
