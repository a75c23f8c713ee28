//===- MemoryTest.cpp - the activation memory analysis (the one rule) -----===//
#include "pps/analysis/Memory.h"
#include "pps/ir/Builder.h"
#include "pps/passes/Memory.h"
#include "pps/sim/Simulator.h"

#include <gtest/gtest.h>

using namespace pps;
using namespace pps::analysis;
using ir::ScheduleBuilder;

namespace {

double peak(const ir::Schedule &S, MemoryModel M = {}) {
  MemoryOptions O;
  O.Model = M;
  return analyzeMemory(S, O).Ranks[0].Peak;
}

TEST(Memory, SplitBackwardReleasesAtW) {
  ScheduleBuilder B(1, 1, 2);
  B.rank(0).F(0).F(1).I(0).I(1).W(0).W(1);
  EXPECT_EQ(peak(B.schedule()), 2);
  // I without a W releases at I.
  ScheduleBuilder C(1, 1, 3);
  C.rank(0).F(0).I(0).F(1).I(1).F(2).W(1);
  EXPECT_EQ(peak(C.schedule()), 2);
  ScheduleBuilder D(1, 1, 3);
  D.rank(0).F(0).I(0).F(1).F(2).W(0);
  EXPECT_EQ(peak(D.schedule()), 3);
}

TEST(Memory, AnFIsCountedOnceAndAStrayBackwardFreesNothing) {
  ScheduleBuilder B(1, 1, 2);
  // F0 twice: one live (m, s); B1 of a microbatch never forwarded: nothing.
  B.rank(0).F(0).F(0).B(1).F(1).B(0).B(0).B(1);
  MemoryOptions O;
  O.KeepCurve = true;
  MemoryProfile M = analyzeMemory(B.schedule(), O);
  EXPECT_EQ(M.Ranks[0].Peak, 2);
  EXPECT_EQ(M.Ranks[0].PeakAt, 3);
  std::vector<std::pair<uint32_t, double>> Want = {
      {0, 1}, {3, 2}, {4, 1}, {6, 0}};
  EXPECT_EQ(M.Ranks[0].Curve, Want);
}

TEST(Memory, ALimitNamesTheFirstActionAboveIt) {
  ScheduleBuilder B(2, 2, 3);
  B.rank(0).F(0).F(1).F(2).B(0).B(1).B(2);
  B.rank(1).F(0).B(0).F(1).B(1).F(2).B(2);
  MemoryOptions O;
  O.Limit = 2;
  MemoryProfile M = analyzeMemory(B.schedule(), O);
  EXPECT_EQ(M.Ranks[0].OverAt, 2);
  EXPECT_EQ(M.Ranks[0].OverLevel, 3);
  EXPECT_EQ(M.Ranks[1].OverAt, -1);
  EXPECT_EQ(M.wholePeaks(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(M.maxPeak(), 3);
}

TEST(Memory, AFinerModelLetsIFreePartOfWhatFAllocated) {
  // The zero-bubble papers' accounting: F = +1, I = -0.5, W = -0.5.
  ScheduleBuilder B(1, 1, 2);
  B.rank(0).F(0).I(0).F(1).W(0).I(1).W(1);
  MemoryModel ZB{1.0, 0.5};
  EXPECT_DOUBLE_EQ(peak(B.schedule(), ZB), 1.5);
  EXPECT_DOUBLE_EQ(peak(B.schedule()), 2);
  // A B, or an I with no W, still frees everything.
  ScheduleBuilder C(1, 1, 2);
  C.rank(0).F(0).I(0).F(1).B(1);
  MemoryOptions O;
  O.Model = ZB;
  O.KeepCurve = true;
  MemoryProfile M = analyzeMemory(C.schedule(), O);
  EXPECT_EQ(M.Ranks[0].Curve.back().second, 0.0);
  EXPECT_DOUBLE_EQ(M.Ranks[0].Peak, 1.0);
}

TEST(Memory, ActivationsLiveOnTheRankThatRanF) {
  // A backward on another rank does not free rank 0's activations.
  ScheduleBuilder B(2, 2, 1);
  B.rank(0).F(0, 0).F(0, 1);
  B.rank(1).B(0, 1).F(0, 1);
  MemoryProfile M = analyzeMemory(B.schedule());
  EXPECT_EQ(M.wholePeaks(), (std::vector<int64_t>{2, 1}));
}

TEST(Memory, HugeDeclaredSizesCostNothing) {
  ScheduleBuilder B(1, 1, 1);
  B.rank(0).F(0).B(0);
  ir::Schedule S = B.build();
  S.Topo.Microbatches = 1 << 24;
  S.Topo.Stages = 1 << 20; // 2^44 (m, s) pairs: hashed, not allocated
  S.Ranks[0].Actions.push_back(ir::Action::compute(ir::ActionKind::F, 7, 9));
  EXPECT_EQ(analyzeMemory(S).Ranks[0].Peak, 1);
}

TEST(Memory, ThePassTheSimulatorAndTheAnalysisAgree) {
  // F0 I0 F1 I1 F2 I2 with no W: I is each (m, s)'s last backward. The
  // memory pass once counted only B and W as releases (peak 3) while the
  // simulator and the executor released at I (peak 1).
  ScheduleBuilder B(1, 1, 3);
  B.rank(0).F(0).I(0).F(1).I(1).F(2).I(2);
  ir::Schedule S = B.build();
  SourceManager SM;
  DiagnosticEngine D(SM);
  passes::PassContext Ctx{D, {}};
  passes::createMemoryPass()->run(S, Ctx);
  EXPECT_EQ(Ctx.Results.PeakMemory, (std::vector<double>{1}));
  EXPECT_EQ(sim::simulate(S).Ranks[0].PeakMemory, 1);
  EXPECT_EQ(analyzeMemory(S).wholePeaks(), (std::vector<int64_t>{1}));
}

} // namespace
