//===- StdlibRoundTripTest.cpp - every stdlib schedule through torch CSV ---===//
//
// For each schedule in stdlib/ (at P = 4, M = 8; stages = P, or 2P with loop
// or V placement, whichever the schedule accepts):
//   pps -> IR -> CSV -> IR  gives the same actions and topology, and
//   CSV -> IR -> .pps text -> IR  gives the same IR again.
// A CSV carries no costs, comm model, memory limit or FSDP options, so those
// are copied from the original before comparing; everything else (sizes,
// stage -> rank map, every action of every rank, in order) must match.
//
//===----------------------------------------------------------------------===//
#include "pps/backends/PpsPrinter.h"
#include "pps/backends/TorchCsv.h"
#include "pps/frontend/Frontend.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace pps;

namespace {

const std::string StdlibDir = PPS_SOURCE_DIR "/stdlib";

/// The names of stdlib files that define a schedule of their own name
/// (helper modules such as common.pps do not), sorted.
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
    if ((*Buf)->getBuffer().contains("schedule " + Stem + "("))
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

/// Instantiates a stdlib schedule in the first topology it accepts.
Compiled instantiate(const std::string &Name, std::string &Text) {
  const char *Shapes[] = {"", "stages 8; ", "stages 8 placement v; "};
  Compiled First;
  for (const char *Shape : Shapes) {
    Text = "pipeline rt { ranks 4; " + std::string(Shape) +
           "microbatches 8; schedule " + Name + "(); }\n";
    Compiled C = compile(Name + ".pps", Text);
    if (C.S)
      return C;
    if (First.Errors.empty())
      First = std::move(C);
  }
  return First;
}

std::string toCsv(const ir::Schedule &S) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  backends::emitTorchCsv(S, OS);
  return OS.str();
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
  std::string Text;
  Compiled C = instantiate(GetParam(), Text);
  ASSERT_TRUE(C.S) << "no topology accepted " << GetParam() << ":\n"
                   << C.Errors;
  const ir::Schedule &S = *C.S;
  ASSERT_GT(S.numActions(), 0u) << Text;

  std::string Csv = toCsv(S);
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  FileId F = SM.addBuffer(GetParam() + ".csv", Csv);
  // No options: sizes and placement are inferred from the CSV alone.
  std::optional<ir::Schedule> Back =
      backends::importTorchCsv(F, SM, Diags, {});
  std::string Errors;
  llvm::raw_string_ostream OS(Errors);
  Diags.print(OS);
  ASSERT_TRUE(Back) << Text << Csv << OS.str();
  copySettings(S, *Back);
  std::string Why;
  EXPECT_TRUE(S.equivalent(*Back, &Why)) << Text << Why << "\n" << Csv;
  if (S.Topo.Place != ir::Placement::Explicit &&
      !(S.Topo.Place == ir::Placement::V && S.Topo.Stages == S.Topo.Ranks))
    EXPECT_EQ(S.Topo.Place, Back->Topo.Place);
  // Exporting the import gives the same bytes.
  EXPECT_EQ(toCsv(*Back), Csv);
}

TEST_P(StdlibTorchRoundTrip, CsvToPpsTextToIr) {
  std::string Text;
  Compiled C = instantiate(GetParam(), Text);
  ASSERT_TRUE(C.S) << C.Errors;
  std::string Csv = toCsv(*C.S);
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  FileId F = SM.addBuffer(GetParam() + ".csv", Csv);
  std::optional<ir::Schedule> Imported =
      backends::importTorchCsv(F, SM, Diags, {});
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
