//===- RuntimeTest.cpp - the executor, transports, watchdog and predictor -===//
#include "RuntimeTestUtil.h"

#include "ppsrt/Executor.h"
#include "ppsrt/Main.h"
#include "ppsrt/Transport.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

using namespace pps;
using namespace ppsrt;

namespace {

TEST(RuntimeSchedule, RowEncodingRoundTrips) {
  for (Kind K :
       {Kind::F, Kind::SendB, Kind::RecvF, Kind::ReduceGrad, Kind::Idle})
    for (int32_t Peer : {-1, 0, 7, 1 << 20})
      for (uint8_t Flags : {0, 1}) {
        int32_t Row[3] = {encodeWord0(K, Flags, Peer), 12345, 678};
        Action A = decodeRow(Row);
        EXPECT_EQ(A.kind, K);
        EXPECT_EQ(A.flags, Flags);
        EXPECT_EQ(A.peer, Peer);
        EXPECT_EQ(A.mb, 12345);
        EXPECT_EQ(A.stage, 678);
      }
}

TEST(RuntimeSchedule, NamesAndMatchingCommsFollowTheIrConventions) {
  Action Send{Kind::SendF, 0, 2, 3, 5};
  EXPECT_EQ(formatAction(Send), "send F3@5 -> 2");
  Action Recv = matchingComm(Send, 1);
  EXPECT_EQ(formatAction(Recv), "recv F3@6 <- 1");
  Action SendB{Kind::SendB, 0, 1, 3, 6};
  EXPECT_EQ(formatAction(matchingComm(SendB, 2)), "recv B3@5 <- 2");
  EXPECT_EQ(formatAction(matchingComm(matchingComm(SendB, 2), 1)),
            "send B3@6 -> 1");
  EXPECT_EQ(formatAction(Action{Kind::W, 0, -1, 4, 1}), "W4@1");
  EXPECT_EQ(formatAction(Action{Kind::Unshard, 0, -1, -1, 5}), "unshard 5");
  EXPECT_EQ(formatAction(Action{Kind::ReduceGrad, 0, -1, -1, 2}),
            "reduce_grad 2");
}

/// A two-rank description for transport tests (no actions needed).
struct TwoRanks {
  int32_t StageToRank[2] = {0, 1};
  StageCost Costs[2] = {{1, 1, 1, 2}, {1, 1, 1, 2}};
  RankTable Tabs[2] = {{nullptr, 0}, {nullptr, 0}};
  ScheduleDesc D{"t",     "t", 2, 2, 1, StageToRank,           Costs,
                 -1,      0,   0, 0, 0, CommModel::Rendezvous, Tabs,
                 nullptr, -1};
};

TEST(ThreadsTransport, RendezvousSendCompletesOnlyOnceTheReceiveIsPosted) {
  TwoRanks TR;
  RunState RS(TR.D, 0, 2);
  ThreadsTransport T(RS, 2, /*Rendezvous=*/true);
  Request S;
  S.action = Action{Kind::SendF, 0, 1, 0, 0};
  S.peer = 1;
  S.buf.resize<int>(4);
  S.buf.as<int>()[2] = 42;
  const unsigned char *Data = S.buf.data();
  T.postSend(0, S);
  EXPECT_FALSE(T.test(0, S));
  Request R;
  R.action = Action{Kind::RecvF, 0, 0, 0, 1};
  R.peer = 0;
  T.postRecv(1, R);
  EXPECT_TRUE(T.test(0, S));
  T.wait(1, R);
  EXPECT_TRUE(R.done);
  EXPECT_EQ(R.buf.as<int>()[2], 42);
  EXPECT_EQ(R.buf.data(), Data) << "the hand-off must not copy";
}

TEST(ThreadsTransport, APayloadIsHandedOverAsIs) {
  struct Blob : Payload {
    std::string header() const override { return "blob"; }
    const void *contiguousBytes(size_t &N) const override {
      N = sizeof(Value);
      return &Value;
    }
    int Value = 7;
  };
  TwoRanks TR;
  RunState RS(TR.D, 0, 2);
  ThreadsTransport T(RS, 2, /*Rendezvous=*/false);
  auto P = std::make_shared<Blob>();
  Request S;
  S.action = Action{Kind::SendF, 0, 1, 0, 0};
  S.peer = 1;
  S.buf.setPayload(P);
  T.postSend(0, S);
  Request R;
  R.action = Action{Kind::RecvF, 0, 0, 0, 1};
  R.peer = 0;
  T.postRecv(1, R);
  T.wait(1, R);
  EXPECT_EQ(R.buf.payload().get(), P.get()) << "the object itself, no copy";
  R.buf.reset();
  EXPECT_FALSE(R.buf.payload());
  EXPECT_EQ(P.use_count(), 1);
}

TEST(ThreadsTransport, EagerSendsCompleteAtOnceAndMatchInFifoOrder) {
  TwoRanks TR;
  RunState RS(TR.D, 0, 2);
  ThreadsTransport T(RS, 2, /*Rendezvous=*/false);
  std::vector<Request> Sends(3);
  for (int I = 0; I < 3; ++I) {
    Sends[I].action = Action{Kind::SendF, 0, 1, I, 0};
    Sends[I].peer = 1;
    Sends[I].buf.resize<int>(1);
    Sends[I].buf.as<int>()[0] = I;
    T.postSend(0, Sends[I]);
    EXPECT_TRUE(Sends[I].done);
  }
  for (int I = 0; I < 3; ++I) {
    Request R;
    R.action = Action{Kind::RecvF, 0, 0, I, 1};
    R.peer = 0;
    T.postRecv(1, R);
    T.wait(1, R);
    EXPECT_EQ(R.buf.as<int>()[0], I);
  }
}

TEST(ThreadsTransport, AMessageForAnotherReceiveIsAFifoMismatch) {
  TwoRanks TR;
  RunState RS(TR.D, 0, 2);
  ThreadsTransport T(RS, 2, false);
  Request S;
  S.action = Action{Kind::SendF, 0, 1, 0, 0};
  S.peer = 1;
  T.postSend(0, S);
  Request R;
  R.action = Action{Kind::RecvF, 0, 0, 1, 1};
  R.peer = 0;
  T.postRecv(1, R);
  EXPECT_THROW(T.wait(1, R), Aborted);
  EXPECT_EQ(RS.exitCode(), ExitError);
  EXPECT_EQ(RS.errorMessage(),
            "the 1st send from rank 0 to rank 1 is `send F0@0 -> 1`, but the "
            "1st receive at rank 1 from rank 0 is `recv F1@1 <- 0` (messages "
            "on one channel are matched in order) [fifo-mismatch]");
}

TEST(ThreadsTransport, AWaitSeesAnAbortInsteadOfHanging) {
  TwoRanks TR;
  RunState RS(TR.D, 0, 2);
  ThreadsTransport T(RS, 2, true);
  Request R;
  R.action = Action{Kind::RecvF, 0, 0, 0, 1};
  R.peer = 0;
  T.postRecv(1, R);
  std::thread Stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    RS.fail(ExitError, "stop");
  });
  EXPECT_THROW(T.wait(1, R), Aborted);
  Stopper.join();
}

