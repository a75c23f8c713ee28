//===- Analysis.cpp - one document through the compiler, for the server ---===//
//
// The same work as `ppsc lint`, done per pipeline so a file with several
// pipelines (or none: a library of schedules) is checked whole, plus the
// index the editor features read (built by Index.cpp). Diagnostics located
// in another file (a stdlib schedule's assert, say) are shown in the
// document at the place that led there, with the original location as
// related information.
//
//===----------------------------------------------------------------------===//
#include "pps/lsp/Analysis.h"

#include "pps/pipeline/PassPipeline.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace pps::lsp {

using namespace frontend;

uint8_t actionClass(ir::ActionKind K) {
  return ir::isCompute(K) ? 0 : ir::isComm(K) ? 1 : 2;
}

int lspSeverity(Severity S) {
  switch (S) {
  case Severity::Error:
    return 1;
  case Severity::Warning:
    return 2;
  case Severity::Note:
    return 3;
  }
  return 1;
}

const Ref *Analysis::refAt(uint32_t Line, uint32_t Col) const {
  auto Lo =
      std::lower_bound(Refs.begin(), Refs.end(), Line,
                       [](const Ref &R, uint32_t L) { return R.Line < L; });
  const Ref *Best = nullptr;
  for (auto It = Lo; It != Refs.end() && It->Line == Line; ++It)
    if (It->Col <= Col && Col < It->Col + std::max<uint32_t>(It->Length, 1) &&
        (!Best || It->Length < Best->Length))
      Best = &*It;
  return Best;
}

const Binding *Analysis::bindingAt(LocId Loc) const {
  for (const Binding &B : Bindings)
    if (B.Loc == Loc)
      return &B;
  return nullptr;
}

/// The LSP range of a token at a 1-based line and byte column of a line.
static Range tokenRange(llvm::StringRef LineText, uint32_t Line, uint32_t Col,
                        uint32_t Length) {
  size_t Start = std::min<size_t>(Col ? Col - 1 : 0, LineText.size());
  size_t Len = Length ? Length : tokenLength(LineText, Start);
  size_t End = std::min(LineText.size(), Start + Len);
  int64_t L = Line ? Line - 1 : 0;
  return {{L, int64_t(utf16Length(LineText.take_front(Start)))},
          {L, int64_t(utf16Length(LineText.take_front(End)))}};
}

Range Analysis::rangeOf(LocId Loc) const {
  if (!SM || !SM->isValid(Loc))
    return {};
  SourcePos P = SM->resolve(Loc);
  return tokenRange(SM->lineText(Loc), P.Line, P.Col, 0);
}

Range Analysis::rangeOf(const Ref &R) const {
  return tokenRange(Lines.line(Text, int64_t(R.Line) - 1), R.Line, R.Col,
                    R.Length);
}

std::string Analysis::fileOf(LocId Loc) const {
  if (!SM || !SM->isValid(Loc))
    return Path;
  SourcePos P = SM->resolve(Loc);
  if (P.File == Unit.MainFile)
    return Path;
  llvm::SmallString<256> Abs(SM->fileName(P.File));
  llvm::sys::fs::make_absolute(Abs);
  llvm::sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  return std::string(Abs.str());
}

namespace {

double msSince(std::chrono::steady_clock::time_point T0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - T0)
      .count();
}

/// Builds the LSP diagnostics of one analysis.
class DiagnosticConverter {
public:
  explicit DiagnosticConverter(Analysis &A) : A(A) {}

  /// Converts every diagnostic of an engine. Anchor is where a diagnostic
  /// located outside the document is shown (NoLoc: the document's start).
  void add(const DiagnosticEngine &Diags, LocId Anchor) {
    for (const Diagnostic &D : Diags.diagnostics())
      add(D, Anchor);
    Dropped += Diags.numErrors() -
               std::min<unsigned>(Diags.numErrors(), countErrors(Diags));
  }

