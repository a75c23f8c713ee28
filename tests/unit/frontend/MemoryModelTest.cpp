//===- MemoryModelTest.cpp - memory blocks and the model built-ins --------===//
//
// The memory block's amounts and checks (pps/frontend/MemoryModel.h, one
// rule for the block, ppsc synth --memory-model and Python), and the cost
// and memory built-ins a schedule reads its models with: they see the
// command line's overrides (FrontendOptions::ModelOverrides), both
// interpreters give the same values, and reading is recorded.
//
//===----------------------------------------------------------------------===//
#include "pps/frontend/MemoryModel.h"
#include "pps/frontend/Frontend.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace pps;

namespace {

std::optional<ir::Schedule> compile(llvm::StringRef Src,
                                    frontend::FrontendOptions Opts = {},
                                    std::string *Errors = nullptr) {
  Opts.StdlibDir = PPS_SOURCE_DIR "/stdlib";
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  std::optional<ir::Schedule> S =
      frontend::compileBuffer("t.pps", Src, SM, Diags, Opts);
  if (Errors) {
    llvm::raw_string_ostream OS(*Errors);
    Diags.print(OS);
  }
  return Diags.hasErrors() ? std::nullopt : S;
}

TEST(MemoryModel, AmountsGiveTheModel) {
  schema::MemoryModel M;
  EXPECT_EQ(frontend::memoryModelOf({}, M), "");
  EXPECT_TRUE(M.isChunks());
  EXPECT_EQ(frontend::memoryModelOf({1.0, -0.5, std::nullopt, std::nullopt}, M),
            "");
  EXPECT_EQ(M, (schema::MemoryModel{1.0, 0.5}));
  EXPECT_EQ(M.weightAmount(), -0.5);
  // W alone gives I; B and W written are checks.
  EXPECT_EQ(frontend::memoryModelOf({3.0, std::nullopt, -2.0, -3.0}, M), "");
  EXPECT_EQ(M, (schema::MemoryModel{3.0, 1.0}));
  int Culprit = -1;
  EXPECT_NE(
      frontend::memoryModelOf({1.0, -0.5, -0.4, std::nullopt}, M, &Culprit),
      "");
  EXPECT_EQ(Culprit, 2);
  EXPECT_NE(frontend::memoryModelOf({1.0, std::nullopt, std::nullopt, -2.0}, M,
                                    &Culprit),
            "");
  EXPECT_EQ(Culprit, 3);
  // Decimals that sum to the rest up to rounding agree.
  EXPECT_EQ(frontend::memoryModelOf({1.0, -0.7, -0.3, std::nullopt}, M), "");
  // I frees everything: W frees nothing (a +0, never -0).
  EXPECT_EQ(frontend::memoryModelOf({1.0, -1.0, std::nullopt, std::nullopt}, M),
            "");
  EXPECT_EQ(M.weightAmount(), 0.0);
  EXPECT_FALSE(std::signbit(M.weightAmount()));
  EXPECT_EQ(frontend::memoryModelText(M), "F = 1; I = -1; W = 0");

  schema::MemoryModel P;
  EXPECT_EQ(frontend::parseMemoryModel("F=2, I=-1 ,W=-1", P), "");
  EXPECT_EQ(P, (schema::MemoryModel{2.0, 1.0}));
  EXPECT_NE(frontend::parseMemoryModel("F=2,F=3", P).find("given twice"),
            std::string::npos);
  EXPECT_NE(frontend::parseMemoryModel("", P), "");
  EXPECT_NE(frontend::parseMemoryModel("F=x", P).find("needs a number"),
            std::string::npos);
}

TEST(MemoryModel, TheBlockSetsTheScheduleModel) {
  auto S = compile("pipeline p { ranks 2; microbatches 2; memory { F = 2; "
                   "I = -1; limit 7; } schedule zb_h1(); }");
  ASSERT_TRUE(S);
  EXPECT_EQ(S->Memory, (schema::MemoryModel{2.0, 1.0}));
  EXPECT_EQ(S->MemoryLimit, 7);
  EXPECT_EQ(S->ReadsModelAt, NoLoc);
  auto Plain = compile("pipeline p { ranks 2; microbatches 2; memory limit 3; "
                       "schedule zb_h1(); }");
  ASSERT_TRUE(Plain);
  EXPECT_TRUE(Plain->Memory.isChunks());
  EXPECT_EQ(Plain->MemoryLimit, 3);
}

TEST(MemoryModel, BuiltinsReadTheModelsWithTheOverrides) {
  const char *Src = R"(
    schedule s() {
      // Each value as a count of F's on its own rank: rank k runs value/250.
      let v = array(6, 0);
      v[0] = cost_f(0); v[1] = cost_w(1); v[2] = comm_time();
      v[3] = mem_f(); v[4] = -mem_i(); v[5] = -mem_w();
      for r in 0..6 { rank r { for i in 0..v[r] / 250 { F(i); } } }
    }
    pipeline p {
      ranks 6; microbatches 64;
      cost { F = 1.5; W[stage 1] = 0.75; }
      comm { latency 0.5; }
      memory { F = 2; I = -0.5; }
      schedule s();
    })";
  for (bool Tree : {false, true}) {
    frontend::FrontendOptions O;
    O.TreeWalk = Tree;
    auto S = compile(Src, O);
    ASSERT_TRUE(S) << Tree;
    const size_t Want[] = {6, 3, 2, 8, 2, 6};
    for (int R = 0; R < 6; ++R)
      EXPECT_EQ(S->Ranks[size_t(R)].Actions.size(), Want[R])
          << "rank " << R << (Tree ? " (tree walk)" : "");
    EXPECT_NE(S->ReadsModelAt, NoLoc);
  }
  // The command line's changes reach the schedule body.
  frontend::FrontendOptions O;
  O.ModelOverrides = [](ir::Schedule &X) {
    X.Cost.Default.F = 0.25;
    for (ir::StageCost &C : X.Cost.PerStage)
      C.F = 0.25;
    X.Cost.Latency = 1.0;
  };
  auto S = compile(Src, O);
  ASSERT_TRUE(S);
  EXPECT_EQ(S->Ranks[0].Actions.size(), 1u);
  EXPECT_EQ(S->Ranks[2].Actions.size(), 4u);
}

TEST(MemoryModel, ModelItemsAfterAReadAreErrors) {
  std::string Errors;
  auto S = compile("schedule s() { let f = mem_f(); rank 0 { F(0); } }\n"
                   "pipeline p { ranks 1; microbatches 1; schedule s(); "
                   "memory { F = 2; } }",
                   {}, &Errors);
  EXPECT_FALSE(S);
  EXPECT_NE(Errors.find("'memory' comes after the schedule read"),
            std::string::npos)
      << Errors;
  // A stage out of range is located at the argument.
  Errors.clear();
  S = compile("schedule s() { let f = cost_f(S); rank 0 { F(0); } }\n"
              "pipeline p { ranks 1; microbatches 1; schedule s(); }",
              {}, &Errors);
  EXPECT_FALSE(S);
  EXPECT_NE(Errors.find("stage 1 is out of range 0..0"), std::string::npos)
      << Errors;
  Errors.clear();
  S = compile("schedule s() { let f = mem_f(1); rank 0 { F(0); } }\n"
              "pipeline p { ranks 1; microbatches 1; schedule s(); }",
              {}, &Errors);
  EXPECT_FALSE(S);
  EXPECT_NE(Errors.find("'mem_f' takes 0 arguments, got 1"), std::string::npos)
      << Errors;
}

} // namespace
