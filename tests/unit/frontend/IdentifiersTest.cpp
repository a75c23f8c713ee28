//===- IdentifiersTest.cpp - names derived from the generated parser ------===//
//
// The reserved words come from the grammar's vocabulary, not a hand list:
// check the derivation against the grammar's behaviour (every reserved word
// fails to parse as a pipeline name, soft keywords and ordinary names parse)
// and that the printer and the CSV importer turn any name, reserved or not,
// into one that parses back.
//
//===----------------------------------------------------------------------===//
#include "pps/frontend/Identifiers.h"
#include "pps/backends/PpsPrinter.h"
#include "pps/frontend/Frontend.h"
#include "pps/import/TorchCsv.h"
#include "pps/ir/Builder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

using namespace pps;

namespace {

/// True if `pipeline NAME { ... }` compiles.
bool parsesAsPipelineName(llvm::StringRef Name) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  std::string Text =
      fmt::format("pipeline {} {{ ranks 1; microbatches 1; rank 0: F0 B0; }}\n",
                  Name.str());
  return frontend::compileBuffer("names.pps", Text, SM, Diags, {}).has_value();
}

TEST(Identifiers, ReservedWordsComeFromTheGrammar) {
  llvm::ArrayRef<std::string> Words = frontend::reservedWords();
  ASSERT_FALSE(Words.empty());
  for (llvm::StringRef W : {"import", "for", "send", "reduce_grad", "idle"})
    EXPECT_TRUE(llvm::is_contained(Words, W)) << W.str();
  // Soft keywords name things outside `pipeline` blocks: not reserved.
  for (llvm::StringRef W : {"ranks", "stage", "memory", "placement"})
    EXPECT_FALSE(llvm::is_contained(Words, W)) << W.str();
  // The derivation agrees with what the parser does with each word.
  for (const std::string &W : Words) {
    EXPECT_FALSE(frontend::isIdentifier(W)) << W;
    EXPECT_FALSE(parsesAsPipelineName(W)) << W;
  }
}

TEST(Identifiers, IsIdentifierMatchesTheParser) {
  for (llvm::StringRef W : {"p", "ranks", "stage", "F3x", "zb_v", "P", "_"}) {
    EXPECT_TRUE(frontend::isIdentifier(W)) << W.str();
    EXPECT_TRUE(parsesAsPipelineName(W)) << W.str();
  }
  for (llvm::StringRef W : {"F", "F3", "B12", "12", "a-b", "", "a b", "x@"}) {
    EXPECT_FALSE(frontend::isIdentifier(W)) << W.str();
    if (!W.empty()) {
      EXPECT_FALSE(parsesAsPipelineName(W)) << W.str();
    }
  }
}

TEST(Identifiers, PrintedAndImportedNamesParseBack) {
  std::vector<std::string> Names(frontend::reservedWords().begin(),
                                 frontend::reservedWords().end());
  for (const char *N : {"F3", "W", "2x2", "", "zb-v", "ranks", "ok"})
    Names.push_back(N);
  for (const std::string &N : Names) {
    ir::ScheduleBuilder B(1, 1, 1);
    B.name(N);
    B.rank(0).F(0).B(0);
    ir::Schedule S = B.build();
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    backends::printPps(S, OS);
    SourceManager SM;
    DiagnosticEngine Diags(SM);
    EXPECT_TRUE(frontend::compileBuffer("printed.pps", OS.str(), SM, Diags, {}))
        << "name '" << N << "' printed as:\n"
        << Text;
    std::string FromPath = import::pipelineNameFromPath(N + ".csv");
    EXPECT_TRUE(frontend::isIdentifier(FromPath)) << N << " -> " << FromPath;
  }
}

} // namespace