  /// Sorts by position and appends the "more not shown" note.
  void finish() {
    std::stable_sort(Out.begin(), Out.end(),
                     [](const Entry &X, const Entry &Y) {
                       return std::tie(X.R.Start.Line, X.R.Start.Character) <
                              std::tie(Y.R.Start.Line, Y.R.Start.Character);
                     });
    for (Entry &E : Out)
      A.Diagnostics.push_back(std::move(E.Json));
    if (Dropped)
      A.Diagnostics.push_back(llvm::json::Object{
          {"range", toJSON(Range{})},
          {"severity", 1},
          {"source", "ppsc"},
          {"message", fmt::format("{} more errors not shown", Dropped)}});
  }

private:
  struct Entry {
    Range R;
    llvm::json::Value Json;
  };

  static unsigned countErrors(const DiagnosticEngine &Diags) {
    unsigned N = 0;
    for (const Diagnostic &D : Diags.diagnostics())
      N += D.Sev == Severity::Error;
    return N;
  }

  bool inMain(LocId Loc) const {
    return A.SM->isValid(Loc) && A.SM->resolve(Loc).File == A.Unit.MainFile;
  }

  llvm::json::Value location(LocId Loc) const {
    std::string File = A.fileOf(Loc);
    return llvm::json::Object{{"uri", inMain(Loc) ? A.Uri : pathToUri(File)},
                              {"range", toJSON(A.rangeOf(Loc))}};
  }

  void add(const Diagnostic &D, LocId Anchor) {
    llvm::json::Array Related;
    std::string Message = D.Message;
    LocId Where = D.Loc;
    if (!inMain(Where)) {
      // Shown at the first note in the document, else at the anchor; the
      // real place comes first among the related locations.
      LocId Shown = Anchor;
      // An error in an imported module: at the import of that module.
      if (A.Unit.Main && A.SM->isValid(Where))
        for (const ast::ImportDecl &I : A.Unit.Main->Imports)
          if (I.Resolved && I.Resolved->File == A.SM->resolve(Where).File)
            Shown = I.Loc;
      for (const DiagNote &N : D.Notes)
        if (inMain(N.Loc)) {
          Shown = N.Loc;
          break;
        }
      if (A.SM->isValid(Where)) {
        SourcePos P = A.SM->resolve(Where);
        Related.push_back(llvm::json::Object{
            {"location", location(Where)},
            {"message",
             utf8(fmt::format("reported in {}:{}:{}",
                              llvm::sys::path::filename(A.fileOf(Where)).str(),
                              P.Line, P.Col))}});
      }
      Where = Shown;
    }
    for (const DiagNote &N : D.Notes) {
      if (!A.SM->isValid(N.Loc)) {
        Message += "\nnote: " + N.Message;
        continue;
      }
      Related.push_back(llvm::json::Object{{"location", location(N.Loc)},
                                           {"message", utf8(N.Message)}});
    }
    Range R = inMain(Where) ? A.rangeOf(Where) : Range{};
    llvm::json::Object Obj{{"range", toJSON(R)},
                           {"severity", lspSeverity(D.Sev)},
                           {"code", diagKindName(D.Kind)},
                           {"source", "ppsc"},
                           {"message", utf8(std::move(Message))}};
    if (!Related.empty())
      Obj["relatedInformation"] = std::move(Related);
    Out.push_back({R, std::move(Obj)});
  }

  Analysis &A;
  std::vector<Entry> Out;
  unsigned Dropped = 0;
};

} // namespace

