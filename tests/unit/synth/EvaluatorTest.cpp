//===- EvaluatorTest.cpp - the synth evaluator, gap filling, IR round trip ===//
#include "SynthTestUtil.h"

#include "pps/sim/Simulator.h"

#include <gtest/gtest.h>

#include <random>

using namespace pps;
using namespace pps::synth;

namespace {

Job F(int Mb, int S) { return {JobKind::F, Mb, S}; }
Job I(int Mb, int S) { return {JobKind::I, Mb, S}; }
Job W(int Mb, int S) { return {JobKind::W, Mb, S}; }

/// 1F1B with split backward on 2 ranks, 2 microbatches.
Order oneFOneB() {
  Order O;
  O.Ranks = {{F(0, 0), F(1, 0), I(0, 0), W(0, 0), I(1, 0), W(1, 0)},
             {F(0, 1), I(0, 1), W(0, 1), F(1, 1), I(1, 1), W(1, 1)}};
  return O;
}

TEST(SynthEvaluator, TimesAHandWrittenOrder) {
  Problem P = Problem::make(2, 2, ir::Placement::Loop, {1, 1, 1}, 2);
  Evaluation E = evaluate(P, oneFOneB(), true);
  ASSERT_TRUE(E.Valid) << E.Error;
  // rank 1: F0 [1,2) I0 [2,3) W0 [3,4) F1 [4,5) I1 [5,6) W1 [6,7)
  // rank 0: F0 [0,1) F1 [1,2) I0 [3,4) W0 [4,5) I1 [6,7) W1 [7,8)
  EXPECT_DOUBLE_EQ(E.Makespan, 8);
  EXPECT_DOUBLE_EQ(E.Span[0], 8);
  EXPECT_DOUBLE_EQ(E.Span[1], 6);
  EXPECT_DOUBLE_EQ(E.Bubble[0], 2);
  EXPECT_EQ(E.PeakMemory[0], 2);
  EXPECT_EQ(E.PeakMemory[1], 1);
  EXPECT_DOUBLE_EQ(E.Start[P.index(JobKind::I, 0, 1)], 6);
}

TEST(SynthEvaluator, LatencyDelaysCrossRankInputsOnly) {
  Problem P = Problem::make(2, 2, ir::Placement::Loop, {1, 1, 1}, 2, 0.5);
  Evaluation E = evaluate(P, oneFOneB(), true);
  ASSERT_TRUE(E.Valid);
  EXPECT_DOUBLE_EQ(E.Start[P.index(JobKind::F, 1, 0)], 1.5);
  EXPECT_DOUBLE_EQ(E.Start[P.index(JobKind::I, 1, 0)], 2.5); // same rank
  EXPECT_DOUBLE_EQ(E.Start[P.index(JobKind::I, 0, 0)], 4.0);
}

TEST(SynthEvaluator, RejectsBadOrders) {
  Problem P = Problem::make(2, 2, ir::Placement::Loop, {1, 1, 1}, 2);
  Order Missing = oneFOneB();
  Missing.Ranks[0].pop_back();
  EXPECT_FALSE(evaluate(P, Missing).Valid);
  Order Twice = oneFOneB();
  Twice.Ranks[0].back() = W(0, 0);
  EXPECT_FALSE(evaluate(P, Twice).Valid);
  Order WrongRank = oneFOneB();
  std::swap(WrongRank.Ranks[0][0], WrongRank.Ranks[1][0]);
  EXPECT_FALSE(evaluate(P, WrongRank).Valid);
  // Rank 0 waits for I0@1's gradient before sending F1: rank 1 needs F1
  // first... a cycle: rank 0 does I0 before F1, rank 1 does F1 before I0.
  Order Cycle;
  Cycle.Ranks = {{F(0, 0), I(0, 0), F(1, 0), W(0, 0), I(1, 0), W(1, 0)},
                 {F(0, 1), F(1, 1), I(0, 1), I(1, 1), W(0, 1), W(1, 1)}};
  Evaluation E = evaluate(P, Cycle);
  EXPECT_FALSE(E.Valid);
  EXPECT_NE(E.Error.find("waits forever"), std::string::npos) << E.Error;
}

TEST(SynthEvaluator, MatchesTheSimulatorInDataflowMode) {
  // Every algorithm's output, loop and V, with and without latency, timed
  // by the simulator on the compute-only IR: same makespan and peaks.
  for (ir::Placement Pl : {ir::Placement::Loop, ir::Placement::V})
    for (double Lat : {0.0, 0.25})
      for (int64_t Mem : {4, 6}) {
        Problem P = Problem::make(4, 8, Pl, {1, 2, 1}, Mem, Lat);
        P.Cost[P.Stages - 1].F = 1.5;
        SynthOptions SO;
        SO.UseExact = false;
        std::optional<Result> R = synthesize(P, SO);
        ASSERT_TRUE(R) << "placement " << int(Pl) << " mem " << Mem;
        ir::Schedule S = toSchedule(P, R->Ord);
        sim::SimOptions Opts;
        Opts.Dataflow = sim::DataflowMode::Dataflow;
        sim::SimResult Sim = sim::simulate(S, Opts);
        ASSERT_FALSE(Sim.Deadlocked);
        EXPECT_NEAR(Sim.Makespan, R->Eval.Makespan, 1e-9);
        for (int32_t Rk = 0; Rk < P.Ranks; ++Rk)
          EXPECT_EQ(Sim.Ranks[Rk].PeakMemory, R->Eval.PeakMemory[Rk]);
      }
}

TEST(SynthEvaluator, FillGapsNeverWorsensAndLeavesNoReadyGap) {
  // A deliberately lazy order: every W at the end of its rank.
  Problem P = Problem::make(4, 8, ir::Placement::Loop, {1, 1, 1}, 8);
  Order O;
  O.Ranks.assign(4, {});
  for (int R = 0; R < 4; ++R) {
    int Warm = 4 - R;
    for (int M = 0; M < Warm; ++M)
      O.Ranks[R].push_back(F(M, R));
    for (int M = 0; M < 8; ++M) {
      O.Ranks[R].push_back(I(M, R));
      if (M + Warm < 8)
        O.Ranks[R].push_back(F(M + Warm, R));
    }
    for (int M = 0; M < 8; ++M)
      O.Ranks[R].push_back(W(M, R));
  }
  Evaluation Before = evaluate(P, O);
  ASSERT_TRUE(Before.Valid) << Before.Error;
  unsigned Moves = fillGaps(P, O);
  Evaluation After = evaluate(P, O);
  ASSERT_TRUE(After.Valid);
  EXPECT_GT(Moves, 0u);
  EXPECT_LE(After.Makespan, Before.Makespan);
  EXPECT_LE(After.MaxPeakMemory, Before.MaxPeakMemory);
  EXPECT_EQ(fillGaps(P, O), 0u); // a fixed point
}

/// fillGaps as it was written first: every round times the whole order
/// again. The library re-times only what each move changes; the two must
/// agree move for move.
unsigned fillGapsByWholeEvaluation(const Problem &P, Order &O) {
  const double Eps = 1e-9;
  unsigned Moves = 0;
  Evaluation E = evaluate(P, O, /*KeepStarts=*/true);
  if (!E.Valid)
    return 0;
  for (unsigned Round = 0; Round < 100000; ++Round) {
    std::vector<std::pair<int32_t, size_t>> Found;
    for (int32_t R = 0; R < P.Ranks; ++R) {
      const std::vector<Job> &Jobs = O.Ranks[R];
      double Free = 0;
      for (size_t K = 0; K + 1 < Jobs.size(); ++K) {
        const Job &A = Jobs[K], &Bj = Jobs[K + 1];
        double StartA = E.Start[P.index(A.Kind, A.Stage, A.Mb)];
        double Gap = StartA - Free;
        Free = StartA + P.cost(A.Kind, A.Stage);
        if (Gap <= Eps || Bj.Kind == JobKind::F ||
            P.cost(Bj.Kind, Bj.Stage) > Gap + Eps)
          continue;
        std::optional<Job> Pr = P.producerOf(Bj);
        if (Pr && *Pr == A)
          continue;
        if (Pr) {
          double Arr = E.Start[P.index(Pr->Kind, Pr->Stage, Pr->Mb)] +
                       P.cost(Pr->Kind, Pr->Stage) +
                       (P.rankOf(Pr->Stage) != R ? P.Latency : 0.0);
          if (Arr > StartA - Gap + Eps)
            continue;
        }
        Found.push_back({R, K});
        break;
      }
    }
    if (Found.empty())
      break;
    Order Before = O;
    for (auto [R, K] : Found)
      std::swap(O.Ranks[R][K], O.Ranks[R][K + 1]);
    Evaluation E2 = evaluate(P, O, true);
    if (Found.size() > 1 && (!E2.Valid || E2.Makespan > E.Makespan + Eps ||
                             E2.MaxPeakMemory > E.MaxPeakMemory)) {
      O = Before;
      auto [R, K] = Found.front();
      std::swap(O.Ranks[R][K], O.Ranks[R][K + 1]);
      Found.resize(1);
      E2 = evaluate(P, O, true);
    }
    if (!E2.Valid) {
      O = std::move(Before);
      break;
    }
    Moves += Found.size();
    E = std::move(E2);
  }
  return Moves;
}

TEST(SynthEvaluator, FillGapsEqualsTheWholeEvaluationReference) {
  // Orders with gaps to fill: the heuristics' results before synth's
  // polish, and lazy orders (every W at the end of its rank), under
  // random per-stage costs and latencies, loop and V placement.
  std::mt19937 Rng(18);
  auto Draw = [&](double Lo, double Hi) {
    return std::uniform_real_distribution<double>(Lo, Hi)(Rng);
  };
  unsigned Compared = 0, Moved = 0;
  for (int Case = 0; Case < 120; ++Case) {
    bool V = Case % 3 == 2;
    int32_t Ranks = 2 + int32_t(Rng() % 7);
    int32_t M = Ranks + int32_t(Rng() % uint32_t(2 * Ranks));
    Problem P =
        Problem::make(Ranks, M, V ? ir::Placement::V : ir::Placement::Loop,
                      {1, 1, 1}, V ? 2 * M : M, Case % 2 ? Draw(0, 1) : 0.0);
    for (JobCost &C : P.Cost)
      C = {Draw(0.25, 3), Draw(0.25, 3), Draw(0.25, 3)};
    std::vector<Order> Orders;
    if (std::optional<Result> G = greedyList(P, 1))
      Orders.push_back(G->Ord);
    if (std::optional<Result> VP = vPatternSearch(P, 1))
      Orders.push_back(VP->Ord);
    if (!V) {
      Order Lazy;
      Lazy.Ranks.assign(size_t(Ranks), {});
      for (int32_t R = 0; R < Ranks; ++R) {
        int32_t Warm = std::min(M, Ranks - R);
        for (int32_t Mb = 0; Mb < Warm; ++Mb)
          Lazy.Ranks[R].push_back(F(Mb, R));
        for (int32_t Mb = 0; Mb < M; ++Mb) {
          Lazy.Ranks[R].push_back(I(Mb, R));
          if (Mb + Warm < M)
            Lazy.Ranks[R].push_back(F(Mb + Warm, R));
        }
        for (int32_t Mb = 0; Mb < M; ++Mb)
          Lazy.Ranks[R].push_back(W(Mb, R));
      }
      Orders.push_back(std::move(Lazy));
    }
    for (Order &O : Orders) {
      Order Ref = O;
      unsigned RefMoves = fillGapsByWholeEvaluation(P, Ref);
      unsigned Moves = fillGaps(P, O);
      ASSERT_EQ(Moves, RefMoves) << "case " << Case;
      ASSERT_TRUE(O.Ranks == Ref.Ranks) << "case " << Case;
      ++Compared;
      Moved += Moves > 0;
    }
  }
  // The comparison means something only if moves happened.
  EXPECT_GT(Moved, Compared / 4) << Moved << " of " << Compared;
}

TEST(SynthEvaluator, IrRoundTrip) {
  Problem P = Problem::make(2, 2, ir::Placement::Loop, {1, 2, 0.5}, 2);
  Order O = oneFOneB();
  ir::Schedule S = toSchedule(P, O);
  EXPECT_EQ(S.numActions(), 12u);
  EXPECT_DOUBLE_EQ(S.Cost.Default.I, 2);
  EXPECT_DOUBLE_EQ(S.Cost.Default.B, 2.5);
  ASSERT_TRUE(S.MemoryLimit);
  EXPECT_EQ(*S.MemoryLimit, 2);
  Order Back = fromIr(S);
  ASSERT_EQ(Back.Ranks.size(), 2u);
  EXPECT_TRUE(Back.Ranks[0] == O.Ranks[0]);
  EXPECT_TRUE(Back.Ranks[1] == O.Ranks[1]);
  Problem Q = Problem::fromSchedule(S, 2);
  EXPECT_EQ(Q.Stages, 2);
  EXPECT_DOUBLE_EQ(Q.Cost[1].W, 0.5);
}

TEST(SynthEvaluator, ValidatesProblems) {
  EXPECT_EQ(Problem::make(4, 8, ir::Placement::Loop, {1, 1, 1}, 4).validate(),
            "");
  EXPECT_NE(Problem::make(0, 8, ir::Placement::Loop, {1, 1, 1}, 4).validate(),
            "");
  EXPECT_NE(Problem::make(4, 0, ir::Placement::Loop, {1, 1, 1}, 4).validate(),
            "");
  EXPECT_NE(Problem::make(4, 8, ir::Placement::Loop, {0, 1, 1}, 4).validate(),
            "");
  EXPECT_NE(Problem::make(4, 8, ir::Placement::Loop, {1, 1, 1}, 0).validate(),
            "");
  std::string Why;
  EXPECT_FALSE(synthesize(Problem::make(4, 8, ir::Placement::V, {1, 1, 1}, 1),
                          {}, &Why));
  EXPECT_NE(Why.find("at least 2"), std::string::npos) << Why;
}

} // namespace

