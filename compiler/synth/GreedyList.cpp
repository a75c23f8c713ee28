//===- GreedyList.cpp - greedy list scheduler under a memory limit --------===//
//
// An event-driven list scheduler. Every rank keeps a pending decision: the
// job it would start next and when. The rank whose decision starts earliest
// commits it; the decisions of the ranks it feeds are then recomputed. A
// rank chooses by a small rule with three parameters:
//
//  * Warm(r): how many microbatches may be in flight on rank r
//    (K * (P - 1 - r) * V + Base for V stages per rank, capped by the
//    memory limit; K = 0 means "as many as memory allows"). Below it the
//    rank prefers F, at or above it only I (1F1B-like once warm). A
//    microbatch is in flight from its first chunk's F to that chunk's I, or
//    (a variant for several stages per rank) to its last chunk's F.
//  * Slack: a pending W (which frees memory and never gates another rank)
//    is started when it ends no later than Slack after the next F/I could
//    start, i.e. W fills bubbles; Slack = 0 fills only true gaps.
//  * A later-chunk reserve: with several stages per rank, an F of an early
//    chunk leaves room for the same microbatch's later chunks, so the
//    schedule cannot fill memory with work it cannot finish.
//
// When a job's producer is not placed yet its arrival is bounded below by
// following the producer chain (each producer no earlier than its rank is
// free, plus its cost and latency); a rank does not commit a job whose
// arrival is unknown, but may fill the gap before it with a W. If every
// rank waits on such bounds, the earliest job whose input is known is
// committed. The sweep keeps the best variant by makespan.
//
//===----------------------------------------------------------------------===//
#include "pps/synth/Algorithms.h"

#include "pps/support/Parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace pps::synth {

namespace {

constexpr double Inf = std::numeric_limits<double>::infinity();

bool same(double A, double B) {
  return A == B ||
         std::fabs(A - B) <= 1e-9 * std::max({1.0, std::fabs(A), std::fabs(B)});
}
bool before(double A, double B) { return A < B && !same(A, B); }

struct Params {
  int K = 1;
  int Base = 1;
  double SlackFrac = 0;
  bool PreferLaterChunkF = true;
  /// With several stages per rank: count a microbatch as in flight from
  /// its first chunk's F to its last chunk's F (true), or to its first
  /// chunk's I (false).
  bool ToLastF = false;
  /// F is preferred while warming up, I otherwise; the preferred job is
  /// taken when it starts at most PatienceCost x its cost plus
  /// PatienceLatency x the latency after the other (0, 0: only on ties).
  double PatienceCost = 0;
  double PatienceLatency = 0;
};

/// The ranks' pending starts, to find which rank goes next: the lowest
/// rank whose start is not definitely after the earliest one (starts within
/// the tolerance of the earliest tie, and ties go to the lowest rank). A
/// tournament tree: O(log ranks) per change instead of a scan of every
/// rank at each of the 3SM commits. Descending into the left child whenever
/// its earliest start is not definitely after the overall earliest finds
/// that rank, as "definitely after" only grows with the start.
class StartTree {
public:
  explicit StartTree(int32_t Ranks) {
    while (N < size_t(Ranks))
      N *= 2;
    T.assign(2 * N, Inf);
  }
  /// Rank R's pending start (Inf: nothing pending).
  void set(int32_t R, double Start) {
    size_t I = N + size_t(R);
    T[I] = Start;
    for (I /= 2; I >= 1; I /= 2)
      T[I] = std::min(T[2 * I], T[2 * I + 1]);
  }
  /// The rank that goes next, or -1 if none has a start.
  int32_t next() const {
    const double Earliest = T[1];
    if (Earliest == Inf)
      return -1;
    size_t I = 1;
    while (I < N) {
      // (An empty subtree, Inf, is within any tolerance of Inf: test it.)
      double Left = T[2 * I];
      I = Left == Inf || before(Earliest, Left) ? 2 * I + 1 : 2 * I;
    }
    return int32_t(I - N);
  }

private:
  size_t N = 1;
  std::vector<double> T;
};

struct Decision {
  bool Has = false;
  Job J;
  double Start = Inf;
};

/// Per job (by Problem::index), what the start bounds ask along producer
/// chains: its producer (-1: none), its rank, its cost, and the latency
/// from its producer to it. The same for every run of the sweep.
struct JobTables {
  std::vector<int32_t> Prod, Rank;
  std::vector<double> Cost, Lat;