std::shared_ptr<Analysis> analyze(std::string Uri, std::string Path,
                                  std::string Text, int64_t Version,
                                  const AnalysisOptions &Opts,
                                  const std::function<bool()> &Cancelled) {
  auto A = std::make_shared<Analysis>();
  A->Uri = std::move(Uri);
  A->Path = std::move(Path);
  A->Version = Version;
  A->Text = std::move(Text);
  A->Lines = LineIndex(A->Text);
  A->SM = std::make_unique<SourceManager>();

  FrontendOptions FO;
  FO.StdlibDir = Opts.StdlibDir;
  FO.ImportPaths = Opts.ImportPaths; // the stdlib comes after them
  FO.StepBudget = Opts.StepBudget;

  DiagnosticConverter Conv(*A);
  auto T0 = std::chrono::steady_clock::now();
  DiagnosticEngine CheckDiags(*A->SM);
  CheckDiags.setErrorLimit(Opts.MaxDiagnostics);
  A->Unit = checkBuffer(A->Path, A->Text, *A->SM, CheckDiags, FO);
  A->Times.Check = msSince(T0);
  if (Cancelled())
    return nullptr;
  // Errors in an imported module are shown at the import.
  LocId ImportAnchor = NoLoc;
  if (A->Unit.Main && !A->Unit.Main->Imports.empty())
    ImportAnchor = A->Unit.Main->Imports.front().Loc;
  Conv.add(CheckDiags, ImportAnchor);

  if (A->Unit.Main && !CheckDiags.hasErrors()) {
    for (auto &Pl : A->Unit.Main->Pipelines) {
      PipelineResult R;
      R.Decl = Pl.get();
      DiagnosticEngine PD(*A->SM);
      PD.setErrorLimit(Opts.MaxDiagnostics);
      auto T1 = std::chrono::steady_clock::now();
      R.Schedule = evaluateChecked(*Pl, PD, FO);
      A->Times.Evaluate += msSince(T1);
      if (Cancelled())
        return nullptr;
      if (R.Schedule) {
        auto T2 = std::chrono::steady_clock::now();
        passes::PassManager PM;
        pipeline::PipelineConfig Config;
        Config.Until = pipeline::Goal::Check;
        pipeline::addPasses(PM, *R.Schedule, Config);
        passes::PassContext Ctx{PD, {}};
        R.Checked = PM.run(*R.Schedule, Ctx) && !PD.hasErrors();
        R.Results = std::move(Ctx.Results);
        A->Times.Passes += msSince(T2);
      }
      // A stdlib schedule's failure is shown at the pipeline's call of it.
      LocId Anchor = Pl->Loc;
      for (const ast::PipelineItem &It : Pl->Items)
        if (It.Kind == ast::PipelineItemKind::Schedule && It.Call)
          Anchor = It.Call->Loc;
      Conv.add(PD, Anchor);
      A->Pipelines.push_back(std::move(R));
      if (Cancelled())
        return nullptr;
    }
  }
  Conv.finish();

  auto T3 = std::chrono::steady_clock::now();
  buildIndex(*A);
  A->Times.Index = msSince(T3);
  return A;
}

std::shared_ptr<const sim::SimResult> Analysis::simOf(size_t I) const {
  std::lock_guard<std::mutex> Lock(SimMu);
  return I < Sims.size() ? Sims[I] : nullptr;
}

void Analysis::setSim(size_t I, std::shared_ptr<const sim::SimResult> R) {
  std::lock_guard<std::mutex> Lock(SimMu);
  if (Sims.size() <= I)
    Sims.resize(I + 1);
  Sims[I] = std::move(R);
}

void simulate(Analysis &A, const std::function<bool()> &Cancelled) {
  auto T0 = std::chrono::steady_clock::now();
  for (size_t I = 0; I < A.Pipelines.size(); ++I) {
    const PipelineResult &R = A.Pipelines[I];
    if (!R.Checked || !R.Schedule || Cancelled())
      continue;
    sim::SimOptions O;
    O.CriticalPath = false;
    A.setSim(I, std::make_shared<const sim::SimResult>(
                    sim::simulate(*R.Schedule, O, nullptr)));
  }
  A.Times.Simulate = msSince(T0);
}

} // namespace pps::lsp
