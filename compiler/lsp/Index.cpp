//===- Index.cpp - the index of a document, for the editor features -------===//
//
// After analyze has checked a document: every name, call, binder, import
// and action of the main module as a Ref (sorted by position), the
// bindings and top-level declarations the features resolve names with,
// and where each action's IR actions ended up in the pipelines' schedules
// (hover, go-to-definition, outline and completion read them: Features.cpp).
//
//===----------------------------------------------------------------------===//
#include "pps/lsp/Analysis.h"

#include "pps/frontend/LiteralList.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <tuple>

namespace pps::lsp {

using namespace frontend;

namespace {

/// actionClass of the actions a source action node becomes.
uint8_t nodeClass(ast::ActionNodeKind K) {
  if (K == ast::ActionNodeKind::Compute || K == ast::ActionNodeKind::Overlap)
    return 0;
  if (K == ast::ActionNodeKind::Send || K == ast::ActionNodeKind::Recv)
    return 1;
  return 2;
}

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
      ref(N.Loc, RefKind::Action, "", 0).ActionClass = nodeClass(N.Kind);
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
      ref(N.Loc, RefKind::Action, "", 0).ActionClass = nodeClass(N.Kind);
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

void buildIndex(Analysis &A) {
  if (A.Unit.Main)
    Indexer(A).run(*A.Unit.Main);
  indexActions(A);
}

} // namespace pps::lsp
