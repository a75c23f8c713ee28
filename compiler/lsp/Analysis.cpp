//===- Analysis.cpp - one document through the compiler, for the server ---===//
//
// The same work as `ppsc lint`, done per pipeline so a file with several
// pipelines (or none: a library of schedules) is checked whole, plus the
// index the editor features read. Diagnostics located in another file (a
// stdlib schedule's assert, say) are shown in the document at the place
// that led there, with the original location as related information.
//
//===----------------------------------------------------------------------===//
#include "pps/lsp/Analysis.h"

#include "pps/frontend/LiteralList.h"
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

/// JSON strings must be UTF-8; file names and echoed text may not be.
std::string utf8(std::string S) {
  return llvm::json::isUTF8(S) ? S : llvm::json::fixUTF8(S);
}

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

/// Indexes the main module: every name, call, binder, import and action.
class Indexer {
public:
  Indexer(Analysis &A) : A(A), SM(*A.SM), Main(A.Unit.MainFile) {}

  void run(const ast::Module &M) {
    collectDecls(M);
    for (const ast::ImportDecl &I : M.Imports)
      import(I);
    for (auto &F : M.Fns) {
      Owner = declIndex(F.get());
      Ref &R = ref(F->Loc, RefKind::Function, F->Name, F->Name.size());
      R.IsDecl = true;
      R.Fn = F.get();
      for (const ast::Param &P : F->Params) {
        if (P.Default)
          expr(*P.Default);
        bind(P.Var, Binding::Param);
      }
      block(F->Body);
    }
    for (auto &Pl : M.Pipelines) {
      Owner = declIndex(Pl.get());
      Ref &R = ref(Pl->Loc, RefKind::Pipeline, Pl->Name, Pl->Name.size());
      R.IsDecl = true;
      R.Pl = Pl.get();
      for (const ast::PipelineItem &It : Pl->Items)
        item(It);
    }
    std::stable_sort(A.Refs.begin(), A.Refs.end(),
                     [](const Ref &X, const Ref &Y) {
                       return std::tie(X.Line, X.Col) < std::tie(Y.Line, Y.Col);
                     });
  }

private:
  bool pos(LocId Loc, uint32_t &Line, uint32_t &Col) const {
    if (!SM.isValid(Loc))
      return false;
    SourcePos P = SM.resolve(Loc);
    if (P.File != Main)
      return false;
    Line = P.Line;
    Col = P.Col;
    return true;
  }

  Ref &ref(LocId Loc, RefKind K, llvm::StringRef Name, size_t Length) {
    Ref R;
    R.Kind = K;
    R.Name = Name.str();
    R.Loc = Loc;
    if (pos(Loc, R.Line, R.Col) && Length == 0) {
      llvm::StringRef LineText = A.Lines.line(A.Text, int64_t(R.Line) - 1);
      Length = tokenLength(LineText, R.Col - 1);
    }
    R.Length = uint32_t(Length);
    A.Refs.push_back(std::move(R));
    return A.Refs.back();
  }

  void collectDecls(const ast::Module &M) {
    llvm::StringRef Text = A.Text;
    auto Add = [&](DeclSpan::Kind K, const std::string &Name, LocId Loc,
                   const void *Key) {
      uint32_t Line, Col;
      if (!pos(Loc, Line, Col))
        return;
      DeclSpan D;
      D.K = K;
      D.Name = Name;
      D.NameLine = Line;
      D.NameCol = Col;
      llvm::StringRef L = A.Lines.line(Text, int64_t(Line) - 1);
      size_t NameOff = size_t(L.data() - Text.data()) + (Col - 1);
      D.Detail = declarationSignature(Text, NameOff, &D.Begin);
      D.End = blockEnd(Text, NameOff);
      Keys.push_back(Key);
      A.Decls.push_back(std::move(D));
    };
    for (auto &F : M.Fns)
      Add(F->IsSchedule ? DeclSpan::Schedule : DeclSpan::Fn, F->Name, F->Loc,
          F.get());
    for (auto &Pl : M.Pipelines) {
      Add(DeclSpan::Pipeline, Pl->Name, Pl->Loc, Pl.get());
      for (const ast::PipelineItem &It : Pl->Items)
        if (It.Kind == ast::PipelineItemKind::Schedule && It.Call &&
            !A.Decls.empty() && Keys.back() == Pl.get())
          A.Decls.back().ScheduleCall = It.Call->Callee;
    }
    // Source order; Keys follows the same permutation.
    std::vector<size_t> Order(A.Decls.size());
    for (size_t I = 0; I < Order.size(); ++I)
      Order[I] = I;
    std::stable_sort(Order.begin(), Order.end(), [&](size_t X, size_t Y) {
      return A.Decls[X].Begin < A.Decls[Y].Begin;
    });
    std::vector<DeclSpan> Sorted;
    std::vector<const void *> SortedKeys;
    for (size_t I : Order) {
      Sorted.push_back(std::move(A.Decls[I]));
      SortedKeys.push_back(Keys[I]);
    }
    A.Decls = std::move(Sorted);
    Keys = std::move(SortedKeys);
  }

