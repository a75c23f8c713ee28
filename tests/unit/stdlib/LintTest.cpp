//===- LintTest.cpp - every stdlib schedule lints clean over its range ----===//
//
// Each standard schedule is compiled (front end, Overrides for ranks and
// microbatches) and run through the lint pass pipeline (comm insertion,
// dependency verification, FIFO matching, deadlock proof, memory) for
// P in 2..16 (even only where required) and M in P..4P, plus the regimes
// below P each schedule supports. An independent completeness check and a
// dataflow simulation (no deadlock) run on every instance as well.
// Bad sizes must give the schedule's own assert message, not a crash.
//
//===----------------------------------------------------------------------===//
#include "StdlibHarness.h"

#include <gtest/gtest.h>

using namespace stdlibtest;

namespace {

/// Lints Sp for P in [PLo, PHi], M in [MLo(P), MHi(P)]. Stops at the first
/// failure so one bug does not print thousands of lines.
template <typename MLoFn, typename MHiFn>
void lintRange(const Spec &Sp, int PLo, int PHi, MLoFn MLo, MHiFn MHi,
               int PStep = 1) {
  for (int P = PLo; P <= PHi; P += PStep)
    for (int M = MLo(P); M <= MHi(P); ++M) {
      Figures G = run(Sp, P, M);
      ASSERT_TRUE(G.Ok) << Sp.Name << "(" << Sp.Args << ") P=" << P
                        << " M=" << M << ":\n"
                        << G.Errors;
      // With zero latency the inserted comms must not add waits: the
      // lowered schedule runs in the compute order's own makespan.
      EXPECT_DOUBLE_EQ(G.CommsMakespan, G.Makespan)
          << Sp.Name << "(" << Sp.Args << ") P=" << P << " M=" << M;
      EXPECT_EQ(G.Warnings, 0u)
          << Sp.Name << "(" << Sp.Args << ") P=" << P << " M=" << M << ":\n"
          << G.WarningText;
    }
}

auto AtP = [](int P) { return P; };
auto At1 = [](int) { return 1; };
auto Up4P = [](int P) { return 4 * P; };

TEST(StdlibLint, GPipe) { lintRange(gpipe(), 2, 16, At1, Up4P); }
TEST(StdlibLint, OneFOneB) { lintRange(oneF1B(), 2, 16, At1, Up4P); }
TEST(StdlibLint, Interleaved) {
  lintRange(interleaved(2), 2, 16, At1, Up4P);
  lintRange(interleaved(3), 2, 8, At1, Up4P);
  lintRange(interleaved(2, "g: 6"), 4, 6, At1, Up4P);
}
TEST(StdlibLint, InterleavedOverlap) {
  lintRange(interleavedOverlap(2), 2, 16, At1, Up4P);
}
TEST(StdlibLint, LoopedBfs) { lintRange(loopedBfs(2), 2, 16, At1, Up4P); }
TEST(StdlibLint, ZbH1) { lintRange(zbH1(), 2, 16, At1, Up4P); }
TEST(StdlibLint, ZbH2) { lintRange(zbH2(), 2, 16, At1, Up4P); }
TEST(StdlibLint, ZbAuto) {
  lintRange(zbAuto(), 2, 16, At1, Up4P);
  lintRange(zbAuto("mem: P"), 2, 12, At1, Up4P);
}
TEST(StdlibLint, ZbV) { lintRange(zbV(), 2, 16, At1, Up4P); }
TEST(StdlibLint, VHalf) {
  lintRange(vHalf(), 2, 16, At1, Up4P);
  Spec Raw = vHalf();
  Raw.Args = "reorder: 0";
  lintRange(Raw, 2, 8, AtP, Up4P, 2);
}
TEST(StdlibLint, VMin) {
  lintRange(vMin(), 2, 16, At1, Up4P);
  Spec Raw = vMin();
  Raw.Args = "reorder: 0";
  lintRange(Raw, 3, 9, AtP, Up4P, 3);
}
TEST(StdlibLint, DualPipeV) {
  lintRange(
      dualpipeV(), 2, 16, [](int P) { return 2 * P; }, Up4P);
}
TEST(StdlibLint, DualPipe) {
  // P even, M even in 2P..4P.
  for (int P = 2; P <= 16; P += 2)
    for (int M = 2 * P; M <= 4 * P; M += 2) {
      Figures G = run(dualpipe(), P, M);
      ASSERT_TRUE(G.Ok) << "dualpipe P=" << P << " M=" << M << ":\n"
                        << G.Errors;
      EXPECT_DOUBLE_EQ(G.CommsMakespan, G.Makespan) << P << " " << M;
      EXPECT_EQ(G.Warnings, 0u) << P << " " << M << ":\n" << G.WarningText;
    }
}

/// A bad size is the schedule's own assert, reported as a located error.
void expectAssert(const Spec &Sp, int P, int M, const std::string &Needle) {
  Figures G = run(Sp, P, M, {}, false);
  ASSERT_FALSE(G.Ok) << Sp.Name;
  EXPECT_NE(G.Errors.find(Needle), std::string::npos) << G.Errors;
  EXPECT_NE(G.Errors.find("assertion-failed"), std::string::npos) << G.Errors;
}

TEST(StdlibLint, BadSizesSayWhy) {
  expectAssert({"gpipe", "2 * P", "loop", ""}, 4, 8, "one stage per rank");
  expectAssert({"zb_h1", "2 * P", "loop", ""}, 4, 8, "one stage per rank");
  expectAssert({"zb_v", "2 * P", "loop", ""}, 4, 8, "V placement");
  expectAssert({"zb_v", "P", "loop", ""}, 4, 8, "two stages per rank");
  expectAssert({"interleaved_1f1b", "2 * P", "v", ""}, 4, 8, "loop placement");
  expectAssert(interleaved(2, "g: 2"), 4, 8, "group size");
  expectAssert(dualpipeV(), 4, 7, "at least 2 * ranks microbatches");
  expectAssert(dualpipe(), 4, 6, "at least 2 * ranks");
  expectAssert(dualpipe(), 3, 6, "even number of ranks");
  expectAssert({"dualpipe", "2 * P", "v", "", 1}, 4, 8, "directions 2");
  expectAssert({"zb_h2", "P", "loop", "mem: 0"}, 4, 8, "mem >= 1");
  expectAssert({"zb_auto", "2 * P", "loop", ""}, 4, 8, "one stage per rank");
  expectAssert(zbAuto("mem: 0"), 4, 8, "mem >= 1");
  expectAssert(zbAuto("variant: 8"), 4, 8, "-1 (the best) or 0..7");
}

TEST(StdlibLint, HarnessCatchesDeadlock) {
  // Negative control: rank 0 runs 1F1B without warmup while rank 1 runs two
  // forwards first; F1 on rank 1 waits for rank 0's F1, which waits behind
  // B0, which needs rank 1's B0: a cycle the lint passes must report.
  Figures G = runText("deadlock", R"(
    pipeline t { ranks 2; microbatches 2;
      rank 0: F0 B0 F1 B1;
      rank 1: F0 F1 B0 B1;
    })",
                      2, 2);
  EXPECT_FALSE(G.Ok);
  EXPECT_NE(G.Errors.find("[deadlock]"), std::string::npos) << G.Errors;
}

} // namespace
