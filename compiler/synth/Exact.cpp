//===- Exact.cpp - exact minimum-makespan search for small pipelines ------===//
//
// A time-indexed breadth-first search. Costs are scaled to integer ticks;
// a state is, per (stage, kind), how many jobs have finished, plus per rank
// the job it is running and the ticks left. At every tick each free rank
// either starts one ready job (memory permitting) or idles; the successors
// are the product of the ranks' choices. Layers are ticks, so the first
// layer holding the final state gives the optimal makespan.
//
// Why this is exact: microbatches are interchangeable (costs depend on the
// stage only), so running each (stage, kind) in microbatch order loses
// nothing — relabel the i-th F of every stage as microbatch i and every
// constraint "X(i,s) after Y(i,s')" becomes "at least i+1 Y at s' finished
// before", which held before relabelling; memory is a sum of per-kind
// amounts (the problem's memory model), so it depends on counts. Integer ticks
// are exact because every start in a left-justified schedule is a sum of
// costs. A state seen at an earlier tick dominates the same state later (idle
// first), so each state is expanded once. Lower bounds prune states that
// cannot beat the incumbent: each rank's remaining work, and the chain of
// the last microbatch (its F down the pipeline, its I back up, then W).
//
// Limits: ranks <= 4, stages <= 8, microbatches <= 8, no latency, every
// cost a multiple of a common tick with at most 8 ticks per job.
//
//===----------------------------------------------------------------------===//
#include "pps/synth/Algorithms.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pps::synth {

namespace {

struct Key {
  uint64_t A = 0, B = 0;
  bool operator==(const Key &O) const { return A == O.A && B == O.B; }
};

struct KeyInfo {
  static Key getEmptyKey() { return {~0ULL, ~0ULL}; }
  static Key getTombstoneKey() { return {~0ULL - 1, ~0ULL}; }
  static unsigned getHashValue(const Key &K) {
    uint64_t H = K.A * 0x9E3779B97F4A7C15ULL ^ (K.B + 0x632BE59BD9B4E019ULL);
    H ^= H >> 29;
    H *= 0xBF58476D1CE4E5B9ULL;
    return unsigned(H ^ (H >> 32));
  }
  static bool isEqual(const Key &L, const Key &R) { return L == R; }
};

/// The unpacked state.
struct State {
  uint8_t Done[8][3] = {}; // [stage][kind] finished jobs
  uint8_t RunKind[4] = {}; // 0 none, 1 + JobKind
  uint8_t RunChunk[4] = {};
  uint8_t RunLeft[4] = {};

  Key pack(int S, int R) const {
    Key K;
    int Bit = 0;
    auto Put = [&](uint64_t V, int Bits) {
      if (Bit < 64) {
        K.A |= V << Bit;
        if (Bit + Bits > 64)
          K.B |= V >> (64 - Bit);
      } else {
        K.B |= V << (Bit - 64);
      }
      Bit += Bits;
    };
    for (int St = 0; St < S; ++St)
      for (int Kd = 0; Kd < 3; ++Kd)
        Put(Done[St][Kd], 4);
    for (int Rk = 0; Rk < R; ++Rk) {
      Put(RunKind[Rk], 2);
      Put(RunChunk[Rk], 1);
      Put(RunLeft[Rk], 3);
    }
    return K;
  }
  static State unpack(const Key &K, int S, int R) {
    State St;
    int Bit = 0;
    auto Get = [&](int Bits) {
      uint64_t V;
      if (Bit < 64) {
        V = K.A >> Bit;
        if (Bit + Bits > 64)
          V |= K.B << (64 - Bit);
      } else {
        V = K.B >> (Bit - 64);
      }
      Bit += Bits;
      return uint8_t(V & ((1u << Bits) - 1));
    };
    for (int S1 = 0; S1 < S; ++S1)
      for (int Kd = 0; Kd < 3; ++Kd)
        St.Done[S1][Kd] = Get(4);
    for (int Rk = 0; Rk < R; ++Rk) {
      St.RunKind[Rk] = Get(2);
      St.RunChunk[Rk] = Get(1);
      St.RunLeft[Rk] = Get(3);
    }
    return St;
  }
};

/// One node of the search: its state, parent and the jobs started to
/// reach it (per rank: 0 none, else 1 + kind + 3 * chunk).
struct Node {
  Key K;
  uint32_t Parent;
  uint16_t Starts;
};

class ExactSearch {
public:
  ExactSearch(const Problem &P, double Tick) : P(P) {
    S = P.Stages;
    R = P.Ranks;
    M = P.Microbatches;
    for (int St = 0; St < S; ++St)
      for (int Kd = 0; Kd < 3; ++Kd)
        Ticks[St][Kd] = int(std::lround(P.cost(JobKind(Kd), St) / Tick));
    for (int Rk = 0; Rk < R; ++Rk) {
      auto L = P.stagesOf(Rk);
      Chunks[Rk] = int(L.size());
      for (int C = 0; C < Chunks[Rk]; ++C)
        StageOf[Rk][C] = L[C];
    }
    for (int St = 0; St < S; ++St)
      RankOf[St] = P.rankOf(St);
  }

