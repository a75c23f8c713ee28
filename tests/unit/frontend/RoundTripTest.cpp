//===- RoundTripTest.cpp - text -> IR -> text -> IR gives the same IR -----===//
//
// The lowered printer is the textual IR: for every example, every stdlib
// schedule at default sizes and hand-built schedules using every feature of
// the IR, printing and parsing back must give an equivalent Schedule.
//
//===----------------------------------------------------------------------===//
#include "pps/backends/PpsPrinter.h"
#include "pps/frontend/Frontend.h"
#include "pps/ir/Builder.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>

using namespace pps;

namespace {

struct Compiled {
  std::optional<ir::Schedule> S;
  std::string Diags;
};

frontend::FrontendOptions options() {
  frontend::FrontendOptions O;
  O.StdlibDir = PPS_SOURCE_DIR "/stdlib";
  return O;
}

Compiled compileText(llvm::StringRef Name, llvm::StringRef Text,
                     const frontend::FrontendOptions &Opts = options()) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  Compiled C;
  C.S = frontend::compileBuffer(Name, Text, SM, Diags, Opts);
  llvm::raw_string_ostream OS(C.Diags);
  Diags.print(OS);
  return C;
}

Compiled compilePath(llvm::StringRef Path) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  Compiled C;
  C.S = frontend::compileFile(Path, SM, Diags, options());
  llvm::raw_string_ostream OS(C.Diags);
  Diags.print(OS);
  return C;
}

std::string print(const ir::Schedule &S) {
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  backends::printPps(S, OS);
  return Text;
}

/// Prints S, parses the text back and expects an equivalent schedule; the
/// second print must also be byte-identical (a fixpoint).
void expectRoundTrip(const ir::Schedule &S, const std::string &What) {
  std::string Text = print(S);
  Compiled Back = compileText(What + ".lowered.pps", Text);
  ASSERT_TRUE(Back.S) << What << ": the printed form does not parse:\n"
                      << Back.Diags << "\n"
                      << Text.substr(0, 4000);
  std::string Why;
  EXPECT_TRUE(S.equivalent(*Back.S, &Why)) << What << ": " << Why << "\n"
                                           << Text.substr(0, 4000);
  EXPECT_EQ(Text, print(*Back.S)) << What;
}

std::vector<std::string> ppsFiles(const std::string &Dir) {
  std::vector<std::string> Out;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    if (llvm::sys::path::extension(It->path()) == ".pps")
      Out.push_back(It->path());
  std::sort(Out.begin(), Out.end());
  return Out;
}

} // namespace

TEST(RoundTrip, EveryExample) {
  auto Files = ppsFiles(PPS_SOURCE_DIR "/examples");
  ASSERT_GE(Files.size(), 3u);
  for (const std::string &F : Files) {
    Compiled C = compilePath(F);
    ASSERT_TRUE(C.S) << F << " does not compile:\n" << C.Diags;
    EXPECT_TRUE(C.Diags.empty()) << F << " is not clean:\n" << C.Diags;
    expectRoundTrip(*C.S, llvm::sys::path::stem(F).str());
  }
}

TEST(RoundTrip, EveryStdlibScheduleAtDefaultSizes) {
  auto Files = ppsFiles(PPS_SOURCE_DIR "/stdlib");
  unsigned Schedules = 0;
  for (const std::string &F : Files) {
    std::string Name = llvm::sys::path::stem(F).str();
    // common.pps and other helper modules hold no schedule of their name.
    Compiled Probe = compilePath(F);
    if (Probe.Diags.find("declares no pipeline") == std::string::npos) {
      ADD_FAILURE() << F << ": " << Probe.Diags;
      continue;
    }
    std::string Text;
    {
      auto MB = llvm::MemoryBuffer::getFile(F);
      ASSERT_TRUE(bool(MB));
      Text = (*MB)->getBuffer().str();
    }
    if (Text.find("schedule " + Name + "(") == std::string::npos)
      continue;
    ++Schedules;
    // Try the placements the standard schedules need, in order.
    // (The last is bidirectional: dualpipe.)
    const char *Layouts[][3] = {{"P", "loop", ""},
                                {"2 * P", "v", ""},
                                {"2 * P", "loop", ""},
                                {"2 * P", "v", " directions 2;"}};
    bool Done = false;
    std::string Errors;
    for (auto &L : Layouts) {
      std::string Src = fmt::format(
          "pipeline {} {{ ranks 4; stages {} placement {};{} microbatches 8; "
          "schedule {}(); }}\n",
          Name, L[0], L[1], L[2], Name);
      Compiled C = compileText(Name + ".pps", Src);
      if (!C.S) {
        Errors += C.Diags;
        continue;
      }
      EXPECT_GT(C.S->numActions(), 0u) << Name;
      expectRoundTrip(*C.S, Name);
      Done = true;
      break;
    }
    EXPECT_TRUE(Done) << Name << " compiles with no standard layout:\n"
                      << Errors;
  }
  EXPECT_GE(Schedules, 1u);
}

