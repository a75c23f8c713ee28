//===- PassesTest.cpp - the passes on schedules built with the builder ----===//
#include "Schedules.h"

#include "pps/passes/AlignBubbles.h"
#include "pps/passes/CommStreams.h"
#include "pps/passes/Deadlock.h"
#include "pps/passes/Fsdp.h"
#include "pps/passes/InsertComms.h"
#include "pps/passes/Memory.h"
#include "pps/passes/VerifyDeps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

using namespace pps;
using namespace pps::ir;
using namespace pps::passes;
using pps::testing::gpipe;
using pps::testing::interleaved;
using pps::testing::oneFOneB;

namespace {

/// One pipeline run: the engine, its results and the printed diagnostics.
struct Lint {
  SourceManager SM;
  DiagnosticEngine D{SM};
  PassContext Ctx{D, {}};

  void pass(std::unique_ptr<Pass> P, Schedule &S) { P->run(S, Ctx); }
  bool has(DiagKind K) const {
    return D.has(K) || std::find(Seen.begin(), Seen.end(), K) != Seen.end();
  }
  /// Everything printed so far (printing empties the engine, so the kinds
  /// are remembered for has()).
  std::string text() {
    for (const Diagnostic &Dg : D.diagnostics())
      Seen.push_back(Dg.Kind);
    llvm::raw_string_ostream OS(Printed);
    D.print(OS);
    OS.flush();
    return Printed;
  }
  std::string Printed;
  std::vector<DiagKind> Seen;
};

/// verify-deps, insert-comms, deadlock (under Model), memory; true if clean.
bool lint(Schedule &S, Lint &X, std::optional<CommModel> Model = std::nullopt) {
  PassManager PM;
  PM.add(createVerifyDepsPass());
  PM.add(createInsertCommsPass());
  PM.add(createDeadlockPass({Model}));
  PM.add(createMemoryPass());
  return PM.run(S, X.Ctx) && X.D.numErrors() == 0;
}

size_t count(const Schedule &S, ActionKind K) {
  size_t N = 0;
  for (const RankProgram &R : S.Ranks)
    for (const Action &A : R.Actions)
      N += A.Kind == K;
  return N;
}

const CommModel AllModels[] = {CommModel::Rendezvous, CommModel::Eager,
                               CommModel::Batched};

} // namespace

TEST(InsertComms, OneFOneBIsDeadlockFreeUnderEveryModel) {
  for (CommModel M : AllModels) {
    Schedule S = oneFOneB(4, 8);
    Lint X;
    ASSERT_TRUE(lint(S, X, M)) << X.text();
    EXPECT_TRUE(X.Ctx.Results.DeadlockFree);
    // One send and one recv per cross-rank edge, forward and backward.
    EXPECT_EQ(count(S, ActionKind::SendF), 3u * 8);
    EXPECT_EQ(count(S, ActionKind::RecvB), 3u * 8);
    EXPECT_EQ(X.Ctx.Results.CommsInserted, 4u * 3 * 8);
  }
}

TEST(InsertComms, ReceiveSitsDirectlyBeforeItsConsumer) {
  Schedule S = oneFOneB(3, 4);
  Lint X;
  ASSERT_TRUE(lint(S, X)) << X.text();
  for (const RankProgram &R : S.Ranks)
    for (size_t I = 0; I < R.Actions.size(); ++I) {
      const Action &A = R.Actions[I];
      if (!isRecv(A.Kind))
        continue;
      // Only other comms may sit between a receive and its consumer.
      size_t J = I + 1;
      while (J < R.Actions.size() && isComm(R.Actions[J].Kind))
        ++J;
      ASSERT_LT(J, R.Actions.size());
      EXPECT_TRUE(isCompute(R.Actions[J].Kind));
      EXPECT_EQ(R.Actions[J].Microbatch, A.Microbatch);
      EXPECT_EQ(R.Actions[J].Stage, A.Stage);
    }
}

