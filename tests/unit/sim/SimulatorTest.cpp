//===- SimulatorTest.cpp - the cost-model simulator -----------------------===//
#include "SimTestUtil.h"

#include "pps/analysis/Deadlock.h"
#include "pps/sim/Simulator.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace pps;
using namespace pps::ir;
using pps::sim::SimOptions;
using pps::sim::SimResult;

namespace {

SimResult run(const Schedule &S, SimOptions O = {}) {
  return sim::simulate(S, O);
}

SimOptions comms(CommModel M, bool Blocking = false) {
  SimOptions O;
  O.Dataflow = sim::DataflowMode::Comms;
  O.CommModel = M;
  O.BlockingComm = Blocking;
  return O;
}

} // namespace

TEST(Golden, GPipeAnd1F1BNoCommTake33) {
  for (bool WithComms : {false, true}) {
    Schedule G = simtest::gpipe(4, 8), O = simtest::oneF1B(4, 8);
    if (WithComms) {
      simtest::insertComms(G);
      simtest::insertComms(O);
      ASSERT_TRUE(G.hasComms());
    }
    SimResult RG = run(G), RO = run(O);
    EXPECT_FALSE(RG.Deadlocked);
    EXPECT_FALSE(RO.Deadlocked);
    EXPECT_EQ(RG.UsedDataflow, !WithComms);
    EXPECT_DOUBLE_EQ(RG.Makespan, 33.0);
    EXPECT_DOUBLE_EQ(RO.Makespan, 33.0);
    // Ideal = 8 * (1 + 2) on every rank; bubble (p-1)/m = 3/8 of ideal.
    EXPECT_DOUBLE_EQ(RO.Ideal, 24.0);
    EXPECT_DOUBLE_EQ(RO.BubbleOverIdeal, 3.0 / 8.0);
    EXPECT_DOUBLE_EQ(RO.BubbleOverMakespan, 9.0 / 33.0);
    EXPECT_DOUBLE_EQ(RO.MeanIdleFraction, 9.0 / 33.0);
    for (const auto &R : RO.Ranks) {
      EXPECT_DOUBLE_EQ(R.ComputeBusy, 24.0);
      EXPECT_DOUBLE_EQ(R.Idle, 9.0);
    }
  }
}

TEST(Golden, OneF1BWithLatencyTakes33Plus16c) {
  for (double C : {0.25, 0.5, 1.0, 2.0, 3.0}) {
    Schedule S = simtest::oneF1B(4, 8);
    S.Cost.Latency = C;
    EXPECT_DOUBLE_EQ(run(S).Makespan, 33 + 16 * C) << "dataflow, c=" << C;
    simtest::insertComms(S);
    for (CommModel M : {CommModel::Rendezvous, CommModel::Eager}) {
      SimResult R = run(S, comms(M));
      EXPECT_FALSE(R.Deadlocked);
      EXPECT_DOUBLE_EQ(R.Makespan, 33 + 16 * C)
          << commModelName(M).str() << " c=" << C;
    }
    // Batched groups adjacent comms, which then complete together: a
    // consumer may wait for a message it does not need, never less.
    SimResult Bt = run(S, comms(CommModel::Batched));
    EXPECT_FALSE(Bt.Deadlocked);
    EXPECT_GE(Bt.Makespan, 33 + 16 * C);
  }
}

TEST(Golden, GPipeWithLatency) {
  // Fill and drain cross 3 boundaries each way: 33 + 6c.
  for (double C : {0.5, 1.0, 2.0}) {
    Schedule S = simtest::gpipe(4, 8);
    S.Cost.Latency = C;
    EXPECT_DOUBLE_EQ(run(S).Makespan, 33 + 6 * C);
    simtest::insertComms(S);
    EXPECT_DOUBLE_EQ(run(S, comms(CommModel::Rendezvous)).Makespan, 33 + 6 * C);
  }
}

TEST(Golden, FormulaForSeveralSizesAndCosts) {
  // (M + P - 1)(F + B) for GPipe and 1F1B with equal stage costs.
  for (int P : {2, 3, 4, 8})
    for (int M : {1, 2, 5, 8, 16}) {
      StageCost C{1.5, 1.0, 1.0, 2.5};
      double Want = (M + P - 1) * (C.F + C.B);
      Schedule G = simtest::gpipe(P, M, C), O = simtest::oneF1B(P, M, C);
      EXPECT_DOUBLE_EQ(run(G).Makespan, Want) << P << "x" << M;
      EXPECT_DOUBLE_EQ(run(O).Makespan, Want) << P << "x" << M;
      simtest::insertComms(O);
      EXPECT_DOUBLE_EQ(run(O, comms(CommModel::Rendezvous)).Makespan, Want);
    }
}

