//===- Sema.h - name resolution and static checks (private) ---------------===//
//
// Requires: transformed modules with their imports resolved.
// Guarantees: every NameExpr is resolved to a frame slot or a built-in,
// every CallExpr to a built-in or a FnDecl with one argument (or default)
// per parameter, every FnDecl/PipelineDecl knows its frame size; reserved
// or duplicate names, unknown names (with "did you mean"), wrong arity,
// misplaced break/continue/return are reported; unused lets are warned
// about. The evaluator then never looks a name up by string.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/frontend/AST.h"
#include "pps/support/Diagnostics.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

namespace pps::frontend {

class Sema {
public:
  /// Finds stdlib/<name>.pps for a pipeline's schedule name not defined
  /// anywhere visible; null if there is none.
  using ImplicitImportFn = std::function<ast::Module *(llvm::StringRef Name)>;

  Sema(DiagnosticEngine &Diags, ImplicitImportFn Implicit)
      : Diags(Diags), Implicit(std::move(Implicit)) {}

  /// Checks every fn, schedule and pipeline of M.
  void checkModule(ast::Module &M);

  /// Names of the stdlib's schedules, offered as "did you mean" candidates;
  /// asked only when a schedule name is unknown.
  std::function<llvm::ArrayRef<std::string>()> StdlibNames;

  /// Adds notes to an unknown-schedule error: where NAME.pps was looked
  /// for, and whether the stdlib was found at all.
  std::function<void(Diagnostic &D, LocId Loc, llvm::StringRef Name)>
      NoteScheduleSearch;

  /// The fn or schedule of this name visible from M, or null.
  ast::FnDecl *lookupFn(ast::Module &M, llvm::StringRef Name);

private:
  struct Local {
    std::string Name;
    int32_t Slot;
    LocId Loc;
    bool Used;
    bool Warn; // a let: warn if unused
  };
  struct FnCtx {
    ast::Module *Mod = nullptr;
    ast::FnDecl *Fn = nullptr; // null in a pipeline
    std::vector<Local> Locals;
    /// Name -> indices into Locals, innermost last (lookups stay O(1)
    /// however many names a block declares).
    llvm::StringMap<llvm::SmallVector<uint32_t, 2>> ByName;
    int32_t NextSlot = 0, MaxSlot = 0;
    unsigned LoopDepth = 0;
    size_t ScopeStart = 0; // index in Locals where the innermost scope starts
  };

  llvm::StringMap<ast::FnDecl *> &scopeOf(ast::Module &M);
  void checkFn(ast::FnDecl &F);
  void checkPipeline(ast::PipelineDecl &Pl);

  void checkBlock(ast::Block &B);
  void checkStmt(ast::Stmt &S);
  void checkActions(std::vector<ast::ActionNode> &As);
  void checkComputeRef(ast::ComputeRef &R);
  void checkExpr(ast::Expr &E);
  void checkName(ast::NameExpr &N);
  bool isDeclared(llvm::StringRef Name) const;
  void checkCall(ast::CallExpr &C, bool AsStatement, bool PipelineSchedule);
  void orderArgs(ast::CallExpr &C, ast::FnDecl &Target);

  int32_t declare(ast::Binder &B, bool WarnUnused);
  /// Opens a scope; returns the mark popScope needs.
  std::pair<size_t, size_t> pushScope() {
    std::pair<size_t, size_t> Mark{Cur->Locals.size(), Cur->ScopeStart};
    Cur->ScopeStart = Cur->Locals.size();
    return Mark;
  }
  void popScope(std::pair<size_t, size_t> Mark);
  void suggest(Diagnostic &D, llvm::StringRef Name,
               llvm::ArrayRef<std::string> Candidates);

  DiagnosticEngine &Diags;
  ImplicitImportFn Implicit;
  unsigned Suggestions = 0; // did-you-mean searches done (bounded)
  FnCtx *Cur = nullptr;
  llvm::DenseMap<ast::Module *, llvm::StringMap<ast::FnDecl *>> Scopes;
};

/// The built-in function or constant of this name, or Builtin::None.
ast::Builtin lookupBuiltin(llvm::StringRef Name);

} // namespace pps::frontend