  explicit JobTables(const Problem &P) {
    const int32_t N = P.numJobs();
    Prod.assign(N, -1);
    Rank.assign(N, 0);
    Cost.assign(N, 0.0);
    Lat.assign(N, 0.0);
    for (JobKind K : {JobKind::F, JobKind::I, JobKind::W})
      for (int32_t S = 0; S < P.Stages; ++S)
        for (int32_t Mb = 0; Mb < P.Microbatches; ++Mb) {
          int32_t Id = P.index(K, S, Mb);
          Rank[Id] = P.rankOf(S);
          Cost[Id] = P.cost(K, S);
          if (std::optional<Job> Pr = P.producerOf({K, Mb, S})) {
            Prod[Id] = P.index(Pr->Kind, Pr->Stage, Pr->Mb);
            Lat[Id] = P.rankOf(Pr->Stage) != Rank[Id] ? P.Latency : 0.0;
          }
        }
  }
};

class Greedy {
public:
  Greedy(const Problem &P, const JobTables &T, const Params &Pa)
      : P(P), T(T), Pa(Pa) {}

  bool run(Order &Out);

private:
  double end(JobKind K, int32_t S, int32_t Mb) const {
    return End[P.index(K, S, Mb)];
  }
  /// Arrival of a job's input: known (true) or a lower bound (false).
  std::pair<double, bool> arrival(JobKind K, int32_t S, int32_t Mb) const;
  /// A lower bound on when job Id, not yet placed, can start: no earlier
  /// than its rank is free, nor than its producer can end (following up to
  /// Depth producers that are not placed either).
  double startBound(int32_t Id, int Depth) const;
  Decision decide(int32_t R, bool KnownOnly = false) const;
  void commit(int32_t R, const Decision &D);

