//===- RuntimeTestUtil.h - schedules for runtime tests, from .pps text ----===//
//
// Compiles .pps text with the front end, inserts comms, and lays the result
// out as the tables a generated executor would hold (ppsrt::ScheduleDesc),
// so tests run the real runtime on real schedules without a C++ compiler.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/analysis/Memory.h"
#include "pps/backends/CppEmitter.h"
#include "pps/frontend/Frontend.h"
#include "pps/ir/Schedule.h"
#include "pps/passes/InsertComms.h"
#include "pps/passes/PassManager.h"
#include "pps/sim/Simulator.h"
#include "ppsrt/Schedule.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace pps::rttest {

/// A ScheduleDesc with the storage it points into.
struct Tables {
  ir::Schedule Sched;
  std::vector<std::vector<int32_t>> Rows;
  std::vector<ppsrt::RankTable> Ranks;
  std::vector<int32_t> StageToRank;
  std::vector<ppsrt::StageCost> Costs;
  std::vector<int64_t> Peaks;
  std::vector<double> MemoryPeaks, StageOverlap;
  std::vector<double> Executor, Streams;
  ppsrt::ScheduleDesc Desc{};
};

inline std::unique_ptr<Tables> layOut(ir::Schedule S) {
  auto T = std::make_unique<Tables>();
  T->Sched = std::move(S);
  const ir::Schedule &Sc = T->Sched;
  for (const ir::RankProgram &RP : Sc.Ranks) {
    // The emitter's encoding, so the tables are what `ppsc emit` writes.
    std::vector<int32_t> Rows(RP.Actions.size() * ppsrt::RowWords);
    for (size_t I = 0; I < RP.Actions.size(); ++I)
      backends::encodeRow(RP.Actions[I], &Rows[I * ppsrt::RowWords]);
    T->Rows.push_back(std::move(Rows));
  }
  for (size_t R = 0; R < T->Rows.size(); ++R)
    T->Ranks.push_back(
        {T->Rows[R].data(), int64_t(T->Rows[R].size() / ppsrt::RowWords)});
  for (int32_t St = 0; St < Sc.Topo.Stages; ++St) {
    T->StageToRank.push_back(Sc.Topo.rankOf(St));
    const ir::StageCost &C = Sc.Cost.stage(St);
    T->Costs.push_back({C.F, C.I, C.W, C.B});
  }
  // The executor counts live activations (the chunk model's peaks) and
  // memory in the schedule's model, as the emitter writes them.
  analysis::MemoryOptions Chunks;
  Chunks.Model = analysis::MemoryModel::chunks();
  T->Peaks = analysis::analyzeMemory(Sc, Chunks).wholePeaks();
  for (const analysis::RankMemory &RM : analysis::analyzeMemory(Sc).Ranks)
    T->MemoryPeaks.push_back(RM.Peak);
  for (int32_t St = 0; St < Sc.Topo.Stages && !Sc.Cost.StageOverlap.empty();
       ++St) {
    std::optional<double> V = Sc.Cost.StageOverlap[size_t(St)];
    T->StageOverlap.push_back(V ? *V : -1.0);
  }
  ppsrt::ScheduleDesc &D = T->Desc;
  D.name = "test";
  D.source = "test.pps";
  D.ranks = Sc.Topo.Ranks;
  D.stages = Sc.Topo.Stages;
  D.microbatches = Sc.Topo.Microbatches;
  D.stageToRank = T->StageToRank.data();
  D.stageCost = T->Costs.data();
  D.overlapCost = Sc.Cost.Overlap ? *Sc.Cost.Overlap : -1.0;
  D.latency = Sc.Cost.Latency;
  D.bandwidthBytesPerMs = Sc.Cost.BandwidthBytesPerMs;
  D.activationBytes = Sc.Cost.ActivationBytes;
  D.gradientBytes = Sc.Cost.GradientBytes;
  D.comm = Sc.Comm;
  D.rankTables = T->Ranks.data();
  D.predictedPeak = T->Peaks.data();
  D.predictedMakespan = -1;
  D.directions = Sc.Topo.Directions;
  D.memory = Sc.Memory.Default;
  if (!Sc.Memory.Stages.empty())
    D.stageMemory = Sc.Memory.Stages.data();
  D.memoryBytes = Sc.Memory.Bytes;
  if (!Sc.Memory.isChunks())
    D.predictedMemory = T->MemoryPeaks.data();
  if (!T->StageOverlap.empty())
    D.stageOverlapCost = T->StageOverlap.data();
  T->Executor = backends::executorMakespans(Sc);
  D.executorMakespan = T->Executor.data();
  D.stream = Sc.Stream;
  T->Streams = backends::streamMakespans(Sc);
  D.streamMakespan = T->Streams.data();
  return T;
}

/// Compiles Text (comms inserted unless it has its own); fails the test on
/// a diagnostic.
inline std::unique_ptr<Tables> compile(const std::string &Text) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  frontend::FrontendOptions FO;
  FO.StdlibDir = PPS_SOURCE_DIR "/stdlib";
  std::optional<ir::Schedule> S =
      frontend::compileBuffer("test.pps", Text, SM, Diags, FO);
  EXPECT_TRUE(S.has_value());
  EXPECT_FALSE(Diags.hasErrors());
  if (!S)
    return nullptr;
  passes::PassManager PM;
  PM.add(passes::createInsertCommsPass());
  passes::PassContext Ctx{Diags, {}};
  EXPECT_TRUE(PM.run(*S, Ctx));
  return layOut(std::move(*S));
}

} // namespace pps::rttest