/// Kernels that check the data flow: every output names its (m, s), every
/// input must name (m, s-1), every gradient (m, s+1). Counts the calls.
class CheckingKernels : public Kernels {
public:
  explicit CheckingKernels(const ScheduleDesc &S) : S(S) {}
  size_t messageBytes(int32_t, bool) override { return 2 * sizeof(int32_t); }
  void forward(StageIO &IO) override {
    if (IO.stage > firstStage(S, IO.microbatch))
      expect(IO.input, IO.microbatch, IO.stage - 1, "F input");
    write(IO.output, IO.microbatch, IO.stage);
    ++Calls[0];
  }
  void loss(StageIO &IO) override {
    write(IO.gradOutput, IO.microbatch, IO.stage + 1);
    IO.loss = 1;
  }
  void backwardInput(StageIO &IO) override {
    expect(IO.gradOutput, IO.microbatch, IO.stage + 1, "gradient");
    write(IO.gradInput, IO.microbatch, IO.stage);
    ++Calls[1];
  }
  void backwardWeight(StageIO &IO) override { ++Calls[2]; }
  void backward(StageIO &IO) override {
    backwardInput(IO);
    --Calls[1];
    ++Calls[3];
  }
  void unshard(int32_t, int32_t) override { ++Control; }
  void reshard(int32_t, int32_t) override { ++Control; }
  void reduceGrad(int32_t, int32_t) override { ++Control; }

