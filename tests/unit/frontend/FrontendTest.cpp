//===- FrontendTest.cpp - the front end through its public API ------------===//
//
// Builder vs parsed text, the language's semantics (defaults, named args,
// loops, arrays, floor division, placement, costs and units), command-line
// overrides, limits, and that hostile or mutated input never escapes as an
// exception or crash.
//
//===----------------------------------------------------------------------===//
#include "pps/frontend/Frontend.h"
#include "pps/ir/Builder.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <random>

using namespace pps;

namespace {

struct Result {
  std::optional<ir::Schedule> S;
  std::string Text;
  std::vector<DiagKind> Kinds;
  bool has(DiagKind K) const {
    return std::find(Kinds.begin(), Kinds.end(), K) != Kinds.end();
  }
};

Result run(llvm::StringRef Src, frontend::FrontendOptions Opts = {}) {
  if (Opts.StdlibDir.empty())
    Opts.StdlibDir = PPS_SOURCE_DIR "/stdlib";
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  Result R;
  R.S = frontend::compileBuffer("t.pps", Src, SM, Diags, Opts);
  for (const Diagnostic &D : Diags.diagnostics())
    R.Kinds.push_back(D.Kind);
  llvm::raw_string_ostream OS(R.Text);
  Diags.print(OS);
  return R;
}

std::string actions(const ir::Schedule &S, int R) {
  std::string Out;
  for (const ir::Action &A : S.Ranks[R].Actions) {
    if (!Out.empty())
      Out += ' ';
    Out += ir::actionKindName(A.Kind).str() + std::to_string(A.Microbatch) +
           "@" + std::to_string(A.Stage);
  }
  return Out;
}

} // namespace

TEST(Frontend, BuilderEqualsParsedText) {
  ir::ScheduleBuilder B(2, 2, 2);
  B.rank(0).F(0).F(1).B(0).B(1);
  B.rank(1).F(0).B(0).F(1).B(1);
  ir::Schedule Built = B.build();
  Result R = run(R"(pipeline handmade {
    ranks 2; stages 2; microbatches 2;
    rank 0: F0 F1 B0 B1;
    rank 1: F0 B0 F1 B1;
  })");
  ASSERT_TRUE(R.S) << R.Text;
  std::string Why;
  EXPECT_TRUE(Built.equivalent(*R.S, &Why)) << Why;
  // Every parsed action keeps a location.
  for (const auto &Rank : R.S->Ranks)
    for (const ir::Action &A : Rank.Actions)
      EXPECT_NE(A.Loc, NoLoc);
}

TEST(Frontend, ProgrammableOneFOneBMatchesHandWritten) {
  Result R = run(R"(
    schedule one_f_one_b() {
      for r in 0..P {
        rank r {
          let warm = min(P - r - 1, M);
          for i in 0..warm { F(i); }
          for i in 0..M - warm { F(i + warm); B(i); }
          for i in M - warm..M { B(i); }
        }
      }
    }
    pipeline p { ranks 2; microbatches 3; schedule one_f_one_b(); })");
  ASSERT_TRUE(R.S) << R.Text;
  EXPECT_EQ(actions(*R.S, 0), "F0@0 F1@0 B0@0 F2@0 B1@0 B2@0");
  EXPECT_EQ(actions(*R.S, 1), "F0@1 B0@1 F1@1 B1@1 F2@1 B2@1");
}

TEST(Frontend, ArgumentsDefaultsAndNamedArgs) {
  Result R = run(R"(
    fn twice(x) { return 2 * x; }
    schedule s(a, b = a + P, c = 1) {
      rank 0 { F(a); F(b); F(twice(c)); }
    }
    pipeline p { ranks 2; microbatches 10; schedule s(1, c: 3); })");
  ASSERT_TRUE(R.S) << R.Text;
  EXPECT_EQ(actions(*R.S, 0), "F1@0 F3@0 F6@0");
}

TEST(Frontend, ControlFlowArraysAndFloorDivision) {
  Result R = run(R"(
    schedule s() {
      rank 0 {
        let a = array(4, 0);
        for i in 0..len(a) { a[i] = i * i; }
        let k = 0;
        while true {
          k = k + 1;
          if k == 2 { continue; } else if k > 3 { break; }
          F(a[k]);
        }
        for i in 3..0 step -2 { B(i); }
        assert -7 / 2 == -4 && -7 % 2 == 1 && div(7, -2) == -4 && mod(7, -2) == -1, "floor";
        assert abs(-3) == 3 && max(1, 5, 2) == 5 && !(1 > 2) || false;
      }
    }
    pipeline p { ranks 1; microbatches 10; schedule s(); })");
  ASSERT_TRUE(R.S) << R.Text;
  EXPECT_EQ(actions(*R.S, 0), "F1@0 F9@0 B3@0 B1@0");
}

