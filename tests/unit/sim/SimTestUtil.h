//===- SimTestUtil.h - schedules built with the builder API for sim tests -===//
//
// GPipe, 1F1B and interleaved 1F1B written with ir::ScheduleBuilder, and a
// small comm insertion for tests and the benchmark: it orders every rank's
// sends and receives by the dataflow time of the matched pair (one total
// order shared by both ends, so rendezvous cannot deadlock), puts each send
// after its producer and each receive before its consumer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/analysis/Dependencies.h"
#include "pps/ir/Builder.h"
#include "pps/sim/Simulator.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace pps::simtest {

inline ir::Schedule gpipe(int P, int M, ir::StageCost C = {}) {
  ir::ScheduleBuilder B(P, P, M);
  B.name("gpipe").cost(C);
  for (int R = 0; R < P; ++R) {
    auto RB = B.rank(R);
    for (int I = 0; I < M; ++I)
      RB.F(I);
    for (int I = 0; I < M; ++I)
      RB.B(I);
  }
  return B.build();
}

inline ir::Schedule oneF1B(int P, int M, ir::StageCost C = {}) {
  ir::ScheduleBuilder B(P, P, M);
  B.name("one_f_one_b").cost(C);
  for (int R = 0; R < P; ++R) {
    auto RB = B.rank(R);
    int Warm = std::min(P - R - 1, M);
    for (int I = 0; I < Warm; ++I)
      RB.F(I);
    for (int I = 0; I < M - Warm; ++I) {
      RB.F(I + Warm);
      RB.B(I);
    }
    for (int I = M - Warm; I < M; ++I)
      RB.B(I);
  }
  return B.build();
}

/// Megatron's interleaved 1F1B: V chunks per rank, loop placement,
/// M a multiple of P.
inline ir::Schedule interleaved1F1B(int P, int V, int M, ir::StageCost C = {}) {
  ir::ScheduleBuilder B(P, P * V, M);
  B.name("interleaved_1f1b").cost(C);
  int Total = M * V;
  for (int R = 0; R < P; ++R) {
    auto RB = B.rank(R);
    auto Fwd = [&](int K) {
      int Chunk = (K / P) % V, Mb = (K / (P * V)) * P + K % P;
      RB.F(Mb, Chunk * P + R);
    };
    auto Bwd = [&](int K) {
      int Chunk = V - 1 - (K / P) % V, Mb = (K / (P * V)) * P + K % P;
      RB.B(Mb, Chunk * P + R);
    };
    int Warm = std::min((P - R - 1) * 2 + (V - 1) * P, Total);
    for (int K = 0; K < Warm; ++K)
      Fwd(K);
    for (int K = 0; K < Total - Warm; ++K) {
      Fwd(K + Warm);
      Bwd(K);
    }
    for (int K = Total - Warm; K < Total; ++K)
      Bwd(K);
  }
  return B.build();
}

/// Inserts sends and receives ordered by the dataflow time of each pair.
inline void insertComms(ir::Schedule &S) {
  sim::SimOptions O;
  O.Dataflow = sim::DataflowMode::Dataflow;
  O.CriticalPath = false;
  sim::SimResult R = sim::simulate(S, O);
  struct Ev {
    double T;
    int Kind; // 0 = F direction, 1 = B direction
    int32_t Mb, SendStage;
    bool IsSend;
    ir::Action A;
  };
  int P = S.Topo.Ranks, NS = S.Topo.Stages;
  std::vector<std::vector<Ev>> Evs(P);
  for (int Rk = 0; Rk < P; ++Rk) {
    const auto &Acts = S.Ranks[Rk].Actions;
    for (size_t I = 0; I < Acts.size(); ++I) {
      const ir::Action &A = Acts[I];
      double T = R.Times[Rk].End[I];
      // The send that carries the output, and its partner receive (the
      // schema's rules).
      ir::ActionKind SendK = analysis::outputSendKind(S.Topo, A);
      int32_t Cs = analysis::consumerStage(S.Topo, A);
      if (SendK == ir::ActionKind::Idle || Cs < 0 || Cs >= NS)
        continue;
      int Dst = S.Topo.rankOf(Cs);
      if (Dst == Rk)
        continue;
      int Dir = A.Kind == ir::ActionKind::F ? 0 : 1;
      Evs[Rk].push_back({T, Dir, A.Microbatch, A.Stage, true,
                         ir::Action::comm(SendK, A.Microbatch, A.Stage, Dst)});
      Evs[Dst].push_back(
          {T, Dir, A.Microbatch, A.Stage, false,
           ir::Action::comm(schema::partnerKind(SendK), A.Microbatch,
                            schema::partnerStage(SendK, A.Stage), Rk)});
    }
  }
  for (int Rk = 0; Rk < P; ++Rk) {
    auto &E = Evs[Rk];
    std::sort(E.begin(), E.end(), [](const Ev &X, const Ev &Y) {
      return std::tie(X.T, X.Kind, X.Mb, X.SendStage) <
             std::tie(Y.T, Y.Kind, Y.Mb, Y.SendStage);
    });
    const auto &Old = S.Ranks[Rk].Actions;
    std::vector<ir::Action> New;
    New.reserve(Old.size() + E.size());
    size_t C = 0;
    for (size_t I = 0; I < Old.size(); ++I) {
      double Start = R.Times[Rk].Start[I];
      while (C < E.size() && E[C].T <= Start)
        New.push_back(E[C++].A);
      New.push_back(Old[I]);
    }
    while (C < E.size())
      New.push_back(E[C++].A);
    S.Ranks[Rk].Actions = std::move(New);
  }
}

} // namespace pps::simtest
