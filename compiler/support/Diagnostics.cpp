//===- Diagnostics.cpp - the diagnostics engine ---------------------------===//
#include "pps/support/Diagnostics.h"
#include "pps/support/Printable.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <fmt/format.h>

#include <algorithm>

namespace pps {

namespace {
struct KindInfo {
  const char *Name;
  const char *Desc;
  Severity Sev;
};
const KindInfo KindTable[] = {
#define DIAG(Id, Sev, Name, Desc) {Name, Desc, Severity::Sev},
#include "pps/support/Diagnostics.def"
};
} // namespace

llvm::StringRef diagKindName(DiagKind K) { return KindTable[unsigned(K)].Name; }
llvm::StringRef diagKindDescription(DiagKind K) {
  return KindTable[unsigned(K)].Desc;
}
Severity diagKindSeverity(DiagKind K) { return KindTable[unsigned(K)].Sev; }

static llvm::StringRef severityName(Severity S) {
  switch (S) {
  case Severity::Note:
    return "note";
  case Severity::Warning:
    return "warning";
  case Severity::Error:
    return "error";
  }
  llvm_unreachable("every Severity has a name");
}

Diagnostic &DiagnosticEngine::report(DiagKind K, LocId Loc,
                                     std::string Message) {
  return report(K, diagKindSeverity(K), Loc, std::move(Message));
}

Diagnostic &DiagnosticEngine::report(DiagKind K, Severity S, LocId Loc,
                                     std::string Message) {
  if (S == Severity::Warning) {
    WarningPolicy P = Policies[unsigned(K)];
    if (P == WarningPolicy::Ignore) {
      Dropped = Diagnostic{K, S, Loc, std::move(Message), {}, Counter++};
      return Dropped;
    }
    if (P == WarningPolicy::Error ||
        (WarningsAsErrors && P != WarningPolicy::Warning))
      S = Severity::Error;
  }
  if (S == Severity::Error)
    ++NumErrors;
  else if (S == Severity::Warning)
    ++NumWarnings;
  if (ErrorLimit && S == Severity::Error && NumErrors > ErrorLimit) {
    Dropped = Diagnostic{K, S, Loc, std::move(Message), {}, Counter++};
    return Dropped;
  }
  Diags.push_back(Diagnostic{K, S, Loc, std::move(Message), {}, Counter++});
  return Diags.back();
}

bool DiagnosticEngine::has(DiagKind K) const {
  return std::any_of(Diags.begin(), Diags.end(),
                     [K](const Diagnostic &D) { return D.Kind == K; });
}

std::string DiagnosticEngine::formatLoc(LocId Loc) const {
  if (!SM.isValid(Loc))
    return "<unknown>";
  SourcePos P = SM.resolve(Loc);
  return fmt::format("{}:{}:{}", printable(SM.fileName(P.File)), P.Line, P.Col);
}

void DiagnosticEngine::printText(llvm::raw_ostream &OS, const Diagnostic &D) {
  auto Emit = [&](LocId Loc, Severity S, llvm::StringRef Msg,
                  llvm::StringRef Flag) {
    if (Color)
      OS.changeColor(llvm::raw_ostream::SAVEDCOLOR, true);
    OS << (SM.isValid(Loc) || ToolName.empty() ? formatLoc(Loc) : ToolName)
       << ": ";
    if (Color)
      OS.changeColor(S == Severity::Error     ? llvm::raw_ostream::RED
                     : S == Severity::Warning ? llvm::raw_ostream::MAGENTA
                                              : llvm::raw_ostream::CYAN,
                     true);
    OS << severityName(S) << ": ";
    if (Color)
      OS.changeColor(llvm::raw_ostream::SAVEDCOLOR, true);
    // Messages quote names, cells and paths from the input.
    OS << printable(Msg);
    if (!Flag.empty())
      OS << " [" << Flag << "]";
    if (Color)
      OS.resetColor();
    OS << "\n";
    if (!SM.isValid(Loc))
      return;
    llvm::StringRef Line = SM.lineText(Loc);
    SourcePos P = SM.resolve(Loc);
    OS << printable(Line, /*KeepTab=*/true) << "\n";
    // The caret goes under the column of the line as printed; tabs are kept
    // so it lines up.
    std::string Caret = caretIndent(Line, P.Col);
    if (Color)
      OS.changeColor(llvm::raw_ostream::GREEN, true);
    OS << Caret << "^";
    if (Color)
      OS.resetColor();
    OS << "\n";
  };
  Emit(D.Loc, D.Sev, D.Message, diagKindName(D.Kind));
  for (const DiagNote &N : D.Notes)
    Emit(N.Loc, Severity::Note, N.Message, "");
}

void DiagnosticEngine::printJson(llvm::raw_ostream &OS) {
  llvm::json::Array Arr;
  auto LocObj = [&](LocId Loc) -> llvm::json::Value {
    if (!SM.isValid(Loc))
      return nullptr;
    SourcePos P = SM.resolve(Loc);
    return llvm::json::Object{{"file", printable(SM.fileName(P.File))},
                              {"line", int64_t(P.Line)},
                              {"column", int64_t(P.Col)}};
  };
  for (const Diagnostic &D : Diags) {
    llvm::json::Array Notes;
    for (const DiagNote &N : D.Notes)
      Notes.push_back(llvm::json::Object{{"location", LocObj(N.Loc)},
                                         {"message", printable(N.Message)}});
    Arr.push_back(llvm::json::Object{{"kind", diagKindName(D.Kind)},
                                     {"severity", severityName(D.Sev)},
                                     {"location", LocObj(D.Loc)},
                                     {"message", printable(D.Message)},
                                     {"notes", std::move(Notes)}});
  }
  llvm::json::Object Root{{"diagnostics", std::move(Arr)},
                          {"errors", int64_t(NumErrors)},
                          {"warnings", int64_t(NumWarnings)}};
  OS << llvm::formatv("{0:2}", llvm::json::Value(std::move(Root))) << "\n";
}

void DiagnosticEngine::print(llvm::raw_ostream &OS, DiagFormat Format) {
  // Sort by location (file, line, column), then by report order.
  std::stable_sort(Diags.begin(), Diags.end(),
                   [&](const Diagnostic &A, const Diagnostic &B) {
                     SourcePos PA = SM.resolve(SM.isValid(A.Loc) ? A.Loc : 0);
                     SourcePos PB = SM.resolve(SM.isValid(B.Loc) ? B.Loc : 0);
                     if (PA.File != PB.File)
                       return PA.File < PB.File;
                     if (PA.Line != PB.Line)
                       return PA.Line < PB.Line;
                     if (PA.Col != PB.Col)
                       return PA.Col < PB.Col;
                     return A.Order < B.Order;
                   });
  if (Format == DiagFormat::Json) {
    printJson(OS);
  } else {
    for (const Diagnostic &D : Diags)
      printText(OS, D);
    if (ErrorLimit && NumErrors > ErrorLimit)
      OS << fmt::format("note: {} more errors not shown\n",
                        NumErrors - ErrorLimit);
  }
  OS.flush();
  Diags.clear();
}

} // namespace pps