TEST(Frontend, TopologyBuiltinsAndPlacement) {
  Result R = run(R"(
    schedule s() {
      for r in 0..P {
        rank r { for c in 0..V { F(0)@stage_of(r, c); } }
      }
      rank rank_of(S - 1) { B(0)@(S - 1); }
    }
    pipeline p { ranks 2; stages 2 * P placement v; microbatches 1; schedule s(); })");
  ASSERT_TRUE(R.S) << R.Text;
  EXPECT_EQ(actions(*R.S, 0), "F0@0 F0@3 B0@3");
  EXPECT_EQ(actions(*R.S, 1), "F0@1 F0@2");
  EXPECT_EQ(R.S->Topo.StageToRank,
            (llvm::SmallVector<int32_t, 16>{0, 1, 1, 0}));
}

TEST(Frontend, CostAndCommUnits) {
  Result R = run(R"(pipeline p {
    ranks 2; microbatches 1;
    cost { I = 0.5; W = 0.25; F[stage 1] = 3; I[stage 1] = 2; W[stage 1] = 1; }
    comm { model batched; latency 50 us; bandwidth 2 GB/s; activation 1 MiB; gradient 2 KB; blocking; }
    rank 0: F0 B0; rank 1: F0 B0;
  })");
  ASSERT_TRUE(R.S) << R.Text;
  const ir::CostModel &C = R.S->Cost;
  EXPECT_EQ(C.Default.B, 0.75); // B = I + W when only I and W are given
  ASSERT_EQ(C.PerStage.size(), 2u);
  EXPECT_EQ(C.PerStage[1].B, 3.0);
  EXPECT_EQ(C.PerStage[0].B, 0.75);
  EXPECT_DOUBLE_EQ(C.Latency, 0.05);
  EXPECT_EQ(C.BandwidthBytesPerMs, 2e6);
  EXPECT_EQ(C.ActivationBytes, 1048576.0);
  EXPECT_EQ(C.GradientBytes, 2000.0);
  EXPECT_FALSE(C.AsyncComm);
  EXPECT_EQ(R.S->Comm, ir::CommModel::Batched);
}

TEST(Frontend, CommPeersComeFromTheTopology) {
  Result R = run(R"(pipeline p {
    ranks 2; stages 4 placement v; microbatches 1;
    rank 0: send F0@0 recv B0@0 recv F0@3 send F0@3 -> 1;
  })");
  ASSERT_TRUE(R.S) << R.Text;
  const auto &A = R.S->Ranks[0].Actions;
  ASSERT_EQ(A.size(), 4u);
  EXPECT_EQ(A[0].Kind, ir::ActionKind::SendF);
  EXPECT_EQ(A[0].Peer, 1); // stage 1 is on rank 1
  EXPECT_EQ(A[1].Kind, ir::ActionKind::RecvB);
  EXPECT_EQ(A[1].Peer, 1);
  EXPECT_EQ(A[2].Kind, ir::ActionKind::RecvF);
  EXPECT_EQ(A[2].Peer, 1); // stage 2 is on rank 1
  EXPECT_EQ(A[3].Peer, 1);
}

TEST(Frontend, OverridesApplyBeforeUse) {
  frontend::FrontendOptions O;
  O.Overrides["ranks"] = 3;
  O.Overrides["microbatches"] = 5;
  O.Overrides["g"] = 2;
  O.Overrides["memory_limit"] = 9;
  Result R = run(R"(
    schedule s(g = 1) { for r in 0..P { rank r { for i in 0..M { F(i); } } } rank 0 { F(g); } }
    pipeline p { ranks 2; microbatches 2; schedule s(); })",
                 O);
  ASSERT_TRUE(R.S) << R.Text;
  EXPECT_EQ(R.S->Topo.Ranks, 3);
  EXPECT_EQ(R.S->Topo.Microbatches, 5);
  EXPECT_EQ(R.S->Ranks[0].Actions.size(), 6u);
  EXPECT_EQ(R.S->Ranks[0].Actions.back().Microbatch, 2);
  EXPECT_EQ(R.S->MemoryLimit, 9);

  frontend::FrontendOptions Bad;
  Bad.Overrides["nope"] = 1;
  Result B = run("pipeline p { ranks 1; microbatches 1; rank 0: F0 B0; }", Bad);
  EXPECT_FALSE(B.S);
  EXPECT_TRUE(B.has(DiagKind::UnknownName));
}