  std::atomic<int> Calls[4] = {};
  std::atomic<int> Control{0};
  std::atomic<int> Errors{0};

private:
  static void write(Buffer &B, int32_t M, int32_t St) {
    B.resize<int32_t>(2);
    B.as<int32_t>()[0] = M;
    B.as<int32_t>()[1] = St;
  }
  void expect(const Buffer &B, int32_t M, int32_t St, const char *What) {
    if (B.count<int32_t>() != 2 || B.as<int32_t>()[0] != M ||
        B.as<int32_t>()[1] != St) {
      ++Errors;
      ADD_FAILURE() << What << " of (" << M << ", " << St << ") is wrong";
    }
  }
  const ScheduleDesc &S;
};

static RunResult run(const ScheduleDesc &D, Kernels &K, CommModel Comm,
                     double Watchdog = 20) {
  RunOptions O;
  O.timeScale = 0;
  O.watchdogSeconds = Watchdog;
  O.comm = Comm;
  O.commSet = true;
  return runThreads(D, K, O);
}

struct StdlibCase {
  const char *Name;
  const char *Pipeline;
};

class RunsStdlib : public ::testing::TestWithParam<StdlibCase> {};

TEST_P(RunsStdlib, DataFlowsAndPeaksMatchTheMemoryAnalysis) {
  auto T = rttest::compile(GetParam().Pipeline);
  ASSERT_TRUE(T);
  for (CommModel Comm :
       {CommModel::Rendezvous, CommModel::Eager, CommModel::Batched}) {
    CheckingKernels K(T->Desc);
    RunResult R = run(T->Desc, K, Comm);
    ASSERT_EQ(R.exitCode, ExitOk) << R.error;
    EXPECT_EQ(K.Errors.load(), 0);
    for (int32_t Rank = 0; Rank < T->Desc.ranks; ++Rank)
      EXPECT_EQ(R.peakActivations[size_t(Rank)], T->Peaks[size_t(Rank)])
          << "rank " << Rank << " under " << commModelName(Comm);
    // Each microbatch traverses stages / directions stages.
    int N = T->Desc.microbatches * T->Desc.stages / T->Desc.directions;
    EXPECT_EQ(K.Calls[0].load(), N);
    EXPECT_EQ(K.Calls[1].load() + K.Calls[3].load(), N);
    EXPECT_EQ(R.lossSum, double(T->Desc.microbatches));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Runtime, RunsStdlib,
    ::testing::Values(
        StdlibCase{"one_f_one_b", "pipeline p { ranks 4; microbatches 8; "
                                  "schedule one_f_one_b(); }"},
        StdlibCase{"zb_h1", "pipeline p { ranks 4; microbatches 6; "
                            "schedule zb_h1(); }"},
        StdlibCase{"interleaved", "pipeline p { ranks 2; stages 4; "
                                  "microbatches 4; schedule "
                                  "interleaved_1f1b(); }"},
        StdlibCase{"dualpipe_v", "pipeline p { ranks 2; stages 4 placement v; "
                                 "microbatches 4; schedule dualpipe_v(); }"},
        StdlibCase{"dualpipe", "pipeline p { ranks 2; stages 4 placement v; "
                               "directions 2; microbatches 4; "
                               "schedule dualpipe(); }"},
        StdlibCase{"zb_v", "pipeline p { ranks 3; stages 6 placement v; "
                           "microbatches 5; schedule zb_v(); }"}),
    [](const ::testing::TestParamInfo<StdlibCase> &I) {
      return std::string(I.param.Name);
    });

TEST(Executor, KernelStateLivesFromFToTheReleaseTheAnalysisCounts) {
  // ZB-H1 (I and W), DualPipeV (overlapped pairs, two stages per rank).
  for (const char *P :
       {"pipeline p { ranks 4; microbatches 8; schedule zb_h1(); }",
        "pipeline p { ranks 4; stages 8 placement v; microbatches 8; "
        "schedule dualpipe_v(); }"}) {
    auto T = rttest::compile(P);
    ASSERT_TRUE(T);
    struct Counted : StageState {
      std::atomic<int64_t> *Live;
      explicit Counted(std::atomic<int64_t> *L) : Live(L) { ++*Live; }
      ~Counted() override { --*Live; }
    };
    struct StateKernels : CheckingKernels {
      using CheckingKernels::CheckingKernels;
      std::atomic<int64_t> Live[4] = {}, Peak[4] = {};
      void forward(StageIO &IO) override {
        CheckingKernels::forward(IO);
        int32_t R = schedule->stageToRank[IO.stage];
        IO.state = std::make_unique<Counted>(&Live[R]);
        Peak[R] = std::max(Peak[R].load(), Live[R].load());
      }
      const ScheduleDesc *schedule = nullptr;
    } K(T->Desc);
    K.schedule = &T->Desc;
    RunResult R = run(T->Desc, K, CommModel::Rendezvous);
    ASSERT_EQ(R.exitCode, ExitOk) << R.error;
    for (int32_t Rank = 0; Rank < 4; ++Rank) {
      EXPECT_EQ(K.Peak[Rank].load(), T->Peaks[size_t(Rank)]) << P;
      EXPECT_EQ(K.Live[Rank].load(), 0) << "every state released";
    }
  }
}

TEST(Executor, OverlapPairsAndControlActionsReachTheirHandlers) {
  auto T = rttest::compile(R"(pipeline p {
    ranks 2; stages 2; microbatches 2;
    rank 0: unshard 0 F0 F1 B0 B1 reduce_grad 0 reshard 0;
    rank 1: unshard 1 F0 overlap(F1, B0) B1 reduce_grad 1 reshard 1;
  })");
  ASSERT_TRUE(T);
  CheckingKernels K(T->Desc);
  RunState RS(T->Desc, 0, 2);
  ThreadsTransport Tr(RS, 2, true);
  std::vector<std::unique_ptr<Executor>> Ex;
  std::mutex Mu;
  std::vector<std::string> Seen;
  for (int32_t R = 0; R < 2; ++R) {
    Ex.push_back(
        std::make_unique<Executor>(T->Desc, R, Tr, K, RS, ExecOptions{}));
    Ex.back()->setOverlapHandler(
        [&](const Action &A, const Action &B, Executor &E) {
          {
            std::lock_guard<std::mutex> L(Mu);
            Seen.push_back("overlap(" + formatAction(A) + ", " +
                           formatAction(B) + ")");
          }
          E.runDefault(A);
          E.runDefault(B);
        });
    Ex.back()->setHandler(Kind::ReduceGrad, [&](const Action &A, Executor &E) {
      {
        std::lock_guard<std::mutex> L(Mu);
        Seen.push_back(fmt::format("rank {}: {}", E.rank(), formatAction(A)));
      }
      E.runDefault(A);
    });
  }
  std::thread T1([&] { Ex[1]->runStep(0); });
  Ex[0]->runStep(0);
  T1.join();
  ASSERT_EQ(RS.exitCode(), ExitOk) << RS.errorMessage();
  std::sort(Seen.begin(), Seen.end());
  EXPECT_EQ(Seen, (std::vector<std::string>{"overlap(F1@1, B0@1)",
                                            "rank 0: reduce_grad 0",
                                            "rank 1: reduce_grad 1"}));
  EXPECT_EQ(K.Control.load(), 6);
  EXPECT_EQ(K.Errors.load(), 0);
}

