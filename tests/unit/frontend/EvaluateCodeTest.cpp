//===- EvaluateCodeTest.cpp - register code against the tree walker -------===//
//
// The evaluator runs schedule and fn bodies as register code
// (compiler/frontend/EvaluateCode.h); FrontendOptions::TreeWalk runs them
// with the tree-walking interpreter. Differential tests: every .pps file
// the repository has (stdlib, examples, every test input), every stdlib
// schedule at several sizes and with its arguments, every step budget on
// small programs, programs written to fail at run time in each way the
// evaluator reports, and random mutations of stdlib schedules are compiled
// both ways; the IR (with every action's location) and the diagnostics
// (text and JSON) must be the same.
//
//===----------------------------------------------------------------------===//
#include "Fingerprint.h"
#include "pps/backends/PpsPrinter.h"
#include "pps/frontend/Frontend.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <random>

using namespace pps;

namespace {

using test::fingerprint;

frontend::FrontendOptions options(bool TreeWalk, uint64_t StepBudget) {
  frontend::FrontendOptions O;
  O.StdlibDir = PPS_SOURCE_DIR "/stdlib";
  O.TreeWalk = TreeWalk;
  if (StepBudget)
    O.StepBudget = StepBudget;
  return O;
}

struct Outcome {
  std::string Text;
  bool Ok = false;
  size_t Actions = 0;
};

Outcome compileText(llvm::StringRef Name, llvm::StringRef Text, bool TreeWalk,
                    uint64_t StepBudget = 0,
                    const std::map<std::string, int64_t> &Overrides = {}) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  frontend::FrontendOptions O = options(TreeWalk, StepBudget);
  O.Overrides = Overrides;
  auto S = frontend::compileBuffer(Name, Text, SM, Diags, O);
  Outcome C;
  C.Ok = S.has_value();
  C.Actions = S ? S->numActions() : 0;
  C.Text = fingerprint(S, Diags);
  return C;
}