TEST(InsertComms, InterleavedAndVAndExplicitPlacements) {
  for (CommModel M : AllModels) {
    Schedule I = interleaved(4, 2, 8);
    Lint X;
    EXPECT_TRUE(lint(I, X, M)) << X.text();

    Schedule V = gpipe(2, 4, 3, Placement::V);
    Lint Y;
    EXPECT_TRUE(lint(V, Y, M)) << Y.text();
    // Stages 1 and 2 are both on rank 1 under V placement: no comm there.
    for (const Action &A : V.Ranks[1].Actions)
      EXPECT_FALSE(A.Kind == ActionKind::SendF && A.Stage == 1);

    int32_t Map[] = {0, 0, 1, 1, 0};
    Schedule E = gpipe(2, 5, 3, Placement::Loop, Map, /*Split=*/true);
    Lint Z;
    EXPECT_TRUE(lint(E, Z, M)) << Z.text();
    EXPECT_EQ(count(E, ActionKind::SendF), 2u * 3);
    EXPECT_EQ(count(E, ActionKind::SendB), 2u * 3);
  }
}

TEST(InsertComms, OverlapPairsGetTheirReceivesBeforeThePair) {
  // 2 ranks, 1F1B with the steady state's F and B overlapped on rank 1.
  ScheduleBuilder B(2, 2, 3);
  B.rank(0).F(0).F(1).B(0).F(2).B(1).B(2);
  B.rank(1).F(0).overlap(Action::compute(ActionKind::F, 1, -1),
                         Action::compute(ActionKind::B, 0, -1));
  B.rank(1).overlap(Action::compute(ActionKind::F, 2, -1),
                    Action::compute(ActionKind::B, 1, -1));
  B.rank(1).B(2);
  Schedule S = B.build();
  for (CommModel M : AllModels) {
    Schedule C = S;
    Lint X;
    ASSERT_TRUE(lint(C, X, M)) << X.text();
    const auto &R1 = C.Ranks[1].Actions;
    for (size_t I = 0; I + 1 < R1.size(); ++I)
      if (R1[I].overlapsNext()) {
        EXPECT_TRUE(isCompute(R1[I + 1].Kind))
            << "a comm split an overlap pair";
      }
  }
}

