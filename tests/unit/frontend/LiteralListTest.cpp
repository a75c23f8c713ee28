//===- LiteralListTest.cpp - the literal-list reader against ANTLR --------===//
//
// The lowered layer's plain rank lists are read without ANTLR
// (pps/frontend/LiteralList.h). Differential tests: every .pps file the
// tests have (stdlib, examples, lit inputs), the lowered text of every
// schedule they compile to (as written and after insert-comms,
// align-bubbles and fsdp), every stdlib schedule, hand-written corner
// cases and thousands of random mutations of lowered text are compiled
// with the reader and with ANTLR alone; the IR (with every action's
// location) and the diagnostics (text and JSON) must be the same.
//
//===----------------------------------------------------------------------===//
#include "Fingerprint.h"
#include "pps/backends/PpsPrinter.h"
#include "pps/frontend/CheckedUnit.h"
#include "pps/frontend/Frontend.h"
#include "pps/passes/PassManager.h"
#include "pps/pipeline/PassPipeline.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <random>

using namespace pps;

namespace {

using test::fingerprint;

frontend::FrontendOptions options(bool Literal) {
  frontend::FrontendOptions O;
  O.StdlibDir = PPS_SOURCE_DIR "/stdlib";
  O.LiteralLists = Literal;
  return O;
}

/// Everything a compile shows: diagnostics (text and JSON), and the IR with
/// each action's location.
struct Outcome {
  std::string Text;
  std::optional<ir::Schedule> S;
};

Outcome compileText(llvm::StringRef Name, llvm::StringRef Text, bool Literal,
                    uint64_t StepBudget = 0) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  frontend::FrontendOptions O = options(Literal);
  if (StepBudget)
    O.StepBudget = StepBudget;
  Outcome C;
  C.S = frontend::compileBuffer(Name, Text, SM, Diags, O);
  C.Text = fingerprint(C.S, Diags);
  return C;
}

Outcome compilePath(llvm::StringRef Path, bool Literal) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  Outcome C;
  C.S = frontend::compileFile(Path, SM, Diags, options(Literal));
  C.Text = fingerprint(C.S, Diags);
  return C;
}

/// How many actions of the file's pipelines the reader took.
size_t literalActions(llvm::StringRef Text) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  frontend::CheckedUnit U =
      frontend::checkBuffer("probe.pps", Text, SM, Diags, options(true));
  size_t N = 0;
  if (U.Main)
    for (auto &Pl : U.Main->Pipelines)
      for (auto &I : Pl->Items)
        if (I.Rank)
          N += I.Rank->Literal.size();
  return N;
}

std::string print(const ir::Schedule &S) {
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  backends::printPps(S, OS);
  return Text;
}

/// Compiles Text both ways and expects the same outcome.
Outcome expectSame(const std::string &Name, const std::string &Text,
                   uint64_t StepBudget = 0) {
  Outcome Fast = compileText(Name, Text, true, StepBudget);
  Outcome Ref = compileText(Name, Text, false, StepBudget);
  EXPECT_EQ(Fast.Text, Ref.Text) << Name << "\n" << Text.substr(0, 2000);
  return Fast;
}

/// The lowered texts of S: as it is, and lowered by the pass pipeline with
/// align-bubbles (idle(t) slots) and, when it has none, fsdp controls.
std::vector<std::string> loweredForms(const ir::Schedule &S) {
  std::vector<std::string> Out{print(S)};
  for (bool Fsdp : {false, true}) {
    ir::Schedule L = S;
    L.Fsdp.Enabled |= Fsdp;
    SourceManager SM;
    DiagnosticEngine D(SM);
    passes::PassManager PM;
    pipeline::PipelineConfig Config;
    Config.AlignBubbles = true;
    pipeline::addPasses(PM, L, Config);
    passes::PassContext Ctx{D, {}};
    if (PM.run(L, Ctx) && !D.hasErrors())
      Out.push_back(print(L));
  }
  return Out;
}

std::vector<std::string> ppsFilesUnder(const std::string &Dir) {
  std::vector<std::string> Out;
  std::error_code EC;
  for (llvm::sys::fs::recursive_directory_iterator It(Dir, EC), End;
       It != End && !EC; It.increment(EC))
    if (llvm::sys::path::extension(It->path()) == ".pps")
      Out.push_back(It->path());
  std::sort(Out.begin(), Out.end());
  return Out;
}

} // namespace

