//===- Diagnostics.h - the diagnostics engine -----------------------------===//
//
// Diagnostics are data: a kind (declared once in Diagnostics.def), a
// severity, a location, a message and notes. Every stage reports through one
// engine; the driver prints them sorted by location, as text
// ("file:line:col: error: message [kind]" + source line + caret) or JSON.
// Messages start lowercase, have no trailing period and never say "error:".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/support/SourceManager.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace pps {

enum class DiagKind : uint16_t {
#define DIAG(Id, Sev, Name, Desc) Id,
#include "pps/support/Diagnostics.def"
  NumKinds
};

enum class Severity : uint8_t { Note, Warning, Error };

/// The stable "flag" name of a kind, e.g. "unknown-name".
llvm::StringRef diagKindName(DiagKind K);
/// One-line description of a kind (for --list-diagnostics and docs).
llvm::StringRef diagKindDescription(DiagKind K);
Severity diagKindSeverity(DiagKind K);

struct DiagNote {
  LocId Loc = NoLoc;
  std::string Message;
};

struct Diagnostic {
  DiagKind Kind;
  Severity Sev;
  LocId Loc;
  std::string Message;
  llvm::SmallVector<DiagNote, 1> Notes;
  unsigned Order; // report order, the tie-break when sorting

  /// Adds a note; returns *this so calls chain.
  Diagnostic &note(LocId L, std::string Msg) {
    Notes.push_back({L, std::move(Msg)});
    return *this;
  }
};

enum class DiagFormat { Text, Json };

/// What the user asked for one warning kind, as clang's -W flags do:
/// -Werror=KIND (Error), -Wno-error=KIND (Warning, even under -Werror),
/// -Wno-KIND (Ignore: not reported, not counted).
enum class WarningPolicy : uint8_t { Default, Error, Warning, Ignore };

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager &SM) : SM(SM) {}

  /// Reports a diagnostic with the kind's default severity.
  Diagnostic &report(DiagKind K, LocId Loc, std::string Message);
  /// Reports with an explicit severity (e.g. a lint finding made an error).
  Diagnostic &report(DiagKind K, Severity S, LocId Loc, std::string Message);

  bool hasErrors() const { return NumErrors != 0; }
  /// Errors reported, including those past the limit (which are counted,
  /// not stored).
  uint64_t numErrors() const { return NumErrors; }
  unsigned numWarnings() const { return NumWarnings; }
  llvm::ArrayRef<Diagnostic> diagnostics() const { return Diags; }
  /// True if a diagnostic of this kind was reported (tests use this).
  bool has(DiagKind K) const;

  /// Errors past this many are counted but not stored (0 = no limit).
  void setErrorLimit(unsigned N) { ErrorLimit = N; }
  unsigned errorLimit() const { return ErrorLimit; }
  /// True if the next error would be counted but not stored. A stage that
  /// may report many errors asks before formatting one, and counts the
  /// rest with countUnshownErrors, so its work stays bounded by the limit.
  bool errorLimitReached() const {
    return ErrorLimit && NumErrors >= ErrorLimit;
  }
  /// Counts N errors that were found but not formatted because the limit
  /// was reached ("N more errors not shown").
  void countUnshownErrors(uint64_t N) { NumErrors += N; }
  /// Treat warnings as errors (-Werror), except kinds whose policy says
  /// otherwise.
  void setWarningsAsErrors(bool B) { WarningsAsErrors = B; }
  /// The policy for one warning kind (only kinds whose default severity is
  /// Warning are affected).
  void setWarningPolicy(DiagKind K, WarningPolicy P) {
    Policies[unsigned(K)] = P;
  }
  void setColor(bool B) { Color = B; }
  /// What a diagnostic without a location is attributed to in text output
  /// ("ppsc lint: error: ..."); by default "<unknown>".
  void setToolName(std::string Name) { ToolName = std::move(Name); }

  /// Prints everything reported so far, sorted by location, then clears.
  void print(llvm::raw_ostream &OS, DiagFormat Format = DiagFormat::Text);
  /// Formats one location as "file:line:col" (or "<unknown>").
  std::string formatLoc(LocId Loc) const;
  const SourceManager &sourceManager() const { return SM; }

private:
  void printText(llvm::raw_ostream &OS, const Diagnostic &D);
  void printJson(llvm::raw_ostream &OS);

  const SourceManager &SM;
  std::string ToolName;
  std::vector<Diagnostic> Diags;
  Diagnostic Dropped{}; // sink for reports past the limit or silenced
  std::vector<WarningPolicy> Policies = std::vector<WarningPolicy>(
      size_t(DiagKind::NumKinds), WarningPolicy::Default);
  uint64_t NumErrors = 0;
  unsigned NumWarnings = 0, ErrorLimit = 0, Counter = 0;
  bool WarningsAsErrors = false, Color = false;
};

} // namespace pps