static const char *Deadlock = R"(pipeline deadlock {
  ranks 2; stages 2; microbatches 2;
  rank 0: F0 F1 send F0@0 -> 1 send F1@0 -> 1 recv B0@0 <- 1 B0 recv B1@0 <- 1 B1;
  rank 1: recv F0@1 <- 0 F0 B0 send B0@1 -> 0 recv F1@1 <- 0 F1 B1 send B1@1 -> 0;
})";

TEST(Watchdog, ReportsEveryRanksBlockedActionInTheLintsWords) {
  auto T = rttest::compile(Deadlock);
  ASSERT_TRUE(T);
  CheckingKernels K(T->Desc);
  auto Start = std::chrono::steady_clock::now();
  RunResult R = run(T->Desc, K, CommModel::Rendezvous, /*Watchdog=*/0.2);
  double Took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  EXPECT_EQ(R.exitCode, ExitDeadlock);
  EXPECT_NE(R.error.find("rank 0 blocks at `send F1@0 -> 1` waiting for rank "
                         "1 to post `recv F1@1 <- 0`"),
            std::string::npos)
      << R.error;
  EXPECT_NE(R.error.find("rank 1 blocks at `send B0@1 -> 0` waiting for rank "
                         "0 to post `recv B0@0 <- 1`"),
            std::string::npos)
      << R.error;
  EXPECT_LT(Took, 5.0);
  // Under eager sends, and under batched comms (each run of comms posted
  // together), the same schedule completes.
  CheckingKernels K2(T->Desc);
  EXPECT_EQ(run(T->Desc, K2, CommModel::Eager).exitCode, ExitOk);
  CheckingKernels K3(T->Desc);
  RunResult B = run(T->Desc, K3, CommModel::Batched);
  EXPECT_EQ(B.exitCode, ExitOk) << B.error;
}

