//===- ScheduleTest.cpp - the IR and the builder API ----------------------===//
#include "pps/ir/Builder.h"

#include <gtest/gtest.h>

using namespace pps::ir;

TEST(Topology, LoopPlacement) {
  Topology T;
  T.Ranks = 4;
  T.Stages = 8;
  ASSERT_TRUE(T.place(Placement::Loop));
  EXPECT_EQ(T.rankOf(5), 1);
  EXPECT_EQ(T.chunks(), 2);
  EXPECT_EQ(T.stageOf(1, 1), 5);
  EXPECT_EQ(T.stagesOf(3).size(), 2u);
}

TEST(Topology, VPlacement) {
  Topology T;
  T.Ranks = 4;
  T.Stages = 8;
  ASSERT_TRUE(T.place(Placement::V));
  // Rank r holds stages r and 2p-1-r.
  for (int R = 0; R < 4; ++R) {
    EXPECT_EQ(T.rankOf(R), R);
    EXPECT_EQ(T.rankOf(7 - R), R);
  }
  T.Stages = 6;
  T.Ranks = 4;
  EXPECT_FALSE(T.place(Placement::V));
}

TEST(Action, IsCompact) {
  EXPECT_EQ(sizeof(Action), 20u);
  Action A = Action::idle(2.5f);
  EXPECT_FLOAT_EQ(A.idleTime(), 2.5f);
  EXPECT_EQ(A.Kind, ActionKind::Idle);
}

TEST(Builder, BuildsWithoutText) {
  ScheduleBuilder B(2, 2, 2);
  B.name("handmade").latency(0.5);
  B.rank(0).F(0).F(1).B(0).B(1);
  B.rank(1).F(0).B(0).F(1).B(1);
  B.rank(0).comm(ActionKind::SendF, 0, 0, 1);
  B.rank(1).overlap(Action::compute(ActionKind::F, 1, -1),
                    Action::compute(ActionKind::B, 0, -1));
  Schedule S = B.build();
  EXPECT_EQ(S.Name, "handmade");
  EXPECT_EQ(S.numActions(), 11u);
  EXPECT_TRUE(S.hasComms());
  const auto &R1 = S.Ranks[1].Actions;
  EXPECT_TRUE(R1[4].overlapsNext());
  EXPECT_EQ(R1[4].Stage, 1);
  EXPECT_FALSE(R1[5].overlapsNext());
  EXPECT_DOUBLE_EQ(S.Cost.messageTime(ActionKind::SendF), 0.5);
}

TEST(Schedule, EquivalenceIgnoresLocations) {
  ScheduleBuilder A(1, 1, 1), B(1, 1, 1);
  A.rank(0).F(0).B(0);
  B.rank(0).append(Action::compute(ActionKind::F, 0, 0, 7)).B(0);
  std::string Why;
  EXPECT_TRUE(A.schedule().equivalent(B.schedule(), &Why)) << Why;
  B.rank(0).W(0);
  EXPECT_FALSE(A.schedule().equivalent(B.schedule(), &Why));
  EXPECT_EQ(Why, "rank 0 has 2 actions vs 3");
}