TEST(Memory, GPipeHoldsAllMicrobatches1F1BHoldsPMinusR) {
  SimResult G = run(simtest::gpipe(4, 8));
  for (const auto &R : G.Ranks)
    EXPECT_EQ(R.PeakMemory, 8);
  SimResult O = run(simtest::oneF1B(4, 8));
  for (int R = 0; R < 4; ++R)
    EXPECT_EQ(O.Ranks[R].PeakMemory, 4 - R);
  EXPECT_EQ(O.PeakMemory, 4);
  EXPECT_EQ(O.Ranks[0].PeakMemoryAt, 3); // after F0..F3
}

TEST(Cost, OverlapUsesDeclaredTimeOrSum) {
  ScheduleBuilder B(1, 1, 2);
  B.rank(0).F(0).overlap(Action::compute(ActionKind::F, 1, -1),
                         Action::compute(ActionKind::B, 0, -1));
  B.rank(0).B(1);
  Schedule S = B.build();
  SimResult R = run(S);
  EXPECT_DOUBLE_EQ(R.Makespan, 1 + 3 + 2);
  EXPECT_DOUBLE_EQ(R.Times[0].Start[1], R.Times[0].Start[2]);
  EXPECT_DOUBLE_EQ(R.Ranks[0].ComputeBusy, 6);
  S.Cost.Overlap = 2.5;
  R = run(S);
  EXPECT_DOUBLE_EQ(R.Makespan, 1 + 2.5 + 2);
  EXPECT_DOUBLE_EQ(R.Times[0].End[1], 3.5);
  EXPECT_DOUBLE_EQ(R.Times[0].End[2], 3.5);
}