TEST(LiteralList, EveryTestFileAndItsLoweredForms) {
  std::vector<std::string> Files;
  for (const char *Dir : {"/stdlib", "/examples", "/tests/lit"})
    for (std::string &F : ppsFilesUnder(std::string(PPS_SOURCE_DIR) + Dir))
      Files.push_back(std::move(F));
  ASSERT_GE(Files.size(), 100u);
  size_t Lowered = 0, Taken = 0;
  for (const std::string &F : Files) {
    Outcome Fast = compilePath(F, true), Ref = compilePath(F, false);
    EXPECT_EQ(Fast.Text, Ref.Text) << F;
    if (!Fast.S || Fast.S->Synth)
      continue;
    for (const std::string &Text : loweredForms(*Fast.S)) {
      Outcome L = expectSame(F + ".lowered.pps", Text);
      ++Lowered;
      Taken += literalActions(Text) > 0;
      if (L.S && Fast.S->numActions()) {
        EXPECT_TRUE(L.S->numActions() > 0) << F;
      }
    }
  }
  EXPECT_GE(Lowered, 100u);
  // The reader did the work (else this compares ANTLR with itself).
  EXPECT_GE(Taken, Lowered * 9 / 10);
}

TEST(LiteralList, EveryStdlibSchedule) {
  const char *Names[][3] = {
      {"gpipe", "P", "loop"},
      {"one_f_one_b", "P", "loop"},
      {"interleaved_1f1b", "2 * P", "loop"},
      {"interleaved_1f1b_overlap", "2 * P", "loop"},
      {"looped_bfs", "2 * P", "loop"},
      {"zb_h1", "P", "loop"},
      {"zb_h2", "P", "loop"},
      {"zb_v", "2 * P", "v"},
      {"v_half", "2 * P", "v"},
      {"v_min", "2 * P", "v"},
      {"dualpipe_v", "2 * P", "v"},
      {"dualpipe", "2 * P", "v; directions 2"},
  };
  for (auto &N : Names) {
    std::string Src = fmt::format("pipeline p {{ ranks 4; stages {} placement "
                                  "{}; microbatches 8; schedule {}(); }}\n",
                                  N[1], N[2], N[0]);
    Outcome C = expectSame(N[0], Src);
    ASSERT_TRUE(C.S) << N[0] << "\n" << C.Text;
    for (const std::string &Text : loweredForms(*C.S)) {
      EXPECT_GT(literalActions(Text), 0u) << N[0];
      Outcome L = expectSame(std::string(N[0]) + ".lowered.pps", Text);
      ASSERT_TRUE(L.S) << L.Text;
      std::string Why;
      EXPECT_TRUE(L.S->equivalent(*compileText("x.pps", Text, false).S, &Why))
          << Why;
    }
  }
}