TEST(Frontend, ImplicitStdlibLookup) {
  Result R =
      run("pipeline p { ranks 4; microbatches 8; schedule one_f_one_b(); }");
  ASSERT_TRUE(R.S) << R.Text;
  EXPECT_EQ(R.S->numActions(), 64u);
}

TEST(Frontend, LimitsAreLocatedErrors) {
  frontend::FrontendOptions O;
  O.StepBudget = 10000;
  Result R = run(R"(schedule s() { while true { } }
    pipeline p { ranks 1; microbatches 1; schedule s(); })",
                 O);
  EXPECT_FALSE(R.S);
  EXPECT_TRUE(R.has(DiagKind::BudgetExhausted)) << R.Text;
  EXPECT_NE(R.Text.find("t.pps:1:"), std::string::npos) << R.Text;

  frontend::FrontendOptions O2;
  O2.RecursionLimit = 10;
  Result R2 = run(R"(fn f(n) { return f(n); }
    schedule s() { assert f(0) == 0; }
    pipeline p { ranks 1; microbatches 1; schedule s(); })",
                  O2);
  EXPECT_TRUE(R2.has(DiagKind::RecursionLimit)) << R2.Text;
}

TEST(Frontend, SeveralErrorsPerRun) {
  Result R = run(R"(schedule s() { let a = b; let c = d; }
    pipeline p { ranks 1; microbatches 1; schedule s(); })");
  EXPECT_FALSE(R.S);
  EXPECT_EQ(std::count(R.Kinds.begin(), R.Kinds.end(), DiagKind::UnknownName),
            2);
}

TEST(Frontend, MutatedInputNeverCrashes) {
  const std::string Seed = R"(
    import std.common;
    schedule s(k = 2) {
      for r in 0..P { rank r { let w = min(P - r - 1, M);
        for i in 0..w { F(i); } for i in 0..M - w { F(i + w); B(i); }
        for i in M - w..M { B(i); } } }
    }
    pipeline p { ranks 4; stages P placement { 0 -> 0, 1 -> 1, 2 -> 2, 3 -> 3 };
      microbatches 8; cost { F = 1.5; B[stage 2] = 3; } comm { latency 1 ms; }
      schedule s(k: 3); })";
  ASSERT_TRUE(run(Seed).S);
  std::mt19937 Rng(42);
  const char Pieces[] = "(){}[];:,.@-><=!&|+*/%0123456789FBIW \"\n\x01\xff";
  frontend::FrontendOptions O;
  O.StepBudget = 200000;
  for (int N = 0; N < 300; ++N) {
    std::string Text = Seed;
    int Edits = 1 + Rng() % 4;
    for (int E = 0; E < Edits; ++E) {
      size_t Pos = Rng() % Text.size();
      switch (Rng() % 3) {
      case 0:
        Text.erase(Pos, 1 + Rng() % 3);
        break;
      case 1:
        Text.insert(Pos, 1, Pieces[Rng() % (sizeof(Pieces) - 1)]);
        break;
      default:
        Text[Pos] = Pieces[Rng() % (sizeof(Pieces) - 1)];
        break;
      }
    }
    Result R = run(Text, O);
    // Either it compiles or it says why, at a location.
    if (!R.S) {
      EXPECT_FALSE(R.Kinds.empty()) << Text;
    }
  }
}

TEST(Frontend, FnWithoutReturnHasNoValue) {
  Result R = run(R"(
    fn g() { return 1; }
    fn f() { let y = g(); assert y == 1; }
    schedule s() { let x = f(); assert x == 0; }
    pipeline p { ranks 1; microbatches 1; schedule s(); })");
  EXPECT_FALSE(R.S);
  EXPECT_TRUE(R.has(DiagKind::TypeMismatch)) << R.Text;
  EXPECT_NE(R.Text.find("'f' returned no value"), std::string::npos) << R.Text;
}