TEST(Cost, PerStageOverridesAndBandwidth) {
  ScheduleBuilder B(2, 2, 1);
  B.stageCost(1, StageCost{3, 1, 1, 4});
  B.rank(0)
      .F(0)
      .comm(ActionKind::SendF, 0, 0, 1)
      .comm(ActionKind::RecvB, 0, 0, 1)
      .B(0);
  B.rank(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .B(0)
      .comm(ActionKind::SendB, 0, 1, 0);
  Schedule S = B.build();
  S.Cost.Latency = 0.5;
  S.Cost.BandwidthBytesPerMs = 1000;
  S.Cost.ActivationBytes = 2000; // 2 units
  S.Cost.GradientBytes = 1000;   // 1 unit
  SimResult R = run(S);
  // F0@0 [0,1], msg 2.5 -> F0@1 [3.5, 6.5], B0@1 [6.5, 10.5], msg 1.5,
  // B0@0 [12, 14].
  EXPECT_DOUBLE_EQ(R.Times[1].Start[1], 3.5);
  EXPECT_DOUBLE_EQ(R.Times[1].End[2], 10.5);
  EXPECT_DOUBLE_EQ(R.Makespan, 14);
  ASSERT_EQ(R.Channels.size(), 2u);
  EXPECT_EQ(R.Channels[0].Src, 0);
  EXPECT_DOUBLE_EQ(R.Channels[0].Bytes, 2000);
  EXPECT_DOUBLE_EQ(R.Channels[1].Bytes, 1000);
  EXPECT_DOUBLE_EQ(R.Bytes, 3000);
  EXPECT_EQ(R.Messages, 2u);
  // The receive on rank 1 waited from 0 until the transfer began at 1.
  EXPECT_DOUBLE_EQ(R.Times[1].Start[0], 0);
  EXPECT_DOUBLE_EQ(R.Times[1].TransferStart[0], 1);
  EXPECT_DOUBLE_EQ(R.Times[1].End[0], 3.5);
}

TEST(Comm, BlockingOccupiesTheRank) {
  // Rank 0 sends F0 then computes F1 (stage 0 again); blocking makes F1
  // wait for the message, async does not.
  ScheduleBuilder B(2, 2, 2);
  B.rank(0)
      .F(0)
      .comm(ActionKind::SendF, 0, 0, 1)
      .F(1)
      .comm(ActionKind::SendF, 1, 0, 1);
  B.rank(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .comm(ActionKind::RecvF, 1, 1, 0)
      .F(1);
  Schedule S = B.build();
  S.Cost.Latency = 2;
  SimResult A = run(S, comms(CommModel::Rendezvous, false));
  SimResult K = run(S, comms(CommModel::Rendezvous, true));
  EXPECT_DOUBLE_EQ(A.Times[0].Start[2], 1);
  EXPECT_DOUBLE_EQ(K.Times[0].Start[2], 3);
  // Async: transfers overlap ([1,3] and [2,4]): F0@1 [3,4], F1@1 [4,5].
  EXPECT_DOUBLE_EQ(A.Makespan, 5);
  // Blocking: F1@0 [3,4], send [4,6], F1@1 waits until 6 -> 7.
  EXPECT_DOUBLE_EQ(K.Makespan, 7);
  EXPECT_TRUE(K.Blocking);
  EXPECT_DOUBLE_EQ(K.Ranks[0].CommBusy, 4);
}

TEST(Comm, EagerSendDoesNotWaitRendezvousDoes) {
  // Rank 1 is busy for a long time before it posts its receive.
  ScheduleBuilder B(2, 2, 1);
  B.cost(StageCost{1, 1, 1, 2});
  B.stageCost(1, StageCost{1, 1, 1, 2});
  B.rank(0)
      .F(0)
      .comm(ActionKind::SendF, 0, 0, 1)
      .comm(ActionKind::RecvB, 0, 0, 1)
      .B(0);
  B.rank(1)
      .idle(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .B(0)
      .comm(ActionKind::SendB, 0, 1, 0);
  Schedule S = B.build();
  S.Cost.Latency = 1;
  SimResult Rv = run(S, comms(CommModel::Rendezvous, true));
  SimResult Eg = run(S, comms(CommModel::Eager, true));
  // Blocking rendezvous: the send on rank 0 ends with the receive.
  EXPECT_DOUBLE_EQ(Rv.Times[0].End[1], 2);
  EXPECT_DOUBLE_EQ(Eg.Times[0].End[1], 2);
  EXPECT_DOUBLE_EQ(Rv.Makespan, Eg.Makespan);
}

TEST(Comm, EagerLetsSenderRunAhead) {
  // Rank 1 computes a long F0 on its own first stage... rank 0 sends twice,
  // rank 1 receives late: rendezvous blocks rank 0's track, eager not.
  ScheduleBuilder B(2, 2, 2);
  B.stageCost(1, StageCost{5, 1, 1, 2});
  B.rank(0)
      .F(0)
      .comm(ActionKind::SendF, 0, 0, 1)
      .F(1)
      .comm(ActionKind::SendF, 1, 0, 1);
  B.rank(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .comm(ActionKind::RecvF, 1, 1, 0)
      .F(1);
  Schedule S = B.build();
  S.Cost.Latency = 1;
  SimResult Rv = run(S, comms(CommModel::Rendezvous, true));
  SimResult Eg = run(S, comms(CommModel::Eager, true));
  // Rendezvous blocking: rank 1 posts recv F1 at 7 (after F0@1 [2,7]), so
  // rank 0's second send runs [7,8]; eager: [3,4].
  EXPECT_DOUBLE_EQ(Rv.Times[0].End[3], 8);
  EXPECT_DOUBLE_EQ(Eg.Times[0].End[3], 4);
  EXPECT_DOUBLE_EQ(Eg.Times[1].End[2], 7); // data already there at post
  EXPECT_DOUBLE_EQ(Rv.Makespan, 13);
  EXPECT_DOUBLE_EQ(Eg.Makespan, 12);
}

TEST(Deadlock, CrossedRecvsDeadlockUnderRendezvousNotBatched) {
  ScheduleBuilder B(2, 2, 1);
  B.rank(0)
      .F(0)
      .comm(ActionKind::RecvB, 0, 0, 1)
      .comm(ActionKind::SendF, 0, 0, 1)
      .B(0);
  B.rank(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .B(0)
      .comm(ActionKind::SendB, 0, 1, 0);
  Schedule S = B.build();
  SourceManager SM;
  DiagnosticEngine D(SM);
  SimResult R = sim::simulate(S, comms(CommModel::Rendezvous), &D);
  EXPECT_TRUE(R.Deadlocked);
  EXPECT_TRUE(D.has(DiagKind::Deadlock));
  EXPECT_TRUE(std::isnan(R.Times[0].End[3]));
  EXPECT_EQ(R.StuckAt[0], 1u);
  EXPECT_EQ(R.StuckAt[1], 0u);
  EXPECT_TRUE(R.CriticalPath.empty());
  EXPECT_TRUE(sim::simulate(S, comms(CommModel::Eager)).Deadlocked);
  EXPECT_TRUE(sim::simulate(S, comms(CommModel::Rendezvous, true)).Deadlocked);
  // Posted together, the two ops of rank 0 cannot block each other.
  SimResult Bt = sim::simulate(S, comms(CommModel::Batched));
  EXPECT_FALSE(Bt.Deadlocked);
  EXPECT_DOUBLE_EQ(Bt.Makespan, 1 + 1 + 2 + 2);
}

TEST(Deadlock, TheDeadlockPassesResultIsReusedNotRecomputed) {
  ScheduleBuilder B(2, 2, 1);
  B.rank(0)
      .F(0)
      .comm(ActionKind::RecvB, 0, 0, 1)
      .comm(ActionKind::SendF, 0, 0, 1)
      .B(0);
  B.rank(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .B(0)
      .comm(ActionKind::SendB, 0, 1, 0);
  Schedule S = B.build();
  SourceManager SM;
  // Without an earlier result the simulator explains the hang itself, once.
  DiagnosticEngine D(SM);
  EXPECT_TRUE(sim::simulate(S, comms(CommModel::Rendezvous), &D).Deadlocked);
  unsigned Cycles = 0;
  for (const Diagnostic &X : D.diagnostics())
    Cycles += X.Kind == DiagKind::Deadlock;
  EXPECT_EQ(Cycles, 1u);
  // With the deadlock pass's result it says nothing more: the pass did.
  analysis::Matching M = analysis::matchComms(S);
  analysis::DeadlockResult DR =
      analysis::checkDeadlock(S, M, CommModel::Rendezvous);
  EXPECT_FALSE(DR.Free);
  DiagnosticEngine D2(SM);
  SimOptions O = comms(CommModel::Rendezvous);
  O.Deadlock = &DR;
  EXPECT_TRUE(sim::simulate(S, O, &D2).Deadlocked);
  EXPECT_TRUE(D2.diagnostics().empty());
  // A result for another model is not taken for this one.
  analysis::DeadlockResult Other =
      analysis::checkDeadlock(S, M, CommModel::Batched);
  EXPECT_TRUE(Other.Free);
  O.Deadlock = &Other;
  DiagnosticEngine D3(SM);
  EXPECT_TRUE(sim::simulate(S, O, &D3).Deadlocked);
  EXPECT_TRUE(D3.has(DiagKind::Deadlock));
}

TEST(Deadlock, DataflowCycleAndUnmatchedRecv) {
  ScheduleBuilder B(2, 2, 1);
  B.rank(0).B(0).F(0); // B0@0 needs B0@1 which needs F0@1 which needs F0@0
  B.rank(1).F(0).B(0);
  SourceManager SM;
  DiagnosticEngine D(SM);
  SimResult R = sim::simulate(B.schedule(), {}, &D);
  EXPECT_TRUE(R.Deadlocked);
  EXPECT_TRUE(D.has(DiagKind::Deadlock));

  ScheduleBuilder C(2, 2, 1);
  C.rank(0).F(0);
  C.rank(1).comm(ActionKind::RecvF, 0, 1, 0).F(0);
  DiagnosticEngine D2(SM);
  EXPECT_TRUE(sim::simulate(C.schedule(), {}, &D2).Deadlocked);
  // The deadlock pass explains it: the receive no send matches.
  ASSERT_GE(D2.diagnostics().size(), 1u);
  EXPECT_TRUE(D2.has(DiagKind::UnmatchedRecv));
  bool Named = false;
  for (const Diagnostic &X : D2.diagnostics())
    Named |= X.Message.find("recv F0@1 <- 0") != std::string::npos;
  EXPECT_TRUE(Named);
}

TEST(Comm, FifoMismatchIsReported) {
  ScheduleBuilder B(2, 2, 2);
  B.rank(0)
      .F(0)
      .F(1)
      .comm(ActionKind::SendF, 1, 0, 1)
      .comm(ActionKind::SendF, 0, 0, 1);
  B.rank(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .comm(ActionKind::RecvF, 1, 1, 0)
      .F(0)
      .F(1);
  SourceManager SM;
  DiagnosticEngine D(SM);
  sim::simulate(B.schedule(), comms(CommModel::Eager), &D);
  EXPECT_TRUE(D.has(DiagKind::FifoMismatch));
}

TEST(Comm, EagerUnmatchedSendIsReported) {
  ScheduleBuilder B(2, 2, 1);
  B.rank(0).F(0).comm(ActionKind::SendF, 0, 0, 1);
  B.rank(1).F(0);
  SourceManager SM;
  DiagnosticEngine D(SM);
  SimResult R = sim::simulate(B.schedule(), comms(CommModel::Eager), &D);
  EXPECT_FALSE(R.Deadlocked);
  EXPECT_TRUE(D.has(DiagKind::UnmatchedSend));
  EXPECT_TRUE(
      sim::simulate(B.schedule(), comms(CommModel::Rendezvous)).Deadlocked);
}

TEST(CriticalPath, ChainsBindingActionsToTheMakespan) {
  for (double C : {0.0, 0.5}) {
    Schedule S = simtest::oneF1B(4, 8);
    S.Cost.Latency = C;
    simtest::insertComms(S);
    SimResult R = run(S);
    ASSERT_FALSE(R.CriticalPath.empty());
    EXPECT_DOUBLE_EQ(R.end(R.CriticalPath.back()), R.Makespan);
    EXPECT_DOUBLE_EQ(R.start(R.CriticalPath.front()), 0);
    // Each action starts no earlier than the end of the one before, and the
    // path has no slack: start == previous end for computes after computes.
    for (size_t I = 1; I < R.CriticalPath.size(); ++I) {
      auto Prev = R.CriticalPath[I - 1], Cur = R.CriticalPath[I];
      const Action &A = S.Ranks[Cur.Rank].Actions[Cur.Index];
      double T = isComm(A.Kind) ? R.Times[Cur.Rank].TransferStart[Cur.Index]
                                : R.start(Cur);
      EXPECT_LE(R.end(Prev), R.end(Cur));
      if (isCompute(A.Kind)) {
        EXPECT_DOUBLE_EQ(T, R.end(Prev)) << I;
      }
    }
  }
}

TEST(Figures, ChannelsPerRankPair) {
  Schedule S = simtest::oneF1B(4, 8);
  S.Cost.ActivationBytes = 100;
  S.Cost.GradientBytes = 50;
  simtest::insertComms(S);
  SimResult R = run(S);
  ASSERT_EQ(R.Channels.size(), 6u);
  for (const auto &C : R.Channels) {
    EXPECT_EQ(std::abs(C.Src - C.Dst), 1);
    EXPECT_EQ(C.Messages, 8u);
    EXPECT_DOUBLE_EQ(C.Bytes, C.Dst > C.Src ? 800 : 400);
  }
  EXPECT_EQ(R.Messages, 48u);
  EXPECT_EQ(R.Ranks[1].Sends, 16u);
  EXPECT_EQ(R.Ranks[0].Recvs, 8u);
}

TEST(Figures, OptionsOverrideTheSchedule) {
  Schedule S = simtest::oneF1B(4, 8);
  S.Cost.Latency = 1.0; // comms ordered for latency 1
  simtest::insertComms(S);
  S.Cost.Latency = 0;
  EXPECT_DOUBLE_EQ(run(S).Makespan, 33);
  SimOptions O;
  O.Latency = 1.0;
  O.KeepTimes = false;
  SimResult R = run(S, O);
  EXPECT_DOUBLE_EQ(R.Makespan, 49);
  EXPECT_TRUE(R.Times.empty());
  O.CommModel = CommModel::Eager;
  EXPECT_EQ(run(S, O).Comm, CommModel::Eager);
}

TEST(Interleaved, RunsAndBeatsPlain1F1B) {
  // Interleaving with V chunks cuts the bubble to (P-1)(F+B)/V.
  int P = 4, V = 2, M = 8;
  StageCost C{0.5, 0.5, 0.5, 1.0}; // per chunk: half the work of a stage
  Schedule S = simtest::interleaved1F1B(P, V, M, C);
  SimResult D = run(S);
  EXPECT_FALSE(D.Deadlocked);
  EXPECT_DOUBLE_EQ(D.Ideal, M * V * 1.5);
  EXPECT_DOUBLE_EQ(D.Makespan, M * V * 1.5 + (P - 1) * 1.5);
  simtest::insertComms(S);
  SimResult R = run(S);
  EXPECT_FALSE(R.Deadlocked);
  EXPECT_DOUBLE_EQ(R.Makespan, D.Makespan);
}

TEST(Robustness, HugeSparseMicrobatchNumbersStaySmall) {
  // M = 2e9 with four actions: the per-key tables must not be sized by M.
  ScheduleBuilder B(2, 2, 1);
  Schedule S = B.build();
  S.Topo.Microbatches = 2000000000;
  S.Ranks[0].Actions = {Action::compute(ActionKind::F, 1999999999, 0),
                        Action::comm(ActionKind::SendF, 1999999999, 0, 1),
                        Action::comm(ActionKind::RecvB, 1999999999, 0, 1),
                        Action::compute(ActionKind::B, 1999999999, 0)};
  S.Ranks[1].Actions = {Action::comm(ActionKind::RecvF, 1999999999, 1, 0),
                        Action::compute(ActionKind::F, 1999999999, 1),
                        Action::compute(ActionKind::B, 1999999999, 1),
                        Action::comm(ActionKind::SendB, 1999999999, 1, 0)};
  SimResult R = run(S);
  EXPECT_FALSE(R.Deadlocked);
  EXPECT_DOUBLE_EQ(R.Makespan, 6);
  EXPECT_EQ(R.PeakMemory, 1);
  // Out-of-range numbers and peers do not crash either.
  S.Ranks[0].Actions.push_back(Action::compute(ActionKind::F, -7, 99));
  S.Ranks[1].Actions.push_back(Action::comm(ActionKind::SendF, 3, 1, 42));
  S.Ranks[1].Actions.push_back(Action::compute(ActionKind::B, 0, 1));
  S.Ranks[1].Actions.back().Flags = ActionFlags::OverlapNext; // dangling
  R = run(S);
  EXPECT_FALSE(R.Deadlocked);
}

TEST(Comm, BatchCompletesAsAWholeAcrossPeers) {
  ScheduleBuilder B(3, 3, 1);
  B.rank(0)
      .F(0)
      .comm(ActionKind::SendF, 0, 0, 1)
      .comm(ActionKind::RecvB, 0, 0, 1)
      .B(0);
  B.rank(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .comm(ActionKind::SendF, 0, 1, 2)
      .comm(ActionKind::RecvB, 0, 1, 2) // one batch
      .B(0)
      .comm(ActionKind::SendB, 0, 1, 0);
  B.rank(2)
      .comm(ActionKind::RecvF, 0, 2, 1)
      .F(0)
      .B(0)
      .comm(ActionKind::SendB, 0, 2, 1);
  Schedule S = B.build();
  S.Cost.Latency = 1;
  SimResult Bt = run(S, comms(CommModel::Batched));
  SimResult Rv = run(S, comms(CommModel::Rendezvous));
  SimResult Bk = run(S, comms(CommModel::Batched, true));
  for (const SimResult *R : {&Bt, &Rv, &Bk}) {
    EXPECT_FALSE(R->Deadlocked);
    EXPECT_DOUBLE_EQ(R->Makespan, 13);
  }
  // The send to rank 2 transfers [3,4] either way, but under batched it
  // completes with the receive from rank 2 in its batch, at 8.
  EXPECT_DOUBLE_EQ(Rv.Times[1].TransferStart[2], 3);
  EXPECT_DOUBLE_EQ(Rv.Times[1].End[2], 4);
  EXPECT_DOUBLE_EQ(Bt.Times[1].TransferStart[2], 3);
  EXPECT_DOUBLE_EQ(Bt.Times[1].End[2], 8);
  EXPECT_DOUBLE_EQ(Bt.Times[1].End[3], 8);
  EXPECT_DOUBLE_EQ(Bk.Times[1].End[2], 8);
  // The rank's receive of B0 waited from 3 (posted with the batch) to 7.
  EXPECT_DOUBLE_EQ(Bt.Times[1].Start[3], 3);
  EXPECT_DOUBLE_EQ(Bt.Times[1].TransferStart[3], 7);
}

TEST(VisitOrder, ManyRanksGiveTheFormulaAcrossSweepWindows) {
  // More ranks than one sweep window (32), and sizes that are not a
  // multiple of it: the order in which woken ranks are visited must not
  // change any time. Checked against the closed forms, the dataflow run,
  // and every comm model, with complete timelines and a critical path that
  // ends at the makespan.
  for (int P : {33, 70, 100}) {
    int M = 8;
    StageCost C{1.0, 1.0, 1.0, 2.0};
    double Want = (M + P - 1) * (C.F + C.B);
    Schedule O = simtest::oneF1B(P, M, C);
    EXPECT_DOUBLE_EQ(run(O).Makespan, Want) << P;
    simtest::insertComms(O);
    for (CommModel Mo :
         {CommModel::Rendezvous, CommModel::Eager, CommModel::Batched})
      for (bool Blocking : {false, true}) {
        SimResult R = run(O, comms(Mo, Blocking));
        EXPECT_FALSE(R.Deadlocked);
        EXPECT_DOUBLE_EQ(R.Makespan, Want)
            << P << " model " << int(Mo) << " blocking " << Blocking;
        ASSERT_FALSE(R.CriticalPath.empty());
        EXPECT_DOUBLE_EQ(R.end(R.CriticalPath.back()), Want);
        for (int Rk = 0; Rk < P; ++Rk)
          for (double E : R.Times[Rk].End)
            EXPECT_TRUE(std::isfinite(E));
      }
    // Interleaved: comm timing equals dataflow timing at any size.
    StageCost H{0.5, 0.5, 0.5, 1.0};
    Schedule S = simtest::interleaved1F1B(P, 2, M, H);
    SimResult D = run(S);
    EXPECT_DOUBLE_EQ(D.Makespan, M * 2 * 1.5 + (P - 1) * 1.5) << P;
    simtest::insertComms(S);
    SimResult R = run(S);
    EXPECT_FALSE(R.Deadlocked);
    EXPECT_DOUBLE_EQ(R.Makespan, D.Makespan) << P;
  }
}

TEST(VisitOrder, AComputeWaitingForAReceiveRunsOnceItCompletes) {
  // The compute cursor runs again only when the receive it stopped at
  // changes. Rank 1 waits for F0's input; rank 2 also receives it (the
  // verifier reports that) and takes the per-input entry over before or
  // after rank 1's receive completes, depending on whether rank 0 sends to
  // it first (and, on one stream per rank, whether that send holds back
  // the one to rank 1). Rank 1 must run F0@1 in every case, not be left
  // waiting for an entry that is no longer its own.
  for (bool ToTwoFirst : {false, true})
    for (int Ranks : {3, 40}) { // one sweep window or two
      ScheduleBuilder B(Ranks, Ranks, 1);
      B.stageCost(0, StageCost{5, 1, 1, 2});
      auto R0 = B.rank(0);
      R0.F(0);
      if (ToTwoFirst)
        R0.comm(ActionKind::SendF, 0, 0, 2).comm(ActionKind::SendF, 0, 0, 1);
      else
        R0.comm(ActionKind::SendF, 0, 0, 1).comm(ActionKind::SendF, 0, 0, 2);
      B.rank(1).comm(ActionKind::RecvF, 0, 1, 0).F(0, 1).idle(1);
      B.rank(2).comm(ActionKind::RecvF, 0, 1, 0).idle(1);
      Schedule S = B.build();
      S.Cost.Latency = 1;
      for (CommModel Mo :
           {CommModel::Rendezvous, CommModel::Eager, CommModel::Batched})
        for (StreamScope Sc :
             {StreamScope::None, StreamScope::Peer, StreamScope::Rank}) {
          SimOptions O = comms(Mo);
          O.Stream = CommStream{Sc, -1};
          SimResult R = run(S, O);
          EXPECT_FALSE(R.Deadlocked)
              << ToTwoFirst << " " << int(Mo) << " " << int(Sc);
          for (int Rk = 0; Rk < 3; ++Rk)
            for (double E : R.Times[Rk].End)
              EXPECT_TRUE(std::isfinite(E)) << ToTwoFirst << " " << int(Mo);
        }
    }
}
