//===- EvaluatorImpl.h - the pipeline interpreter (private) ---------------===//
//
// A tree-walking interpreter over the resolved AST: locals live in one value
// stack indexed by frame base + slot, calls push a frame, control flow is a
// returned Flow code, and errors set Failed so every loop unwinds at once.
// Split by topic like the Transformer: Evaluator.cpp (errors, the walk over
// the pipeline's items), EvaluateExpr.cpp (expressions and calls),
// EvaluateStmt.cpp (statements and actions), EvaluateTopology.cpp (sizes,
// placement, cost and comm) and EvaluateSynth.cpp (the `schedule
// synth(...)` request). The contract is in Evaluator.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Evaluator.h"

#include "pps/frontend/Limits.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Compiler.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pps::frontend::eval {

using namespace ast;

enum class VT : uint8_t { Int, Bool, Array };
struct Value {
  int64_t I = 0;
  VT T = VT::Int;
};
enum class Flow : uint8_t { Next, Break, Continue, Return, Abort };

/// "an integer", "a bool", "an array" (for messages).
const char *typeName(VT T);

class Evaluator {
public:
  Evaluator(DiagnosticEngine &Diags, const FrontendOptions &Opts,
            std::set<std::string> &Used)
      : Diags(Diags), Opts(Opts), Used(Used), StepsLeft(Opts.StepBudget) {
    Stack.reserve(1 << 12);
    Calls.reserve(Opts.RecursionLimit + 1);
  }

  std::optional<ir::Schedule> run(PipelineDecl &Pl);

private:
  // --- errors (Evaluator.cpp) -----------------------------------------------
  Diagnostic &fail(DiagKind K, LocId L, std::string Msg);
  bool outOfBudget(LocId L) {
    if (!Failed)
      fail(DiagKind::BudgetExhausted, L,
           fmt::format("evaluation ran out of its step budget of {} steps; is "
                       "there an endless loop? (raise it with --step-budget)",
                       Opts.StepBudget));
    return false;
  }
  bool step(LocId L) {
    if (LLVM_UNLIKELY(StepsLeft == 0))
      return outOfBudget(L);
    --StepsLeft;
    return true;
  }
  std::optional<int64_t> override(const std::string &Name) {
    auto It = Opts.Overrides.find(Name);
    if (It == Opts.Overrides.end())
      return std::nullopt;
    Used.insert(Name);
    return It->second;
  }

  // --- expressions and calls (EvaluateExpr.cpp) -----------------------------
  Value eval(Expr &E);
  Value evalBinary(BinaryExpr &B);
  Value evalBuiltin(CallExpr &C);
  Value evalName(NameExpr &N);
  Value builtinConst(Builtin B, LocId L);
  int64_t evalInt(Expr &E, const char *What = "an integer") {
    Value V = eval(E);
    if (LLVM_UNLIKELY(V.T != VT::Int) && !Failed) {
      fail(DiagKind::TypeMismatch, E.Loc,
           fmt::format("expected {}, got {}", What, typeName(V.T)));
      return 0;
    }
    return V.I;
  }
  bool evalBool(Expr &E) {
    Value V = eval(E);
    if (LLVM_UNLIKELY(V.T != VT::Bool) && !Failed) {
      fail(DiagKind::TypeMismatch, E.Loc,
           fmt::format("expected a bool condition, got {}", typeName(V.T)));
      return false;
    }
    return V.I != 0;
  }
  Value callFn(CallExpr &C, const std::map<std::string, int64_t> *ArgOverrides);

  // --- statements and actions (EvaluateStmt.cpp) ----------------------------
  Flow exec(Stmt &S);
  Flow execBlock(Block &B) {
    for (StmtPtr &S : B) {
      Flow F = exec(*S);
      if (F != Flow::Next)
        return F;
    }
    return Flow::Next;
  }
  Flow execRank(RankStmt &R);
  void emitActions(std::vector<ActionNode> &As);
  bool resolveCompute(ComputeRef &R, ir::Action &Out);
  /// emitActions for a literal list (pps/frontend/LiteralList.h): the same
  /// steps, checks, diagnostics and actions as the ActionNodes the grammar
  /// gives for its text.
  void emitLiteral(const std::vector<LiteralAction> &As);
  /// resolveCompute for a literal compute; RefLoc is the compute's location
  /// when known without reading the text again (else NoLoc).
  bool literalCompute(const LiteralAction &N, LocId RefLoc, ir::Action &Out);
  ir::Action *emit(const ir::Action &A, LocId L) {
    if (LLVM_UNLIKELY(CurRank < 0)) {
      fail(DiagKind::EmitOutsideRank, L,
           "action outside a rank block; wrap it in 'rank r { ... }'");
      return nullptr;
    }
    if (LLVM_UNLIKELY(++Emitted > MaxActions)) {
      fail(DiagKind::OutOfRange, L,
           fmt::format("the schedule emits more than {} actions", MaxActions));
      return nullptr;
    }
    auto &V = Out.Ranks[CurRank].Actions;
    V.push_back(A);
    return &V.back();
  }

  // --- topology, cost and comm (EvaluateTopology.cpp) -----------------------
  bool ensureTopology(LocId L);
  bool ensureReady(LocId L);
  void applyCost(PipelineItem &I);
  void applyComm(PipelineItem &I);
  bool quantityOk(const Quantity &Q, const char *What, bool AllowZero = true);
  std::optional<int64_t> sizeField(PipelineItem &I, const char *Name,
                                   int64_t Min, int64_t Max);

  // --- the synth request (EvaluateSynth.cpp) -------------------------------
  /// `schedule synth(memory: N, ...)`: checks the request and stores it in
  /// Out.Synth for the synth pass. Errors set Failed.
  void buildSynthRequest(CallExpr &C);

  DiagnosticEngine &Diags;
  const FrontendOptions &Opts;
  std::set<std::string> &Used;
  ir::Schedule Out;

  std::vector<Value> Stack;
  size_t Base = 0;
  std::vector<std::vector<int64_t>> Arrays;
  uint64_t StepsLeft;
  unsigned Depth = 0;
  int32_t CurRank = -1;
  bool Failed = false;
  unsigned ListErrors = 0;
  uint64_t Emitted = 0;
  uint64_t ArrayElements = 0;
  Value RetVal;
  bool HasRet = false;
  LocId CallSite = NoLoc;
  std::string CallName;
  /// The calls being evaluated, outermost first (for error notes).
  std::vector<CallExpr *> Calls;

  // topology as declared so far
  PipelineDecl *Pl = nullptr;
  std::optional<int64_t> NRanks, NStages, NMicro;
  LocId DirectionsLoc = NoLoc; // the `directions` item, if any
  PipelineItem *StagesItem = nullptr;
  bool TopoDone = false, Ready = false, TopoFailed = false, ReadyFailed = false;
  llvm::SmallVector<int32_t, 16> OnlyStage; // -1 none, -2 several
  std::vector<llvm::SmallVector<int32_t, 4>> RankStages;
};

} // namespace pps::frontend::eval
