//===- ProofTest.cpp - synth vs the published heuristics and exact search -===//
//
// The claims of issue 7, checked:
//  * p = 4, m = 8, memory limits p-1 .. 2p, equal and unequal costs: the
//    synthesised makespan is never worse than the published zero-bubble
//    heuristic's (auto_schedule.py's initial_solution, rendered in
//    ZbGreedy.cpp and re-timed by the same evaluator), and equals the exact
//    search's optimum (the exact search finishes on all of these).
//    The greedy list scheduler alone, and the heuristics without the exact
//    search, are also never worse than the published heuristic; their
//    gaps to the optimum are printed.
//  * V placement: at the peak memory of the stdlib's v_half ((p+2)/2
//    whole-stage activations = 2*((p+2)/2) chunks) and v_min (2*((p+4)/3)
//    chunks) the synthesised schedule is at least as fast as their
//    building blocks repeated as they are (`reorder: 0`, the construction
//    synth's V patterns start from). The published orders (the default,
//    with the paper's warm-up and cool-down reorder) are printed beside:
//    at unit costs V-Half's is faster than the heuristics (53 vs 55 at
//    p = 4, m = 8), with F=1,B=2,W=1 slower (82 vs 76).
//  * Every synthesised schedule lowers (insert-comms) and lints clean.
//
//===----------------------------------------------------------------------===//
#include "SynthTestUtil.h"

#include "pps/frontend/Frontend.h"
#include "pps/sim/Simulator.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

using namespace pps;
using namespace pps::synth;