/// Compiles Text both ways and expects the same outcome.
Outcome expectSame(const std::string &Name, const std::string &Text,
                   uint64_t StepBudget = 0,
                   const std::map<std::string, int64_t> &Overrides = {}) {
  Outcome Code = compileText(Name, Text, false, StepBudget, Overrides);
  Outcome Walk = compileText(Name, Text, true, StepBudget, Overrides);
  EXPECT_EQ(Code.Text, Walk.Text) << Name << "\n" << Text.substr(0, 2000);
  return Code;
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

std::string readFile(const std::string &Path) {
  auto B = llvm::MemoryBuffer::getFile(Path);
  return B ? (*B)->getBuffer().str() : std::string();
}

const char *Schedules[][3] = {
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

std::string pipelineFor(const char *const N[3], int P, int M,
                        const std::string &Args = "") {
  return fmt::format("pipeline p {{ ranks {}; stages {} placement {}; "
                     "microbatches {}; schedule {}({}); }}\n",
                     P, N[1], N[2], M, N[0], Args);
}

} // namespace

TEST(EvaluateCode, EveryRepositoryFile) {
  std::vector<std::string> Files;
  for (const char *Dir : {"/stdlib", "/examples", "/tests"})
    for (std::string &F : ppsFilesUnder(std::string(PPS_SOURCE_DIR) + Dir))
      Files.push_back(std::move(F));
  ASSERT_GE(Files.size(), 100u);
  size_t Compiled = 0;
  for (const std::string &F : Files) {
    SourceManager SM1, SM2;
    DiagnosticEngine D1(SM1), D2(SM2);
    frontend::FrontendOptions O1 = options(false, 0), O2 = options(true, 0);
    auto S1 = frontend::compileFile(F, SM1, D1, O1);
    auto S2 = frontend::compileFile(F, SM2, D2, O2);
    EXPECT_EQ(fingerprint(S1, D1), fingerprint(S2, D2)) << F;
    Compiled += S1.has_value();
  }
  EXPECT_GE(Compiled, 50u);
}

TEST(EvaluateCode, EveryStdlibScheduleAtSeveralSizes) {
  for (auto &N : Schedules)
    for (auto [P, M] :
         {std::pair{1, 1}, {2, 3}, {4, 8}, {4, 5}, {8, 16}, {3, 32}, {16, 7}}) {
      Outcome C = expectSame(fmt::format("{}_{}_{}.pps", N[0], P, M),
                             pipelineFor(N, P, M));
      if (P >= 2 && P % 2 == 0 && M >= 2 * P) {
        EXPECT_TRUE(C.Ok) << N[0] << " P=" << P << " M=" << M << "\n" << C.Text;
      }
    }
}

TEST(EvaluateCode, StdlibScheduleArguments) {
  // Each schedule's parameters with values inside and outside their range
  // (an argument a schedule does not take is an error both ways too).
  for (auto &N : Schedules)
    for (const char *Args :
         {"overlap_b_f: 1", "overlap_b_f: 0", "warmup: 3", "warmup: -1",
          "warmup: 0", "chunks: 2", "n: 1", "max_inflight: 2"})
      expectSame(fmt::format("{}_args.pps", N[0]), pipelineFor(N, 4, 12, Args));
  // Command-line overrides of sizes and arguments.
  for (auto &N : Schedules)
    expectSame(fmt::format("{}_over.pps", N[0]), pipelineFor(N, 4, 8), 0,
               {{"microbatches", 12}, {"ranks", 2}});
}

/// The budget runs out at the same node, with the same error, both ways,
/// for every budget from one step to enough (the first 100, then ~150).
static void expectSameAtEveryBudget(const std::string &Name,
                                    const std::string &Src) {
  // Find the steps it needs: the smallest budget that succeeds.
  Outcome Full = compileText("full.pps", Src, false);
  ASSERT_TRUE(Full.Ok) << Full.Text;
  uint64_t Lo = 1, Hi = 1;
  while (!compileText("b.pps", Src, false, Hi).Ok)
    Hi *= 2;
  while (Lo < Hi) {
    uint64_t Mid = (Lo + Hi) / 2;
    if (compileText("b.pps", Src, false, Mid).Ok)
      Hi = Mid;
    else
      Lo = Mid + 1;
  }
  ASSERT_GT(Lo, 10u);
  // The walker needs exactly as many.
  EXPECT_TRUE(compileText("b.pps", Src, true, Lo).Ok) << Name;
  EXPECT_FALSE(compileText("b.pps", Src, true, Lo - 1).Ok) << Name;
  uint64_t Stride = std::max<uint64_t>(1, Lo / 150);
  for (uint64_t B = 1; B <= Lo + 1; B += B < 100 ? 1 : Stride)
    expectSame(fmt::format("{}_budget{}.pps", Name, B), Src, B);
  expectSame(fmt::format("{}_budget{}.pps", Name, Lo - 1), Src, Lo - 1);
}

TEST(EvaluateCode, EveryStepBudget) {
  // On schedules with loops, calls, branches, arrays and overlaps.
  for (const char *Name :
       {"interleaved_1f1b_overlap", "zb_v", "dualpipe", "zb_h2"}) {
    const char *const *N = nullptr;
    for (auto &S : Schedules)
      if (std::string(S[0]) == Name)
        N = S;
    ASSERT_TRUE(N);
    expectSameAtEveryBudget(Name, pipelineFor(N, 2, 4));
  }
}

TEST(EvaluateCode, EveryStepBudgetOfFusedOps) {
  // A computed microbatch emitted at once (EmitSum, whose stage's steps
  // are paid after the sum), an index of a sum (IndexSum), tests that only
  // jump, an if chain and a while loop's test at its end.
  expectSameAtEveryBudget("fused", R"(
schedule s() {
  let a = array(8, 0);
  for r in 0..P {
    rank r {
      let m = 0;
      let k = 0;
      while k < M {
        if k % 3 == 0 { F(m + k)@(r); }
        else if k % 3 == 1 { F(m + k)@r; }
        else { F(m + k); }
        a[k % 4 + 1] = a[k % 4 + 0] + 1;
        k = k + 1;
      }
      for k in 0..M { B(m + k); }
    }
  }
}
pipeline p { ranks 2; stages 2; microbatches 6; schedule s(); }
)");
}

TEST(EvaluateCode, IntegerParameters) {
  // A fn's body is compiled once per set of integer arguments it is called
  // with (up to a few sets; then the plain body): one call site sees all 16
  // sets of f's last four parameters (RunTimeErrors has calls that fail in
  // either body); g's parameter is an integer on entry and a boolean after
  // it. The same IR and steps at every budget.
  expectSameAtEveryBudget("intparams", R"(
fn f(k, a, b, c, d) {
  let s = k;
  if k % 2 == 1 { s = s + a; }
  if k / 2 % 2 == 1 { s = s + b; }
  if k / 4 % 2 == 1 { s = s * c; }
  if k / 8 % 2 == 1 { s = s - d; }
  return s;
}
fn pick(k, bit, v) {
  if k / bit % 2 == 1 { return v; }
  return array(1, v);
}
fn g(n) { let t = n + 1; n = t > 2; if n { return t; } return 0; }
schedule s() {
  let total = 0;
  for k in 0..16 {
    total = total + f(k, pick(k, 1, 1), pick(k, 2, 2), pick(k, 4, 3),
                      pick(k, 8, 4));
  }
  for i in 0..4 { total = total + g(i); }
  for r in 0..P { rank r { F(total % M); } }
}
pipeline p { ranks 2; stages 2; microbatches 6; schedule s(); }
)");
}

TEST(EvaluateCode, RunTimeErrors) {
  // Each error the evaluator reports while running a body, inside fns,
  // loops, branches and rank blocks.
  const char *Bodies[] = {
      "rank 0 { F(1 / 0); }",
      "rank 0 { F(1 % 0); }",
      "rank 0 { F(div(1, 0)); }",
      "rank 0 { F(mod(1, 0)); }",
      "rank 0 { F(div(-9223372036854775807 - 1, -1)); }",
      "rank 0 { F(abs(-9223372036854775807 - 1)); }",
      "rank 0 { F(9223372036854775807 + 1); }",
      "rank 0 { F(-9223372036854775807 - 2); }",
      "rank 0 { F(4611686018427387904 * 2); }",
      "rank 0 { F(-(-9223372036854775807 - 1)); }",
      "rank 0 { F(true); }",
      "rank 0 { F(0)@(true); }",
      "rank 0 { if 1 { F(0); } }",
      "rank 0 { if true && 1 { F(0); } }",
      "rank 0 { if false || 1 { F(0); } }",
      "rank 0 { if !1 { F(0); } }",
      "rank 0 { F(-true); }",
      "rank 0 { F(1 < true); }",
      "rank 0 { if true == 1 { F(0); } }",
      "let a = array(3, 0); rank 0 { F(a[3]); }",
      "let a = array(3, 0); rank 0 { F(a[-1]); }",
      "let a = array(3, 0); a[5] = 1;",
      "let a = array(3, 0); a[0] = true;",
      "let a = 3; a[0] = 1;",
      "let a = 3; rank 0 { F(a[0]); }",
      "let a = array(3, 0); rank 0 { F(a[true]); }",
      "let a = array(-1, 0);",
      "let a = array(3, true);",
      "let a = array(1000000000000, 0);",
      "let a = 3; rank 0 { F(len(a)); }",
      "let a = array(2, 0); if a == a { }",
      "let a = array(2, 0); rank 0 { F(a); }",
      "rank 0 { F(min(1, true)); }",
      "rank 0 { F(max(1, 2))@(stage_of(0, 9)); }",
      "rank 0 { F(0)@(stage_of(9, 0)); }",
      "rank 0 { F(0)@(stage_of(0, true)); }",
      "rank 0 { F(0)@(rank_of(99)); }",
      "rank 0 { F(0)@(rank_of(true)); }",
      "rank 9 { F(0); }",
      "rank true { F(0); }",
      "F(0);",
      "rank 0 { F(99); }",
      "rank 0 { F(0)@99; }",
      "rank 0 { B(0)@1; }",
      "rank 0 { overlap(F(0), B(99)); }",
      "rank 0 { overlap(F(99), B(0)); }",
      "rank 0 { overlap(F(0)@0, B(0)@0); }",
      "for i in 0..3 step 0 { }",
      "for i in 0..3 step true { }",
      "for i in true..3 { }",
      "for i in 9223372036854775800..9223372036854775807 step 5 { }",
      "for i in 3..0 step -1 { rank i { F(0); } }",
      "assert false, \"no\";",
      "assert 1 == 2;",
      "assert 1;",
      "rank 0 { F(none()); }",
      "rank 0 { F(deep(0)); }",
      "rank 0 { F(forever()); }",
      "rank 0 { F(twice(true)); }",
      "rank 0 { emit_all(); }",
      "rank 0 { F(dflt()); }",
      "rank 0 { F(dflt(x: 1)); }",
      "rank 0 { F(badflt()); }",
      "rank 0 { rank 1 { F(0)@1; } F(0)@0; }",
      // One program over two lines (not a missing comma).
      // NOLINTNEXTLINE(bugprone-suspicious-missing-comma)
      "rank 0 { for i in 0..M { if i % 2 == 0 { continue; } if i > 2 { break; "
      "} F(i); } }",
      "rank 0 { let k = 0; while k < 100 { k = k + 1; } }",
      "rank 0 { send F(0)@0 -> 1; F(1)@(0 - 1); }",
      "rank 0 { idle(2); }",
      "let m = 9223372036854775807; for e in 0..2 { rank 0 { F(m + e)@0; } }",
      "let m = 1; for e in 0..2 { rank 0 { F(m + e)@0; } }",
      "let m = 0; for e in 0..2 { rank 0 { F(m + e)@(1 / e); } }",
      // The body for integer arguments, then the plain one, at one call.
      "let v = 1; for i in 0..2 { rank 0 { F(addp(v, 0))@0; } v = true; }",
      "rank 0 { F(addp(9223372036854775807, 1))@0; }",
      "rank 0 { F(addp(0, 1) + addp(1, -9223372036854775807 - 1))@0; }",
  };
  const char *Fns = R"(
fn none() { }
fn deep(n) { return deep(n + 1); }
fn forever() { let k = 0; for i in 0..9223372036854775807 { k = k + 1; } return k; }
fn twice(x) { return x * 2; }
fn dflt(x = P * 2) { return x - P * 2; }
fn badflt(x = 1 / 0) { return x; }
fn addp(a, b) { return a + b; }
schedule emit_all() { for r in 0..P { rank r { F(0)@(stage_of(r, 0)); } } }
)";
  size_t Failed = 0;
  for (const char *Body : Bodies) {
    std::string Src =
        fmt::format("{}schedule s() {{ {} }}\npipeline p {{ ranks 2; stages "
                    "4 placement loop; microbatches 2; schedule s(); }}\n",
                    Fns, Body);
    Failed += !expectSame("err.pps", Src, 5'000'000).Ok;
  }
  // Nearly all fail (the few others check control flow and defaults).
  EXPECT_GE(Failed, std::size(Bodies) - 8);
}