TEST(InsertComms, ChecksUserCommsInsteadOfAddingAny) {
  ScheduleBuilder B(2, 2, 1);
  B.rank(0).F(0).comm(ActionKind::SendF, 0, 0, 1).B(0);
  B.rank(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .B(0)
      .comm(ActionKind::SendB, 0, 1, 0);
  Schedule S = B.build();
  Lint X;
  X.pass(createInsertCommsPass(), S);
  EXPECT_TRUE(X.has(DiagKind::MissingComm)) << X.text(); // recv B0@0 missing
  EXPECT_EQ(X.Ctx.Results.CommsInserted, 0u);
  EXPECT_EQ(S.numActions(), 7u);
}

TEST(InsertComms, ReportsACycleInTheComputeOrder) {
  // Rank 0 waits for B0@1 before F1@0; rank 1 wants F1@1 before B0@1.
  ScheduleBuilder B(2, 2, 2);
  B.rank(0).F(0).B(0).F(1).B(1);
  B.rank(1).F(1).B(1).F(0).B(0);
  Schedule S = B.build();
  Lint X;
  X.pass(createInsertCommsPass(), S);
  ASSERT_TRUE(X.has(DiagKind::Deadlock));
  std::string T = X.text();
  EXPECT_NE(T.find("the compute order deadlocks: ranks"), std::string::npos)
      << T;
  EXPECT_NE(T.find("rank 0 action #1"), std::string::npos) << T;
  EXPECT_FALSE(S.hasComms());
}

TEST(InsertComms, MicrobatchesFewerThanRanks) {
  for (CommModel M : AllModels) {
    Schedule S = oneFOneB(8, 3);
    Lint X;
    EXPECT_TRUE(lint(S, X, M)) << X.text();
  }
}

// ---------------------------------------------------------------------------

/// The user-hit deadlock: each rank sends before it receives.
Schedule sendBeforeRecv() {
  ScheduleBuilder B(2, 2, 2);
  B.rank(0)
      .F(0)
      .comm(ActionKind::SendF, 0, 0, 1)
      .F(1)
      .comm(ActionKind::SendF, 1, 0, 1);
  B.rank(0)
      .comm(ActionKind::RecvB, 0, 0, 1)
      .B(0)
      .comm(ActionKind::RecvB, 1, 0, 1)
      .B(1);
  B.rank(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .B(0)
      .comm(ActionKind::SendB, 0, 1, 0);
  B.rank(1)
      .comm(ActionKind::RecvF, 1, 1, 0)
      .F(1)
      .B(1)
      .comm(ActionKind::SendB, 1, 1, 0);
  return B.build();
}

TEST(Deadlock, SendBeforeReceiveDeadlocksOnlyUnderRendezvous) {
  Schedule S = sendBeforeRecv();
  Lint X;
  EXPECT_FALSE(lint(S, X, CommModel::Rendezvous));
  EXPECT_FALSE(X.Ctx.Results.DeadlockFree);
  std::string T = X.text();
  EXPECT_NE(T.find("deadlock under the rendezvous model: ranks 0 and 1 wait on "
                   "each other"),
            std::string::npos)
      << T;
  EXPECT_NE(
      T.find("rank 0 blocks at `send F1@0 -> 1` (rank 0 action #3) waiting for "
             "rank 1 to post `recv F1@1 <- 0` (rank 1 action #4)"),
      std::string::npos)
      << T;
  EXPECT_NE(T.find("rank 1 blocks at `send B0@1 -> 0`"), std::string::npos)
      << T;

  for (CommModel M : {CommModel::Eager, CommModel::Batched}) {
    Schedule C = sendBeforeRecv();
    Lint Y;
    EXPECT_TRUE(lint(C, Y, M)) << Y.text();
    EXPECT_TRUE(Y.Ctx.Results.DeadlockFree);
  }
}

TEST(Deadlock, ReorderedInterleavedFromTheIssue) {
  // 2 ranks, 4 stages (loop): rank 0 holds 0 and 2, rank 1 holds 1 and 3.
  ScheduleBuilder B(2, 4, 2);
  B.rank(0).F(0, 0).comm(ActionKind::SendF, 0, 0, 1).F(1, 0);
  B.rank(0).comm(ActionKind::SendF, 1, 0, 1).comm(ActionKind::RecvF, 0, 2, 1);
  B.rank(1).comm(ActionKind::RecvF, 0, 1, 0).F(0, 1);
  B.rank(1).comm(ActionKind::SendF, 0, 1, 0).comm(ActionKind::RecvF, 1, 1, 0);
  Schedule S = B.build();
  Lint X;
  X.pass(createDeadlockPass(), S);
  EXPECT_FALSE(X.Ctx.Results.DeadlockFree);
  std::string T = X.text();
  EXPECT_NE(
      T.find("rank 1 blocks at `send F0@1 -> 0` (rank 1 action #2) waiting for "
             "rank 0 to post `recv F0@2 <- 1` (rank 0 action #4)"),
      std::string::npos)
      << T;
  EXPECT_NE(T.find("rank 0 blocks at `send F1@0 -> 1`"), std::string::npos)
      << T;
  EXPECT_NE(
      T.find("rank 0 posts `recv F0@2 <- 1` (rank 0 action #4) only after "
             "`send F1@0 -> 1`"),
      std::string::npos)
      << T;
}

TEST(Deadlock, ExchangeWithTwoRanks) {
  // A ring: every rank sends to the next one before receiving from the
  // previous one (self-contained comms; computes are irrelevant here).
  ScheduleBuilder B(3, 3, 1);
  B.rank(0).comm(ActionKind::SendF, 0, 0, 1).comm(ActionKind::RecvB, 0, 0, 1);
  B.rank(1).comm(ActionKind::SendB, 0, 1, 0).comm(ActionKind::RecvF, 0, 1, 0);
  B.rank(2);
  Schedule S = B.build();
  Lint X;
  X.pass(createDeadlockPass(), S);
  EXPECT_TRUE(X.has(DiagKind::Deadlock));
  EXPECT_NE(X.text().find("ranks 0 and 1 wait on each other"),
            std::string::npos);
}

TEST(Deadlock, FifoMismatchUnmatchedSelfAndWrongPeer) {
  {
    // Rank 0 sends F1 before F0; rank 1 receives F0 first.
    ScheduleBuilder B(2, 2, 2);
    B.rank(0).comm(ActionKind::SendF, 1, 0, 1).comm(ActionKind::SendF, 0, 0, 1);
    B.rank(1).comm(ActionKind::RecvF, 0, 1, 0).comm(ActionKind::RecvF, 1, 1, 0);
    Schedule S = B.build();
    Lint X;
    X.pass(createDeadlockPass(), S);
    EXPECT_TRUE(X.has(DiagKind::FifoMismatch));
    EXPECT_TRUE(
        X.Ctx.Results.DeadlockFree); // it would not hang, but it is wrong
    EXPECT_NE(
        X.text().find("the 1st send from rank 0 to rank 1 is `send F1@0 -> 1`"),
        std::string::npos)
        << X.text();
  }
  {
    ScheduleBuilder B(2, 2, 2);
    B.rank(0).comm(ActionKind::SendF, 0, 0, 1).comm(ActionKind::SendF, 1, 0, 1);
    B.rank(1).comm(ActionKind::RecvF, 0, 1, 0);
    Schedule S = B.build();
    Lint X;
    X.pass(createDeadlockPass(), S);
    EXPECT_TRUE(X.has(DiagKind::UnmatchedSend)) << X.text();
    EXPECT_FALSE(X.Ctx.Results.DeadlockFree);
    Lint Y; // under eager the extra send does not block
    Y.pass(createDeadlockPass({CommModel::Eager}), S);
    EXPECT_TRUE(Y.has(DiagKind::UnmatchedSend));
    EXPECT_TRUE(Y.Ctx.Results.DeadlockFree);
  }
  {
    ScheduleBuilder B(2, 2, 1);
    B.rank(1).comm(ActionKind::RecvF, 0, 1, 0);
    Schedule S = B.build();
    Lint X;
    X.pass(createDeadlockPass({CommModel::Eager}), S);
    EXPECT_TRUE(X.has(DiagKind::UnmatchedRecv));
    EXPECT_NE(X.text().find("which no send ever matches"), std::string::npos)
        << X.text();
  }
  {
    ScheduleBuilder B(2, 2, 1);
    B.rank(0).comm(ActionKind::SendF, 0, 0, 0).comm(ActionKind::RecvF, 0, 0, 0);
    Schedule S = B.build();
    Lint X;
    X.pass(createDeadlockPass(), S);
    EXPECT_TRUE(X.has(DiagKind::SelfComm));
    EXPECT_TRUE(X.has(DiagKind::Deadlock)); // waits on itself under rendezvous
    Lint Y;
    Y.pass(createDeadlockPass({CommModel::Batched}), S);
    EXPECT_TRUE(Y.Ctx.Results.DeadlockFree); // one batch holds both ends
  }
  {
    ScheduleBuilder B(3, 3, 1);
    B.rank(0).comm(ActionKind::SendF, 0, 0, 2);
    B.rank(2).comm(ActionKind::RecvF, 0, 1, 0).comm(ActionKind::SendF, 0, 0, 7);
    Schedule S = B.build();
    Lint X;
    X.pass(createDeadlockPass(), S);
    EXPECT_TRUE(X.has(DiagKind::WrongPeer));
    std::string T = X.text();
    EXPECT_NE(T.find("but its partner stage 1 is on rank 1"), std::string::npos)
        << T;
    EXPECT_NE(T.find("rank 7, which does not exist"), std::string::npos) << T;
  }
}

// ---------------------------------------------------------------------------

TEST(VerifyDeps, EveryFindingKind) {
  {
    ScheduleBuilder B(2, 2, 2);
    B.rank(0).F(0).F(0).B(0);      // duplicate F0, missing F1/B1
    B.rank(1).B(0).F(0).F(1).B(1); // B0 before F0 on the last stage
    B.rank(1).append(Action::compute(ActionKind::F, 5, 1)); // out of range
    B.rank(1).append(Action::compute(ActionKind::F, 1, 0)); // stray
    Schedule S = B.build();
    Lint X;
    X.pass(createVerifyDepsPass(), S);
    EXPECT_TRUE(X.has(DiagKind::DuplicateAction));
    EXPECT_TRUE(X.has(DiagKind::MissingAction));
    EXPECT_TRUE(X.has(DiagKind::DependencyOrder));
    EXPECT_TRUE(X.has(DiagKind::OutOfRange));
    EXPECT_TRUE(X.has(DiagKind::StrayAction));
    EXPECT_FALSE(X.Ctx.Results.DepsVerified);
    std::string T = X.text();
    EXPECT_NE(
        T.find(
            "`B0@1` (rank 1 action #0) runs before `F0@1` (rank 1 action #1), "
            "which it needs"),
        std::string::npos)
        << T;
  }
  {
    // I without W, and a W before its I.
    ScheduleBuilder B(1, 1, 2);
    B.rank(0).F(0).I(0).F(1).W(1).I(1);
    Schedule S = B.build();
    Lint X;
    X.pass(createVerifyDepsPass(), S);
    EXPECT_NE(
        X.text().find("`W0@0` is missing: rank 0 runs `I0@0` but not `W0@0`"),
        std::string::npos)
        << X.text();
    EXPECT_TRUE(X.has(DiagKind::DependencyOrder));
  }
  {
    // Comms present: a missing recv, a late recv, an early send, an early recv.
    ScheduleBuilder B(2, 2, 6);
    auto R0 = B.rank(0);
    for (int M = 0; M < 6; ++M)
      R0.F(M).comm(ActionKind::SendF, M, 0, 1);
    for (int M = 0; M < 6; ++M)
      R0.comm(ActionKind::RecvB, M, 0, 1).B(M);
    auto R1 = B.rank(1);
    R1.comm(ActionKind::RecvF, 5, 1, 0); // far too early
    R1.comm(ActionKind::RecvF, 0, 1, 0)
        .F(0)
        .B(0)
        .comm(ActionKind::SendB, 0, 1, 0);
    R1.F(1)
        .comm(ActionKind::RecvF, 1, 1, 0)
        .B(1)
        .comm(ActionKind::SendB, 1, 1, 0);
    R1.comm(ActionKind::SendB, 2, 1, 0)
        .comm(ActionKind::RecvF, 2, 1, 0)
        .F(2)
        .B(2);
    for (int M = 3; M < 6; ++M) {
      if (M != 5)
        R1.comm(ActionKind::RecvF, M, 1, 0);
      R1.F(M).B(M).comm(ActionKind::SendB, M, 1, 0);
    }
    Schedule S = B.build();
    Lint X;
    X.pass(createVerifyDepsPass(), S);
    std::string T = X.text();
    EXPECT_NE(T.find("`recv F1@1 <- 0` (rank 1 action #6) comes after `F1@1`"),
              std::string::npos)
        << T;
    EXPECT_NE(T.find("`send B2@1 -> 0` (rank 1 action #9) comes before `B2@1`"),
              std::string::npos)
        << T;
    // What an early receive costs depends on the comm model: comm-streams
    // says (CommStreams.ReceivesThatHoldTheirStreamBack), not verify-deps.
    EXPECT_FALSE(X.has(DiagKind::EarlyRecv)) << T;
  }
  {
    ScheduleBuilder B(2, 2, 1);
    B.rank(0).F(0).B(0);
    B.rank(1).F(0).B(0).comm(ActionKind::SendB, 0, 1, 0);
    Schedule S = B.build();
    Lint X;
    X.pass(createVerifyDepsPass(), S);
    EXPECT_TRUE(X.has(DiagKind::MissingComm)) << X.text();
    EXPECT_NE(
        X.text().find(
            "needs `B0@1` from rank 1, but no `recv B0@0 <- 1` carries it"),
        std::string::npos)
        << X.text();
  }
}

// ---------------------------------------------------------------------------

TEST(Memory, OneFOneBPeaksAndTheLimit) {
  Schedule S = oneFOneB(4, 8);
  Lint X;
  ASSERT_TRUE(lint(S, X)) << X.text();
  ASSERT_EQ(X.Ctx.Results.PeakMemory.size(), 4u);
  for (int R = 0; R < 4; ++R)
    EXPECT_EQ(X.Ctx.Results.PeakMemory[R], 4 - R);

  Schedule G = gpipe(2, 2, 4);
  G.MemoryLimit = 3;
  Lint Y;
  EXPECT_FALSE(lint(G, Y));
  EXPECT_EQ(Y.Ctx.Results.PeakMemory[0], 4);
  EXPECT_NE(Y.text().find("rank 0 holds 4 activations after `F3@0`"),
            std::string::npos)
      << Y.text();
}

TEST(AlignBubbles, WritesIdleSlotsAndIsIdempotent) {
  Schedule S = oneFOneB(4, 4);
  Lint X;
  ASSERT_TRUE(lint(S, X)) << X.text();
  X.pass(createAlignBubblesPass(), S);
  // Rank 3 starts after three forwards upstream.
  ASSERT_EQ(S.Ranks[3].Actions.front().Kind, ActionKind::Idle);
  EXPECT_FLOAT_EQ(S.Ranks[3].Actions.front().idleTime(), 3.0f);
  // Every rank lines up on the makespan.
  double Makespan = X.Ctx.Results.Makespan;
  EXPECT_DOUBLE_EQ(Makespan, 3 + 4 * 3 + 3 * 2);
  for (const RankProgram &R : S.Ranks) {
    double Busy = 0;
    for (const Action &A : R.Actions)
      Busy += A.Kind == ActionKind::Idle ? A.idleTime()
              : isCompute(A.Kind)        ? S.Cost.computeCost(A.Kind, A.Stage)
                                         : 0;
    EXPECT_DOUBLE_EQ(Busy, Makespan);
  }
  Schedule Again = S;
  X.pass(createAlignBubblesPass(), Again);
  std::string Why;
  EXPECT_TRUE(S.equivalent(Again, &Why)) << Why;
  // Idle slots are no-ops: the result still lints clean.
  Lint Y;
  EXPECT_TRUE(lint(Again, Y)) << Y.text();
}

TEST(AlignBubbles, WarnsWhenAnIdleSlotHoldsBackReadyWork) {
  // Rank 1 waits 1 unit for F0@1; a hand-written idle(3) holds it longer.
  ScheduleBuilder B(2, 2, 2);
  B.rank(0).F(0).F(1).B(0).B(1);
  B.rank(1).idle(3).F(0).B(0).F(1).B(1);
  Schedule S = B.build();
  Lint X;
  X.pass(createAlignBubblesPass({/*Insert=*/false}), S);
  EXPECT_TRUE(X.has(DiagKind::IdleWithReadyWork)) << X.text();
  EXPECT_NE(
      X.text().find("rank 1 idles 3 time units at `idle(3)` (rank 1 action #0) "
                    "before `F0@1` (rank 1 action #1), which is ready after 1"),
      std::string::npos)
      << X.text();
  // After alignment the slots are exact, and standard schedules are clean.
  X.pass(createAlignBubblesPass(), S);
  Lint Y;
  Y.pass(createAlignBubblesPass({false}), S);
  EXPECT_EQ(Y.D.numWarnings(), 0u) << Y.text();
  Schedule O = oneFOneB(4, 8);
  Lint Z;
  Z.pass(createAlignBubblesPass({false}), O);
  EXPECT_EQ(Z.D.numWarnings(), 0u) << Z.text();
}

TEST(Fsdp, WindowAndReduceGrad) {
  Schedule S = interleaved(2, 2, 4);
  S.Fsdp.Enabled = true;
  S.Fsdp.Prefetch = 0; // only the running stage is unsharded
  Lint X;
  ASSERT_TRUE(lint(S, X)) << X.text();
  X.pass(createFsdpPass(), S);
  for (size_t R = 0; R < S.Ranks.size(); ++R) {
    std::vector<int> Live(S.Topo.Stages, 0), Reduced(S.Topo.Stages, 0);
    int Active = 0;
    for (const Action &A : S.Ranks[R].Actions) {
      if (A.Kind == ActionKind::Unshard)
        ++Live[A.Stage], ++Active;
      if (A.Kind == ActionKind::Reshard)
        --Live[A.Stage], --Active;
      if (A.Kind == ActionKind::ReduceGrad)
        ++Reduced[A.Stage];
      if (isCompute(A.Kind)) {
        EXPECT_EQ(Live[A.Stage], 1) << "compute of a sharded stage";
      }
      EXPECT_LE(Active, 1);
    }
    for (int32_t St : S.Topo.stagesOf(int32_t(R))) {
      EXPECT_EQ(Reduced[St], 1);
      EXPECT_EQ(Live[St], 0);
    }
  }
  // Already annotated: a second run adds nothing; comms still match.
  size_t N = S.numActions();
  X.pass(createFsdpPass(), S);
  EXPECT_EQ(S.numActions(), N);
  Lint Y;
  Y.pass(createDeadlockPass(), S);
  EXPECT_TRUE(Y.Ctx.Results.DeadlockFree) << Y.text();
}

TEST(Fsdp, PrefetchKeepsTheNextStagesUnsharded) {
  Schedule S = interleaved(2, 4, 4);
  S.Fsdp.Enabled = true;
  S.Fsdp.Prefetch = 2;
  Lint X;
  X.pass(createFsdpPass(), S);
  for (const RankProgram &R : S.Ranks) {
    int Active = 0, Max = 0;
    for (const Action &A : R.Actions) {
      Active += A.Kind == ActionKind::Unshard;
      Active -= A.Kind == ActionKind::Reshard;
      Max = std::max(Max, Active);
    }
    EXPECT_EQ(Max, 3);
    EXPECT_EQ(Active, 0);
  }
}

// ---------------------------------------------------------------------------

TEST(Robustness, RandomGarbageNeverCrashesAnyPass) {
  // Any kind, fields in and out of range, stray overlap flags: every pass
  // must report or cope, never crash, hang or index out of bounds.
  std::mt19937 Rng(7);
  auto Pick = [&](int Lo, int Hi) {
    return std::uniform_int_distribution<int>(Lo, Hi)(Rng);
  };
  for (int Case = 0; Case < 3000; ++Case) {
    int P = Pick(1, 4), Stages = P * Pick(1, 2), M = Pick(1, 3);
    ScheduleBuilder B(P, Stages, M,
                      Pick(0, 1) ? Placement::Loop : Placement::V);
    Schedule S = B.build();
    for (int R = 0; R < P; ++R) {
      int N = Pick(0, 12);
      for (int I = 0; I < N; ++I) {
        Action A;
        A.Kind = ActionKind(Pick(0, int(NumActionKinds) - 1));
        A.Microbatch = Pick(-1, M);
        A.Stage = Pick(-1, Stages);
        A.Peer = Pick(-1, P);
        A.Flags = Pick(0, 5) == 0 ? ActionFlags::OverlapNext : 0;
        if (A.Kind == ActionKind::Idle)
          A = Action::idle(float(Pick(0, 3)));
        S.Ranks[R].Actions.push_back(A);
      }
    }
    S.MemoryLimit =
        Pick(0, 1) ? std::optional<int64_t>(Pick(0, 3)) : std::nullopt;
    S.Fsdp.Enabled = Pick(0, 1);
    S.Comm = CommModel(Pick(0, 2));
    for (int Variant = 0; Variant < 2; ++Variant) {
      Schedule C = S;
      if (Variant == 1) // compute-only: insert-comms does the work
        for (RankProgram &R : C.Ranks)
          R.Actions.erase(
              std::remove_if(R.Actions.begin(), R.Actions.end(),
                             [](const Action &A) { return isComm(A.Kind); }),
              R.Actions.end());
      Lint X;
      X.pass(createVerifyDepsPass(), C);
      X.pass(createInsertCommsPass(), C);
      X.pass(createDeadlockPass(), C);
      X.pass(createAlignBubblesPass(), C);
      X.pass(createMemoryPass(), C);
      X.pass(createFsdpPass(), C);
      X.pass(createDeadlockPass({CommModel::Batched}), C);
      X.text(); // printing resolves every location
    }
  }
}

/// Rank 1 posts its four forward receives up front; under one in-order
/// stream per rank the last of them holds back the backward sends behind
/// it (head-of-line blocking), which costs time only where the stream rule
/// is in force.
static Schedule earlyReceives(CommStream St) {
  ScheduleBuilder B(2, 2, 4);
  auto R0 = B.rank(0);
  for (int M = 0; M < 4; ++M)
    R0.F(M).comm(ActionKind::SendF, M, 0, 1);
  for (int M = 0; M < 4; ++M)
    R0.comm(ActionKind::RecvB, M, 0, 1).B(M);
  auto R1 = B.rank(1);
  for (int M = 0; M < 4; ++M)
    R1.comm(ActionKind::RecvF, M, 1, 0);
  for (int M = 0; M < 4; ++M)
    R1.F(M).B(M).comm(ActionKind::SendB, M, 1, 0);
  Schedule S = B.build();
  S.Cost.Default = {1, 1, 1, 1};
  S.Cost.PerStage.assign(2, S.Cost.Default);
  S.Cost.PerStage[1] = {0.5, 0.5, 0.5, 0.5};
  S.Cost.Latency = 0.5;
  S.Cost.ActivationBytes = 1024;
  S.Stream = St;
  return S;
}

TEST(CommStreams, ReceivesThatHoldTheirStreamBack) {
  for (bool Streams : {true, false}) {
    Schedule S = earlyReceives(
        Streams ? CommStream{StreamScope::Rank, schema::NcclEagerThreshold}
                : CommStream{});
    Lint X;
    PassManager PM;
    PM.add(createVerifyDepsPass());
    PM.add(createInsertCommsPass());
    PM.add(createDeadlockPass());
    PM.add(createCommStreamsPass());
    ASSERT_TRUE(PM.run(S, X.Ctx)) << X.text();
    std::string T = X.text();
    if (!Streams) {
      EXPECT_FALSE(X.has(DiagKind::EarlyRecv)) << T;
      continue;
    }
    EXPECT_TRUE(X.has(DiagKind::EarlyRecv)) << T;
    EXPECT_NE(T.find("`recv F3@1 <- 0` (rank 1 action #3), posted 10 "
                     "actions before `F3@1` (rank 1 action #13) needs it, "
                     "holds back `send B0@1 -> 0` (rank 1 action #6) by 2"),
              std::string::npos)
        << T;
    EXPECT_NE(T.find("makespan +0.5 against the receive moved to its "
                     "consumer (8.5 instead of 9)"),
              std::string::npos)
        << T;
  }
}