TEST(RoundTrip, EveryIRFeature) {
  // Explicit placement, per-stage costs and overlap times, awkward floats,
  // comm settings, FSDP, the memory model and limit, every action kind.
  ir::ScheduleBuilder B(3, 4, 3);
  B.placement({0, 1, 2, 0});
  B.name("odd name-with.dots");
  B.cost({0.1, 1.0 / 3.0, 1e-300, 2.5e8});
  B.stageCost(2, {0.7, 0.2, 0.30000000000000004, 9});
  B.comm(ir::CommModel::Batched);
  B.latency(0.05);
  B.memoryLimit(7);
  B.memoryModel({1.0 / 3.0, 0.25});
  B.overlapCost(3, 0.125);
  ir::Schedule &S = B.schedule();
  S.Cost.Overlap = 1.75;
  S.Cost.BandwidthBytesPerMs = 5e7 / 3;
  S.Cost.ActivationBytes = 67108864;
  S.Cost.GradientBytes = 12345.5;
  S.Cost.AsyncComm = false;
  S.Fsdp.Enabled = true;
  S.Fsdp.Prefetch = 3;
  B.rank(0)
      .F(0, 0)
      .F(0, 3)
      .comm(ir::ActionKind::SendF, 0, 0, 1)
      .comm(ir::ActionKind::RecvB, 0, 0, 1)
      .overlap(ir::Action::compute(ir::ActionKind::F, 1, 0),
               ir::Action::compute(ir::ActionKind::B, 0, 3))
      .unshard(3)
      .reshard(0)
      .reduceGrad(3)
      .idle()
      .idle(0.3f)
      .idle(1e-7f)
      .I(2, 0)
      .W(2, 0);
  B.rank(1)
      .F(0)
      .comm(ir::ActionKind::RecvF, 0, 1, 0)
      .comm(ir::ActionKind::SendB, 2, 1, 0);
  // A stray action (stage 1 on rank 2) must keep its stage.
  B.rank(2).F(0, 2).B(1, 1);
  expectRoundTrip(B.build(), "features");
}

TEST(RoundTrip, PerStageCostsEqualToDefaultStayPerStage) {
  ir::ScheduleBuilder B(2, 2, 1);
  B.stageCost(0, ir::StageCost{});
  B.rank(0).F(0).B(0);
  B.rank(1).F(0).B(0);
  expectRoundTrip(B.build(), "perstage");
}

TEST(RoundTrip, LongRanksWrap) {
  ir::ScheduleBuilder B(1, 1, 500);
  for (int M = 0; M < 500; ++M)
    B.rank(0).F(M);
  for (int M = 0; M < 500; ++M)
    B.rank(0).B(M);
  ir::Schedule S = B.build();
  std::string Text = print(S);
  size_t Longest = 0, Start = 0;
  for (size_t I = 0; I <= Text.size(); ++I)
    if (I == Text.size() || Text[I] == '\n') {
      Longest = std::max(Longest, I - Start);
      Start = I + 1;
    }
  EXPECT_LE(Longest, 100u);
  expectRoundTrip(S, "wrap");
}

TEST(RoundTrip, SynthRequest) {
  Compiled C =
      compileText("synth.pps", "pipeline p { ranks 2; microbatches 4; schedule "
                               "synth(memory: 3, exact: 1); }");
  ASSERT_TRUE(C.S) << C.Diags;
  ASSERT_TRUE(C.S->Synth);
  EXPECT_EQ(C.S->Synth->MemoryLimit, 3);
  ASSERT_EQ(C.S->Synth->Args.size(), 1u);
  EXPECT_EQ(C.S->Synth->Args[0].first, "exact");
  Compiled Back = compileText("synth2.pps", print(*C.S));
  ASSERT_TRUE(Back.S) << Back.Diags;
  ASSERT_TRUE(Back.S->Synth);
  EXPECT_EQ(Back.S->Synth->MemoryLimit, 3);
}
