//===- Schedules.h - standard compute orders built with the builder API ---===//
//
// Shared by the passes unit tests and tests/bench/lint.cpp: GPipe (any
// placement), 1F1B, Megatron's interleaved 1F1B, all compute-only.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Builder.h"

#include <algorithm>

namespace pps::testing {

/// 1F1B on P ranks, one stage each.
inline ir::Schedule oneFOneB(int32_t P, int32_t M) {
  ir::ScheduleBuilder B(P, P, M);
  B.name("1f1b");
  for (int32_t R = 0; R < P; ++R) {
    ir::RankBuilder RB = B.rank(R);
    int32_t Warm = std::min(P - R - 1, M);
    // Explicit stages: the builder's "only stage" lookup scans the
    // placement, which would make building 1024 ranks quadratic.
    for (int32_t I = 0; I < Warm; ++I)
      RB.F(I, R);
    for (int32_t I = 0; I < M - Warm; ++I)
      RB.F(I + Warm, R).B(I, R);
    for (int32_t I = M - Warm; I < M; ++I)
      RB.B(I, R);
  }
  return B.build();
}

/// Megatron's interleaved 1F1B: P ranks, V chunks (loop placement), M a
/// multiple of P. Actions are appended straight into the rank vectors so
/// building a million computes stays cheap.
inline ir::Schedule interleaved(int32_t P, int32_t V, int32_t M) {
  ir::ScheduleBuilder B(P, P * V, M);
  B.name("interleaved_1f1b");
  ir::Schedule &S = B.schedule();
  int64_t Total = int64_t(M) * V;
  for (int32_t R = 0; R < P; ++R) {
    auto &Acts = S.Ranks[R].Actions;
    Acts.reserve(size_t(2 * Total));
    int64_t Warm =
        std::min<int64_t>(int64_t(P - R - 1) * 2 + int64_t(V - 1) * P, Total);
    auto Mb = [&](int64_t K) {
      return int32_t((K / (int64_t(P) * V)) * P + K % P);
    };
    auto Fwd = [&](int64_t K) {
      int32_t Chunk = int32_t((K / P) % V);
      Acts.push_back(
          ir::Action::compute(ir::ActionKind::F, Mb(K), Chunk * P + R));
    };
    auto Bwd = [&](int64_t K) {
      int32_t Chunk = V - 1 - int32_t((K / P) % V);
      Acts.push_back(
          ir::Action::compute(ir::ActionKind::B, Mb(K), Chunk * P + R));
    };
    for (int64_t K = 0; K < Warm; ++K)
      Fwd(K);
    for (int64_t K = 0; K < Total - Warm; ++K) {
      Fwd(Warm + K);
      Bwd(K);
    }
    for (int64_t K = Total - Warm; K < Total; ++K)
      Bwd(K);
  }
  return B.build();
}

/// GPipe for any placement: every forward in (microbatch, stage) order,
/// then every backward in (microbatch, descending stage) order. With Split,
/// each backward is I then W.
inline ir::Schedule gpipe(int32_t P, int32_t S, int32_t M,
                          ir::Placement Pl = ir::Placement::Loop,
                          llvm::ArrayRef<int32_t> Map = {},
                          bool Split = false) {
  ir::ScheduleBuilder B(P, S, M, Map.empty() ? Pl : ir::Placement::Loop);
  if (!Map.empty())
    B.placement(Map);
  ir::Schedule &Sch = B.schedule();
  for (int32_t Mb = 0; Mb < M; ++Mb)
    for (int32_t St = 0; St < S; ++St)
      B.rank(Sch.Topo.rankOf(St)).F(Mb, St);
  for (int32_t Mb = 0; Mb < M; ++Mb)
    for (int32_t St = S - 1; St >= 0; --St) {
      if (Split)
        B.rank(Sch.Topo.rankOf(St)).I(Mb, St).W(Mb, St);
      else
        B.rank(Sch.Topo.rankOf(St)).B(Mb, St);
    }
  return B.build();
}

} // namespace pps::testing