  unsigned declIndex(const void *Key) const {
    for (size_t I = 0; I < Keys.size(); ++I)
      if (Keys[I] == Key)
        return unsigned(I);
    return 0;
  }

  void import(const ast::ImportDecl &I) {
    uint32_t Line, Col;
    if (!pos(I.Loc, Line, Col))
      return;
    llvm::StringRef L = A.Lines.line(A.Text, int64_t(Line) - 1);
    size_t Start = Col - 1, End = Start;
    if (I.IsString) {
      End = Start + tokenLength(L, Start);
    } else {
      while (End < L.size() && (llvm::isAlnum(L[End]) || L[End] == '_' ||
                                L[End] == '.' || L[End] == ' '))
        ++End;
      while (End > Start && L[End - 1] == ' ')
        --End;
    }
    Ref &R = ref(I.Loc, RefKind::Import, I.Path, End - Start);
    R.Mod = I.Resolved;
  }

  void bind(const ast::Binder &B, Binding::Kind K) {
    Binding Bd;
    Bd.K = K;
    Bd.Name = B.Name;
    Bd.Loc = B.Loc;
    Bd.Owner = Owner;
    if (!pos(B.Loc, Bd.Line, Bd.Col))
      return;
    A.Bindings.push_back(Bd);
    Ref &R = ref(B.Loc, RefKind::Local, B.Name, B.Name.size());
    R.IsDecl = true;
    R.Decl = B.Loc;
  }

  void name(const ast::NameExpr &N) {
    if (N.Res == ast::NameRes::Builtin) {
      ref(N.Loc, RefKind::Builtin, N.Name, N.Name.size()).BuiltinId =
          N.BuiltinId;
      return;
    }
    ref(N.Loc, RefKind::Local, N.Name, N.Name.size()).Decl = N.DeclLoc;
  }

  void call(const ast::CallExpr &C) {
    if (C.BuiltinId != ast::Builtin::None) {
      ref(C.Loc, RefKind::Builtin, C.Callee, C.Callee.size()).BuiltinId =
          C.BuiltinId;
    } else {
      ref(C.Loc, RefKind::Function, C.Callee, C.Callee.size()).Fn = C.Target;
    }
    for (const ast::Arg &Ar : C.Args)
      if (Ar.Value)
        expr(*Ar.Value);
  }

  void expr(const ast::Expr &E) {
    switch (E.Kind) {
    case ast::ExprKind::Int:
    case ast::ExprKind::Bool:
      return;
    case ast::ExprKind::Name:
      return name(static_cast<const ast::NameExpr &>(E));
    case ast::ExprKind::Call:
      return call(static_cast<const ast::CallExpr &>(E));
    case ast::ExprKind::Index: {
      auto &I = static_cast<const ast::IndexExpr &>(E);
      if (I.Base)
        name(*I.Base);
      if (I.Index)
        expr(*I.Index);
      return;
    }
    case ast::ExprKind::Unary:
      if (auto &Op = static_cast<const ast::UnaryExpr &>(E).Operand)
        expr(*Op);
      return;
    case ast::ExprKind::Binary: {
      auto &B = static_cast<const ast::BinaryExpr &>(E);
      if (B.LHS)
        expr(*B.LHS);
      if (B.RHS)
        expr(*B.RHS);
      return;
    }
    }
  }

  void computeRef(const ast::ComputeRef &R) {
    if (R.Microbatch)
      expr(*R.Microbatch);
    if (R.Stage)
      expr(*R.Stage);
  }

  void actions(const std::vector<ast::ActionNode> &As) {
    for (const ast::ActionNode &N : As) {
      uint8_t Class = N.Kind == ast::ActionNodeKind::Compute ||
                              N.Kind == ast::ActionNodeKind::Overlap
                          ? 0
                      : N.Kind == ast::ActionNodeKind::Send ||
                              N.Kind == ast::ActionNodeKind::Recv
                          ? 1
                          : 2;
      ref(N.Loc, RefKind::Action, "", 0).ActionClass = Class;
      if (N.Kind == ast::ActionNodeKind::Overlap) {
        ref(N.First.Loc, RefKind::Action, "", 0);
        ref(N.Second.Loc, RefKind::Action, "", 0);
      }
      computeRef(N.First);
      if (N.Kind == ast::ActionNodeKind::Overlap)
        computeRef(N.Second);
      if (N.Operand)
        expr(*N.Operand);
    }
  }

