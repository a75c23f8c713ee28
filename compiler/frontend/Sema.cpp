//===- Sema.cpp - name resolution and static checks -----------------------===//
#include "Sema.h"

#include "pps/support/Suggest.h"

#include "llvm/ADT/StringSwitch.h"

#include <fmt/format.h>

namespace pps::frontend {

using namespace ast;

Builtin lookupBuiltin(llvm::StringRef Name) {
  return llvm::StringSwitch<Builtin>(Name)
      .Case("P", Builtin::P)
      .Case("S", Builtin::S)
      .Case("M", Builtin::M)
      .Case("V", Builtin::V)
      .Case("D", Builtin::D)
      .Case("rank_of", Builtin::RankOf)
      .Case("stage_of", Builtin::StageOf)
      .Case("min", Builtin::Min)
      .Case("max", Builtin::Max)
      .Case("div", Builtin::Div)
      .Case("mod", Builtin::Mod)
      .Case("abs", Builtin::Abs)
      .Case("array", Builtin::Array)
      .Case("len", Builtin::Len)
      .Case("cost_f", Builtin::CostF)
      .Case("cost_i", Builtin::CostI)
      .Case("cost_w", Builtin::CostW)
      .Case("cost_b", Builtin::CostB)
      .Case("comm_time", Builtin::CommTime)
      .Case("mem_f", Builtin::MemF)
      .Case("mem_i", Builtin::MemI)
      .Case("mem_w", Builtin::MemW)
      .Default(Builtin::None);
}

static bool isConstant(Builtin B) {
  return B == Builtin::P || B == Builtin::S || B == Builtin::M ||
         B == Builtin::V || B == Builtin::D;
}

/// Arity of a built-in function: {min, max}.
static std::pair<unsigned, unsigned> builtinArity(Builtin B) {
  switch (B) {
  case Builtin::RankOf:
  case Builtin::Abs:
  case Builtin::Len:
  case Builtin::CostF:
  case Builtin::CostI:
  case Builtin::CostW:
  case Builtin::CostB:
    return {1, 1};
  case Builtin::CommTime:
  case Builtin::MemF:
  case Builtin::MemI:
  case Builtin::MemW:
    return {0, 0};
  case Builtin::Min:
  case Builtin::Max:
    return {2, 64};
  default:
    return {2, 2};
  }
}

static const char *BuiltinFnNames[] = {
    "rank_of", "stage_of",  "min",   "max",    "div",    "mod",
    "abs",     "array",     "len",   "cost_f", "cost_i", "cost_w",
    "cost_b",  "comm_time", "mem_f", "mem_i",  "mem_w"};

llvm::StringMap<FnDecl *> &Sema::scopeOf(Module &M) {
  auto It = Scopes.find(&M);
  if (It != Scopes.end())
    return It->second;
  llvm::StringMap<FnDecl *> &S = Scopes[&M];
  for (auto &F : M.Fns) {
    auto [Slot, Inserted] = S.try_emplace(F->Name, F.get());
    if (!Inserted) {
      Diags
          .report(DiagKind::DuplicateDefinition, F->Loc,
                  fmt::format("'{}' is defined twice", F->Name))
          .note(Slot->second->Loc, "first defined here");
      continue;
    }
    if (lookupBuiltin(F->Name) != Builtin::None)
      Diags.report(
          DiagKind::DuplicateDefinition, F->Loc,
          fmt::format("'{}' is a built-in and cannot be redefined", F->Name));
  }
  // Imported definitions are visible unless the module defines the name.
  for (ImportDecl &I : M.Imports)
    if (I.Resolved)
      for (auto &F : I.Resolved->Fns)
        S.try_emplace(F->Name, F.get());
  return S;
}

FnDecl *Sema::lookupFn(Module &M, llvm::StringRef Name) {
  auto &S = scopeOf(M);
  auto It = S.find(Name);
  return It == S.end() ? nullptr : It->second;
}

void Sema::checkModule(Module &M) {
  if (M.SemaDone)
    return;
  M.SemaDone = true;
  FnCtx *Saved = Cur;
  scopeOf(M);
  for (auto &F : M.Fns)
    checkFn(*F);
  for (auto &Pl : M.Pipelines)
    checkPipeline(*Pl);
  Cur = Saved;
}

void Sema::popScope(std::pair<size_t, size_t> ScopeMark) {
  size_t Mark = ScopeMark.first;
  Cur->ScopeStart = ScopeMark.second;
  for (size_t I = Cur->Locals.size(); I-- > Mark;) {
    Local &L = Cur->Locals[I];
    if (L.Warn && !L.Used && !llvm::StringRef(L.Name).startswith("_"))
      Diags.report(DiagKind::UnusedValue, L.Loc,
                   fmt::format("'{}' is never used", L.Name));
    auto It = Cur->ByName.find(L.Name);
    It->second.pop_back();
    if (It->second.empty())
      Cur->ByName.erase(It);
  }
  Cur->Locals.resize(Mark);
  // Slots are reused by sibling scopes; the frame keeps the maximum.
  Cur->NextSlot = Mark == 0 ? 0 : Cur->Locals.back().Slot + 1;
}

int32_t Sema::declare(Binder &B, bool WarnUnused) {
  if (B.Reserved) {
    Diags.report(
        DiagKind::InvalidValue, B.Loc,
        fmt::format("'{}' names an action and cannot name a variable", B.Name));
  } else if (isConstant(lookupBuiltin(B.Name))) {
    Diags.report(
        DiagKind::InvalidValue, B.Loc,
        fmt::format("'{}' is a built-in constant and cannot be rebound",
                    B.Name));
  }
  // A name may shadow an outer one, but not one of the same scope.
  auto &Stack = Cur->ByName[B.Name];
  if (!Stack.empty() && Stack.back() >= Cur->ScopeStart && !B.Reserved) {
    Local &Prev = Cur->Locals[Stack.back()];
    Diags
        .report(DiagKind::DuplicateDefinition, B.Loc,
                fmt::format("'{}' is already declared in this block", B.Name))
        .note(Prev.Loc, "declared here");
    Prev.Used = true; // one report is enough
  }
  Stack.push_back(uint32_t(Cur->Locals.size()));
  B.Slot = Cur->NextSlot++;
  Cur->MaxSlot = std::max(Cur->MaxSlot, Cur->NextSlot);
  Cur->Locals.push_back({B.Name, B.Slot, B.Loc, false, WarnUnused});
  return B.Slot;
}

void Sema::suggest(Diagnostic &D, llvm::StringRef Name,
                   llvm::ArrayRef<std::string> Candidates) {
  // Bounded so a file full of unknown names stays linear.
  if (++Suggestions > 100 || Candidates.size() > 100000)
    return;
  std::string Best = nearestName(Name, Candidates);
  if (!Best.empty())
    D.Message += fmt::format("; did you mean '{}'?", Best);
}

void Sema::checkFn(FnDecl &F) {
  if (F.Checked)
    return;
  F.Checked = true;
  FnCtx Ctx;
  Ctx.Mod = F.Owner;
  Ctx.Fn = &F;
  FnCtx *Saved = Cur;
  Cur = &Ctx;
  for (size_t I = 0; I < F.Params.size(); ++I) {
    Param &Pm = F.Params[I];
    // A default sees the parameters before it.
    if (Pm.Default)
      checkExpr(*Pm.Default);
    declare(Pm.Var, /*WarnUnused=*/false);
  }
  checkBlock(F.Body);
  popScope({0, 0});
  F.NumSlots = Ctx.MaxSlot;
  Cur = Saved;
}

void Sema::checkPipeline(PipelineDecl &Pl) {
  FnCtx Ctx;
  Ctx.Mod = Pl.Owner;
  FnCtx *Saved = Cur;
  Cur = &Ctx;
  llvm::DenseMap<unsigned, LocId> Seen;
  for (PipelineItem &I : Pl.Items) {
    // Fields that may appear once.
    if (I.Kind != PipelineItemKind::Let && I.Kind != PipelineItemKind::Rank &&
        I.Kind != PipelineItemKind::Cost && I.Kind != PipelineItemKind::Comm) {
      auto [It, Inserted] = Seen.try_emplace(unsigned(I.Kind), I.Loc);
      if (!Inserted)
        Diags
            .report(DiagKind::DuplicateDefinition, I.Loc,
                    "this pipeline field is given twice")
            .note(It->second, "first given here");
    }
    if (I.Value)
      checkExpr(*I.Value);
    for (auto &[S, R] : I.PlacementMap) {
      checkExpr(*S);
      checkExpr(*R);
    }
    for (CostEntry &C : I.Costs)
      if (C.Stage)
        checkExpr(*C.Stage);
    if (I.Call)
      checkCall(*I.Call, /*AsStatement=*/true, /*PipelineSchedule=*/true);
    if (I.Kind == PipelineItemKind::Let)
      declare(I.Var, /*WarnUnused=*/false);
    if (I.Rank)
      checkStmt(*I.Rank);
  }
  popScope({0, 0});
  Pl.NumSlots = Ctx.MaxSlot;
  Cur = Saved;
}

void Sema::checkBlock(Block &B) {
  auto Mark = pushScope();
  for (StmtPtr &S : B)
    checkStmt(*S);
  popScope(Mark);
}

void Sema::checkStmt(Stmt &S) {
  switch (S.Kind) {
  case StmtKind::Let: {
    auto &L = static_cast<LetStmt &>(S);
    checkExpr(*L.Init);
    declare(L.Var, /*WarnUnused=*/true);
    return;
  }
  case StmtKind::Assign:
  case StmtKind::IndexAssign: {
    auto &A = static_cast<AssignStmt &>(S);
    if (A.Index)
      checkExpr(*A.Index);
    checkExpr(*A.Value);
    if (S.Kind == StmtKind::Assign && !isDeclared(A.Target->Name) &&
        lookupBuiltin(A.Target->Name) == Builtin::None) {
      Diags.report(DiagKind::UnknownName, A.Target->Loc,
                   fmt::format("unknown name '{}'; declare it with 'let {} = "
                               "...;'",
                               A.Target->Name, A.Target->Name));
      return;
    }
    checkName(*A.Target);
    if (A.Target->Res == NameRes::Builtin)
      Diags.report(
          DiagKind::InvalidValue, A.Target->Loc,
          fmt::format("cannot assign to built-in '{}'", A.Target->Name));
    return;
  }
  case StmtKind::For: {
    auto &F = static_cast<ForStmt &>(S);
    checkExpr(*F.From);
    checkExpr(*F.To);
    if (F.Step)
      checkExpr(*F.Step);
    auto Mark = pushScope();
    declare(F.Var, /*WarnUnused=*/false);
    ++Cur->LoopDepth;
    checkBlock(F.Body);
    --Cur->LoopDepth;
    popScope(Mark);
    return;
  }
  case StmtKind::While: {
    auto &W = static_cast<WhileStmt &>(S);
    checkExpr(*W.Cond);
    ++Cur->LoopDepth;
    checkBlock(W.Body);
    --Cur->LoopDepth;
    return;
  }
  case StmtKind::Break:
  case StmtKind::Continue:
    if (Cur->LoopDepth == 0)
      Diags.report(DiagKind::InvalidValue, S.Loc,
                   fmt::format("'{}' outside a loop", S.Kind == StmtKind::Break
                                                          ? "break"
                                                          : "continue"));
    return;
  case StmtKind::If: {
    auto &I = static_cast<IfStmt &>(S);
    checkExpr(*I.Cond);
    checkBlock(I.Then);
    checkBlock(I.Else);
    return;
  }
  case StmtKind::RankBlock:
  case StmtKind::RankList: {
    auto &R = static_cast<RankStmt &>(S);
    checkExpr(*R.Rank);
    if (S.Kind == StmtKind::RankBlock)
      checkBlock(R.Body);
    else
      checkActions(R.Actions);
    return;
  }
  case StmtKind::Return: {
    auto &R = static_cast<ReturnStmt &>(S);
    if (R.Value)
      checkExpr(*R.Value);
    if (!Cur->Fn)
      Diags.report(DiagKind::InvalidValue, S.Loc,
                   "'return' outside a schedule or fn");
    else if (Cur->Fn->IsSchedule && R.Value)
      Diags.report(DiagKind::InvalidValue, R.Value->Loc,
                   "a schedule returns no value; use a fn");
    return;
  }
  case StmtKind::Assert:
    checkExpr(*static_cast<AssertStmt &>(S).Cond);
    return;
  case StmtKind::Call:
    checkCall(*static_cast<CallStmt &>(S).Call, /*AsStatement=*/true,
              /*PipelineSchedule=*/false);
    return;
  case StmtKind::Actions:
    checkActions(static_cast<ActionStmt &>(S).Actions);
    return;
  case StmtKind::Empty:
    return;
  }
}

void Sema::checkComputeRef(ComputeRef &R) {
  if (R.Microbatch)
    checkExpr(*R.Microbatch);
  if (R.Stage)
    checkExpr(*R.Stage);
}

void Sema::checkActions(std::vector<ActionNode> &As) {
  for (ActionNode &A : As) {
    if (A.Kind == ActionNodeKind::Idle)
      continue;
    checkComputeRef(A.First);
    if (A.Kind == ActionNodeKind::Overlap)
      checkComputeRef(A.Second);
    if (A.Operand)
      checkExpr(*A.Operand);
    if ((A.Kind == ActionNodeKind::Send || A.Kind == ActionNodeKind::Recv) &&
        A.First.Kind == ir::ActionKind::W)
      Diags.report(DiagKind::InvalidValue, A.First.Loc,
                   "W sends and receives nothing; name the F, I or B served");
  }
}

bool Sema::isDeclared(llvm::StringRef Name) const {
  return Cur->ByName.count(Name) != 0;
}

void Sema::checkName(NameExpr &N) {
  auto It = Cur->ByName.find(N.Name);
  if (It != Cur->ByName.end()) {
    Local &L = Cur->Locals[It->second.back()];
    L.Used = true;
    N.Res = NameRes::Local;
    N.Slot = L.Slot;
    N.DeclLoc = L.Loc;
    return;
  }
  Builtin B = lookupBuiltin(N.Name);
  if (isConstant(B)) {
    N.Res = NameRes::Builtin;
    N.BuiltinId = B;
    return;
  }
  auto &D = Diags.report(DiagKind::UnknownName, N.Loc,
                         fmt::format("unknown name '{}'", N.Name));
  if (Suggestions >= 100)
    return;
  std::vector<std::string> Cands = {"P", "S", "M", "V"};
  for (Local &L : Cur->Locals)
    Cands.push_back(L.Name);
  suggest(D, N.Name, Cands);
}

void Sema::checkExpr(Expr &E) {
  switch (E.Kind) {
  case ExprKind::Int:
  case ExprKind::Bool:
    return;
  case ExprKind::Name:
    checkName(static_cast<NameExpr &>(E));
    return;
  case ExprKind::Call:
    checkCall(static_cast<CallExpr &>(E), /*AsStatement=*/false,
              /*PipelineSchedule=*/false);
    return;
  case ExprKind::Index: {
    auto &I = static_cast<IndexExpr &>(E);
    checkName(*I.Base);
    checkExpr(*I.Index);
    return;
  }
  case ExprKind::Unary:
    checkExpr(*static_cast<UnaryExpr &>(E).Operand);
    return;
  case ExprKind::Binary: {
    auto &B = static_cast<BinaryExpr &>(E);
    checkExpr(*B.LHS);
    checkExpr(*B.RHS);
    return;
  }
  }
}

void Sema::checkCall(CallExpr &C, bool AsStatement, bool PipelineSchedule) {
  for (Arg &A : C.Args)
    checkExpr(*A.Value);
  Builtin B = lookupBuiltin(C.Callee);
  if (B != Builtin::None && !isConstant(B) && !PipelineSchedule) {
    C.BuiltinId = B;
    for (Arg &A : C.Args)
      if (!A.Name.empty())
        Diags.report(
            DiagKind::InvalidValue, A.NameLoc,
            fmt::format("built-in '{}' takes no named arguments", C.Callee));
    auto [Min, Max] = builtinArity(B);
    if (C.Args.size() < Min || C.Args.size() > Max)
      Diags.report(DiagKind::WrongArity, C.Loc,
                   fmt::format("'{}' takes {} argument{}, got {}", C.Callee,
                               Min == Max ? std::to_string(Min)
                                          : fmt::format("{} or more", Min),
                               Min == 1 && Max == 1 ? "" : "s", C.Args.size()));
    if (AsStatement)
      Diags.report(DiagKind::InvalidValue, C.Loc,
                   fmt::format("the value of '{}' is unused", C.Callee));
    return;
  }
  FnDecl *F = lookupFn(*Cur->Mod, C.Callee);
  if (!F && PipelineSchedule && Implicit && C.Callee != "synth") {
    if (Module *M = Implicit(C.Callee))
      F = lookupFn(*M, C.Callee);
  }
  if (!F) {
    if (PipelineSchedule && C.Callee == "synth")
      return; // a synthesis request, handled by the evaluator
    auto &D = Diags.report(
        DiagKind::UnknownName, C.Loc,
        PipelineSchedule
            ? fmt::format("unknown schedule '{}' (not defined in this file, "
                          "its imports or the stdlib)",
                          C.Callee)
            : fmt::format("unknown function '{}'", C.Callee));
    std::vector<std::string> Cands;
    for (auto &E : scopeOf(*Cur->Mod))
      Cands.push_back(E.first().str());
    if (!PipelineSchedule)
      Cands.insert(Cands.end(), std::begin(BuiltinFnNames),
                   std::end(BuiltinFnNames));
    else if (StdlibNames) {
      llvm::ArrayRef<std::string> Names = StdlibNames();
      Cands.insert(Cands.end(), Names.begin(), Names.end());
    }
    std::sort(Cands.begin(), Cands.end());
    suggest(D, C.Callee, Cands);
    if (PipelineSchedule && NoteScheduleSearch)
      NoteScheduleSearch(D, C.Loc, C.Callee);
    return;
  }
  if (PipelineSchedule && !F->IsSchedule)
    Diags
        .report(DiagKind::InvalidValue, C.Loc,
                fmt::format("'{}' is a fn, not a schedule", C.Callee))
        .note(F->Loc, "declared here");
  if (!AsStatement && F->IsSchedule)
    Diags
        .report(
            DiagKind::InvalidValue, C.Loc,
            fmt::format("schedule '{}' has no value; call it as a statement",
                        C.Callee))
        .note(F->Loc, "declared here");
  C.Target = F;
  orderArgs(C, *F);
}

void Sema::orderArgs(CallExpr &C, FnDecl &F) {
  C.Ordered.assign(F.Params.size(), nullptr);
  size_t Pos = 0;
  bool SawNamed = false;
  for (Arg &A : C.Args) {
    if (A.Name.empty()) {
      if (SawNamed) {
        Diags.report(DiagKind::InvalidValue, A.Value->Loc,
                     "a positional argument after a named one");
        continue;
      }
      if (Pos >= F.Params.size()) {
        Diags
            .report(DiagKind::WrongArity, C.Loc,
                    fmt::format("'{}' takes {} argument{}, got {}", F.Name,
                                F.Params.size(),
                                F.Params.size() == 1 ? "" : "s", C.Args.size()))
            .note(F.Loc, "declared here");
        return;
      }
      C.Ordered[Pos++] = A.Value.get();
      continue;
    }
    SawNamed = true;
    size_t I = 0;
    while (I < F.Params.size() && F.Params[I].Var.Name != A.Name)
      ++I;
    if (I == F.Params.size()) {
      auto &D = Diags.report(
          DiagKind::UnknownName, A.NameLoc,
          fmt::format("'{}' has no parameter '{}'", F.Name, A.Name));
      std::vector<std::string> Cands;
      for (Param &Pm : F.Params)
        Cands.push_back(Pm.Var.Name);
      suggest(D, A.Name, Cands);
      D.note(F.Loc, "declared here");
      continue;
    }
    if (C.Ordered[I]) {
      Diags.report(DiagKind::DuplicateDefinition, A.NameLoc,
                   fmt::format("argument '{}' is given twice", A.Name));
      continue;
    }
    C.Ordered[I] = A.Value.get();
  }
  for (size_t I = 0; I < F.Params.size(); ++I)
    if (!C.Ordered[I] && !F.Params[I].Default)
      Diags
          .report(DiagKind::WrongArity, C.Loc,
                  fmt::format("missing argument '{}' of '{}'",
                              F.Params[I].Var.Name, F.Name))
          .note(F.Params[I].Var.Loc, "parameter declared here");
}

} // namespace pps::frontend