TEST(SynthEvaluator, BetterFollowsTheObjective) {
  Evaluation A, B;
  A.Valid = B.Valid = true;
  A.Makespan = 10;
  A.MaxSpan = 9;
  B.Makespan = 11;
  B.MaxSpan = 8;
  EXPECT_TRUE(better(A, B, Objective::Makespan));
  EXPECT_FALSE(better(B, A, Objective::Makespan));
  EXPECT_TRUE(better(B, A, Objective::Span));
  EXPECT_FALSE(better(A, B, Objective::Span));
  // Ties on the objective go to the other figure, then to memory.
  B.MaxSpan = 9;
  EXPECT_TRUE(better(A, B, Objective::Span));
  B.Makespan = 10;
  B.MaxPeakMemory = 3;
  A.MaxPeakMemory = 4;
  EXPECT_TRUE(better(B, A, Objective::Span));
  EXPECT_DOUBLE_EQ(objectiveValue(A, Objective::Span), 9);
  EXPECT_DOUBLE_EQ(objectiveValue(A, Objective::Makespan), 10);
}

TEST(SynthEvaluator, SpanObjectiveNeverWorseOnSpan) {
  // Same problems, both objectives: the span goal's result has a max span
  // no larger than the makespan goal's, and meets its bound when it says so.
  for (JobCost C : {JobCost{5, 6, 4}, JobCost{1, 2, 1}})
    for (int64_t Mem : {3, 5, 8}) {
      Problem P = Problem::make(4, 8, ir::Placement::Loop, C, Mem);
      SynthOptions SO;
      SO.UseExact = false;
      std::optional<Result> M = synthesize(P, SO);
      P.Goal = Objective::Span;
      std::optional<Result> S = synthesize(P, SO);
      ASSERT_TRUE(M && S);
      EXPECT_LE(S->Eval.MaxSpan, M->Eval.MaxSpan + 1e-9) << Mem;
      EXPECT_LE(S->Eval.MaxPeakMemory, Mem);
      EXPECT_GE(S->Eval.MaxSpan, spanLowerBound(P) - 1e-9);
    }
}
