//===- StdlibRoundTripTest.cpp - every stdlib schedule through torch CSV
//
// For each schedule in stdlib/, in every topology it accepts at P = 4,
// M = 8 (stages = P, or 2P with loop or V placement):
//   pps -> IR -> CSV -> IR  gives the same actions and topology, and
//   CSV -> IR -> .pps text -> IR  gives the same IR again;
//   after pps inserts comms (and bubbles, and FSDP actions), the
//   compute+comms CSV imports to the same actions less idles, with a
//   reduce_grad per stage, and is deadlock-free as PyTorch would run it.
// A CSV carries no costs, comm model, memory limit or FSDP options, so those
// are copied from the original before comparing; everything else (sizes,
// stage -> rank map, every action of every rank, in order) must match,
// except that an overlap pair comes back forward first (PyTorch's
// OVERLAP_F_B order; the pair's two actions are independent).
//
//===----------------------------------------------------------------------===//
#include "pps/backends/PpsPrinter.h"
#include "pps/backends/TorchCsv.h"
#include "pps/frontend/Frontend.h"
#include "pps/import/TorchCsv.h"
#include "pps/passes/AlignBubbles.h"
#include "pps/passes/Deadlock.h"
#include "pps/passes/Fsdp.h"
#include "pps/passes/InsertComms.h"
#include "pps/passes/VerifyDeps.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace pps;

namespace {

const std::string StdlibDir = PPS_SOURCE_DIR "/stdlib";

/// The names of stdlib files that define a schedule of their own name
/// (helper modules such as common.pps do not), sorted. Bidirectional
/// schedules (`directions 2`, e.g. dualpipe) are left out: PyTorch's CSV
/// cannot express them and the exporter refuses them (see
/// tests/lit/frontend/fail_directions.pps).
std::vector<std::string> stdlibSchedules() {
  std::vector<std::string> Names;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(StdlibDir, EC), End;
       It != End && !EC; It.increment(EC)) {
    llvm::StringRef Path = It->path();
    if (!Path.endswith(".pps"))
      continue;
    auto Buf = llvm::MemoryBuffer::getFile(Path);
    if (!Buf)
      continue;
    std::string Stem = llvm::sys::path::stem(Path).str();
    if ((*Buf)->getBuffer().contains("schedule " + Stem + "(") &&
        !(*Buf)->getBuffer().contains("assert D == 2"))
      Names.push_back(Stem);
  }
  std::sort(Names.begin(), Names.end());
  return Names;
}

struct Compiled {
  std::optional<ir::Schedule> S;
  std::string Errors;
};

Compiled compile(llvm::StringRef Name, llvm::StringRef Text) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  frontend::FrontendOptions Opts;
  Opts.ImportPaths.push_back(StdlibDir);
  Compiled C;
  C.S = frontend::compileBuffer(Name, Text, SM, Diags, Opts);
  llvm::raw_string_ostream OS(C.Errors);
  Diags.print(OS);
  return C;
}

/// A stdlib schedule instantiated in one topology.
struct Instance {
  std::string Text; // the pipeline that instantiates it
  ir::Schedule S;
};

/// Instantiates a stdlib schedule in every topology it accepts (P = 4,
/// M = 8; S = P, or 2P with loop or V placement); the diagnostics of the
/// first rejected one go to Errors.
std::vector<Instance> instantiate(const std::string &Name,
                                  std::string &Errors) {
  const char *Shapes[] = {"", "stages 8; ", "stages 8 placement v; "};
  std::vector<Instance> Out;
  for (const char *Shape : Shapes) {
    std::string Text = "pipeline rt { ranks 4; " + std::string(Shape) +
                       "microbatches 8; schedule " + Name + "(); }\n";
    Compiled C = compile(Name + ".pps", Text);
    if (C.S)
      Out.push_back({Text, std::move(*C.S)});
    else if (Errors.empty())
      Errors = Text + C.Errors;
  }
  return Out;
}

std::string toCsv(const ir::Schedule &S) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  backends::emitTorchCsv(S, OS);
  return OS.str();
}

