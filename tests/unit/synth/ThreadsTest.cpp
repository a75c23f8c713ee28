//===- ThreadsTest.cpp - the heuristics give one answer for any threads ---===//
//
// greedyList and vPatternSearch try their candidates on several threads and
// compare them in the order they are listed. The order, figures and name
// they return must not depend on the number of threads.
//
//===----------------------------------------------------------------------===//
#include "pps/synth/Algorithms.h"

#include <gtest/gtest.h>

#include <random>

using namespace pps;
using namespace pps::synth;

namespace {

void expectSame(const std::optional<Result> &A, const std::optional<Result> &B,
                int Case) {
  ASSERT_EQ(A.has_value(), B.has_value()) << "case " << Case;
  if (!A)
    return;
  EXPECT_EQ(A->Algorithm, B->Algorithm) << "case " << Case;
  EXPECT_EQ(A->Eval.Makespan, B->Eval.Makespan) << "case " << Case;
  ASSERT_EQ(A->Ord.Ranks.size(), B->Ord.Ranks.size());
  for (size_t R = 0; R < A->Ord.Ranks.size(); ++R)
    EXPECT_TRUE(A->Ord.Ranks[R] == B->Ord.Ranks[R])
        << "case " << Case << ", rank " << R;
}

TEST(SynthThreads, OneAnswerForAnyNumberOfThreads) {
  std::mt19937 Rng(7);
  std::uniform_real_distribution<double> Cost(0.5, 2.0);
  for (int Case = 0; Case < 24; ++Case) {
    bool V = Case % 2;
    int32_t Ranks = 2 + int32_t(Rng() % 7);
    int32_t Mb = Ranks * (1 + int32_t(Rng() % 3));
    int64_t Limit = int64_t(V ? 2 : 1) * Ranks + int64_t(Rng() % 3);
    double Latency = Rng() % 2 ? 0.0 : 0.25;
    Problem P =
        Problem::make(Ranks, Mb, V ? ir::Placement::V : ir::Placement::Loop,
                      {Cost(Rng), Cost(Rng), Cost(Rng)}, Limit, Latency);
    expectSame(greedyList(P, 1), greedyList(P, 3), Case);
    if (V)
      expectSame(vPatternSearch(P, 1), vPatternSearch(P, 3), Case);
  }
}

} // namespace