TEST(Watchdog, ADeferredReceiveNamesTheConsumerAndTheMissingSend) {
  // Rank 1 waits at F0@1 for data rank 0 never sends.
  auto T = rttest::compile(R"(pipeline p {
    ranks 2; stages 2; microbatches 1;
    rank 0: F0 recv B0@0 <- 1 B0 send F0@0 -> 1;
    rank 1: recv F0@1 <- 0 F0 B0 send B0@1 -> 0;
  })");
  ASSERT_TRUE(T);
  CheckingKernels K(T->Desc);
  RunResult R = run(T->Desc, K, CommModel::Rendezvous, 0.2);
  EXPECT_EQ(R.exitCode, ExitDeadlock);
  EXPECT_NE(R.error.find("rank 1 blocks at `F0@1` waiting for rank 0 to post "
                         "`send F0@0 -> 1` (for `recv F0@1 <- 0`, action 0)"),
            std::string::npos)
      << R.error;
  EXPECT_NE(R.error.find("rank 0 blocks at `B0@0` waiting for rank 1 to post "
                         "`send B0@1 -> 0`"),
            std::string::npos)
      << R.error;
}

TEST(Watchdog, BlockingReceivesReproduceTheLintsReceiveDeadlocks) {
  // Each rank receives before it sends what the other needs. Deferred
  // receives (the default) only wait at the consumer, so this runs; with
  // --recv=blocking a receive blocks where it stands, as in the lint.
  auto T = rttest::compile(R"(pipeline p {
    ranks 2; stages 2; microbatches 1;
    rank 0: recv B0@0 <- 1 F0 send F0@0 -> 1 B0;
    rank 1: recv F0@1 <- 0 F0 B0 send B0@1 -> 0;
  })");
  ASSERT_TRUE(T);
  CheckingKernels K(T->Desc);
  EXPECT_EQ(run(T->Desc, K, CommModel::Rendezvous).exitCode, ExitOk);
  // The executor timing the emitter stores says the same.
  EXPECT_GT(executorMakespan(T->Desc, CommModel::Rendezvous, false), 0);
  EXPECT_LT(executorMakespan(T->Desc, CommModel::Rendezvous, true), 0);
  CheckingKernels K2(T->Desc);
  RunOptions O;
  O.timeScale = 0;
  O.watchdogSeconds = 0.2;
  O.blockingRecv = true;
  RunResult R = runThreads(T->Desc, K2, O);
  EXPECT_EQ(R.exitCode, ExitDeadlock);
  EXPECT_NE(R.error.find("rank 0 blocks at `recv B0@0 <- 1` waiting for rank "
                         "1 to post `send B0@1 -> 0`"),
            std::string::npos)
      << R.error;
}

