//===- PassTest.cpp - the synth pass on `schedule synth(memory: N)` -------===//
#include "SynthTestUtil.h"

#include "pps/frontend/Frontend.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

using namespace pps;
using namespace pps::synth;

namespace {

struct Compiled {
  SourceManager SM;
  DiagnosticEngine Diags{SM};
  std::optional<ir::Schedule> S;
};

void compile(Compiled &C, const std::string &Text) {
  frontend::FrontendOptions FO;
  FO.ImportPaths.push_back(PPS_SOURCE_DIR "/stdlib");
  C.S = frontend::compileBuffer("synth.pps", Text, C.SM, C.Diags, FO);
}

bool runSynth(Compiled &C) {
  passes::PassManager PM;
  PM.add(createSynthPass());
  passes::PassContext Ctx{C.Diags, {}};
  return PM.run(*C.S, Ctx);
}

TEST(SynthPass, FillsTheRankProgramsOfARequest) {
  Compiled C;
  compile(C, "pipeline p {\n  ranks 4;\n  microbatches 8;\n"
             "  cost { F = 1; I = 2; W = 1; }\n"
             "  schedule synth(memory: 4);\n}\n");
  ASSERT_TRUE(C.S);
  ASSERT_TRUE(C.S->Synth);
  EXPECT_EQ(C.S->numActions(), 0u);
  ASSERT_TRUE(runSynth(C));
  EXPECT_FALSE(C.S->Synth);
  EXPECT_EQ(C.S->numActions(), 3u * 4 * 8);
  ASSERT_TRUE(C.S->MemoryLimit);
  EXPECT_EQ(*C.S->MemoryLimit, 4);
  // Located at the request.
  EXPECT_NE(C.S->Ranks[0].Actions[0].Loc, NoLoc);
  EXPECT_EQ(test::lowerAndLint(*C.S), "");
}

TEST(SynthPass, VPlacementAndMemoryFromThePipeline) {
  Compiled C;
  compile(C, "pipeline p {\n  ranks 4;\n  stages 2 * P placement v;\n"
             "  microbatches 8;\n  memory limit 6;\n"
             "  schedule synth(exact: 0);\n}\n");
  ASSERT_TRUE(C.S) << "front end failed";
  ASSERT_TRUE(C.S->Synth);
  EXPECT_EQ(C.S->Synth->MemoryLimit, 6);
  ASSERT_TRUE(runSynth(C));
  EXPECT_EQ(C.S->numActions(), 3u * 8 * 8);
  EXPECT_EQ(test::lowerAndLint(*C.S), "");
}

TEST(SynthPass, LeavesOtherSchedulesAlone) {
  Compiled C;
  compile(C, "pipeline p {\n  ranks 2;\n  microbatches 2;\n"
             "  rank 0: F0 F1 B0 B1;\n  rank 1: F0 B0 F1 B1;\n}\n");
  ASSERT_TRUE(C.S);
  size_t N = C.S->numActions();
  ASSERT_TRUE(runSynth(C));
  EXPECT_EQ(C.S->numActions(), N);
}

TEST(SynthPass, ReportsInfeasibleLimitsAtTheRequest) {
  Compiled C;
  compile(C, "pipeline p {\n  ranks 4;\n  stages 2 * P placement v;\n"
             "  microbatches 8;\n  schedule synth(memory: 1);\n}\n");
  ASSERT_TRUE(C.S);
  EXPECT_FALSE(runSynth(C));
  EXPECT_TRUE(C.Diags.has(DiagKind::SynthInfeasible));
  ASSERT_EQ(C.Diags.diagnostics().size(), 1u);
  EXPECT_EQ(C.Diags.formatLoc(C.Diags.diagnostics()[0].Loc), "synth.pps:5:12");
  EXPECT_EQ(C.S->numActions(), 0u);
}

TEST(SynthPass, RejectsUnknownArguments) {
  Compiled C;
  compile(C, "pipeline p {\n  ranks 2;\n  microbatches 2;\n"
             "  schedule synth(memory: 2, speed: 3);\n}\n");
  ASSERT_TRUE(C.S);
  EXPECT_FALSE(runSynth(C));
  EXPECT_TRUE(C.Diags.has(DiagKind::InvalidValue));
}

TEST(SynthPass, SpanArgumentSetsTheObjective) {
  for (int Span : {0, 1}) {
    Compiled C;
    compile(C, fmt::format("pipeline p {{\n  ranks 4;\n  microbatches 8;\n"
                           "  cost {{ F = 5; I = 6; W = 4; }}\n"
                           "  schedule synth(memory: 8, span: {});\n}}\n",
                           Span));
    ASSERT_TRUE(C.S);
    ASSERT_TRUE(runSynth(C));
    EXPECT_FALSE(C.Diags.hasErrors());
    EXPECT_GT(C.S->numActions(), 0u);
  }
}

TEST(SynthPass, InterleavedLoopPlacement) {
  // Three stages per rank (loop placement): the greedy list scheduler
  // handles any placement; the reserve rule keeps it deadlock-free.
  Compiled D;
  compile(D, "pipeline p {\n  ranks 2;\n  stages 6;\n  microbatches 4;\n"
             "  schedule synth(memory: 5);\n}\n");
  ASSERT_TRUE(D.S);
  ASSERT_TRUE(runSynth(D));
  EXPECT_EQ(D.S->numActions(), 3u * 6 * 4);
  EXPECT_EQ(test::lowerAndLint(*D.S), "");
}

} // namespace