/// S with every overlap pair written forward first, as the CSV writes it.
ir::Schedule forwardFirst(ir::Schedule S) {
  for (ir::RankProgram &R : S.Ranks)
    for (size_t I = 0; I + 1 < R.Actions.size(); ++I) {
      ir::Action &A = R.Actions[I], &B = R.Actions[I + 1];
      if (!A.overlapsNext())
        continue;
      if (B.Kind == ir::ActionKind::F && A.Kind != ir::ActionKind::F) {
        std::swap(A, B);
        A.Flags |= ir::ActionFlags::OverlapNext;
        B.Flags &= uint8_t(~ir::ActionFlags::OverlapNext);
      }
      ++I;
    }
  return S;
}

/// What a CSV cannot carry, copied from the original.
void copySettings(const ir::Schedule &From, ir::Schedule &To) {
  To.Cost = From.Cost;
  To.Comm = From.Comm;
  To.MemoryLimit = From.MemoryLimit;
  To.Fsdp = From.Fsdp;
}

class StdlibTorchRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(StdlibTorchRoundTrip, PpsToCsvToPps) {
  std::string Rejected;
  std::vector<Instance> All = instantiate(GetParam(), Rejected);
  ASSERT_FALSE(All.empty()) << "no topology accepted:\n" << Rejected;
  std::string Shapes;
  for (const Instance &I : All) {
    const ir::Schedule &S = I.S;
    SCOPED_TRACE(I.Text);
    ASSERT_GT(S.numActions(), 0u);
    std::string Csv = toCsv(S);
    SourceManager SM;
    DiagnosticEngine Diags(SM);
    FileId F = SM.addBuffer(GetParam() + ".csv", Csv);
    // No options: sizes and placement are inferred from the CSV alone.
    std::optional<ir::Schedule> Back = import::importTorchCsv(F, SM, Diags, {});
    std::string Errors;
    llvm::raw_string_ostream OS(Errors);
    Diags.print(OS);
    ASSERT_TRUE(Back) << Csv << OS.str();
    copySettings(S, *Back);
    std::string Why;
    EXPECT_TRUE(forwardFirst(S).equivalent(*Back, &Why)) << Why << "\n" << Csv;
    // Loop wins when loop and v give the same map (one stage per rank).
    if (S.Topo.Place != ir::Placement::Explicit &&
        !(S.Topo.Place == ir::Placement::V && S.Topo.Stages == S.Topo.Ranks)) {
      EXPECT_EQ(S.Topo.Place, Back->Topo.Place);
    }
    // Exporting the import gives the same bytes.
    EXPECT_EQ(toCsv(*Back), Csv);
    Shapes += fmt::format(
        "{}{} stages {} ({} actions)", Shapes.empty() ? "" : "; ",
        S.Topo.Stages, ir::placementName(S.Topo.Place).str(), S.numActions());
  }
  RecordProperty("topologies", Shapes);
}

TEST_P(StdlibTorchRoundTrip, CsvToPpsTextToIr) {
  std::string Rejected;
  for (const Instance &I : instantiate(GetParam(), Rejected)) {
    SCOPED_TRACE(I.Text);
    std::string Csv = toCsv(I.S);
    SourceManager SM;
    DiagnosticEngine Diags(SM);
    FileId F = SM.addBuffer(GetParam() + ".csv", Csv);
    std::optional<ir::Schedule> Imported =
        import::importTorchCsv(F, SM, Diags, {});
    ASSERT_TRUE(Imported);
    // What `ppsc import` prints must compile back to the same IR.
    std::string Pps;
    llvm::raw_string_ostream OS(Pps);
    backends::printPps(*Imported, OS);
    OS.flush();
    Compiled Again = compile(GetParam() + ".imported.pps", Pps);
    ASSERT_TRUE(Again.S) << Pps << Again.Errors;
    std::string Why;
    EXPECT_TRUE(Imported->equivalent(*Again.S, &Why)) << Why << "\n" << Pps;
  }
}