class Throwing : public CheckingKernels {
public:
  using CheckingKernels::CheckingKernels;
  void backwardWeight(StageIO &IO) override {
    if (IO.microbatch == 2 && IO.stage == 1)
      throw std::runtime_error("out of memory (simulated)");
  }
};

TEST(Executor, AThrowingKernelStopsEveryRankWithRankActionAndMessage) {
  auto T = rttest::compile("pipeline p { ranks 3; microbatches 6; schedule "
                           "zb_h1(); }");
  ASSERT_TRUE(T);
  Throwing K(T->Desc);
  RunResult R = run(T->Desc, K, CommModel::Rendezvous, 20);
  EXPECT_EQ(R.exitCode, ExitError);
  EXPECT_NE(R.error.find("rank 1: action "), std::string::npos) << R.error;
  EXPECT_NE(R.error.find("`W2@1` threw: out of memory (simulated)"),
            std::string::npos)
      << R.error;
}

TEST(Executor, AComputeWithoutItsReceiveIsReported) {
  // Hand-made tables: rank 1 runs F0@1 but never posts the receive.
  int32_t R0[] = {encodeWord0(Kind::F, 0, -1), 0, 0};
  int32_t R1[] = {encodeWord0(Kind::F, 0, -1), 0, 1};
  TwoRanks TR;
  TR.Tabs[0] = {R0, 1};
  TR.Tabs[1] = {R1, 1};
  CheckingKernels K(TR.D);
  RunResult R = run(TR.D, K, CommModel::Rendezvous);
  EXPECT_EQ(R.exitCode, ExitError);
  EXPECT_EQ(R.error, "rank 1: action 0 `F0@1`: needs `recv F0@1 <- 0` before "
                     "it, but no such receive was posted");
}

TEST(Predict, TheExecutorTimingIsCarriedPerCommModel) {
  // 1F1B: (M + P - 1)(F + B) whatever the model.
  auto T = rttest::compile(
      "pipeline p { ranks 4; microbatches 8; schedule one_f_one_b(); }");
  ASSERT_TRUE(T);
  for (CommModel M :
       {CommModel::Rendezvous, CommModel::Eager, CommModel::Batched})
    EXPECT_DOUBLE_EQ(executorMakespan(T->Desc, M, false), 33.0);
  auto D = rttest::compile(Deadlock);
  EXPECT_LT(executorMakespan(D->Desc, CommModel::Rendezvous, false), 0);
  EXPECT_GT(executorMakespan(D->Desc, CommModel::Eager, false), 0);
  ScheduleDesc None = D->Desc;
  None.executorMakespan = nullptr;
  EXPECT_LT(executorMakespan(None, CommModel::Eager, false), 0);
}