  ExactResult run(const ExactOptions &Opts, double Tick);

private:
  int started(const State &X, int St, int Kd) const {
    int N = X.Done[St][Kd];
    int Rk = RankOf[St];
    if (X.RunKind[Rk] == Kd + 1 && StageOf[Rk][X.RunChunk[Rk]] == St)
      ++N;
    return N;
  }
  bool ready(const State &X, int St, int Kd, int64_t Mem) const;
  int lowerBound(const State &X, int T) const;
  void expand(const State &X, uint32_t Parent, int T, int UB);
  void choose(int Rk, State &Next, uint16_t Starts, uint32_t Parent, int T,
              int UB);

  const Problem &P;
  int S, R, M;
  int Ticks[8][3];
  int Chunks[4];
  int StageOf[4][2];
  int RankOf[8];
  std::vector<std::vector<Node>> Layers;
  llvm::DenseSet<Key, KeyInfo> Seen;
  const State *Cur = nullptr;
  bool Found = false;
  uint32_t FoundIdx = 0;
  uint64_t Expanded = 0;
};

bool ExactSearch::ready(const State &X, int St, int Kd, int64_t Mem) const {
  int Next = started(X, St, Kd);
  if (Next >= M)
    return false;
  switch (JobKind(Kd)) {
  case JobKind::F:
    if (Mem + P.memoryDelta(JobKind::F, St) > P.MemoryLimit)
      return false;
    return St == 0 || X.Done[St - 1][0] > Next;
  case JobKind::I:
    return St == S - 1 ? X.Done[St][0] > Next : X.Done[St + 1][1] > Next;
  case JobKind::W:
    return X.Done[St][1] > Next;
  }
  return false;
}

int ExactSearch::lowerBound(const State &X, int T) const {
  int LB = T;
  int FreeAt[4];
  for (int Rk = 0; Rk < R; ++Rk) {
    int Work = X.RunKind[Rk] ? X.RunLeft[Rk] : 0;
    FreeAt[Rk] = T + Work;
    for (int C = 0; C < Chunks[Rk]; ++C) {
      int St = StageOf[Rk][C];
      for (int Kd = 0; Kd < 3; ++Kd)
        Work += (M - started(X, St, Kd)) * Ticks[St][Kd];
    }
    LB = std::max(LB, T + Work);
  }
  // The last microbatch's chain: F(M-1, s) for s = 0..S-1, then I(M-1, s)
  // for s = S-1..0, each W(M-1, s) after its I.
  auto Head = [&](int St, int Kd, int Pred) {
    int Start = started(X, St, Kd);
    if (Start >= M) // the last one is running or done
      return -1;
    int H =
        std::max(Pred, FreeAt[RankOf[St]] + (M - 1 - Start) * Ticks[St][Kd]);
    return H;
  };
  int Pred = T;
  for (int St = 0; St < S; ++St) {
    int H = Head(St, 0, Pred);
    Pred = H < 0 ? T : H + Ticks[St][0];
  }
  for (int St = S - 1; St >= 0; --St) {
    int H = Head(St, 1, Pred);
    int IEnd = H < 0 ? T : H + Ticks[St][1];
    if (H >= 0 || started(X, St, 2) < M)
      LB = std::max(LB, IEnd + Ticks[St][2]);
    Pred = IEnd;
  }
  return LB;
}

void ExactSearch::choose(int Rk, State &Next, uint16_t Starts, uint32_t Parent,
                         int T, int UB) {
  if (Found)
    return;
  if (Rk >= R || Rk >= 4) { // every rank chose (R <= 4 by exactApplies)
    // Advance one tick.
    State X = Next;
    bool AllDone = true;
    for (int Q = 0; Q < R; ++Q) {
      if (!X.RunKind[Q])
        continue;
      if (--X.RunLeft[Q] == 0) {
        X.Done[StageOf[Q][X.RunChunk[Q]]][X.RunKind[Q] - 1] += 1;
        X.RunKind[Q] = X.RunChunk[Q] = 0;
      }
    }
    for (int St = 0; St < S && AllDone; ++St)
      for (int Kd = 0; Kd < 3; ++Kd)
        if (X.Done[St][Kd] != M)
          AllDone = false;
    Key K = X.pack(S, R);
    // A state seen at an earlier tick dominates (idle there first); a state
    // that fails the bound fails it at every later tick too.
    if (!Seen.insert(K).second)
      return;
    if (!AllDone && lowerBound(X, T + 1) >= UB)
      return;
    Layers[T + 1].push_back({K, Parent, Starts});
    if (AllDone) {
      Found = true;
      FoundIdx = uint32_t(Layers[T + 1].size() - 1);
    }
    return;
  }
  if (Next.RunKind[Rk]) {
    choose(Rk + 1, Next, Starts, Parent, T, UB);
    return;
  }
  int64_t Mem = 0;
  for (int C = 0; C < Chunks[Rk]; ++C) {
    int St = StageOf[Rk][C];
    // Memory only rises at F, so checking there keeps every peak in.
    const Problem::MemTicks &T = P.memTicks(St);
    Mem += started(*Cur, St, 0) * T.F + started(*Cur, St, 1) * T.I +
           started(*Cur, St, 2) * T.W;
  }
  for (int C = Chunks[Rk] - 1; C >= 0; --C) {
    int St = StageOf[Rk][C];
    for (int K : {1, 2, 0}) { // I, W, F
      if (!ready(*Cur, St, K, Mem))
        continue;
      State Y = Next;
      Y.RunKind[Rk] = uint8_t(K + 1);
      Y.RunChunk[Rk] = uint8_t(C);
      Y.RunLeft[Rk] = uint8_t(Ticks[St][K]);
      uint16_t St2 = Starts | uint16_t((1 + K + 3 * C) << (3 * Rk));
      choose(Rk + 1, Y, St2, Parent, T, UB);
    }
  }
  // Idle this tick.
  choose(Rk + 1, Next, Starts, Parent, T, UB);
}

void ExactSearch::expand(const State &X, uint32_t Parent, int T, int UB) {
  Cur = &X;
  State Next = X;
  choose(0, Next, 0, Parent, T, UB);
}

ExactResult ExactSearch::run(const ExactOptions &Opts, double Tick) {
  ExactResult Res;
  // Work in ticks; search strictly below the incumbent.
  double Ticks = std::ceil(Opts.UpperBound / Tick - 1e-9);
  int UB = Ticks >= double(std::numeric_limits<int>::max())
               ? std::numeric_limits<int>::max()
               : int(Ticks);
  State Init;
  Layers.assign(1, {});
  Key K0 = Init.pack(S, R);
  Seen.insert(K0);
  Layers[0].push_back({K0, 0, 0});
  for (int T = 0; !Found; ++T) {
    if (Layers[T].empty()) {
      // Nothing beats the incumbent.
      Res.Complete = true;
      Res.Optimum = Opts.UpperBound;
      Res.StatesExpanded = Expanded;
      return Res;
    }
    Layers.emplace_back();
    for (uint32_t I = 0; I < Layers[T].size() && !Found; ++I) {
      if (++Expanded > Opts.StateBudget) {
        Res.StatesExpanded = Expanded;
        Res.Skipped =
            fmt::format("state budget of {} exhausted", Opts.StateBudget);
        return Res;
      }
      State X = State::unpack(Layers[T][I].K, S, R);
      expand(X, I, T, UB);
    }
  }
  // Rebuild the order from the parent chain.
  int TEnd = int(Layers.size()) - 1;
  std::vector<std::pair<int, uint16_t>> Chain; // (tick, starts)
  uint32_t Idx = FoundIdx;
  for (int T = TEnd; T > 0; --T) {
    const Node &N = Layers[T][Idx];
    Chain.push_back({T - 1, N.Starts});
    Idx = N.Parent;
  }
  std::reverse(Chain.begin(), Chain.end());
  Order O;
  O.Ranks.assign(R, {});
  int Count[8][3] = {};
  for (auto &[T, Starts] : Chain)
    for (int Rk = 0; Rk < R; ++Rk) {
      int Code = (Starts >> (3 * Rk)) & 7;
      if (!Code)
        continue;
      int Kd = (Code - 1) % 3, C = (Code - 1) / 3;
      int St = StageOf[Rk][C];
      O.Ranks[Rk].push_back({JobKind(Kd), Count[St][Kd]++, St});
    }
  Evaluation E = evaluate(P, O);
  Res.Complete = true;
  Res.StatesExpanded = Expanded;
  Res.Optimum = E.Makespan;
  Res.Best = Result{std::move(O), std::move(E), "exact"};
  return Res;
}

/// The tick: the largest unit dividing every cost, or 0 if none is found
/// with at most 8 ticks per job.
double findTick(const Problem &P) {
  for (int D : {1, 2, 3, 4, 5, 6, 8, 10}) {
    bool Ok = true;
    int MaxTicks = 0;
    for (int St = 0; St < P.Stages && Ok; ++St)
      for (int Kd = 0; Kd < 3; ++Kd) {
        double X = P.cost(JobKind(Kd), St) * D;
        if (std::fabs(X - std::round(X)) > 1e-9 || std::round(X) < 1) {
          Ok = false;
          break;
        }
        // More than 8 ticks fails below; compared as a double, so a cost
        // past int's range is never converted.
        if (std::round(X) > 8)
          return 0.0;
        MaxTicks = std::max(MaxTicks, int(std::round(X)));
      }
    if (Ok)
      return MaxTicks <= 8 ? 1.0 / D : 0.0;
  }
  return 0.0;
}

} // namespace

bool exactApplies(const Problem &P, std::string *Why) {
  auto No = [&](std::string Msg) {
    if (Why)
      *Why = std::move(Msg);
    return false;
  };
  if (!P.validate().empty())
    return No(P.validate());
  if (P.Ranks > 4 || P.Microbatches > 8 || P.Stages > 8)
    return No("exact search runs for ranks <= 4, microbatches <= 8");
  for (int32_t R = 0; R < P.Ranks; ++R)
    if (P.stagesOf(R).size() > 2)
      return No("exact search handles at most two stages per rank");
  if (P.Latency != 0)
    return No("exact search needs zero communication latency");
  if (findTick(P) == 0)
    return No("exact search needs costs on a common tick, at most 8 ticks "
              "per job");
  return true;
}

ExactResult exactSearch(const Problem &P, const ExactOptions &Opts) {
  ExactResult Res;
  std::string Why;
  if (!exactApplies(P, &Why)) {
    Res.Skipped = Why;
    return Res;
  }
  double Tick = findTick(P);
  return ExactSearch(P, Tick).run(Opts, Tick);
}

} // namespace pps::synth
