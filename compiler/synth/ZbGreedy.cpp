//===- ZbGreedy.cpp - the published zero-bubble heuristic (baseline) ------===//
//
// A C++ rendering of the greedy initial solution of the zero-bubble paper's
// automatic scheduler (sail-sg/zero-bubble-pipeline-parallelism,
// megatron/core/pipeline_parallel/auto_schedule.py: Graph.manual_order and
// initial_solution), for loop placement with one stage per rank. Memory is
// the problem's memory model, the paper's mem_f, mem_b (our I) and mem_w:
// with the chunk model +1 at F, 0 at B, -1 at W; with the paper's own
// (`memory { F = 2; I = -1; W = -1; }`) its figures.
//
// It walks microbatches in order: for the first it fills each stage with as
// many F as fit before the first backward arrives; afterwards, per
// microbatch, one F per stage (skipped on a stage that is far ahead when
// prioritize_b) then one B per stage from the last stage down, inserting W
// whenever memory is full or a W fits in the wait for the next input (or
// the wait is within the largest bubble so far). The paper tries the eight
// combinations of its three flags; so do we.
//
// The timing the heuristic keeps internally is only used for its own
// decisions; the result is re-timed by our evaluator, like every other
// algorithm's. The stdlib's zb_auto.pps is the same construction written
// in .pps (tests/unit/synth/ZbAutoTest.cpp holds the two to the same
// orders); synth runs this one in its portfolio, so it never returns a
// schedule slower than zb_auto's that fits the same limit.
//
//===----------------------------------------------------------------------===//
#include "pps/synth/Algorithms.h"

#include <fmt/format.h>

#include <algorithm>

namespace pps::synth {

namespace {

struct ZbFlags {
  bool AllowBubbleBeforeFirstB;
  bool PrioritizeB;
  bool NoBubbleGreedy;
};

class ZbOrder {
public:
  explicit ZbOrder(const Problem &P) : P(P), N(P.Stages), M(P.Microbatches) {}

  /// Returns false where the original raises ("Cannot fit memory") or its
  /// memory assertion would fail.
  bool run(const ZbFlags &Fl, Order &Out);

private:
  double cost(int K, int J) const { return P.cost(JobKind(K), J); }
  /// The problem's memory model of stage J: the paper's mem_f, mem_b,
  /// mem_w (per stage, as its mem_f[stage] allows).
  int64_t mem(int K, int J) const { return P.memoryDelta(JobKind(K), J); }
  double &t(int K, int J, int Mb) { return T[P.index(JobKind(K), J, Mb)]; }
  /// The largest stage bubble so far: the paper's get_max_bubble(). A
  /// stage's bubble only grows, so the running maximum is it (linear time
  /// where the paper scans every stage).
  double maxBubble() const { return MaxBubble; }
  bool put(int J, int K);
  /// Puts W on stage J until a job of kind K fits in memory; false where
  /// none is left ("Cannot fit memory").
  bool makeRoom(int J, int K);
  /// Puts W on stage J while they end before its next input arrives at
  /// Arrive, then one more into the rest of the wait per the flags.
  bool fillWait(int J, double Arrive, const ZbFlags &Fl);

