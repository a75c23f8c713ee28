//===- StdlibHarness.h - compile, lint and measure stdlib schedules -------===//
//
// Shared by the stdlib unit tests: builds a one-pipeline .pps buffer that
// selects a standard schedule, compiles it through the front end with
// Overrides for ranks and microbatches, runs the lint passes (the Check goal
// of pps::pipeline::addPasses, the same list ppsc runs), checks
// completeness independently of the passes, and simulates the compute order
// (dataflow mode, no comm cost) for makespan, per-rank span bubble and peak
// memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/frontend/Frontend.h"
#include "pps/ir/Schedule.h"
#include "pps/passes/PassManager.h"
#include "pps/pipeline/PassPipeline.h"
#include "pps/sim/Simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stdlibtest {

/// Costs written into the pipeline's cost block (per stage/chunk).
struct Costs {
  double F = 1, I = 1, W = 1;
  /// overlap(a, b) time; <0 = unset (sum of the two).
  double Overlap = -1;
};

/// One instance: which schedule, its placement and arguments.
struct Spec {
  std::string Name;
  /// "1" (stages = ranks), "2 * P" ... written after `stages`.
  std::string Stages = "P";
  std::string Placement = "loop";
  std::string Args;
  /// Written as `directions N;` when not 1.
  int Directions = 1;
};

struct Figures {
  bool Ok = false;
  std::string Errors;
  double Makespan = 0;
  /// max over ranks of (last compute end - first compute start - busy).
  double SpanBubble = 0;
  /// max over ranks of (last compute end - first compute start): the
  /// zero-bubble papers' iteration time.
  double Span = 0;
  /// Makespan - largest per-rank compute time.
  double Bubble = 0;
  /// Makespan of the lowered schedule simulated through its inserted
  /// send/recv actions (rendezvous, zero latency); -1 when not linted.
  double CommsMakespan = -1;
  int64_t PeakMemory = 0;
  std::vector<int64_t> Peaks;
  size_t Actions = 0;
  /// Lint warnings (e.g. idle-ready-work), printed.
  unsigned Warnings = 0;
  std::string WarningText;
};

inline std::string pipelineText(const Spec &Sp, const Costs &C) {
  std::string Cost =
      fmt::format("F = {}; I = {}; W = {}; B = {};", C.F, C.I, C.W, C.I + C.W);
  if (C.Overlap >= 0)
    Cost += fmt::format(" overlap = {};", C.Overlap);
  std::string Dirs = Sp.Directions != 1
                         ? fmt::format("  directions {};\n", Sp.Directions)
                         : "";
  return fmt::format(
      "pipeline t {{\n  ranks 4;\n  stages {} placement {};\n"
      "{}  microbatches 8;\n  cost {{ {} }}\n  schedule {}({});\n}}\n",
      Sp.Stages, Sp.Placement, Dirs, Cost, Sp.Name, Sp.Args);
}

/// Every (m, s) has exactly one F and either one B or one I and one W.
inline std::string checkComplete(const pps::ir::Schedule &S) {
  const auto &T = S.Topo;
  size_t N = size_t(T.Stages) * size_t(T.Microbatches);
  std::vector<uint8_t> Cnt(N * 4, 0);
  for (size_t R = 0; R < S.Ranks.size(); ++R)
    for (const pps::ir::Action &A : S.Ranks[R].Actions) {
      if (!pps::ir::isCompute(A.Kind))
        continue;
      if (A.Stage < 0 || A.Stage >= T.Stages || A.Microbatch < 0 ||
          A.Microbatch >= T.Microbatches)
        return "action out of range";
      if (!T.hasStage(A.Microbatch, A.Stage))
        return fmt::format("microbatch {} off its route at stage {}",
                           A.Microbatch, A.Stage);
      if (T.rankOf(A.Stage) != int32_t(R))
        return fmt::format("stage {} on wrong rank {}", A.Stage, R);
      size_t Idx = (size_t(A.Stage) * T.Microbatches + A.Microbatch) * 4 +
                   unsigned(A.Kind);
      if (++Cnt[Idx] > 1)
        return fmt::format("duplicate {}{}@{}",
                           pps::ir::actionKindName(A.Kind).str(), A.Microbatch,
                           A.Stage);
    }
  for (size_t I = 0; I < N; ++I) {
    if (!T.hasStage(int32_t(I % T.Microbatches), int32_t(I / T.Microbatches)))
      continue; // not on this microbatch's route
    uint8_t F = Cnt[I * 4 + 0], In = Cnt[I * 4 + 1], W = Cnt[I * 4 + 2],
            B = Cnt[I * 4 + 3];
    bool Split = In == 1 && W == 1 && B == 0;
    bool Full = In == 0 && W == 0 && B == 1;
    if (F != 1 || !(Split || Full))
      return fmt::format("incomplete (microbatch {}, stage {})",
                         I % T.Microbatches, I / T.Microbatches);
  }
  return "";
}