/// Lowers S as `ppsc emit` does, plus align-bubbles (idles) and, if asked,
/// FSDP control actions.
bool lower(ir::Schedule &S, bool Fsdp, std::string &Errors) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  passes::PassManager PM;
  PM.add(passes::createVerifyDepsPass());
  PM.add(passes::createInsertCommsPass());
  PM.add(passes::createAlignBubblesPass({/*Insert=*/true}));
  if (Fsdp) {
    S.Fsdp.Enabled = true;
    PM.add(passes::createFsdpPass());
  }
  passes::PassContext Ctx{Diags, {}};
  bool Ok = PM.run(S, Ctx);
  llvm::raw_string_ostream OS(Errors);
  Diags.print(OS);
  return Ok;
}

TEST_P(StdlibTorchRoundTrip, WithCommsCsvIsWhatPpsLowered) {
  std::string Rejected;
  for (Instance &I : instantiate(GetParam(), Rejected))
    for (bool Fsdp : {false, true}) {
      SCOPED_TRACE(I.Text + (Fsdp ? " with fsdp" : ""));
      ir::Schedule L = I.S;
      std::string Errors;
      ASSERT_TRUE(lower(L, Fsdp, Errors)) << Errors;
      ASSERT_TRUE(L.hasComms());

      std::string Csv;
      llvm::raw_string_ostream OS(Csv);
      backends::emitTorchCsv(L, OS, {/*WithComms=*/true});
      OS.flush();
      SourceManager SM;
      DiagnosticEngine Diags(SM);
      FileId F = SM.addBuffer(GetParam() + ".csv", Csv);
      std::optional<ir::Schedule> Back =
          import::importTorchCsv(F, SM, Diags, {});
      ASSERT_TRUE(Back) << Csv;
      EXPECT_EQ(Diags.numWarnings(), 0u) << "PyTorch would not load it";

      // Every stage has exactly one reduce_grad (PyTorch reduces and scales
      // gradients there); drop the ones the exporter added, and the idles
      // the compute+comms flavour cannot hold, then compare.
      llvm::SmallVector<int, 16> Reduces(L.Topo.Stages, 0),
          Had(L.Topo.Stages, 0);
      for (const ir::RankProgram &R : Back->Ranks)
        for (const ir::Action &A : R.Actions)
          if (A.Kind == ir::ActionKind::ReduceGrad)
            ++Reduces[A.Stage];
      for (ir::RankProgram &R : L.Ranks) {
        for (const ir::Action &A : R.Actions)
          if (A.Kind == ir::ActionKind::ReduceGrad)
            ++Had[A.Stage];
        llvm::erase_if(R.Actions, [](const ir::Action &A) {
          return A.Kind == ir::ActionKind::Idle;
        });
      }
      for (int St = 0; St < L.Topo.Stages; ++St)
        EXPECT_EQ(Reduces[St], 1) << "stage " << St;
      for (ir::RankProgram &R : Back->Ranks)
        llvm::erase_if(R.Actions, [&](const ir::Action &A) {
          return A.Kind == ir::ActionKind::ReduceGrad && !Had[A.Stage];
        });
      copySettings(L, *Back);
      std::string Why;
      EXPECT_TRUE(forwardFirst(L).equivalent(*Back, &Why)) << Why << "\n"
                                                           << Csv;

      // As written, the CSV runs without deadlock under rendezvous.
      SourceManager SM2;
      DiagnosticEngine D2(SM2);
      std::optional<ir::Schedule> Run =
          import::importTorchCsv(SM2.addBuffer("run.csv", Csv), SM2, D2, {});
      ASSERT_TRUE(Run);
      passes::PassManager PM;
      PM.add(passes::createDeadlockPass({ir::CommModel::Rendezvous}));
      passes::PassContext Ctx{D2, {}};
      bool Ran = PM.run(*Run, Ctx);
      std::string Found;
      llvm::raw_string_ostream DOS(Found);
      D2.print(DOS);
      EXPECT_TRUE(Ran && Ctx.Results.DeadlockFree) << DOS.str();
    }
}

INSTANTIATE_TEST_SUITE_P(Stdlib, StdlibTorchRoundTrip,
                         ::testing::ValuesIn(stdlibSchedules()),
                         [](const ::testing::TestParamInfo<std::string> &I) {
                           return I.param;
                         });

TEST(StdlibTorchRoundTripSetup, FindsTheStdlib) {
  // Guards against a silently empty parameter list.
  EXPECT_FALSE(stdlibSchedules().empty()) << StdlibDir;
}

} // namespace