namespace {

struct CostCase {
  const char *Name;
  JobCost Cost;
  /// Stage 3 (the last) overrides, when Heavy.
  bool HeavyLast;
};

const CostCase Cases[] = {
    {"F=B=W=1", {1, 1, 1}, false},
    {"F=1,B=2,W=1", {1, 2, 1}, false},
    {"F=1,B=1,W=2", {1, 1, 2}, false},
    {"F=B=W=1, last stage F=2,B=2", {1, 1, 1}, true},
};

Problem loopProblem(const CostCase &C, int64_t Mem) {
  Problem P = Problem::make(4, 8, ir::Placement::Loop, C.Cost, Mem);
  if (C.HeavyLast)
    P.Cost[3] = {2, 2, 1};
  return P;
}

TEST(SynthProof, LoopNeverWorseThanZeroBubbleAndOptimal) {
  fmt::print("{:<30} {:>4} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "costs (p=4, m=8)",
             "mem", "zb", "greedy", "heur", "synth", "exact");
  for (const CostCase &C : Cases)
    for (int64_t Mem = 3; Mem <= 8; ++Mem) {
      SCOPED_TRACE(fmt::format("{} memory {}", C.Name, Mem));
      Problem P = loopProblem(C, Mem);
      std::optional<Result> Zb = zeroBubbleHeuristic(P);
      std::optional<Result> G = greedyList(P);
      SynthOptions SO;
      SO.ExactStateBudget = 20'000'000;
      std::optional<Result> S = synthesize(P, SO);
      SynthOptions HeurOnly;
      HeurOnly.UseExact = false;
      std::optional<Result> H = synthesize(P, HeurOnly);
      ASSERT_TRUE(H);
      ASSERT_TRUE(G);
      ASSERT_TRUE(S);
      EXPECT_LE(S->Eval.MaxPeakMemory, Mem);
      EXPECT_LE(G->Eval.MaxPeakMemory, Mem);
      if (Zb) {
        EXPECT_LE(G->Eval.Makespan, Zb->Eval.Makespan);
        EXPECT_LE(H->Eval.Makespan, Zb->Eval.Makespan);
        EXPECT_LE(S->Eval.Makespan, Zb->Eval.Makespan);
      }
      // The exact optimum, found from scratch (no incumbent).
      ExactOptions EO;
      EO.StateBudget = 20'000'000;
      EO.UpperBound = G->Eval.Makespan + 1e-9 + 1; // search <= greedy
      ExactResult E = exactSearch(P, EO);
      ASSERT_TRUE(E.Complete) << E.Skipped;
      double Opt = E.Best ? E.Best->Eval.Makespan : E.Optimum;
      EXPECT_DOUBLE_EQ(S->Eval.Makespan, Opt);
      EXPECT_LE(Opt, G->Eval.Makespan);
      fmt::print("{:<30} {:>4} {:>8} {:>8} {:>8} {:>8} {:>8}\n", C.Name, Mem,
                 Zb ? fmt::format("{}", Zb->Eval.Makespan) : "fails",
                 G->Eval.Makespan, H->Eval.Makespan, S->Eval.Makespan, Opt);
    }
}

TEST(SynthProof, ExactSearchIsOptimalOnTinyCases) {
  // p = 2, m = 2, unit costs, memory 2: rank 1 cannot start before 1 and
  // has 6 units of work, so 7 is a lower bound; F0 F1 | I0 W0 I1 W1 on
  // rank 0 against F0 I0 W0 F1 I1 W1 on rank 1 reaches it.
  Problem P = Problem::make(2, 2, ir::Placement::Loop, {1, 1, 1}, 2);
  ExactResult E = exactSearch(P);
  ASSERT_TRUE(E.Complete);
  ASSERT_TRUE(E.Best);
  EXPECT_DOUBLE_EQ(E.Best->Eval.Makespan, 7);
  // With memory 1, rank 0 must finish each microbatch before the next.
  P.MemoryLimit = 1;
  ExactResult E1 = exactSearch(P);
  ASSERT_TRUE(E1.Best);
  EXPECT_DOUBLE_EQ(E1.Best->Eval.Makespan, 10);
  // An upper bound equal to the optimum: nothing better exists.
  ExactOptions EO;
  EO.UpperBound = 7;
  P.MemoryLimit = 2;
  ExactResult E2 = exactSearch(P, EO);
  EXPECT_TRUE(E2.Complete);
  EXPECT_FALSE(E2.Best);
  EXPECT_DOUBLE_EQ(E2.Optimum, 7);
  // Out of its range it says why.
  ExactResult Big =
      exactSearch(Problem::make(8, 8, ir::Placement::Loop, {1, 1, 1}, 8));
  EXPECT_FALSE(Big.Complete);
  EXPECT_FALSE(Big.Skipped.empty());
}

TEST(SynthProof, ExplicitPlacementWithThreeStagesOnARank) {
  // Stages 0, 1, 2 on rank 0 and stage 3 on rank 1: the exact search says
  // it does not apply (at most two per rank); the greedy handles it.
  Problem P = Problem::make(2, 4, ir::Placement::Loop, {1, 1, 1}, 6);
  P.Stages = 4;
  P.StageToRank = {0, 0, 0, 1};
  P.Cost.assign(4, {1, 1, 1});
  P.Place = ir::Placement::Explicit;
  ASSERT_EQ(P.validate(), "");
  std::string Why;
  EXPECT_FALSE(exactApplies(P, &Why));
  EXPECT_NE(Why.find("two stages per rank"), std::string::npos) << Why;
  std::optional<Result> R = synthesize(P, {});
  ASSERT_TRUE(R);
  EXPECT_LE(R->Eval.MaxPeakMemory, 6);
  ir::Schedule S = toSchedule(P, R->Ord);
  EXPECT_EQ(test::lowerAndLint(S), "");
}

TEST(SynthProof, VPatternGapOnSmallV) {
  // V placement, p = 2, m = 4: the pattern search and greedy against exact.
  for (int64_t Mem = 2; Mem <= 4; ++Mem) {
    Problem P = Problem::make(2, 4, ir::Placement::V, {1, 1, 1}, Mem);
    SynthOptions Heur;
    Heur.UseExact = false;
    std::optional<Result> H = synthesize(P, Heur);
    ExactResult E = exactSearch(P);
    ASSERT_TRUE(E.Complete) << E.Skipped;
    ASSERT_TRUE(E.Best);
    std::optional<Result> S = synthesize(P, {});
    ASSERT_TRUE(S);
    EXPECT_DOUBLE_EQ(S->Eval.Makespan, E.Best->Eval.Makespan);
    fmt::print("v p=2 m=4 mem {}: heuristics {} exact {}\n", Mem,
               H ? H->Eval.Makespan : -1.0, E.Best->Eval.Makespan);
  }
}

/// The stdlib schedule's makespan and peak memory (chunks) at p = 4, m = 8.
bool stdlibFigures(const std::string &Name, JobCost C, double &Makespan,
                   int64_t &Peak, bool V = true, int Ranks = 4, int Mbs = 8,
                   const std::string &Args = "") {
  std::string Text = fmt::format(
      "pipeline t {{\n  ranks {}; {} microbatches {};\n"
      "  cost {{ F = {}; I = {}; W = {}; }}\n  schedule {}({});\n}}\n",
      Ranks, V ? "stages 2 * P placement v;" : "", Mbs, C.F, C.I, C.W, Name,
      Args);
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  frontend::FrontendOptions FO;
  FO.ImportPaths.push_back(PPS_SOURCE_DIR "/stdlib");
  std::optional<ir::Schedule> S =
      frontend::compileBuffer("t.pps", Text, SM, Diags, FO);
  if (!S)
    return false;
  sim::SimOptions Opts;
  Opts.Dataflow = sim::DataflowMode::Dataflow;
  sim::SimResult R = sim::simulate(*S, Opts);
  Makespan = R.Makespan;
  Peak = R.PeakMemory;
  return !R.Deadlocked;
}

TEST(SynthProof, VMatchesOrBeatsStdlibVHalfAndVMin) {
  for (const char *Name : {"v_half", "v_min"})
    for (JobCost C : {JobCost{1, 1, 1}, JobCost{1, 2, 1}}) {
      double StdMakespan = 0, PubMakespan = 0;
      int64_t StdPeak = 0, PubPeak = 0;
      ASSERT_TRUE(stdlibFigures(Name, C, StdMakespan, StdPeak, true, 4, 8,
                                "reorder: 0"))
          << "stdlib/" << Name << ".pps did not compile";
      ASSERT_TRUE(stdlibFigures(Name, C, PubMakespan, PubPeak));
      EXPECT_EQ(PubPeak, StdPeak);
      // The published peaks: 2*((p+2)/2) = 6 and 2*((p+4)/3) = 4 chunks.
      EXPECT_EQ(StdPeak, std::string(Name) == "v_half" ? 6 : 4);
      Problem P = Problem::make(4, 8, ir::Placement::V, C, StdPeak);
      SynthOptions SO;
      SO.UseExact = false; // the heuristics alone must do it
      std::optional<Result> R = synthesize(P, SO);
      ASSERT_TRUE(R);
      EXPECT_LE(R->Eval.MaxPeakMemory, StdPeak);
      EXPECT_LE(R->Eval.Makespan, StdMakespan) << Name;
      fmt::print("{} (F={},B={},W={}): stdlib makespan {} (reorder: 0), {} "
                 "(published) at peak {}; synth {} ({}) at peak {}\n",
                 Name, C.F, C.I, C.W, StdMakespan, PubMakespan, StdPeak,
                 R->Eval.Makespan, R->Algorithm, R->Eval.MaxPeakMemory);
    }
}

TEST(SynthProof, VAtLargerPMatchesOrBeatsVHalf) {
  // P = 4, 16, 32 with M = 2P at V-Half's peak (P + 2 chunks), against the
  // building blocks as they are (`reorder: 0`) and the published order
  // (the default), which the search alone does not reach (53 vs 55 at
  // P = 4, 233 vs 235, 473 vs 492): synth has it from its stdlib floor.
  for (int R : {4, 16, 32})
    for (const char *Args : {"reorder: 0", ""}) {
      double StdMakespan = 0;
      int64_t StdPeak = 0;
      ASSERT_TRUE(stdlibFigures("v_half", {1, 1, 1}, StdMakespan, StdPeak,
                                /*V=*/true, R, 2 * R, Args));
      Problem P = Problem::make(R, 2 * R, ir::Placement::V, {1, 1, 1}, StdPeak);
      std::optional<Result> Res = synthesize(P, {});
      ASSERT_TRUE(Res);
      EXPECT_LE(Res->Eval.Makespan, StdMakespan) << "P = " << R << " " << Args;
      fmt::print("v_half({}) P={} M={}: makespan {} at peak {}; synth {} ({}) "
                 "at peak {}\n",
                 Args, R, 2 * R, StdMakespan, StdPeak, Res->Eval.Makespan,
                 Res->Algorithm, Res->Eval.MaxPeakMemory);
    }
}

TEST(SynthProof, LoopMatchesOrBeatsStdlibAtTheirMemory) {
  // 1F1B (full backward B = I + W), ZB-H1 and ZB-H2 from the stdlib, p = 4,
  // m = 8: synthesis at each one's own peak memory is at least as fast.
  for (const char *Name : {"one_f_one_b", "zb_h1", "zb_h2"})
    for (JobCost C : {JobCost{1, 1, 1}, JobCost{1, 2, 1}}) {
      double StdMakespan = 0;
      int64_t StdPeak = 0;
      ASSERT_TRUE(stdlibFigures(Name, C, StdMakespan, StdPeak, /*V=*/false))
          << "stdlib/" << Name << ".pps did not compile";
      Problem P = Problem::make(4, 8, ir::Placement::Loop, C, StdPeak);
      std::optional<Result> R = synthesize(P, {});
      ASSERT_TRUE(R);
      EXPECT_LE(R->Eval.Makespan, StdMakespan) << Name;
      fmt::print("{} (F={},B={},W={}): stdlib makespan {} at peak {}; synth "
                 "{} at peak {}\n",
                 Name, C.F, C.I, C.W, StdMakespan, StdPeak, R->Eval.Makespan,
                 R->Eval.MaxPeakMemory);
    }
}

TEST(SynthProof, EverySynthesisedScheduleLintsClean) {
  for (ir::Placement Pl : {ir::Placement::Loop, ir::Placement::V})
    for (int64_t Mem : {2, 3, 4, 6, 8})
      for (double Lat : {0.0, 0.5}) {
        Problem P = Problem::make(4, 8, Pl, {1, 2, 1}, Mem, Lat);
        SynthOptions SO;
        SO.ExactStateBudget = 100'000;
        std::optional<Result> R = synthesize(P, SO);
        if (!R) {
          EXPECT_LT(Mem, minimumMemory(P));
          continue;
        }
        ir::Schedule S = toSchedule(P, R->Ord);
        std::string Findings = test::lowerAndLint(S);
        EXPECT_EQ(Findings, "") << "placement " << ir::placementName(Pl).str()
                                << " memory " << Mem << " latency " << Lat;
        EXPECT_TRUE(S.hasComms());
        // The lowered schedule times the same under the simulator.
        sim::SimResult Sim = sim::simulate(S);
        EXPECT_FALSE(Sim.Deadlocked);
        EXPECT_NEAR(Sim.Makespan, R->Eval.Makespan, 1e-9);
      }
}

TEST(SynthProof, LargerSizesStayFeasibleAndBeatZeroBubble) {
  for (int P : {8, 16})
    for (int64_t Mem :
         {int64_t(P - 1), int64_t(P), int64_t(3 * P / 2), int64_t(2 * P)}) {
      Problem Pr = Problem::make(P, 2 * P, ir::Placement::Loop, {1, 1, 1}, Mem);
      std::optional<Result> G = greedyList(Pr);
      std::optional<Result> Zb = zeroBubbleHeuristic(Pr);
      ASSERT_TRUE(G);
      if (Zb) {
        EXPECT_LE(G->Eval.Makespan, Zb->Eval.Makespan)
            << "p " << P << " memory " << Mem;
      }
    }
}

} // namespace