TEST(Trace, MeasuredRunsWriteTheSimulatorsChromeFormat) {
  auto T = rttest::compile(
      "pipeline p { ranks 2; microbatches 2; schedule one_f_one_b(); }");
  ASSERT_TRUE(T);
  BusyWaitKernels K;
  RunOptions O;
  O.timeScale = 0.01;
  O.traceFile = ::testing::TempDir() + "/ppsrt_trace_" +
                std::to_string(::getpid()) + ".json";
  RunResult R = runThreads(T->Desc, K, O);
  ASSERT_EQ(R.exitCode, ExitOk) << R.error;
  std::ifstream In(O.traceFile);
  std::stringstream SS;
  SS << In.rdbuf();
  std::string J = SS.str();
  EXPECT_EQ(J.rfind("{\"traceEvents\": [", 0), 0u);
  EXPECT_NE(J.find("\"name\": \"rank 1\""), std::string::npos);
  EXPECT_NE(J.find("\"name\": \"F1@0\", \"cat\": \"F\", \"ph\": \"X\", "
                   "\"pid\": 0, \"tid\": 0"),
            std::string::npos);
  EXPECT_NE(J.find("\"name\": \"send F0@0 -> 1\""), std::string::npos);
  EXPECT_NE(J.find("\"ph\": \"s\""), std::string::npos);
  EXPECT_NE(J.find("\"ph\": \"f\""), std::string::npos);
  EXPECT_NE(
      J.find("\"args\": {\"microbatch\": 1, \"stage\": 0, \"kind\": \"F\""),
      std::string::npos);
  std::remove(O.traceFile.c_str());
}

TEST(RunOptions, ParsesTheExecutorCommandLine) {
  const char *Argv[] = {
      "exec",           "--transport=mpi", "--ranks=4",        "--steps=3",
      "--watchdog=2.5", "--trace=t.json",  "--time-scale=0.5", "--comm=eager"};
  RunOptions O;
  std::string Err;
  ASSERT_TRUE(parseRunOptions(8, const_cast<char **>(Argv), O, Err)) << Err;
  EXPECT_EQ(O.transport, "mpi");
  EXPECT_EQ(O.ranks, 4);
  EXPECT_EQ(O.steps, 3);
  EXPECT_DOUBLE_EQ(O.watchdogSeconds, 2.5);
  EXPECT_EQ(O.traceFile, "t.json");
  EXPECT_DOUBLE_EQ(O.timeScale, 0.5);
  EXPECT_EQ(O.comm, CommModel::Eager);
  const char *Bad[] = {"exec", "--transport=tcp"};
  EXPECT_FALSE(parseRunOptions(2, const_cast<char **>(Bad), O, Err));
  EXPECT_EQ(Err, "unknown transport 'tcp' (expected threads or mpi)");
  const char *WithArgs[] = {"exec", "--steps=2", "--", "--text=x", "--steps=9"};
  RunOptions O2;
  ASSERT_TRUE(parseRunOptions(5, const_cast<char **>(WithArgs), O2, Err));
  EXPECT_EQ(O2.steps, 2) << "options after -- belong to the kernels";
  EXPECT_EQ(O2.kernelArgs, (std::vector<std::string>{"--text=x", "--steps=9"}));
  KernelContext Ctx = kernelContextFor(TwoRanks().D, O2);
  EXPECT_EQ(Ctx.args, O2.kernelArgs);
  EXPECT_EQ(Ctx.steps, 2);
  const char *Bad2[] = {"exec", "--steps=0"};
  EXPECT_FALSE(parseRunOptions(2, const_cast<char **>(Bad2), O, Err));
  EXPECT_EQ(
      Err,
      "bad value '0' for --steps (expected a number from 1 to 1000000000)");
  // Values are range-checked before any conversion (1e20 to int is
  // undefined), and only finite decimal numbers are numbers.
  for (const char *Arg : {"--steps=1e20", "--time-scale=nan", "--watchdog=inf",
                          "--ranks=0x10", "--steps=2.5", "--watchdog= 1"}) {
    const char *Argv[] = {"exec", Arg};
    RunOptions O3;
    EXPECT_FALSE(parseRunOptions(2, const_cast<char **>(Argv), O3, Err)) << Arg;
    EXPECT_EQ(Err.rfind("bad value", 0), 0u) << Arg << ": " << Err;
  }
}

} // namespace