  /// A literal rank list (pps/frontend/LiteralList.h): the same references
  /// as the ActionNodes of its text.
  void literal(const std::vector<ast::LiteralAction> &As) {
    for (const ast::LiteralAction &N : As) {
      if (N.Flags & ast::LiteralAction::OverlapSecond) {
        ref(N.Loc, RefKind::Action, "", 0);
        continue;
      }
      uint8_t Class = N.Kind == ast::ActionNodeKind::Compute ||
                              N.Kind == ast::ActionNodeKind::Overlap
                          ? 0
                      : N.Kind == ast::ActionNodeKind::Send ||
                              N.Kind == ast::ActionNodeKind::Recv
                          ? 1
                          : 2;
      ref(N.Loc, RefKind::Action, "", 0).ActionClass = Class;
      if (N.Kind == ast::ActionNodeKind::Overlap)
        ref(literalParts(SM, N).Compute, RefKind::Action, "", 0);
    }
  }

  void block(const ast::Block &B) {
    for (const ast::StmtPtr &S : B)
      if (S)
        stmt(*S);
  }

  void stmt(const ast::Stmt &S) {
    using K = ast::StmtKind;
    switch (S.Kind) {
    case K::Let: {
      auto &L = static_cast<const ast::LetStmt &>(S);
      if (L.Init)
        expr(*L.Init);
      bind(L.Var, Binding::Let);
      return;
    }
    case K::Assign:
    case K::IndexAssign: {
      auto &As = static_cast<const ast::AssignStmt &>(S);
      if (As.Target)
        name(*As.Target);
      if (As.Index)
        expr(*As.Index);
      if (As.Value)
        expr(*As.Value);
      return;
    }
    case K::For: {
      auto &F = static_cast<const ast::ForStmt &>(S);
      for (const ast::ExprPtr *E : {&F.From, &F.To, &F.Step})
        if (*E)
          expr(**E);
      bind(F.Var, Binding::For);
      block(F.Body);
      return;
    }
    case K::While: {
      auto &W = static_cast<const ast::WhileStmt &>(S);
      if (W.Cond)
        expr(*W.Cond);
      block(W.Body);
      return;
    }
    case K::If: {
      auto &I = static_cast<const ast::IfStmt &>(S);
      if (I.Cond)
        expr(*I.Cond);
      block(I.Then);
      block(I.Else);
      return;
    }
    case K::RankBlock:
    case K::RankList: {
      auto &R = static_cast<const ast::RankStmt &>(S);
      if (R.Rank)
        expr(*R.Rank);
      block(R.Body);
      actions(R.Actions);
      literal(R.Literal);
      return;
    }
    case K::Return:
      if (auto &V = static_cast<const ast::ReturnStmt &>(S).Value)
        expr(*V);
      return;
    case K::Assert:
      if (auto &C = static_cast<const ast::AssertStmt &>(S).Cond)
        expr(*C);
      return;
    case K::Call:
      if (auto &C = static_cast<const ast::CallStmt &>(S).Call)
        call(*C);
      return;
    case K::Actions:
      actions(static_cast<const ast::ActionStmt &>(S).Actions);
      return;
    case K::Break:
    case K::Continue:
    case K::Empty:
      return;
    }
  }

  void item(const ast::PipelineItem &It) {
    if (It.Value)
      expr(*It.Value);
    for (auto &[From, To] : It.PlacementMap) {
      if (From)
        expr(*From);
      if (To)
        expr(*To);
    }
    for (const ast::CostEntry &C : It.Costs)
      if (C.Stage)
        expr(*C.Stage);
    if (It.Call)
      call(*It.Call);
    if (It.Kind == ast::PipelineItemKind::Let)
      bind(It.Var, Binding::PipelineLet);
    if (It.Rank)
      stmt(*It.Rank);
  }

  Analysis &A;
  const SourceManager &SM;
  FileId Main;
  unsigned Owner = 0;
  std::vector<const void *> Keys; // parallel to A.Decls
};

/// Records where each main-file location's IR actions are.
void indexActions(Analysis &A) {
  for (uint32_t P = 0; P < A.Pipelines.size(); ++P) {
    const PipelineResult &R = A.Pipelines[P];
    if (!R.Schedule)
      continue;
    for (uint32_t Rank = 0; Rank < R.Schedule->Ranks.size(); ++Rank) {
      const auto &Acts = R.Schedule->Ranks[Rank].Actions;
      for (uint32_t I = 0; I < Acts.size(); ++I) {
        LocId L = Acts[I].Loc;
        if (L == NoLoc || !A.SM->isValid(L) ||
            A.SM->resolve(L).File != A.Unit.MainFile)
          continue;
        ActionSite &S = A.Actions[actionKey(L, actionClass(Acts[I].Kind))];
        ++S.Count;
        if (S.First.size() < 8)
          S.First.push_back({P, Rank, I});
      }
    }
  }
}

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
  if (A->Unit.Main)
    Indexer(*A).run(*A->Unit.Main);
  indexActions(*A);
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
