//===- Diagnostics.cpp - pps._pps: diagnostics as data --------------------===//
//
// What a DiagnosticEngine holds, as data for Python: one FindingData per
// diagnostic in the order ppsc prints them, each with the text ppsc prints
// for it, and the whole report's text, so pps.Finding and pps.CompileError
// say exactly what ppsc says.
//
//===----------------------------------------------------------------------===//
#include "Module.h"

#include <algorithm>

namespace pps::python {

const char *severityName(Severity S) {
  switch (S) {
  case Severity::Note:
    return "note";
  case Severity::Warning:
    return "warning";
  case Severity::Error:
    return "error";
  }
  return "error";
}

static std::tuple<std::string, uint32_t, uint32_t>
where(const SourceManager &SM, LocId Loc) {
  if (!SM.isValid(Loc))
    return {"", 0, 0};
  SourcePos P = SM.resolve(Loc);
  return {SM.fileName(P.File).str(), P.Line, P.Col};
}

/// The text ppsc prints for one diagnostic: the engine prints it.
static std::string diagnosticText(const SourceManager &SM,
                                  const Diagnostic &D) {
  DiagnosticEngine One(SM);
  Diagnostic &Copy = One.report(D.Kind, D.Sev, D.Loc, D.Message);
  for (const DiagNote &N : D.Notes)
    Copy.note(N.Loc, N.Message);
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  One.print(OS, DiagFormat::Text);
  OS.flush();
  return Out;
}

/// Collects (and clears) what Diags holds: the data in the engine's print
/// order (by file, line, column, then report order) and the text the
/// engine itself prints.
ReportData collect(DiagnosticEngine &Diags) {
  const SourceManager &SM = Diags.sourceManager();
  ReportData R;
  R.Errors = Diags.numErrors();
  R.Warnings = Diags.numWarnings();
  std::vector<const Diagnostic *> Sorted;
  for (const Diagnostic &D : Diags.diagnostics())
    Sorted.push_back(&D);
  auto Key = [&](const Diagnostic *D) {
    SourcePos P = SM.resolve(SM.isValid(D->Loc) ? D->Loc : 0);
    return std::make_tuple(P.File, P.Line, P.Col, D->Order);
  };
  std::stable_sort(Sorted.begin(), Sorted.end(),
                   [&](const Diagnostic *A, const Diagnostic *B) {
                     return Key(A) < Key(B);
                   });
  for (const Diagnostic *D : Sorted) {
    FindingData F;
    F.Kind = diagKindName(D->Kind).str();
    F.Severity = severityName(D->Sev);
    F.Message = D->Message;
    std::tie(F.File, F.Line, F.Col) = where(SM, D->Loc);
    for (const DiagNote &N : D->Notes) {
      auto [File, Line, Col] = where(SM, N.Loc);
      F.Notes.emplace_back(N.Message, File, Line, Col);
    }
    F.Text = diagnosticText(SM, *D);
    R.Findings.push_back(std::move(F));
  }
  llvm::raw_string_ostream OS(R.Text);
  Diags.print(OS, DiagFormat::Text);
  OS.flush();
  return R;
}

[[noreturn]] void fail(DiagnosticEngine &Diags) {
  throw CompileFailure{collect(Diags)};
}

static py::tuple findingToPython(const FindingData &F) {
  py::list Notes;
  for (const NoteData &N : F.Notes)
    Notes.append(py::make_tuple(std::get<0>(N), std::get<1>(N), std::get<2>(N),
                                std::get<3>(N)));
  return py::make_tuple(F.Kind, F.Severity, F.Message, F.File, F.Line, F.Col,
                        Notes, F.Text);
}

/// (text, [finding tuples], errors, warnings): pps._types builds Findings.
py::tuple reportToPython(const ReportData &R) {
  py::list L;
  for (const FindingData &F : R.Findings)
    L.append(findingToPython(F));
  return py::make_tuple(R.Text, L, R.Errors, R.Warnings);
}

} // namespace pps::python
