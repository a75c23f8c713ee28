//===- CostsFileTest.cpp - --costs=FILE through its public API ------------===//
#include "pps/frontend/CostsFile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace pps;

namespace {

/// Writes Text to a temporary .pps file; removes it when done.
struct TempPps {
  std::string Path;
  explicit TempPps(const std::string &Text) {
    Path = ::testing::TempDir() + "/costs_" + std::to_string(::getpid()) + "_" +
           std::to_string(Counter++) + ".pps";
    std::ofstream(Path) << Text;
  }
  ~TempPps() { std::remove(Path.c_str()); }
  static inline int Counter = 0;
};

std::optional<ir::Schedule> compile(SourceManager &SM, DiagnosticEngine &D,
                                    const std::string &Text) {
  frontend::FrontendOptions FO;
  FO.StdlibDir = PPS_SOURCE_DIR "/stdlib";
  return frontend::compileBuffer("s.pps", Text, SM, D, FO);
}

TEST(CostsFile, ReplacesTheCostModelButNotHowCommsRun) {
  TempPps F("pipeline m { ranks 2; stages 4; microbatches 2; cost { F = 2; "
            "I = 1.5; W = 0.5; F[stage 3] = 3; overlap = 4; } comm { latency "
            "0.25 ms; bandwidth 1 GB/s; activation 1 MiB; model eager; "
            "blocking; } memory limit 2; schedule synth(); }");
  SourceManager SM;
  DiagnosticEngine D(SM);
  std::optional<frontend::CostsFile> C =
      frontend::readCostsFile(F.Path, SM, D, {});
  ASSERT_TRUE(C.has_value());
  EXPECT_EQ(C->Stages, 4);
  EXPECT_EQ(C->Name, "m");
  std::optional<ir::Schedule> S = compile(
      SM, D,
      "pipeline p { ranks 4; microbatches 8; cost { F = 9; I = 9; W = 9; } "
      "comm { latency 7; } schedule zb_h1(); }");
  ASSERT_TRUE(S.has_value());
  ASSERT_TRUE(frontend::applyCostsFile(*C, *S, D));
  EXPECT_FALSE(D.hasErrors());
  const ir::CostModel &M = S->Cost;
  EXPECT_DOUBLE_EQ(M.computeCost(ir::ActionKind::F, 0), 2);
  EXPECT_DOUBLE_EQ(M.computeCost(ir::ActionKind::F, 3), 3);
  EXPECT_DOUBLE_EQ(M.computeCost(ir::ActionKind::B, 1), 2) << "B = I + W";
  EXPECT_EQ(M.Overlap, 4);
  EXPECT_DOUBLE_EQ(M.Latency, 0.25);
  EXPECT_DOUBLE_EQ(M.BandwidthBytesPerMs, 1e6);
  EXPECT_DOUBLE_EQ(M.ActivationBytes, 1048576);
  // How the schedule runs is its own: the comm model and async comms.
  EXPECT_EQ(S->Comm, ir::CommModel::Rendezvous);
  EXPECT_TRUE(M.AsyncComm);
}

TEST(CostsFile, WhatItDoesNotGiveIsTheLanguagesDefault) {
  TempPps F("pipeline m { ranks 1; stages 1; microbatches 1; cost { F = 2; "
            "} schedule gpipe(); }");
  SourceManager SM;
  DiagnosticEngine D(SM);
  auto C = frontend::readCostsFile(F.Path, SM, D, {});
  ASSERT_TRUE(C.has_value());
  EXPECT_DOUBLE_EQ(C->Cost.computeCost(ir::ActionKind::I, 0), 1);
  EXPECT_DOUBLE_EQ(C->Cost.computeCost(ir::ActionKind::B, 0), 2);
  EXPECT_DOUBLE_EQ(C->Cost.Latency, 0);
}

TEST(CostsFile, OtherStagesAreAMismatchAtTheFilesPipeline) {
  TempPps F("pipeline m { ranks 2; microbatches 2; schedule gpipe(); }");
  SourceManager SM;
  DiagnosticEngine D(SM);
  auto C = frontend::readCostsFile(F.Path, SM, D, {});
  ASSERT_TRUE(C.has_value());
  std::optional<ir::Schedule> S =
      compile(SM, D,
              "pipeline p { ranks 2; stages 4; microbatches 4; schedule "
              "interleaved_1f1b(); }");
  ASSERT_TRUE(S.has_value());
  double Before = S->Cost.computeCost(ir::ActionKind::F, 0);
  EXPECT_FALSE(frontend::applyCostsFile(*C, *S, D));
  ASSERT_EQ(D.diagnostics().size(), 1u);
  const Diagnostic &X = D.diagnostics()[0];
  EXPECT_EQ(X.Kind, DiagKind::CostsMismatch);
  EXPECT_EQ(SM.resolve(X.Loc).Line, 1u);
  EXPECT_EQ(SM.resolve(X.Loc).Col, 10u);
  EXPECT_EQ(X.Notes.size(), 1u) << "the schedule's pipeline";
  EXPECT_EQ(S->Cost.computeCost(ir::ActionKind::F, 0), Before)
      << "nothing applied";
}

TEST(CostsFile, ErrorsInTheFileAreLocatedInIt) {
  TempPps F("pipeline m { ranks 2; microbatches 2;\n  cost { F = -1; }\n "
            "schedule gpipe(); }");
  SourceManager SM;
  DiagnosticEngine D(SM);
  EXPECT_FALSE(frontend::readCostsFile(F.Path, SM, D, {}).has_value());
  ASSERT_TRUE(D.hasErrors());
  SourcePos P = SM.resolve(D.diagnostics()[0].Loc);
  EXPECT_EQ(P.Line, 2u);
  EXPECT_NE(P.File, 0u);

  DiagnosticEngine D2(SM);
  EXPECT_FALSE(
      frontend::readCostsFile("/nonexistent/p.pps", SM, D2, {}).has_value());
  ASSERT_EQ(D2.diagnostics().size(), 1u);
  EXPECT_EQ(D2.diagnostics()[0].Kind, DiagKind::FileError);
}

TEST(CostsFile, TheSchedulesOverridesAreNotTheFiles) {
  // --stages and -D belong to the schedule being compiled, not to the
  // costs file read beside it.
  TempPps F("pipeline m { ranks 2; microbatches 2; schedule gpipe(); }");
  SourceManager SM;
  DiagnosticEngine D(SM);
  frontend::FrontendOptions FO;
  FO.Overrides["stages"] = 8;
  auto C = frontend::readCostsFile(F.Path, SM, D, FO);
  ASSERT_TRUE(C.has_value());
  EXPECT_EQ(C->Stages, 2);
}

} // namespace