  const Problem &P;
  const JobTables &T;
  Params Pa;
  std::vector<double> End;
  std::vector<int32_t> NF, NI, NW;
  std::vector<int64_t> Mem, Outstanding, Warm, Remaining;
  std::vector<double> Free;
  std::vector<llvm::SmallVector<int32_t, 4>> StagesOf;
  /// Per stage: stages on the same rank later in the pipeline.
  std::vector<int32_t> Reserve;
  Order *Ord = nullptr;
};

std::pair<double, bool> Greedy::arrival(JobKind K, int32_t S,
                                        int32_t Mb) const {
  int32_t Id = P.index(K, S, Mb);
  int32_t Pr = T.Prod[Id];
  if (Pr < 0)
    return {0.0, true};
  double E = End[Pr];
  if (E >= 0)
    return {E + T.Lat[Id], true};
  return {startBound(Pr, 6) + T.Cost[Pr] + T.Lat[Id], false};
}

double Greedy::startBound(int32_t Id, int Depth) const {
  // The chain Id, its producer, ... up to Depth producers or the first one
  // placed; then the bounds from its far end back.
  int32_t Chain[8];
  int N = 0;
  Chain[N++] = Id;
  for (int D = Depth; D > 0; --D) {
    int32_t Pr = T.Prod[Chain[N - 1]];
    if (Pr < 0)
      break;
    Chain[N++] = Pr;
    if (End[Pr] >= 0)
      break;
  }
  // Chain[N - 1] is placed (its end is known), has no producer, or is as far
  // as the depth goes: its bound is its rank being free, or its end.
  int32_t Far = Chain[N - 1];
  bool Placed = N > 1 && End[Far] >= 0;
  double E = Placed ? End[Far] : Free[T.Rank[Far]] + T.Cost[Far];
  double Bound = Free[T.Rank[Far]];
  for (int K = N - 2; K >= 0; --K) {
    int32_t J = Chain[K];
    Bound = std::max(Free[T.Rank[J]], E + T.Lat[J]);
    E = Bound + T.Cost[J];
  }
  return Bound;
}

Decision Greedy::decide(int32_t R, bool KnownOnly) const {
  Decision None;
  if (Remaining[R] == 0)
    return None;
  const double T0 = Free[R];
  const int32_t M = P.Microbatches;
  // Best F and best I candidates (effective start, known?).
  Decision BestF, BestI;
  bool FKnown = false, IKnown = false;
  bool WantF = Outstanding[R] < Warm[R];
  for (int32_t S : StagesOf[R]) {
    // The warm-up bound applies to a microbatch entering the rank (its
    // first chunk); later chunks of microbatches already in are always
    // wanted, or the rank could wait on itself.
    bool Entering = Reserve[S] + 1 == int32_t(StagesOf[R].size());
    if (NF[S] < M && (WantF || !Entering) &&
        Mem[R] + P.memoryDelta(JobKind::F, S) * (1 + Reserve[S]) <=
            P.MemoryLimit) {
      auto [A, Known] = arrival(JobKind::F, S, NF[S]);
      double St = std::max(T0, A);
      bool Better = before(St, BestF.Start) ||
                    (same(St, BestF.Start) && Pa.PreferLaterChunkF);
      if ((Known || !KnownOnly) && (!BestF.Has || Better)) {
        BestF = {true, {JobKind::F, NF[S], S}, St};
        FKnown = Known;
      }
    }
    if (NI[S] < NF[S]) {
      auto [A, Known] = arrival(JobKind::I, S, NI[S]);
      double St = std::max(T0, A);
      if (KnownOnly && !Known)
        continue;
      if (!BestI.Has || before(St, BestI.Start) ||
          (same(St, BestI.Start) && S > BestI.J.Stage)) {
        BestI = {true, {JobKind::I, NI[S], S}, St};
        IKnown = Known;
      }
    }
  }
  // F is preferred while warming up, I otherwise: on ties, and when it
  // starts at most the patience after the other. With latency the F and I
  // of a rank arrive a few latencies apart where without it they tie; taking
  // whichever starts first then breaks the rank's F-I rhythm (two I in a
  // row, the next F a job late, ...), which costs more than the wait.
  Decision C;
  bool CKnown = false;
  bool TakeF = BestF.Has;
  if (BestF.Has && BestI.Has) {
    const Job &Pref = WantF ? BestF.J : BestI.J;
    double Wait = Pa.PatienceCost * P.cost(Pref.Kind, Pref.Stage) +
                  Pa.PatienceLatency * P.Latency;
    TakeF = WantF ? !before(BestI.Start + Wait, BestF.Start)
                  : before(BestF.Start + Wait, BestI.Start);
  }
  if (TakeF) {
    C = BestF;
    CKnown = FKnown;
  } else if (BestI.Has) {
    C = BestI;
    CKnown = IKnown;
  }
  // A pending W (oldest first, any stage of the rank).
  Decision W;
  for (int32_t S : StagesOf[R])
    if (NW[S] < NI[S]) {
      double St = std::max(T0, end(JobKind::I, S, NW[S]));
      if (!W.Has || before(St, W.Start))
        W = {true, {JobKind::W, NW[S], S}, St};
    }
  if (W.Has) {
    double WCost = P.cost(JobKind::W, W.J.Stage);
    if (!C.Has || !before(C.Start + Pa.SlackFrac * WCost, W.Start + WCost))
      return W;
  }
  if (C.Has && CKnown)
    return C;
  return None;
}

void Greedy::commit(int32_t R, const Decision &D) {
  const Job &J = D.J;
  double C = P.cost(J.Kind, J.Stage);
  End[P.index(J.Kind, J.Stage, J.Mb)] = D.Start + C;
  Free[R] = D.Start + C;
  --Remaining[R];
  switch (J.Kind) {
  case JobKind::F:
    ++NF[J.Stage];
    Mem[R] += P.memoryDelta(J.Kind, J.Stage);
    if (Reserve[J.Stage] + 1 == int32_t(StagesOf[R].size()))
      ++Outstanding[R];
    else if (Pa.ToLastF && Reserve[J.Stage] == 0)
      --Outstanding[R];
    break;
  case JobKind::I:
    ++NI[J.Stage];
    Mem[R] += P.memoryDelta(J.Kind, J.Stage);
    if (!Pa.ToLastF && Reserve[J.Stage] + 1 == int32_t(StagesOf[R].size()))
      --Outstanding[R];
    break;
  case JobKind::W:
    ++NW[J.Stage];
    Mem[R] += P.memoryDelta(J.Kind, J.Stage);
    break;
  }
  Ord->Ranks[R].push_back(J);
}

bool Greedy::run(Order &Out) {
  const int32_t Ranks = P.Ranks, S = P.Stages, M = P.Microbatches;
  Ord = &Out;
  Out.Ranks.assign(Ranks, {});
  End.assign(P.numJobs(), -1.0);
  NF.assign(S, 0);
  NI.assign(S, 0);
  NW.assign(S, 0);
  Mem.assign(Ranks, 0);
  Outstanding.assign(Ranks, 0);
  Free.assign(Ranks, 0.0);
  Remaining.assign(Ranks, 0);
  Warm.assign(Ranks, 0);
  StagesOf.assign(Ranks, {});
  Reserve.assign(S, 0);
  for (int32_t R = 0; R < Ranks; ++R) {
    StagesOf[R] = P.stagesOf(R);
    Remaining[R] = 3 * int64_t(StagesOf[R].size()) * M;
    for (size_t I = 0; I < StagesOf[R].size(); ++I)
      Reserve[StagesOf[R][I]] = int32_t(StagesOf[R].size() - 1 - I);
    int64_t Chunks = StagesOf[R].size();
    // At most as many in flight (F run, I not yet) as the memory holds F's.
    int64_t MaxF = 1;
    for (int32_t St : StagesOf[R])
      MaxF = std::max(MaxF, P.memoryDelta(JobKind::F, St));
    int64_t Fit = std::max<int64_t>(1, P.MemoryLimit / MaxF);
    int64_t W =
        Pa.K == 0 ? Fit : int64_t(Pa.K) * (Ranks - 1 - R) * Chunks + Pa.Base;
    Warm[R] = std::clamp<int64_t>(W, 1, Fit);
  }
  if (Pa.PreferLaterChunkF)
    for (auto &L : StagesOf) // visit later chunks first so ties go to them
      std::reverse(L.begin(), L.end());

  std::vector<Decision> Pending(Ranks);
  StartTree Starts(Ranks);
  auto SetPending = [&](int32_t R, const Decision &D) {
    Pending[R] = D;
    Starts.set(R, D.Has ? D.Start : Inf);
  };
  for (int32_t R = 0; R < Ranks; ++R)
    SetPending(R, decide(R));
  int64_t Left = P.numJobs();
  llvm::SmallVector<int32_t, 8> Touched;
  while (Left > 0) {
    int32_t Best = Starts.next();
    if (Best < 0) {
      // Every rank waits for a job whose input is not placed yet, on lower
      // bounds that proved too hopeful: commit the earliest job whose input
      // is known instead.
      for (int32_t R = 0; R < Ranks; ++R) {
        Decision D = decide(R, /*KnownOnly=*/true);
        if (D.Has && (Best < 0 || before(D.Start, Pending[Best].Start))) {
          SetPending(R, D);
          Best = R;
        }
      }
      if (Best < 0)
        return false; // nothing can run: the memory rule deadlocked
    }
    commit(Best, Pending[Best]);
    --Left;
    Touched.clear();
    Touched.push_back(Best);
    for (int32_t St : StagesOf[Best]) {
      if (St > 0)
        Touched.push_back(P.rankOf(St - 1));
      if (St + 1 < S)
        Touched.push_back(P.rankOf(St + 1));
    }
    // With several stages per rank the neighbours repeat (V: both stages
    // of rank r border ranks r - 1 and r + 1); deciding again would give
    // the same answer.
    // (std::sort: a handful of ranks, sorted in place; llvm::sort hands
    // them to qsort, a call per commit.)
    std::sort(Touched.begin(), Touched.end());
    Touched.erase(std::unique(Touched.begin(), Touched.end()), Touched.end());
    for (int32_t R : Touched)
      SetPending(R, decide(R));
  }
  return true;
}

} // namespace

