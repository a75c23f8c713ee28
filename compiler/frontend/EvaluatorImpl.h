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

#include "EvaluateCode.h"
#include "Evaluator.h"

#include "pps/frontend/Limits.h"
#include "pps/frontend/MemoryModel.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
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

using frontend::bytesPerUnit;

/// Floor division and modulo (the sign of the result follows the divisor),
/// as the language defines / and %; B is not 0.
inline int64_t floorDiv(int64_t A, int64_t B) {
  int64_t Q = A / B;
  if ((A % B != 0) && ((A < 0) != (B < 0)))
    --Q;
  return Q;
}
inline int64_t floorMod(int64_t A, int64_t B) {
  int64_t R = A % B;
  if (R != 0 && ((R < 0) != (B < 0)))
    R += B;
  return R;
}

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
  LLVM_ATTRIBUTE_NOINLINE bool outOfBudget(LocId L) {
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
  // eval charges one step per expression node, in the order the nodes are
  // entered, and handles the leaves (literals, locals, the built-in sizes)
  // and binary operators inline; the rest, and every error, is out of line
  // so the hot path stays a few instructions a node.
  Value eval(Expr &E) {
    if (LLVM_UNLIKELY(StepsLeft == 0)) {
      outOfBudget(E.Loc);
      return {};
    }
    --StepsLeft;
    switch (E.Kind) {
    case ExprKind::Int:
      return {static_cast<IntLit &>(E).Value, VT::Int};
    case ExprKind::Name:
      return evalName(static_cast<NameExpr &>(E));
    case ExprKind::Binary:
      return evalBinary(static_cast<BinaryExpr &>(E));
    default:
      return evalOther(E);
    }
  }
  /// eval for the kinds not handled inline; the step is charged already.
  Value evalOther(Expr &E);
  Value evalBinary(BinaryExpr &B);
  Value evalBuiltin(CallExpr &C);
  /// cost_f(s) .. mem_w(): the cost and memory models as the schedule body
  /// sees them, in thousandths of a time unit or memory unit, rounded
  /// (Stage is ignored by the ones without one). Fails, and returns
  /// nothing, on a stage out of range.
  std::optional<int64_t> modelValue(Builtin B, int64_t Stage, CallExpr &C);
  /// False (with an error) if the schedule already read the models: a
  /// cost, comm or memory item (What) after it would change what it read.
  bool modelStillOpen(PipelineItem &I, const char *What);
  Value evalName(NameExpr &N) {
    if (LLVM_LIKELY(N.Res == NameRes::Local))
      return Stack[Base + N.Slot];
    if (LLVM_LIKELY(ConstsReady))
      return {Consts[size_t(N.BuiltinId)], VT::Int};
    return builtinConst(N.BuiltinId, N.Loc);
  }
  Value builtinConst(Builtin B, LocId L);
  int64_t evalInt(Expr &E, const char *What = "an integer") {
    Value V = eval(E);
    if (LLVM_UNLIKELY(V.T != VT::Int) && !Failed)
      return notInt(E, V, What);
    return V.I;
  }
  bool evalBool(Expr &E) {
    Value V = eval(E);
    if (LLVM_UNLIKELY(V.T != VT::Bool) && !Failed)
      return notBool(E, V);
    return V.I != 0;
  }
  LLVM_ATTRIBUTE_NOINLINE int64_t notInt(Expr &E, Value V, const char *What);
  LLVM_ATTRIBUTE_NOINLINE bool notBool(Expr &E, Value V);
  /// The errors of a binary operator (type, overflow, division by zero).
  LLVM_ATTRIBUTE_NOINLINE Value binaryError(BinaryExpr &B, Value L, Value R);
  Value callFn(CallExpr &C, const std::map<std::string, int64_t> *ArgOverrides);

  // --- bodies as register code (EvaluateCode.h, EvaluateRun.cpp) -----------
  /// F's code, compiled on first use.
  /// F's code for calls whose integer arguments are IntParams
  /// (FnCode::IntParams), compiled on first use.
  FnCode &codeOf(FnDecl &F, uint32_t IntParams = 0);
  /// Registers a call of F needs (its slots, and its code's).
  size_t frameSize(FnDecl &F);
  /// Runs F's body in the frame at Base: as code, or with the walker
  /// (FrontendOptions::TreeWalk).
  Flow runBody(FnDecl &F);
  /// Runs FC in the frame at Base (its constants loaded first).
  Flow runCode(const FnCode &FC);
  Flow run(const FnCode &FC);
  LLVM_ATTRIBUTE_NOINLINE void budgetRanOut(const FnCode &FC, const Op &O);

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
  /// resolveCompute's checks once the numbers are known (St unused when R
  /// has no stage).
  bool checkCompute(ComputeRef &R, int64_t Mb, int64_t St, ir::Action &Out);
  /// emitActions for a literal list (pps/frontend/LiteralList.h): the same
  /// steps, checks, diagnostics and actions as the ActionNodes the grammar
  /// gives for its text.
  void emitLiteral(const std::vector<LiteralAction> &As);
  /// resolveCompute for a literal compute; RefLoc is the compute's location
  /// when known without reading the text again (else NoLoc).
  bool literalCompute(const LiteralAction &N, LocId RefLoc, ir::Action &Out);
  /// Emits `send A -> Peer` (Send) or `recv A <- Peer` at Loc; without a
  /// Peer, the rank of A's partner stage (forward data flows to s+1,
  /// gradients to s-1). PeerLoc gives the peer's location for an error.
  void emitComm(const ir::Action &A, bool Send, std::optional<int64_t> Peer,
                llvm::function_ref<LocId()> PeerLoc, LocId Loc);
  /// Makes rank R the current rank. A rank's first block reserves room
  /// for as many actions as the rank before it has (a pipeline's ranks
  /// mostly emit alike), so its vector is not regrown, copying and
  /// touching its pages again, as it fills.
  void enterRank(int32_t R) {
    CurRank = R;
    auto &Acts = Out.Ranks[size_t(R)].Actions;
    if (Acts.empty() && R > 0)
      Acts.reserve(Out.Ranks[size_t(R) - 1].Actions.size());
  }
  ir::Action *emit(const ir::Action &A, LocId L) {
    if (LLVM_UNLIKELY(CurRank < 0)) {
      fail(DiagKind::EmitOutsideRank, L,
           "action outside a rank block; wrap it in 'rank r { ... }'");
      return nullptr;
    }
    if (LLVM_UNLIKELY(++Emitted > Opts.MaxActions)) {
      fail(DiagKind::LimitExceeded, L,
           fmt::format("the schedule emits more than {} actions (raise the "
                       "limit with --max-actions=N)",
                       Opts.MaxActions));
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
  /// `memory { F = ..; I = ..; W = ..; }`: the memory model (the limit is
  /// the caller's).
  void applyMemory(PipelineItem &I);
  /// The memory limit V of I in the model's unit: times its size unit if
  /// it has one (then the model must count bytes, and V at most
  /// MaxMemoryLimitBytes); a model in bytes needs a limit with a unit.
  /// False (an error reported) if they disagree.
  bool memoryLimitUnit(PipelineItem &I, int64_t &V);
  /// True if St (the value of E) is a stage of the topology; else an
  /// out-of-range error at E.
  bool stageInRange(int64_t St, const Expr &E);
  /// A finite number >= 0 (> 0 without AllowZero) and at most Max (MaxTime
  /// for times): else an error at Q and false.
  bool quantityOk(const Quantity &Q, const char *What, bool AllowZero = true,
                  double Max = MaxTime);
  /// A value derived from Q by a unit (a latency in s, a size in GiB) at
  /// most Max: else an error at Q and false.
  bool convertedOk(const Quantity &Q, double Value, double Max,
                   const char *What, const char *Unit);
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

  /// Frames of values: [0, Top) in use (the vector only grows).
  std::vector<Value> Stack;
  size_t Top = 0;
  /// Pushes a frame of N values whose slots From .. Slots start as the
  /// integer 0 (the first From hold the arguments already, the rest are
  /// written before they are read) and returns its base.
  size_t pushFrame(size_t N, size_t Slots, size_t From = 0) {
    size_t B = Top;
    if (Stack.size() < B + N)
      Stack.resize(std::max(B + N, Stack.size() * 2));
    Value *Frame = Stack.data() + B;
    for (size_t I = From; I < Slots; ++I)
      Frame[I] = Value();
    Top = B + N;
    return B;
  }
  size_t Base = 0;
  /// Every array made: its length, then its elements. An array value's I
  /// points at the elements (never moved: each vector keeps its size), so
  /// an index needs no lookup in here.
  std::vector<std::vector<int64_t>> Arrays;
  Value newArray(int64_t N, int64_t Init) {
    std::vector<int64_t> &A = Arrays.emplace_back(size_t(N) + 1, Init);
    A[0] = N;
    return {int64_t(reinterpret_cast<intptr_t>(A.data() + 1)), VT::Array};
  }
  static int64_t *elements(Value A) {
    // The address newArray stored: a round trip, not a made-up pointer.
    return reinterpret_cast<int64_t *>( // NOLINT(performance-no-int-to-ptr)
        intptr_t(A.I));
  }
  static int64_t length(Value A) { return elements(A)[-1]; }
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

  /// Each fn's code: checked, and with the sizes as registers (ConstsReady).
  llvm::DenseMap<std::pair<FnDecl *, uint64_t>, std::unique_ptr<FnCode>> Code;
  /// Bodies compiled for integer arguments, per function (codeOf).
  llvm::DenseMap<FnDecl *, unsigned> Variants;
  static constexpr unsigned MaxVariants = 4;
  /// While the pipeline's schedule call runs, the sizes cannot change: the
  /// values of P, S, M, V and D (indexed by Builtin), read without checks.
  bool ConstsReady = false;
  int64_t Consts[size_t(Builtin::D) + 1] = {};
  /// Where the schedule first read the cost or memory model (cost_f(s),
  /// ...): a cost, comm or memory item after it would change what it read.
  LocId ModelReadAt = NoLoc;

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
