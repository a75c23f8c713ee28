//===- Memory.cpp - activation memory per rank: the one rule --------------===//
//
// Per rank, three linear walks over its actions: mark the (m, s) that have
// a W, walk in program order applying the rule, then clear the marks the
// rank set, so the next rank starts from clean state without touching the
// whole (stage, microbatch) space again. The per-(m, s) state is a byte
// (live, I done, has W) in a flat array, or in a hash map when the space
// is much larger than the schedule. Ranks are independent (each starts
// from clean state), so big schedules walk them on a few threads, each with
// its own state (pps/support/Parallel.h): the result is the same.
//
//===----------------------------------------------------------------------===//
#include "pps/analysis/Memory.h"

#include "pps/support/Parallel.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <optional>

namespace pps::analysis {

using ir::Action;

namespace {

enum : uint8_t { Live = 1, InputDone = 2, HasW = 4 };

/// Per-(m, s) state bytes, dense or hashed.
class StateMap {
public:
  StateMap(const ir::Schedule &S) : NS(S.Topo.Stages), NM(S.Topo.Microbatches) {
    uint64_t Space = NS > 0 && NM > 0 ? uint64_t(NS) * uint64_t(NM) : 0;
    Hashed = Space > std::max<uint64_t>(4 * S.numActions(), 1 << 20);
    if (!Hashed)
      Dense.assign(Space, 0);
  }
  bool valid(const Action &A) const {
    return A.Stage >= 0 && A.Stage < NS && A.Microbatch >= 0 &&
           A.Microbatch < NM;
  }
  /// Stage-major, as the passes index (m, s).
  uint64_t key(const Action &A) const {
    return uint64_t(A.Stage) * uint64_t(NM) + uint64_t(A.Microbatch);
  }
  uint8_t get(uint64_t K) const {
    if (!Hashed)
      return Dense[K];
    auto It = Sparse.find(K);
    return It == Sparse.end() ? 0 : It->second;
  }
  void set(uint64_t K, uint8_t V) {
    if (!Hashed)
      Dense[K] = V;
    else if (V)
      Sparse[K] = V;
    else
      Sparse.erase(K);
  }

private:
  int32_t NS, NM;
  bool Hashed = false;
  std::vector<uint8_t> Dense;
  llvm::DenseMap<uint64_t, uint8_t> Sparse;
};

} // namespace

double MemoryProfile::maxPeak() const {
  double Max = 0;
  for (const RankMemory &R : Ranks)
    Max = std::max(Max, R.Peak);
  return Max;
}

std::vector<int64_t> MemoryProfile::wholePeaks() const {
  std::vector<int64_t> Out;
  Out.reserve(Ranks.size());
  for (const RankMemory &R : Ranks)
    Out.push_back(wholeUnits(R.Peak));
  return Out;
}

MemoryProfile analyzeMemory(const ir::Schedule &S, const MemoryOptions &Opts) {
  MemoryProfile Out;
  Out.Model = Opts.Model ? *Opts.Model : S.Memory;
  Out.Ranks.resize(S.Ranks.size());
  unsigned Threads = threadsForActions(S.numActions());
  std::vector<std::optional<StateMap>> States(Threads);
  // Amounts are compared with a little slack, so fractional models do not
  // report a peak that is only rounding error.
  constexpr double Eps = 1e-9;
  parallelFor(S.Ranks.size(), Threads, [&](size_t R, unsigned Worker) {
    if (!States[Worker])
      States[Worker].emplace(S);
    StateMap &State = *States[Worker];
    const std::vector<Action> &Acts = S.Ranks[R].Actions;
    RankMemory &RM = Out.Ranks[R];
    for (const Action &A : Acts)
      if (A.Kind == ir::ActionKind::W && State.valid(A))
        State.set(State.key(A), State.get(State.key(A)) | HasW);
    double Cur = 0;
    for (size_t I = 0; I < Acts.size(); ++I) {
      const Action &A = Acts[I];
      if (!ir::isCompute(A.Kind) || !State.valid(A))
        continue;
      uint64_t K = State.key(A);
      uint8_t St = State.get(K);
      schema::MemoryEffect E = schema::memoryEffect(A.Kind, St & HasW);
      double D =
          memoryDelta(Out.Model.of(A.Stage), E, St & Live, St & InputDone);
      switch (E) {
      case schema::MemoryEffect::Acquire:
        St |= Live;
        break;
      case schema::MemoryEffect::ReleaseInput:
        if (St & Live)
          St |= InputDone;
        break;
      case schema::MemoryEffect::Release:
        St &= uint8_t(~(Live | InputDone));
        break;
      case schema::MemoryEffect::None:
        break;
      }
      State.set(K, St);
      if (D == 0)
        continue;
      Cur += D;
      if (Opts.KeepCurve)
        RM.Curve.push_back({uint32_t(I), Cur});
      if (Cur > RM.Peak + Eps) {
        RM.Peak = Cur;
        RM.PeakAt = int64_t(I);
      }
      if (Opts.Limit && RM.OverAt < 0 && Cur > *Opts.Limit + Eps) {
        RM.OverAt = int64_t(I);
        RM.OverLevel = Cur;
      }
    }
    // Leave the state clean for the next rank.
    for (const Action &A : Acts)
      if (ir::isCompute(A.Kind) && State.valid(A))
        State.set(State.key(A), 0);
  });
  return Out;
}

} // namespace pps::analysis
