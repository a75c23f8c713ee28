//===- runtime_overhead.cpp - executor overhead and thread hand-off -------===//
//
//   build/bench/bench_runtime_overhead
//
// * BM_ComputeAction: one rank walking a table of F/B actions with zero-cost
//   kernels (the built-in workload at time scale 0): the executor's cost per
//   compute action (target: under 1 us). Also with the run trace on.
// * BM_ThreadsRoundTrip: a message there and back between two rank threads
//   through the in-process transport (rendezvous, zero-copy).
// * BM_Pipeline: a whole 1F1B step on 4 rank threads with zero-cost kernels,
//   per action (computes and comms), including thread start-up.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/Executor.h"
#include "ppsrt/Main.h"
#include "ppsrt/Transport.h"

#include <benchmark/benchmark.h>

#include <thread>
#include <vector>

using namespace ppsrt;

namespace {

/// A schedule held in vectors (what a generated executor has as constants).
struct Sched {
  std::vector<std::vector<int32_t>> Rows;
  std::vector<RankTable> Tabs;
  std::vector<int32_t> StageToRank;
  std::vector<StageCost> Costs;
  ScheduleDesc D{};

  void finish(int32_t Ranks, int32_t Stages, int32_t Mbs) {
    for (auto &R : Rows)
      Tabs.push_back({R.data(), int64_t(R.size() / RowWords)});
    Costs.assign(size_t(Stages), StageCost{1, 1, 1, 2});
    D = ScheduleDesc{"bench",
                     "bench",
                     Ranks,
                     Stages,
                     Mbs,
                     StageToRank.data(),
                     Costs.data(),
                     -1,
                     0,
                     0,
                     0,
                     0,
                     CommModel::Rendezvous,
                     Tabs.data(),
                     nullptr,
                     -1};
  }
  static void push(std::vector<int32_t> &R, Kind K, int32_t Peer, int32_t Mb,
                   int32_t St) {
    R.push_back(encodeWord0(K, 0, Peer));
    R.push_back(Mb);
    R.push_back(St);
  }
};

/// One rank, one stage: F0 B0 F1 B1 ... (activations released each B).
Sched singleRank(int32_t Mbs) {
  Sched S;
  S.Rows.resize(1);
  S.StageToRank = {0};
  for (int32_t M = 0; M < Mbs; ++M) {
    Sched::push(S.Rows[0], Kind::F, -1, M, 0);
    Sched::push(S.Rows[0], Kind::B, -1, M, 0);
  }
  S.finish(1, 1, Mbs);
  return S;
}

/// 1F1B on P ranks with its comms, in the order insert-comms gives it.
Sched oneFOneB(int32_t P, int32_t Mbs) {
  Sched S;
  S.Rows.resize(size_t(P));
  for (int32_t R = 0; R < P; ++R)
    S.StageToRank.push_back(R);
  for (int32_t R = 0; R < P; ++R) {
    auto &Row = S.Rows[size_t(R)];
    // Receives are posted before the sends that would otherwise block on
    // the peer (as insert-comms orders them), so rendezvous cannot hang.
    auto recvF = [&](int32_t M) {
      if (R > 0)
        Sched::push(Row, Kind::RecvF, R - 1, M, R);
    };
    auto sendF = [&](int32_t M) {
      if (R + 1 < P)
        Sched::push(Row, Kind::SendF, R + 1, M, R);
    };
    auto recvB = [&](int32_t M) {
      if (R + 1 < P)
        Sched::push(Row, Kind::RecvB, R + 1, M, R);
    };
    auto sendB = [&](int32_t M) {
      if (R > 0)
        Sched::push(Row, Kind::SendB, R - 1, M, R);
    };
    int32_t Warm = std::min(P - R - 1, Mbs);
    for (int32_t I = 0; I < Warm; ++I) {
      recvF(I);
      Sched::push(Row, Kind::F, -1, I, R);
      sendF(I);
    }
    for (int32_t I = 0; I < Mbs - Warm; ++I) {
      recvF(I + Warm);
      Sched::push(Row, Kind::F, -1, I + Warm, R);
      recvB(I);
      sendF(I + Warm);
      Sched::push(Row, Kind::B, -1, I, R);
      sendB(I);
    }
    for (int32_t I = Mbs - Warm; I < Mbs; ++I) {
      recvB(I);
      Sched::push(Row, Kind::B, -1, I, R);
      sendB(I);
    }
  }
  S.finish(P, P, Mbs);
  return S;
}

void computeAction(benchmark::State &St, bool Trace) {
  const int32_t Mbs = 50000;
  Sched S = singleRank(Mbs);
  BusyWaitKernels K;
  KernelContext Ctx;
  Ctx.schedule = &S.D;
  Ctx.secondsPerUnit = 0;
  K.setup(Ctx, 0);
  RunState RS(S.D, 0, 1);
  ThreadsTransport T(RS, 1, true);
  ExecOptions O;
  O.trace = Trace;
  Executor E(S.D, 0, T, K, RS, O);
  int Step = 0;
  for (auto _ : St) {
    E.trace().clear();
    E.runStep(Step++);
  }
  St.SetItemsProcessed(St.iterations() * int64_t(2 * Mbs));
  // Seconds per action, shown by Google Benchmark as e.g. "85n".
  St.counters["per_action"] = benchmark::Counter(
      double(St.iterations()) * 2 * Mbs,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_ComputeAction(benchmark::State &St) { computeAction(St, false); }
void BM_ComputeActionTraced(benchmark::State &St) { computeAction(St, true); }

void BM_ThreadsRoundTrip(benchmark::State &St) {
  size_t Bytes = size_t(St.range(0));
  int32_t StageToRank[2] = {0, 1};
  StageCost Costs[2] = {{1, 1, 1, 2}, {1, 1, 1, 2}};
  RankTable Tabs[2] = {{nullptr, 0}, {nullptr, 0}};
  ScheduleDesc D{"rt",    "rt", 2, 2, 1, StageToRank,           Costs,
                 -1,      0,    0, 0, 0, CommModel::Rendezvous, Tabs,
                 nullptr, -1};
  RunState RS(D, 0, 2);
  ThreadsTransport T(RS, 2, true);
  std::atomic<bool> Stop{false};
  // Rank 1 echoes every message back (receive F, send B).
  std::thread Echo([&] {
    while (true) {
      Request R;
      R.action = Action{Kind::RecvF, 0, 0, 0, 1};
      R.peer = 0;
      T.postRecv(1, R);
      T.wait(1, R);
      if (Stop.load())
        return;
      Request S;
      S.action = Action{Kind::SendB, 0, 0, 0, 1};
      S.peer = 0;
      S.buf = std::move(R.buf);
      T.postSend(1, S);
      T.wait(1, S);
    }
  });
  Buffer Payload(Bytes);
  for (auto _ : St) {
    Request Back;
    Back.action = Action{Kind::RecvB, 0, 1, 0, 0};
    Back.peer = 1;
    T.postRecv(0, Back);
    Request S;
    S.action = Action{Kind::SendF, 0, 1, 0, 0};
    S.peer = 1;
    S.buf = std::move(Payload);
    T.postSend(0, S);
    T.wait(0, S);
    T.wait(0, Back);
    Payload = std::move(Back.buf);
  }
  Stop.store(true);
  Request S;
  S.action = Action{Kind::SendF, 0, 1, 0, 0};
  S.peer = 1;
  T.postSend(0, S);
  T.wait(0, S);
  Echo.join();
  St.SetLabel("one round trip per iteration");
}

void BM_Pipeline(benchmark::State &St) {
  int32_t P = int32_t(St.range(0));
  const int32_t Mbs = 2000;
  Sched S = oneFOneB(P, Mbs);
  int64_t Actions = 0;
  for (auto &R : S.Tabs)
    Actions += R.count;
  BusyWaitKernels K;
  RunOptions O;
  O.timeScale = 0;
  O.quiet = true;
  for (auto _ : St) {
    RunResult R = runThreads(S.D, K, O);
    if (R.exitCode != ExitOk)
      St.SkipWithError(R.error.c_str());
  }
  St.SetItemsProcessed(St.iterations() * Actions);
}

} // namespace

BENCHMARK(BM_ComputeAction)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ComputeActionTraced)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ThreadsRoundTrip)
    ->Arg(64)
    ->Arg(1 << 20)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Pipeline)
    ->Arg(2)
    ->Arg(4)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