TEST(LiteralList, CornerCases) {
  const char *Head = "pipeline p { ranks 2; stages 4 placement loop; "
                     "microbatches 2;\n";
  const char *Lists[] = {
      // Plain, spaced and tight spellings; every kind.
      "rank 0: F0@0 F1@0 send F0@0 -> 1 recv B0@0 <- 1 B0@0;",
      "rank 0 :F0@0\n\tF1@0\r\n send F0@0->1 recv B0@0<-1 B0@0 ;",
      // One list over two lines (not a missing comma).
      // NOLINTNEXTLINE(bugprone-suspicious-missing-comma)
      "rank 0: overlap(F0@0, B1@2) overlap ( F1@0 , B0@2 ) idle idle(2.5) "
      "idle (0) idle(1e-05) idle(3E+2) unshard 0 reshard 2 reduce_grad 0;",
      "rank 0: send F0@0 recv B0@0 send B1@2 recv F1@2;",
      "rank 00: F007@0000;",
      // Forms the reader leaves to ANTLR (same result either way).
      "rank 0: F0@1F1@0;",
      "rank 0: F3@5@6;",
      "rank 0: F0 @0;",
      "rank 0: F0@ 0;",
      "rank 0: send F0@0 -> 1F1@0;",
      "rank 0: send W0@0 -> 1;",
      "rank 0: idle(2 ms) idle(-1) idle(1e999) idle(2.) idle(2e);",
      "rank 0: F(0)@0 F1@(0) unshard (0);",
      "rank 0: F0@0 /* c */ F1@0; // c",
      "rank 0: F0@0, F1@0;",
      "rank 0: F99999999999999999999@0;",
      "rank 0: F9999999999@0 F0@9999999999;",
      "rank 0: sendF0@0;",
      "rank 0: F0@0 send F0@0 ->;",
      "rank 0: overlap(F0@0 B1@2);",
      "rank 0: F0@0 \x80 F1@0;",
      "rank 0: F0@0",
      "rank 0: F0@0 rank 1: F0@1;",
      // Semantic errors inside literal lists, located the same way.
      "rank 0: F5@0 F0@9 send F0@0 -> 7 recv B0@0 <- 3 unshard 9;",
      "rank 0: send F0@3 recv B0@0 send B0@0 recv F0@0;",
      "rank 0: F0 F1;",
      "rank 1: F0 B0 F0@0;",
      "rank 7: F0@0;",
      "rank 0: overlap(F9@0, B0@2) overlap(F0@0, B9@2) overlap(F0@0, B0@9);",
  };
  for (const char *L : Lists) {
    std::string Src = std::string(Head) + "  " + L + "\n}\n";
    expectSame("corner.pps", Src);
  }
  // Twenty-one errors in one list: the list stops after twenty, both ways.
  std::string Many = std::string(Head) + "  rank 0:";
  for (int I = 0; I < 30; ++I)
    Many += fmt::format(" F{}@0", 10 + I);
  expectSame("many.pps", Many + ";\n}\n");
  // Lists inside schedules and rank blocks, and a rank list as a statement.
  expectSame("sched.pps", "schedule s() { rank 0: F0 B0; rank 1: F0 B0; "
                          "for r in 0..1 { rank 1 { F1; B1; } } rank 0: F1 "
                          "B1; }\npipeline p { ranks 2; microbatches 2; "
                          "schedule s(); }\n");
}

TEST(LiteralList, StepBudgetRunsOutInsideAList) {
  std::string Src = "pipeline p { ranks 2; stages 4 placement loop; "
                    "microbatches 2;\n  rank 0: F0@0 send F0@0 -> 1 unshard "
                    "0 overlap(F1@0, B0@2) recv B1@2 <- 1 F1@0;\n}\n";
  // Every budget from none to enough: the error lands on the same number.
  for (uint64_t Budget = 1; Budget < 16; ++Budget)
    expectSame(fmt::format("budget{}.pps", Budget), Src, Budget);
}

TEST(LiteralList, RandomMutationsOfLoweredText) {
  // Lowered text with every form the reader takes, then single-byte edits
  // (deletions, insertions of bytes the forms use, replacements): whatever
  // the edit makes of the text, both ways must agree.
  std::string Base;
  {
    Outcome C = compileText(
        "base.pps",
        "pipeline p { ranks 2; stages 4 placement loop; microbatches 4; "
        "schedule interleaved_1f1b(overlap_b_f: 1); }\n",
        false);
    ASSERT_TRUE(C.S) << C.Text;
    std::vector<std::string> Forms = loweredForms(*C.S);
    ASSERT_GE(Forms.size(), 2u);
    Base = Forms[1];
  }
  ASSERT_GT(literalActions(Base), 0u);
  const std::string Alphabet = " \n;:,.@()->< FIWBsendrecvoverlapidle0123456789"
                               "e+_x/*\x80";
  std::mt19937 Rng(20240601);
  for (int K = 0; K < 1500; ++K) {
    std::string T = Base;
    size_t Edits = 1 + Rng() % 3;
    for (size_t E = 0; E < Edits; ++E) {
      size_t At = Rng() % T.size();
      char C = Alphabet[Rng() % Alphabet.size()];
      switch (Rng() % 3) {
      case 0:
        T.erase(At, 1);
        break;
      case 1:
        T.insert(T.begin() + long(At), C);
        break;
      default:
        T[At] = C;
        break;
      }
    }
    Outcome Fast = compileText("m.pps", T, true);
    Outcome Ref = compileText("m.pps", T, false);
    ASSERT_EQ(Fast.Text, Ref.Text) << "mutation " << K << ":\n" << T;
  }
}