TEST(EvaluateCode, RandomMutationsOfStdlibSchedules) {
  // Operators, numbers and names swapped in the stdlib's programmable
  // schedules: whatever the edit makes of the program (wrong IR, run-time
  // errors, budget exhaustion), both ways must agree.
  const char *Files[] = {"interleaved_1f1b", "zb_v",  "dualpipe_v",
                         "v_half",           "zb_h2", "one_f_one_b"};
  const char *Swaps[] = {"+",  "-",  "*",  "/",  "%",    "<",    "<=", ">",
                         ">=", "==", "!=", "&&", "||",   "0",    "1",  "2",
                         "P",  "M",  "S",  "V",  "true", "false"};
  std::mt19937 Rng(20250118);
  size_t Ran = 0, Differed = 0;
  for (const char *Name : Files) {
    std::string Lib =
        readFile(std::string(PPS_SOURCE_DIR) + "/stdlib/" + Name + ".pps");
    ASSERT_FALSE(Lib.empty()) << Name;
    const char *const *N = nullptr;
    for (auto &S : Schedules)
      if (std::string(S[0]) == Name)
        N = S;
    ASSERT_TRUE(N);
    std::string Pipe = pipelineFor(N, 4, 8);
    std::string Unmutated = compileText("m.pps", Lib + Pipe, false).Text;
    // Token starts that a swap may replace.
    std::vector<std::pair<size_t, size_t>> Spots;
    for (size_t I = 0; I < Lib.size();) {
      bool Found = false;
      for (const char *W : Swaps) {
        size_t L = std::char_traits<char>::length(W);
        bool Word = std::isalnum(static_cast<unsigned char>(W[0]));
        if (Lib.compare(I, L, W) == 0 &&
            (!Word || ((I == 0 || !std::isalnum(static_cast<unsigned char>(
                                      Lib[I - 1]))) &&
                       !std::isalnum(static_cast<unsigned char>(
                           Lib[std::min(I + L, Lib.size() - 1)]))))) {
          Spots.push_back({I, L});
          I += L;
          Found = true;
          break;
        }
      }
      if (!Found)
        ++I;
    }
    ASSERT_GT(Spots.size(), 20u) << Name;
    for (int K = 0; K < 80; ++K) {
      std::string T = Lib;
      auto [At, Len] = Spots[Rng() % Spots.size()];
      T.replace(At, Len, Swaps[Rng() % std::size(Swaps)]);
      std::string Src = T + Pipe;
      Outcome Code = compileText("m.pps", Src, false, 2'000'000);
      Outcome Walk = compileText("m.pps", Src, true, 2'000'000);
      ASSERT_EQ(Code.Text, Walk.Text) << Name << " mutation " << K << ":\n"
                                      << T;
      ++Ran;
      Differed += Code.Text != Unmutated;
    }
  }
  // Most mutations changed the outcome (else this tests little).
  EXPECT_GE(Differed, Ran / 3);
}
