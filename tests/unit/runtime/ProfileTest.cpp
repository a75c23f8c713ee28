//===- ProfileTest.cpp - measured costs of a run, as a .pps costs file ----===//
#include "RuntimeTestUtil.h"

#include "ppsrt/Main.h"
#include "ppsrt/Profile.h"

#include <gtest/gtest.h>

namespace {

using namespace ppsrt;

ProfileEvent compute(int Step, int32_t Rank, Kind K, int32_t Mb, int32_t Stage,
                     double Start, double Ms, uint8_t Flags = 0) {
  ProfileEvent E;
  E.step = Step;
  E.rank = Rank;
  E.kind = K;
  E.flags = Flags;
  E.mb = Mb;
  E.stage = Stage;
  E.start = Start;
  E.end = Start + Ms * 1000;
  return E;
}

ProfileEvent comm(int Step, int32_t Rank, Kind K, int32_t Peer, uint64_t Seq,
                  double Post, double Done, double Wait = -1) {
  ProfileEvent E;
  E.step = Step;
  E.rank = Rank;
  E.kind = K;
  E.peer = Peer;
  E.seq = Seq;
  E.start = Post;
  E.end = Done;
  E.waitStart = Wait;
  return E;
}

ProfileEvent stepMark(int Step, int32_t Rank, double Start, double End) {
  ProfileEvent E;
  E.step = Step;
  E.rank = Rank;
  E.flags = ProfileEvent::StepMark;
  E.start = Start;
  E.end = End;
  return E;
}

TEST(Profile, SummarisesEachStageKindMessageAndStep) {
  auto T = pps::rttest::compile(
      "pipeline p { ranks 2; microbatches 2; schedule zb_h1(); }");
  ASSERT_TRUE(T);
  std::vector<ProfileEvent> E;
  // Step 0 is warm-up: not counted, however slow.
  E.push_back(compute(0, 0, Kind::F, 0, 0, 0, 99));
  E.push_back(stepMark(0, 0, 0, 1e6));
  // Steps 1 and 2: per-step means of F on stage 0 are 2.1 and 2.4 ms.
  E.push_back(compute(1, 0, Kind::F, 0, 0, 2000, 2.0));
  E.push_back(compute(1, 0, Kind::F, 1, 0, 4000, 2.2));
  E.push_back(compute(2, 0, Kind::F, 0, 0, 9000, 2.4));
  E.back().bytes = 4096;
  for (int Step : {1, 2}) {
    double At = Step * 10000;
    E.push_back(compute(Step, 1, Kind::F, 0, 1, At, 3.0));
    E.push_back(compute(Step, 1, Kind::I, 0, 1, At, 1.5));
    E.push_back(compute(Step, 1, Kind::W, 0, 1, At, 1.0, ProfileEvent::Probe));
    E.push_back(compute(Step, 1, Kind::B, 1, 1, At, 2.0));
    E.push_back(compute(Step, 0, Kind::I, 0, 0, At, 0.5));
    E.push_back(compute(Step, 0, Kind::W, 0, 0, At, 1.5));
  }
  // Inside an overlap pair: not a time of its kind.
  E.push_back(
      compute(2, 1, Kind::F, 1, 1, 20000, 50, ProfileEvent::Overlapped));
  // A message rank 0 -> 1 (channel position 3): sent at 100 us, received
  // by a rank waiting since 50 (posted at 40), which got it at 130: 30 us.
  E.push_back(comm(1, 0, Kind::SendF, 1, 3, 100, 120));
  E.push_back(comm(1, 1, Kind::RecvF, 0, 3, 40, 130, 50));
  // One whose receive was posted after the send: from the receive on.
  E.push_back(comm(2, 0, Kind::SendF, 1, 4, 100, 120));
  E.push_back(comm(2, 1, Kind::RecvF, 0, 4, 200, 250, 210));
  // One that had arrived before its receiver looked: no sample.
  E.push_back(comm(2, 1, Kind::SendB, 0, 0, 100, 120));
  E.push_back(comm(2, 0, Kind::RecvB, 1, 0, 90, 400));
  // Steps from the first compute to the last rank's end.
  E.push_back(stepMark(1, 0, 1000, 30000));
  E.push_back(stepMark(1, 1, 500, 31000));
  E.push_back(stepMark(2, 0, 8000, 40000));
  E.push_back(stepMark(2, 1, 8000, 39000));

  std::vector<ActivationBytes> Bytes(2);
  Bytes[1].nonActivationPeak = 123456;
  ProfileSummary P;
  ASSERT_EQ(summarizeProfile(T->Desc, E, Bytes, 1, P), "");
  EXPECT_EQ(P.firstStep, 1);
  EXPECT_EQ(P.steps, 2);
  const ProfileSummary::Stage &S0 = P.stages[0], &S1 = P.stages[1];
  EXPECT_EQ(S0.F.samples, 3);
  EXPECT_NEAR(S0.F.mean, 2.2, 1e-9); // over the actions
  EXPECT_NEAR(S0.F.sdSteps, std::sqrt(0.045), 1e-9);
  EXPECT_NEAR(S0.F.min, 2.0, 1e-9);
  EXPECT_NEAR(S0.F.max, 2.4, 1e-9);
  EXPECT_EQ(S0.bytes.samples, 1);
  EXPECT_EQ(S0.bytes.mean, 4096);
  EXPECT_EQ(S1.F.samples, 2) << "the overlapped F is not counted";
  EXPECT_EQ(P.overlapped, 1);
  EXPECT_NEAR(S1.I.mean + S1.W.mean, 2.5, 1e-9);
  EXPECT_NEAR(S1.B.mean, 2.0, 1e-9);
  EXPECT_EQ(P.probes, 0) << "probes are counted by their I";
  ASSERT_EQ(P.links.size(), 2u);
  EXPECT_EQ(P.links[0].from, 0);
  EXPECT_EQ(P.links[0].to, 1);
  EXPECT_FALSE(P.links[0].gradient);
  EXPECT_EQ(P.links[0].time.samples, 2);
  EXPECT_NEAR(P.links[0].time.mean, (0.030 + 0.050) / 2, 1e-12);
  EXPECT_EQ(P.links[1].from, 1);
  EXPECT_TRUE(P.links[1].gradient);
  EXPECT_EQ(P.links[1].time.samples, 0);
  EXPECT_EQ(P.links[1].unmeasured, 1);
  EXPECT_NEAR(P.messages.mean, 0.04, 1e-12);
  // Step 1: first compute at 2000, last end 31000; step 2: 9000..40000.
  EXPECT_NEAR(P.stepTime.mean, 30, 1e-9);
  EXPECT_NEAR(P.stepTime.min, 29, 1e-9);
  EXPECT_EQ(P.nonActivationPeak, (std::vector<int64_t>{-1, 123456}));
  // By CPU time (--profile-clock=cpu): the events' cpu field.
  for (ProfileEvent &X : E)
    X.cpu = (X.end - X.start) / 2;
  ProfileSummary C;
  ASSERT_EQ(summarizeProfile(T->Desc, E, Bytes, 1, C, /*Cpu=*/true), "");
  EXPECT_NEAR(C.stages[0].F.mean, 1.1, 1e-9);
  EXPECT_NEAR(C.stepTime.mean, 30, 1e-9) << "steps stay wall time";

  // The file: comments, then a pipeline of the run's topology.
  ProfileRun Run;
  Run.program = "./exec";
  Run.transport = "threads";
  Run.totalSteps = 3;
  Run.peaks = {2, 2};
  Run.executorMakespan = 12.5;
  std::string Text = formatProfile(T->Desc, P, Run);
  EXPECT_NE(Text.find("steps 1..2 of steps 0..2 (step 0 is warm-up)"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("// 1     2.5        2          1.250"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("// 0 -> 1 act"), std::string::npos) << Text;
  EXPECT_NE(Text.find("12.5 (executor timing)"), std::string::npos) << Text;
  EXPECT_NE(Text.find("// 0     4096"), std::string::npos) << Text;
  EXPECT_NE(Text.find("per rank: 123456"), std::string::npos) << Text;
  EXPECT_NE(Text.find("pipeline test_measured {\n  ranks 2;\n  stages 2 "
                      "placement loop;\n  microbatches 2;\n"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("F[stage 0] = 2.2; I[stage 0] = 0.5; W[stage 0] = 1.5;"
                      "\n"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("W[stage 1] = 1; B[stage 1] = 2;"), std::string::npos)
      << Text;
  EXPECT_NE(Text.find("comm { latency 0.04; }\n  memory limit 2;\n  schedule "
                      "synth();\n}\n"),
            std::string::npos)
      << Text;

  // The front end reads it back: the costs a `--costs` run takes.
  pps::SourceManager SM;
  pps::DiagnosticEngine Diags(SM);
  std::optional<pps::ir::Schedule> S =
      pps::frontend::compileBuffer("profile.pps", Text, SM, Diags, {});
  ASSERT_TRUE(S.has_value());
  EXPECT_FALSE(Diags.hasErrors());
  EXPECT_DOUBLE_EQ(S->Cost.computeCost(pps::ir::ActionKind::F, 0), 2.2);
  EXPECT_DOUBLE_EQ(S->Cost.computeCost(pps::ir::ActionKind::B, 0), 2.0)
      << "B = I + W where B was not measured";
  EXPECT_DOUBLE_EQ(S->Cost.Latency, 0.04);
  ASSERT_TRUE(S->Synth.has_value());
  EXPECT_EQ(S->MemoryLimit, 2);
}

TEST(Profile, NothingToMeasureAfterTheWarmUpIsAnError) {
  auto T = pps::rttest::compile(
      "pipeline p { ranks 2; microbatches 2; schedule one_f_one_b(); }");
  ASSERT_TRUE(T);
  std::vector<ProfileEvent> E = {stepMark(0, 0, 0, 10)};
  ProfileSummary P;
  EXPECT_EQ(summarizeProfile(T->Desc, E, {}, 1, P),
            "no step to measure after the 1 warm-up step: run more steps "
            "(--steps) than --profile-warmup");
}

TEST(Profile, ARunTimesEveryStageAndTheSplitOfItsBackwards) {
  // 1F1B runs B only: every other B of a stage runs as I then W, so the
  // profile has all four kinds and the file gives I and W.
  auto T = pps::rttest::compile("pipeline p { ranks 2; microbatches 4; cost "
                                "{ F = 1; B = 2; I = 1; W = 1; } schedule "
                                "one_f_one_b(); }");
  ASSERT_TRUE(T);
  BusyWaitKernels K;
  RunOptions O;
  O.timeScale = 0.2;
  O.sleepKernels = true;
  O.steps = 3;
  O.profileFile = ::testing::TempDir() + "/ppsrt_profile_" +
                  std::to_string(::getpid()) + ".pps";
  RunResult R = runThreads(T->Desc, K, O);
  ASSERT_EQ(R.exitCode, ExitOk) << R.error;
  ProfileSummary P;
  ASSERT_EQ(summarizeProfile(T->Desc, R.profile, R.activationBytes, 1, P), "");
  EXPECT_EQ(P.steps, 2);
  EXPECT_EQ(P.probes, 2 * 2 * 2) << "half the B of 2 stages in 2 steps";
  for (const ProfileSummary::Stage &S : P.stages) {
    EXPECT_EQ(S.F.samples, 8);
    EXPECT_EQ(S.B.samples, 4);
    EXPECT_EQ(S.I.samples, 4);
    EXPECT_EQ(S.W.samples, 4);
    // Sleeps last at least as long as asked (0.2 ms per unit).
    EXPECT_GE(S.F.mean, 0.2);
    EXPECT_GE(S.B.mean, 0.4);
    EXPECT_GE(S.I.min, 0.2);
  }
  EXPECT_GT(P.stepTime.mean, 0);
  std::string Err =
      finishProfile(T->Desc, O, RunComm{}, "exec", R.profile, R.activationBytes,
                    R.peakActivations, T->Desc.ranks);
  EXPECT_EQ(Err, "");
  std::remove(O.profileFile.c_str());
  O.profileFile = "/dev/full";
  Err = finishProfile(T->Desc, O, RunComm{}, "exec", R.profile,
                      R.activationBytes, R.peakActivations, T->Desc.ranks);
  EXPECT_EQ(Err, "cannot write '/dev/full': No space left on device");
}

TEST(Profile, TheOptionsAreParsed) {
  const char *Argv[] = {"exec", "--profile=p.pps", "--profile-warmup=2",
                        "--profile-clock=cpu"};
  RunOptions O;
  std::string Err;
  ASSERT_TRUE(parseRunOptions(4, const_cast<char **>(Argv), O, Err)) << Err;
  EXPECT_EQ(O.profileFile, "p.pps");
  EXPECT_EQ(O.profileWarmup, 2);
  EXPECT_TRUE(O.profileCpu);
  const char *Clock[] = {"exec", "--profile-clock=tsc"};
  EXPECT_FALSE(parseRunOptions(2, const_cast<char **>(Clock), O, Err));
  EXPECT_EQ(Err, "unknown clock 'tsc' (expected wall or cpu)");
  EXPECT_TRUE(execOptionsFor(RunComm{}, O).profile);
  const char *Bad[] = {"exec", "--profile-warmup=1.5"};
  EXPECT_FALSE(parseRunOptions(2, const_cast<char **>(Bad), O, Err));
  EXPECT_EQ(Err, "bad value '1.5' for --profile-warmup (expected a whole "
                 "number)");
  const char *Empty[] = {"exec", "--profile="};
  EXPECT_FALSE(parseRunOptions(2, const_cast<char **>(Empty), O, Err));
  EXPECT_EQ(Err, "--profile needs a file name");
}

} // namespace