  const Problem &P;
  int N, M;
  std::vector<int> F, B, W;
  std::vector<int64_t> Mem;
  std::vector<double> E, T, StageBubble;
  double MaxBubble = 0;
  Order *Out = nullptr;
};

bool ZbOrder::put(int J, int K) {
  int I = K == 0 ? F[J] : K == 1 ? B[J] : W[J];
  if (I >= M || Mem[J] + mem(K, J) > P.MemoryLimit)
    return false;
  double C = cost(K, J), Comm = P.Latency;
  double Tmp = E[J] + C, NoBubble = Tmp;
  if (J > 0 && K == 0)
    Tmp = std::max(Tmp, t(0, J - 1, I) + Comm + C);
  if (J < N - 1 && K == 1)
    Tmp = std::max(Tmp, t(1, J + 1, I) + Comm + C);
  if (F[J] > 0)
    StageBubble[J] += Tmp - NoBubble;
  MaxBubble = std::max(MaxBubble, StageBubble[J]);
  E[J] = Tmp;
  t(K, J, I) = Tmp;
  Mem[J] += mem(K, J);
  (K == 0 ? F[J] : K == 1 ? B[J] : W[J]) += 1;
  Out->Ranks[P.rankOf(J)].push_back({JobKind(K), I, J});
  return true;
}

bool ZbOrder::makeRoom(int J, int K) {
  while (Mem[J] + mem(K, J) > P.MemoryLimit) {
    if (W[J] >= B[J])
      return false;
    if (!put(J, 2))
      return false;
  }
  return true;
}

bool ZbOrder::fillWait(int J, double Arrive, const ZbFlags &Fl) {
  while (W[J] < B[J] && E[J] + cost(2, J) <= Arrive)
    if (!put(J, 2))
      return false;
  if (W[J] < B[J] && E[J] < Arrive) {
    bool Put = Arrive - E[J] <= maxBubble() - StageBubble[J] ? Fl.NoBubbleGreedy
                                                             : true;
    if (Put && !put(J, 2))
      return false;
  }
  return true;
}

bool ZbOrder::run(const ZbFlags &Fl, Order &O) {
  Out = &O;
  O.Ranks.assign(P.Ranks, {});
  F.assign(N, 0);
  B.assign(N, 0);
  W.assign(N, 0);
  Mem.assign(N, 0);
  E.assign(N, 0.0);
  StageBubble.assign(N, 0.0);
  MaxBubble = 0;
  T.assign(P.numJobs(), 0.0);
  const double Comm = P.Latency;
  const int64_t MaxMem = P.MemoryLimit;

  for (int I = 0; I < M; ++I) {
    std::vector<int> FReq(N, 0);
    if (I == 0) {
      for (int J = 0; J < N; ++J)
        if (!put(J, 0))
          return false;
      double LastT = 0;
      for (int J = N - 1; J >= 0; --J) {
        if (J == N - 1) {
          LastT = t(0, J, I) + cost(1, J);
          continue;
        }
        int64_t Mm = Mem[J];
        double C = E[J];
        while (true) {
          int Next = F[J] + FReq[J];
          if (Next < M && Mm + mem(0, J) <= MaxMem) {
            if (Fl.AllowBubbleBeforeFirstB) {
              if (C + cost(0, J) > LastT + Comm)
                break;
            } else if (C >= LastT + Comm) {
              break;
            }
            Mm += mem(0, J);
            C += cost(0, J);
            FReq[J] += 1;
          } else {
            break;
          }
        }
        LastT = std::max(C, LastT + Comm) + cost(1, J);
      }
      for (int J = 0; J < N; ++J)
        while (J > 0 && FReq[J] > 0 && FReq[J] >= FReq[J - 1] &&
               F[J] + FReq[J] < M)
          FReq[J] -= 1;
      for (int J = 0; J < N; ++J)
        for (int K = 0; K < FReq[J]; ++K)
          if (!put(J, 0))
            return false;
      for (int J = N - 1; J >= 0; --J)
        if (!put(J, 1))
          return false;
      continue;
    }
    for (int J = 0; J < N; ++J) {
      if (F[J] >= M)
        continue;
      if (J + 1 < N && F[J] >= F[J + 1] + 2 && Fl.PrioritizeB) {
        double NextPlusFw = E[J + 1] + cost(0, J + 1) + cost(1, J + 1) + Comm;
        if (E[J] >= NextPlusFw)
          continue;
        int64_t MemWithW = Mem[J] + mem(0, J);
        double WCost = 0;
        int WCnt = 0;
        while (MemWithW > MaxMem && W[J] + WCnt < B[J]) {
          WCost += cost(2, J);
          MemWithW += mem(2, J);
          WCnt += 1;
        }
        if (E[J] + cost(0, J) + WCost <= NextPlusFw) {
          FReq[J] = 1;
          continue;
        }
        if (NextPlusFw - E[J] <= maxBubble() - StageBubble[J])
          continue;
      }
      FReq[J] = 1;
    }
    for (int J = N - 2; J >= 0; --J)
      FReq[J] = std::min(FReq[J], FReq[J + 1]);
    for (int J = 0; J < N; ++J) {
      if (FReq[J] == 0)
        continue;
      if (!makeRoom(J, 0))
        return false;
      if (J > 0 && !fillWait(J, t(0, J - 1, F[J]) + Comm, Fl))
        return false;
      if (!put(J, 0))
        return false;
    }
    for (int J = N - 1; J >= 0; --J) {
      if (B[J] != I)
        return false; // the original asserts here
      if (!makeRoom(J, 1))
        return false;
      if (J + 1 < N && !fillWait(J, t(1, J + 1, I) + Comm, Fl))
        return false;
      if (J == 0 && F[J] == M)
        while (W[J] < B[J])
          if (!put(J, 2))
            return false;
      if (!put(J, 1))
        return false;
    }
  }
  for (int J = 0; J < N; ++J)
    while (W[J] < M)
      if (!put(J, 2))
        return false;
  return true;
}

} // namespace

std::optional<Order> zeroBubbleOrder(const Problem &P, bool AllowBubble,
                                     bool PrioritizeB, bool NoBubbleGreedy) {
  if (P.Stages != P.Ranks || !P.validate().empty())
    return std::nullopt;
  Order O;
  if (!ZbOrder(P).run({AllowBubble, PrioritizeB, NoBubbleGreedy}, O))
    return std::nullopt;
  return O;
}

std::optional<Result> zeroBubbleHeuristic(const Problem &P) {
  std::optional<Result> Best;
  for (bool A : {true, false})
    for (bool Bf : {true, false})
      for (bool C : {true, false}) {
        std::optional<Order> Made = zeroBubbleOrder(P, A, Bf, C);
        if (!Made)
          continue;
        Order O = std::move(*Made);
        Evaluation E = evaluate(P, O);
        if (!E.Valid || E.MaxPeakMemory > P.MemoryLimit)
          continue;
        if (!Best || better(E, Best->Eval, P.Goal))
          Best = Result{std::move(O), std::move(E),
                        fmt::format("zero-bubble({},{},{})", A, Bf, C)};
      }
  return Best;
}

} // namespace pps::synth
