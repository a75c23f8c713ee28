//===- DiagnosticKindsTest.cpp - every diagnostic kind has a lit test -----===//
//
// Every kind declared in Diagnostics.def must be produced by at least one
// lit test: some positive FileCheck line (CHECK, or a prefix the file's RUN
// lines name; not -NOT) in tests/lit shows it as "[kind]" in text output or
// as "kind": "kind" in JSON output of a ppsc run. A kind nothing produces
// is dead, and a kind no test produces can silently change.
//
//===----------------------------------------------------------------------===//
#include "pps/support/Diagnostics.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

using namespace pps;

namespace {

/// Kinds that no input can produce, and why.
const char *const Untriggerable[] = {
    // Reported when ppsc synth's result fails its own lint or simulation
    // cross-check: only a bug in the compiler produces it.
    "internal-error",
};

/// The FileCheck prefixes a test file's RUN lines use.
llvm::StringSet<> checkPrefixes(llvm::StringRef Text) {
  llvm::StringSet<> Prefixes;
  Prefixes.insert("CHECK");
  static const std::regex Option(
      R"(--check-prefix(?:es)?[= ]([A-Za-z0-9_,-]+))");
  std::string S = Text.str();
  for (std::sregex_iterator It(S.begin(), S.end(), Option), End; It != End;
       ++It) {
    std::string List = (*It)[1].str();
    llvm::SmallVector<llvm::StringRef, 2> Names;
    llvm::StringRef(List).split(Names, ',');
    for (llvm::StringRef N : Names)
      Prefixes.insert(N);
  }
  return Prefixes;
}

/// Every kind shown on a positive check line of one test file.
void collectKinds(llvm::StringRef Text, llvm::StringSet<> &Seen) {
  if (!Text.contains("%ppsc"))
    return;
  llvm::StringSet<> Prefixes = checkPrefixes(Text);
  static const std::regex CheckLine(
      R"(^\s*(?://|;|#)\s*([A-Za-z0-9_]+)(-NEXT|-SAME|-DAG|-LABEL|-COUNT-[0-9]+)?:(.*)$)");
  static const std::regex TextKind(R"(\[([a-z][a-z-]*)\])");
  static const std::regex JsonKind(R"re("kind": "([a-z][a-z-]*)")re");
  llvm::SmallVector<llvm::StringRef, 64> Lines;
  Text.split(Lines, '\n');
  for (llvm::StringRef Line : Lines) {
    std::string L = Line.str();
    std::smatch M;
    if (!std::regex_match(L, M, CheckLine) || !Prefixes.count(M[1].str()))
      continue;
    std::string Pattern = M[3].str();
    for (const std::regex *R : {&TextKind, &JsonKind})
      for (std::sregex_iterator It(Pattern.begin(), Pattern.end(), *R), End;
           It != End; ++It)
        Seen.insert((*It)[1].str());
  }
}

TEST(DiagnosticKinds, EveryKindHasALitTestThatProducesIt) {
  std::string Root = PPS_SOURCE_DIR "/tests/lit";
  llvm::StringSet<> Seen;
  unsigned Files = 0;
  std::error_code EC;
  for (llvm::sys::fs::recursive_directory_iterator It(Root, EC), End;
       It != End && !EC; It.increment(EC)) {
    llvm::StringRef Path = It->path();
    llvm::StringRef Ext = llvm::sys::path::extension(Path);
    if (Path.contains("/Inputs/") || (Ext != ".pps" && Ext != ".test"))
      continue;
    auto Buf = llvm::MemoryBuffer::getFile(Path);
    ASSERT_TRUE(bool(Buf)) << Path.str();
    collectKinds((*Buf)->getBuffer(), Seen);
    ++Files;
  }
  ASSERT_FALSE(EC) << EC.message();
  ASSERT_GT(Files, 50u) << "tests/lit not found under " << Root;

  llvm::StringSet<> Exempt;
  for (const char *K : Untriggerable)
    Exempt.insert(K);
  std::string Missing;
  for (unsigned K = 0; K < unsigned(DiagKind::NumKinds); ++K) {
    llvm::StringRef Name = diagKindName(DiagKind(K));
    if (Exempt.count(Name)) {
      EXPECT_FALSE(Seen.count(Name))
          << "'" << Name.str() << "' has a lit test now: drop its exemption";
      continue;
    }
    if (!Seen.count(Name))
      Missing += " " + Name.str();
  }
  EXPECT_TRUE(Missing.empty())
      << "diagnostic kinds no lit test produces (add a fail_<kind> test "
         "whose CHECK line shows [kind]):"
      << Missing;
}

TEST(DiagnosticKinds, NamesAreUniqueAndWellFormed) {
  llvm::StringSet<> Names;
  for (unsigned K = 0; K < unsigned(DiagKind::NumKinds); ++K) {
    llvm::StringRef Name = diagKindName(DiagKind(K));
    EXPECT_TRUE(Names.insert(Name).second) << Name.str();
    EXPECT_FALSE(Name.empty());
    EXPECT_TRUE(llvm::all_of(Name, [](char C) {
      return (C >= 'a' && C <= 'z') || C == '-';
    })) << Name.str();
    EXPECT_FALSE(diagKindDescription(DiagKind(K)).empty()) << Name.str();
  }
}

} // namespace
