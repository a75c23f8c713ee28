//===- runtime_emit.cpp - speed of the C++ executor backend ---------------===//
//
//   build/bench/bench_runtime_emit
//
// Emits executors for 1F1B schedules of growing size (comms included, built
// with the C++ builder, 8 ranks) and reports actions per second. The emitter
// is linear in the number of actions; the generated file then compiles in
// seconds at -O1 for a million actions (docs/runtime.md).
//
//===----------------------------------------------------------------------===//
#include "pps/backends/CppEmitter.h"
#include "pps/ir/Builder.h"

#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <algorithm>

using namespace pps;

namespace {

/// 1F1B on P ranks with its sends and receives (receives posted before the
/// sends that would block on them).
ir::Schedule oneFOneB(int32_t P, int32_t M) {
  ir::ScheduleBuilder SB(P, P, M);
  SB.name("bench");
  for (int32_t R = 0; R < P; ++R) {
    ir::RankBuilder RB = SB.rank(R);
    auto F = [&](int32_t I) {
      if (R > 0)
        RB.comm(ir::ActionKind::RecvF, I, R, R - 1);
      RB.F(I, R);
    };
    auto SendF = [&](int32_t I) {
      if (R + 1 < P)
        RB.comm(ir::ActionKind::SendF, I, R, R + 1);
    };
    auto B = [&](int32_t I) {
      RB.B(I, R);
      if (R > 0)
        RB.comm(ir::ActionKind::SendB, I, R, R - 1);
    };
    auto RecvB = [&](int32_t I) {
      if (R + 1 < P)
        RB.comm(ir::ActionKind::RecvB, I, R, R + 1);
    };
    int32_t Warm = std::min(P - R - 1, M);
    for (int32_t I = 0; I < Warm; ++I) {
      F(I);
      SendF(I);
    }
    for (int32_t I = 0; I < M - Warm; ++I) {
      F(I + Warm);
      RecvB(I);
      SendF(I + Warm);
      B(I);
    }
    for (int32_t I = M - Warm; I < M; ++I) {
      RecvB(I);
      B(I);
    }
  }
  return SB.build();
}

void BM_EmitCpp(benchmark::State &St) {
  ir::Schedule S = oneFOneB(8, int32_t(St.range(0)));
  int64_t Actions = int64_t(S.numActions());
  for (auto _ : St) {
    llvm::raw_null_ostream OS;
    backends::emitCpp(S, {"bench.pps", /*Simulate=*/false}, OS);
  }
  St.SetItemsProcessed(St.iterations() * Actions);
  St.counters["actions"] = double(Actions);
}

void BM_EmitCppWithSimulation(benchmark::State &St) {
  ir::Schedule S = oneFOneB(8, int32_t(St.range(0)));
  int64_t Actions = int64_t(S.numActions());
  for (auto _ : St) {
    llvm::raw_null_ostream OS;
    backends::emitCpp(S, {"bench.pps", /*Simulate=*/true}, OS);
  }
  St.SetItemsProcessed(St.iterations() * Actions);
  St.counters["actions"] = double(Actions);
}

} // namespace

BENCHMARK(BM_EmitCpp)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(31250)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EmitCppWithSimulation)->Arg(31250)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