/// Compiles Text (ranks and microbatches overridden to P and M), lints it
/// (when Lint) and simulates it.
inline Figures runText(const std::string &Name, const std::string &Text,
                       int64_t P, int64_t M, bool Lint = true) {
  Figures Out;
  pps::SourceManager SM;
  pps::DiagnosticEngine Diags(SM);
  pps::frontend::FrontendOptions FO;
  FO.ImportPaths.push_back(std::string(PPS_SOURCE_DIR) + "/stdlib");
  FO.Overrides["ranks"] = P;
  FO.Overrides["microbatches"] = M;
  auto S =
      pps::frontend::compileBuffer(Name + ".test.pps", Text, SM, Diags, FO);
  auto Flush = [&] {
    std::string Msg;
    llvm::raw_string_ostream OS(Msg);
    Diags.print(OS);
    OS.flush();
    return Msg;
  };
  if (!S || Diags.hasErrors()) {
    Out.Errors = Flush();
    return Out;
  }
  std::string Why = checkComplete(*S);
  if (!Why.empty()) {
    Out.Errors = Why;
    return Out;
  }
  if (Lint) {
    pps::passes::PassManager PM;
    pps::pipeline::addPasses(PM, *S, {pps::pipeline::Goal::Check, false});
    pps::passes::PassContext Ctx{Diags, {}};
    if (!PM.run(*S, Ctx) || Diags.hasErrors() || !Ctx.Results.DeadlockFree) {
      Out.Errors = Flush();
      return Out;
    }
    Out.Warnings = Diags.numWarnings();
    if (Out.Warnings)
      Out.WarningText = Flush();
  }
  Out.Actions = S->numActions();
  pps::sim::SimOptions SO;
  SO.Dataflow = pps::sim::DataflowMode::Dataflow;
  SO.CriticalPath = false;
  pps::sim::SimResult R = pps::sim::simulate(*S, SO);
  if (R.Deadlocked) {
    Out.Errors = "simulation deadlocked";
    return Out;
  }
  Out.Makespan = R.Makespan;
  if (Lint) {
    pps::sim::SimOptions CO;
    CO.Dataflow = pps::sim::DataflowMode::Comms;
    CO.CriticalPath = false;
    CO.KeepTimes = false;
    pps::sim::SimResult RC = pps::sim::simulate(*S, CO);
    if (RC.Deadlocked) {
      Out.Errors = "simulation through the inserted comms deadlocked";
      return Out;
    }
    Out.CommsMakespan = RC.Makespan;
  }
  Out.Bubble = R.Makespan - R.Ideal;
  Out.PeakMemory = R.PeakMemory;
  for (size_t Rk = 0; Rk < S->Ranks.size(); ++Rk) {
    Out.Peaks.push_back(R.Ranks[Rk].PeakMemory);
    double First = INFINITY, Last = 0;
    const auto &Acts = S->Ranks[Rk].Actions;
    for (size_t I = 0; I < Acts.size(); ++I) {
      if (!pps::ir::isCompute(Acts[I].Kind))
        continue;
      First = std::min(First, R.Times[Rk].Start[I]);
      Last = std::max(Last, R.Times[Rk].End[I]);
    }
    if (First <= Last) {
      Out.SpanBubble =
          std::max(Out.SpanBubble, Last - First - R.Ranks[Rk].ComputeBusy);
      Out.Span = std::max(Out.Span, Last - First);
    }
  }
  Out.Ok = true;
  return Out;
}

/// Compiles, lints (when Lint) and simulates one stdlib instance.
inline Figures run(const Spec &Sp, int64_t P, int64_t M, const Costs &C = {},
                   bool Lint = true) {
  return runText(Sp.Name, pipelineText(Sp, C), P, M, Lint);
}

/// The standard instances (placement each schedule is written for).
inline Spec gpipe() { return {"gpipe", "P", "loop", ""}; }
inline Spec oneF1B() { return {"one_f_one_b", "P", "loop", ""}; }
inline Spec interleaved(int V = 2, std::string Args = "") {
  return {"interleaved_1f1b", fmt::format("{} * P", V), "loop",
          std::move(Args)};
}
inline Spec interleavedOverlap(int V = 2) {
  return {"interleaved_1f1b_overlap", fmt::format("{} * P", V), "loop", ""};
}
inline Spec loopedBfs(int V = 2) {
  return {"looped_bfs", fmt::format("{} * P", V), "loop", ""};
}
inline Spec zbH1() { return {"zb_h1", "P", "loop", ""}; }
inline Spec zbH2() { return {"zb_h2", "P", "loop", ""}; }
inline Spec zbAuto(std::string Args = "") {
  return {"zb_auto", "P", "loop", std::move(Args)};
}
inline Spec zbV() { return {"zb_v", "2 * P", "v", ""}; }
inline Spec vHalf() { return {"v_half", "2 * P", "v", ""}; }
inline Spec vMin() { return {"v_min", "2 * P", "v", ""}; }
inline Spec dualpipeV() { return {"dualpipe_v", "2 * P", "v", ""}; }
inline Spec dualpipe() { return {"dualpipe", "2 * P", "v", "", 2}; }

} // namespace stdlibtest