std::optional<Result> greedyList(const Problem &P, unsigned Threads) {
  const JobTables Tables(P);
  // The full sweep is 13 warm-up rules x 4 slacks (x 2 chunk orders with
  // several stages per rank, x 2 in-flight counts); above 2000 jobs a coarser
  // grid so the list scheduler stays near linear time overall.
  bool Large = P.numJobs() > 2000;
  llvm::SmallVector<int, 4> Bases = {0, 1, 2, 3};
  llvm::SmallVector<double, 4> Slacks = {0.0, 0.5, 1.0, 1e9};
  // Patience (in job costs, in latencies) only matters with latency.
  llvm::SmallVector<std::pair<double, double>, 6> Patiences = {{0, 0}};
  if (P.Latency > 0)
    Patiences = {{0, 0}, {0, 1}, {0, 2}, {0, 4}, {0.5, 0}, {1, 0}};
  if (Large) {
    Bases = {0, 2};
    Slacks = {0.0, 1e9};
  }
  std::vector<Params> Variants;
  for (int K : {0, 1, 2, 3})
    for (int Base : Bases) {
      if (K == 0 && Base > 0)
        continue;
      for (double Slack : Slacks)
        for (int Mode = 0; Mode < 4; ++Mode) {
          bool Later = Mode % 2 == 0, ToLastF = Mode >= 2;
          if ((!Later || ToLastF) && P.Stages == P.Ranks)
            continue;
          if (Large && Mode != 2 && P.Stages != P.Ranks)
            continue; // large, several stages per rank: the best mode only
          for (auto [PatC, PatL] : Patiences)
            Variants.push_back({K, Base, Slack, Later, ToLastF, PatC, PatL});
        }
    }
  // The variants run in parallel and keep their figures; the best is taken
  // in the order they are listed (as one at a time would) and run again
  // for its order.
  std::vector<std::optional<Evaluation>> Evals(Variants.size());
  parallelFor(Variants.size(), workerThreads(Threads), [&](size_t V, unsigned) {
    Order O;
    if (!Greedy(P, Tables, Variants[V]).run(O))
      return;
    Evaluation E = evaluate(P, O);
    if (E.Valid && E.MaxPeakMemory <= P.MemoryLimit)
      Evals[V] = std::move(E);
  });
  int Win = -1;
  for (size_t V = 0; V < Variants.size(); ++V)
    if (Evals[V] && (Win < 0 || better(*Evals[V], *Evals[size_t(Win)], P.Goal)))
      Win = int(V);
  if (Win < 0)
    return std::nullopt;
  const Params &Pa = Variants[size_t(Win)];
  Result Best;
  bool Ran = Greedy(P, Tables, Pa).run(Best.Ord);
  assert(Ran && "the winner runs as it did in the sweep");
  (void)Ran;
  Best.Eval = std::move(*Evals[size_t(Win)]);
  Best.Algorithm =
      fmt::format("greedy(k={},base={},slack={},{}{}{})", Pa.K, Pa.Base,
                  Pa.SlackFrac >= 1e9 ? -1.0 : Pa.SlackFrac,
                  Pa.PreferLaterChunkF ? "late-first" : "early-first",
                  Pa.ToLastF ? ",to-last-f" : "",
                  Pa.PatienceCost + Pa.PatienceLatency > 0
                      ? fmt::format(",patience={}job+{}lat", Pa.PatienceCost,
                                    Pa.PatienceLatency)
                      : "");
  return Best;
}

} // namespace pps::synth
