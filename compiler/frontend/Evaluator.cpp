//===- Evaluator.cpp - run a checked pipeline into the IR -----------------===//
//
// A tree-walking interpreter over the resolved AST: locals live in one value
// stack indexed by frame base + slot, calls push a frame, control flow is a
// returned Flow code, and errors set Failed so every loop unwinds at once.
//
//===----------------------------------------------------------------------===//
#include "Evaluator.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Compiler.h"

#include <fmt/format.h>

#include <cmath>

namespace pps::frontend {

using namespace ast;

namespace {

enum class VT : uint8_t { Int, Bool, Array };
struct Value {
  int64_t I = 0;
  VT T = VT::Int;
};
enum class Flow : uint8_t { Next, Break, Continue, Return, Abort };

const char *typeName(VT T) {
  switch (T) {
  case VT::Int:
    return "an integer";
  case VT::Bool:
    return "a bool";
  case VT::Array:
    return "an array";
  }
  return "?";
}

/// Floor division and modulo (the sign of the result follows the divisor).
int64_t floorDiv(int64_t A, int64_t B) {
  int64_t Q = A / B;
  if ((A % B != 0) && ((A < 0) != (B < 0)))
    --Q;
  return Q;
}
int64_t floorMod(int64_t A, int64_t B) {
  int64_t R = A % B;
  if (R != 0 && ((R < 0) != (B < 0)))
    R += B;
  return R;
}

constexpr int64_t MaxRanks = 1 << 16;
constexpr int64_t MaxStages = 1 << 20;
constexpr int64_t MaxMicrobatches = 1 << 24;
constexpr int64_t MaxArray = 1 << 24;
/// Arrays live until evaluation ends, so their total size is bounded too.
constexpr uint64_t MaxArrayTotal = uint64_t(1) << 25;
/// Bounds the IR's memory (20 bytes an action) whatever the step budget.
constexpr uint64_t MaxActions = uint64_t(1) << 25;

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
  // --- errors --------------------------------------------------------------
  Diagnostic &fail(DiagKind K, LocId L, std::string Msg) {
    Failed = true;
    Diagnostic &D = Diags.report(K, L, std::move(Msg));
    // The innermost calls that led here (the outermost is the pipeline's
    // schedule call, noted below).
    size_t Shown = 0;
    for (size_t I = Calls.size(); I-- > 1 && Shown < 4; ++Shown)
      D.note(Calls[I]->Loc,
             fmt::format("in '{}' called here", Calls[I]->Callee));
    if (CallSite != NoLoc)
      D.note(CallSite, fmt::format("while evaluating schedule '{}' called here",
                                   CallName));
    return D;
  }
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

  // --- expressions ---------------------------------------------------------
  Value eval(Expr &E);
  Value evalBinary(BinaryExpr &B);
  Value evalBuiltin(CallExpr &C);
  Value evalName(NameExpr &N);
  Value builtinConst(Builtin B, LocId L);
  int64_t evalInt(Expr &E, const char *What = "an integer");
  bool evalBool(Expr &E);
  Value callFn(CallExpr &C, const std::map<std::string, int64_t> *ArgOverrides);

  // --- statements and actions ----------------------------------------------
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

  // --- the pipeline --------------------------------------------------------
  bool ensureTopology(LocId L);
  bool ensureReady(LocId L);
  void applyCost(PipelineItem &I);
  void applyComm(PipelineItem &I);
  bool quantityOk(const Quantity &Q, const char *What, bool AllowZero = true);
  std::optional<int64_t> sizeField(PipelineItem &I, const char *Name,
                                   int64_t Min, int64_t Max);

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

// ---------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------

Value Evaluator::builtinConst(Builtin B, LocId L) {
  switch (B) {
  case Builtin::P:
    if (!NRanks && !override("ranks")) {
      fail(DiagKind::UnknownName, L, "'P' is used before 'ranks' is declared");
      return {};
    }
    if (!NRanks)
      NRanks = override("ranks");
    return {*NRanks, VT::Int};
  case Builtin::M:
    if (!NMicro) {
      if (auto O = override("microbatches")) {
        NMicro = O;
      } else {
        fail(DiagKind::UnknownName, L,
             "'M' is used before 'microbatches' is declared");
        return {};
      }
    }
    return {*NMicro, VT::Int};
  case Builtin::D:
    return {Out.Topo.Directions, VT::Int};
  case Builtin::S:
  case Builtin::V:
    if (!ensureTopology(L))
      return {};
    return {B == Builtin::S ? Out.Topo.Stages : Out.Topo.chunks(), VT::Int};
  default:
    return {};
  }
}

Value Evaluator::evalName(NameExpr &N) {
  if (LLVM_LIKELY(N.Res == NameRes::Local))
    return Stack[Base + N.Slot];
  return builtinConst(N.BuiltinId, N.Loc);
}

Value Evaluator::eval(Expr &E) {
  if (LLVM_UNLIKELY(StepsLeft == 0)) {
    outOfBudget(E.Loc);
    return {};
  }
  --StepsLeft;
  switch (E.Kind) {
  case ExprKind::Int:
    return {static_cast<IntLit &>(E).Value, VT::Int};
  case ExprKind::Bool:
    return {static_cast<BoolLit &>(E).Value ? 1 : 0, VT::Bool};
  case ExprKind::Name:
    return evalName(static_cast<NameExpr &>(E));
  case ExprKind::Binary:
    return evalBinary(static_cast<BinaryExpr &>(E));
  case ExprKind::Unary: {
    auto &U = static_cast<UnaryExpr &>(E);
    Value V = eval(*U.Operand);
    if (Failed)
      return {};
    if (U.Op == UnOp::Not) {
      if (V.T != VT::Bool) {
        fail(DiagKind::TypeMismatch, U.Loc,
             fmt::format("'!' needs a bool, got {}", typeName(V.T)));
        return {};
      }
      return {!V.I, VT::Bool};
    }
    if (V.T != VT::Int) {
      fail(DiagKind::TypeMismatch, U.Loc,
           fmt::format("'-' needs an integer, got {}", typeName(V.T)));
      return {};
    }
    if (V.I == INT64_MIN) {
      fail(DiagKind::IntegerOverflow, U.Loc, "negation overflows 64 bits");
      return {};
    }
    return {-V.I, VT::Int};
  }
  case ExprKind::Index: {
    auto &X = static_cast<IndexExpr &>(E);
    Value A = evalName(*X.Base);
    int64_t I = evalInt(*X.Index, "an index");
    if (Failed)
      return {};
    if (A.T != VT::Array) {
      fail(
          DiagKind::TypeMismatch, X.Base->Loc,
          fmt::format("'{}' is {}, not an array", X.Base->Name, typeName(A.T)));
      return {};
    }
    auto &Arr = Arrays[A.I];
    if (I < 0 || I >= int64_t(Arr.size())) {
      fail(DiagKind::OutOfRange, X.Index->Loc,
           fmt::format("index {} is outside '{}' of length {}", I, X.Base->Name,
                       Arr.size()));
      return {};
    }
    return {Arr[I], VT::Int};
  }
  case ExprKind::Call: {
    auto &C = static_cast<CallExpr &>(E);
    if (C.BuiltinId != Builtin::None)
      return evalBuiltin(C);
    Value V = callFn(C, nullptr);
    if (Failed)
      return {};
    if (!HasRet) {
      fail(DiagKind::TypeMismatch, C.Loc,
           fmt::format("'{}' returned no value", C.Callee));
      return {};
    }
    return V;
  }
  }
  return {};
}

int64_t Evaluator::evalInt(Expr &E, const char *What) {
  Value V = eval(E);
  if (LLVM_UNLIKELY(V.T != VT::Int) && !Failed) {
    fail(DiagKind::TypeMismatch, E.Loc,
         fmt::format("expected {}, got {}", What, typeName(V.T)));
    return 0;
  }
  return V.I;
}

bool Evaluator::evalBool(Expr &E) {
  Value V = eval(E);
  if (LLVM_UNLIKELY(V.T != VT::Bool) && !Failed) {
    fail(DiagKind::TypeMismatch, E.Loc,
         fmt::format("expected a bool condition, got {}", typeName(V.T)));
    return false;
  }
  return V.I != 0;
}

Value Evaluator::evalBinary(BinaryExpr &B) {
  if (B.Op == BinOp::And || B.Op == BinOp::Or) {
    bool L = evalBool(*B.LHS);
    if (Failed)
      return {};
    if (B.Op == BinOp::And ? !L : L)
      return {L, VT::Bool};
    bool R = evalBool(*B.RHS);
    return {R, VT::Bool};
  }
  Value L = eval(*B.LHS);
  Value R = eval(*B.RHS);
  if (Failed)
    return {};
  if (B.Op == BinOp::Eq || B.Op == BinOp::Ne) {
    if (L.T != R.T || L.T == VT::Array) {
      fail(DiagKind::TypeMismatch, B.Loc,
           fmt::format("cannot compare {} with {}", typeName(L.T),
                       typeName(R.T)));
      return {};
    }
    return {(L.I == R.I) == (B.Op == BinOp::Eq), VT::Bool};
  }
  if (L.T != VT::Int || R.T != VT::Int) {
    fail(DiagKind::TypeMismatch, B.Loc,
         fmt::format("'{}' needs integers, got {} and {}", binOpSpelling(B.Op),
                     typeName(L.T), typeName(R.T)));
    return {};
  }
  int64_t X = L.I, Y = R.I, Z = 0;
  switch (B.Op) {
  case BinOp::Add:
    if (__builtin_add_overflow(X, Y, &Z))
      break;
    return {Z, VT::Int};
  case BinOp::Sub:
    if (__builtin_sub_overflow(X, Y, &Z))
      break;
    return {Z, VT::Int};
  case BinOp::Mul:
    if (__builtin_mul_overflow(X, Y, &Z))
      break;
    return {Z, VT::Int};
  case BinOp::Div:
  case BinOp::Mod:
    if (Y == 0) {
      fail(DiagKind::DivisionByZero, B.Loc,
           fmt::format("{} by zero",
                       B.Op == BinOp::Div ? "division" : "modulo"));
      return {};
    }
    if (X == INT64_MIN && Y == -1)
      break;
    return {B.Op == BinOp::Div ? floorDiv(X, Y) : floorMod(X, Y), VT::Int};
  case BinOp::Lt:
    return {X < Y, VT::Bool};
  case BinOp::Le:
    return {X <= Y, VT::Bool};
  case BinOp::Gt:
    return {X > Y, VT::Bool};
  case BinOp::Ge:
    return {X >= Y, VT::Bool};
  default:
    return {};
  }
  fail(DiagKind::IntegerOverflow, B.Loc,
       fmt::format("{} {} {} overflows 64 bits", X, binOpSpelling(B.Op), Y));
  return {};
}

Value Evaluator::evalBuiltin(CallExpr &C) {
  auto Arg = [&](size_t I) -> Expr & { return *C.Args[I].Value; };
  switch (C.BuiltinId) {
  case Builtin::Min:
  case Builtin::Max: {
    int64_t R = evalInt(Arg(0));
    for (size_t I = 1; I < C.Args.size(); ++I) {
      int64_t V = evalInt(Arg(I));
      R = C.BuiltinId == Builtin::Min ? std::min(R, V) : std::max(R, V);
    }
    return {R, VT::Int};
  }
  case Builtin::Div:
  case Builtin::Mod: {
    int64_t X = evalInt(Arg(0)), Y = evalInt(Arg(1));
    if (Failed)
      return {};
    if (Y == 0) {
      fail(DiagKind::DivisionByZero, Arg(1).Loc,
           fmt::format("{} by zero", C.Callee));
      return {};
    }
    if (X == INT64_MIN && Y == -1) {
      fail(DiagKind::IntegerOverflow, C.Loc, "division overflows 64 bits");
      return {};
    }
    return {C.BuiltinId == Builtin::Div ? floorDiv(X, Y) : floorMod(X, Y),
            VT::Int};
  }
  case Builtin::Abs: {
    int64_t X = evalInt(Arg(0));
    if (X == INT64_MIN) {
      fail(DiagKind::IntegerOverflow, C.Loc, "abs overflows 64 bits");
      return {};
    }
    return {X < 0 ? -X : X, VT::Int};
  }
  case Builtin::RankOf: {
    int64_t S = evalInt(Arg(0));
    if (Failed || !ensureTopology(C.Loc))
      return {};
    if (S < 0 || S >= Out.Topo.Stages) {
      fail(DiagKind::OutOfRange, Arg(0).Loc,
           fmt::format("stage {} is out of range 0..{}", S,
                       Out.Topo.Stages - 1));
      return {};
    }
    return {Out.Topo.StageToRank[S], VT::Int};
  }
  case Builtin::StageOf: {
    int64_t R = evalInt(Arg(0)), Ch = evalInt(Arg(1));
    if (Failed || !ensureTopology(C.Loc))
      return {};
    if (R < 0 || R >= Out.Topo.Ranks) {
      fail(DiagKind::OutOfRange, Arg(0).Loc,
           fmt::format("rank {} is out of range 0..{}", R, Out.Topo.Ranks - 1));
      return {};
    }
    auto &L = RankStages[R];
    if (Ch < 0 || Ch >= int64_t(L.size())) {
      fail(DiagKind::OutOfRange, Arg(1).Loc,
           fmt::format("rank {} holds {} stage{}; chunk {} is out of range", R,
                       L.size(), L.size() == 1 ? "" : "s", Ch));
      return {};
    }
    return {L[Ch], VT::Int};
  }
  case Builtin::Array: {
    int64_t N = evalInt(Arg(0)), Init = evalInt(Arg(1));
    if (Failed)
      return {};
    if (N < 0 || N > MaxArray) {
      fail(DiagKind::OutOfRange, Arg(0).Loc,
           fmt::format("array length {} is out of range 0..{}", N, MaxArray));
      return {};
    }
    ArrayElements += uint64_t(N);
    if (ArrayElements > MaxArrayTotal) {
      fail(DiagKind::OutOfRange, C.Loc,
           fmt::format("arrays made by this schedule hold more than {} "
                       "elements in total",
                       MaxArrayTotal));
      return {};
    }
    Arrays.emplace_back(size_t(N), Init);
    return {int64_t(Arrays.size() - 1), VT::Array};
  }
  case Builtin::Len: {
    Value A = eval(Arg(0));
    if (Failed)
      return {};
    if (A.T != VT::Array) {
      fail(DiagKind::TypeMismatch, Arg(0).Loc,
           fmt::format("len needs an array, got {}", typeName(A.T)));
      return {};
    }
    return {int64_t(Arrays[A.I].size()), VT::Int};
  }
  default:
    return {};
  }
}

Value Evaluator::callFn(CallExpr &C,
                        const std::map<std::string, int64_t> *ArgOverrides) {
  FnDecl &F = *C.Target;
  if (Depth >= Opts.RecursionLimit) {
    fail(DiagKind::RecursionLimit, C.Loc,
         fmt::format("calls nested deeper than the recursion limit of {}",
                     Opts.RecursionLimit));
    return {};
  }
  if (!step(C.Loc))
    return {};
  size_t NewBase = Stack.size();
  Stack.resize(NewBase + std::max<size_t>(F.NumSlots, F.Params.size()));
  for (size_t I = 0; I < F.Params.size(); ++I)
    if (C.Ordered[I]) {
      Value V = eval(*C.Ordered[I]);
      Stack[NewBase + I] = V;
    }
  size_t SavedBase = Base;
  Base = NewBase;
  ++Depth;
  Calls.push_back(&C);
  for (size_t I = 0; I < F.Params.size() && !Failed; ++I) {
    if (ArgOverrides) {
      auto It = ArgOverrides->find(F.Params[I].Var.Name);
      if (It != ArgOverrides->end()) {
        Used.insert(It->first);
        Stack[Base + I] = {It->second, VT::Int};
        continue;
      }
    }
    if (!C.Ordered[I])
      Stack[Base + I] = eval(*F.Params[I].Default);
  }
  Value Result;
  bool Returned = false;
  if (!Failed) {
    Flow Fl = execBlock(F.Body);
    // HasRet is only meaningful right after this body's own return.
    if (Fl == Flow::Return && HasRet) {
      Result = RetVal;
      Returned = true;
    }
  }
  --Depth;
  Calls.pop_back();
  Base = SavedBase;
  Stack.resize(NewBase);
  HasRet = Returned;
  return Result;
}

// ---------------------------------------------------------------------------
// Statements and actions
// ---------------------------------------------------------------------------

Flow Evaluator::exec(Stmt &S) {
  if (LLVM_UNLIKELY(StepsLeft == 0)) {
    outOfBudget(S.Loc);
    return Flow::Abort;
  }
  --StepsLeft;
  switch (S.Kind) {
  case StmtKind::Let: {
    auto &L = static_cast<LetStmt &>(S);
    Value V = eval(*L.Init);
    Stack[Base + L.Var.Slot] = V;
    break;
  }
  case StmtKind::Assign: {
    auto &A = static_cast<AssignStmt &>(S);
    Value V = eval(*A.Value);
    Stack[Base + A.Target->Slot] = V;
    break;
  }
  case StmtKind::IndexAssign: {
    auto &A = static_cast<AssignStmt &>(S);
    Value Arr = Stack[Base + A.Target->Slot];
    int64_t I = evalInt(*A.Index, "an index");
    int64_t V = evalInt(*A.Value);
    if (Failed)
      return Flow::Abort;
    if (Arr.T != VT::Array) {
      fail(DiagKind::TypeMismatch, A.Target->Loc,
           fmt::format("'{}' is {}, not an array", A.Target->Name,
                       typeName(Arr.T)));
      return Flow::Abort;
    }
    auto &Vec = Arrays[Arr.I];
    if (I < 0 || I >= int64_t(Vec.size())) {
      fail(DiagKind::OutOfRange, A.Index->Loc,
           fmt::format("index {} is outside '{}' of length {}", I,
                       A.Target->Name, Vec.size()));
      return Flow::Abort;
    }
    Vec[I] = V;
    break;
  }
  case StmtKind::For: {
    auto &F = static_cast<ForStmt &>(S);
    int64_t From = evalInt(*F.From), To = evalInt(*F.To);
    int64_t Step = F.Step ? evalInt(*F.Step) : 1;
    if (Failed)
      return Flow::Abort;
    if (Step == 0) {
      fail(DiagKind::InvalidValue, F.Step->Loc, "a for step must not be 0");
      return Flow::Abort;
    }
    size_t Slot = F.Var.Slot;
    for (int64_t I = From; Step > 0 ? I < To : I > To;) {
      if (LLVM_UNLIKELY(StepsLeft == 0)) {
        outOfBudget(S.Loc);
        return Flow::Abort;
      }
      --StepsLeft;
      Stack[Base + Slot] = {I, VT::Int};
      Flow Fl = execBlock(F.Body);
      if (Fl == Flow::Break)
        break;
      if (Fl == Flow::Return || Fl == Flow::Abort)
        return Fl;
      if (__builtin_add_overflow(I, Step, &I))
        break;
    }
    break;
  }
  case StmtKind::While: {
    auto &W = static_cast<WhileStmt &>(S);
    while (true) {
      bool C = evalBool(*W.Cond);
      if (Failed)
        return Flow::Abort;
      if (!C)
        break;
      Flow Fl = execBlock(W.Body);
      if (Fl == Flow::Break)
        break;
      if (Fl == Flow::Return || Fl == Flow::Abort)
        return Fl;
    }
    break;
  }
  case StmtKind::Break:
    return Flow::Break;
  case StmtKind::Continue:
    return Flow::Continue;
  case StmtKind::If: {
    auto &I = static_cast<IfStmt &>(S);
    bool C = evalBool(*I.Cond);
    if (Failed)
      return Flow::Abort;
    return execBlock(C ? I.Then : I.Else);
  }
  case StmtKind::RankBlock:
  case StmtKind::RankList:
    return execRank(static_cast<RankStmt &>(S));
  case StmtKind::Return: {
    auto &R = static_cast<ReturnStmt &>(S);
    HasRet = false;
    if (R.Value) {
      RetVal = eval(*R.Value);
      HasRet = true;
    }
    return Failed ? Flow::Abort : Flow::Return;
  }
  case StmtKind::Assert: {
    auto &A = static_cast<AssertStmt &>(S);
    bool C = evalBool(*A.Cond);
    if (!Failed && !C)
      fail(DiagKind::AssertionFailed, A.Loc,
           A.Message.empty() ? "assertion failed"
                             : fmt::format("assertion failed: {}", A.Message));
    break;
  }
  case StmtKind::Call:
    callFn(*static_cast<CallStmt &>(S).Call, nullptr);
    break;
  case StmtKind::Actions:
    emitActions(static_cast<ActionStmt &>(S).Actions);
    break;
  case StmtKind::Empty:
    break;
  }
  return Failed ? Flow::Abort : Flow::Next;
}

Flow Evaluator::execRank(RankStmt &R) {
  int64_t Rank = evalInt(*R.Rank, "a rank");
  if (Failed || !ensureReady(R.Loc))
    return Flow::Abort;
  if (Rank < 0 || Rank >= Out.Topo.Ranks) {
    fail(
        DiagKind::OutOfRange, R.Rank->Loc,
        fmt::format("rank {} is out of range 0..{}", Rank, Out.Topo.Ranks - 1));
    return Flow::Abort;
  }
  int32_t Saved = CurRank;
  CurRank = int32_t(Rank);
  Flow Fl = Flow::Next;
  if (R.Kind == StmtKind::RankList)
    emitActions(R.Actions);
  else
    Fl = execBlock(R.Body);
  CurRank = Saved;
  if (Failed)
    return Flow::Abort;
  return Fl;
}

bool Evaluator::resolveCompute(ComputeRef &R, ir::Action &A) {
  int64_t Mb = evalInt(*R.Microbatch, "a microbatch");
  int64_t St = -1;
  if (R.Stage)
    St = evalInt(*R.Stage, "a stage");
  if (Failed)
    return false;
  if (LLVM_UNLIKELY(CurRank < 0)) {
    fail(DiagKind::EmitOutsideRank, R.Loc,
         "action outside a rank block; wrap it in 'rank r { ... }'");
    return false;
  }
  if (LLVM_UNLIKELY(Mb < 0 || Mb >= *NMicro)) {
    fail(DiagKind::OutOfRange, R.Microbatch->Loc,
         fmt::format("microbatch {} is out of range 0..{}", Mb, *NMicro - 1));
    return false;
  }
  if (!R.Stage) {
    St = OnlyStage[CurRank];
    if (LLVM_UNLIKELY(St < 0)) {
      if (St == -2)
        fail(DiagKind::AmbiguousStage, R.Loc,
             fmt::format("rank {} holds several stages; say which with @stage",
                         CurRank));
      else
        fail(DiagKind::StagePlacement, R.Loc,
             fmt::format("rank {} holds no stage", CurRank));
      return false;
    }
  } else if (LLVM_UNLIKELY(St < 0 || St >= Out.Topo.Stages)) {
    fail(
        DiagKind::OutOfRange, R.Stage->Loc,
        fmt::format("stage {} is out of range 0..{}", St, Out.Topo.Stages - 1));
    return false;
  }
  A = ir::Action::compute(R.Kind, int32_t(Mb), int32_t(St), R.Loc);
  return true;
}

void Evaluator::emitActions(std::vector<ActionNode> &As) {
  for (ActionNode &N : As) {
    if (Failed) {
      // An explicit list written in the pipeline itself: report every bad
      // action, not just the first (inside a schedule one error stops all).
      if (Depth != 0 || ListErrors >= 20)
        return;
      ++ListErrors;
      Failed = false;
    }
    switch (N.Kind) {
    case ActionNodeKind::Compute: {
      ir::Action A;
      if (resolveCompute(N.First, A))
        emit(A, N.Loc);
      break;
    }
    case ActionNodeKind::Overlap: {
      ir::Action A, B;
      if (!resolveCompute(N.First, A) || !resolveCompute(N.Second, B))
        break;
      A.Loc = N.Loc;
      A.Flags |= ir::ActionFlags::OverlapNext;
      if (emit(A, N.Loc))
        emit(B, N.Loc);
      break;
    }
    case ActionNodeKind::Send:
    case ActionNodeKind::Recv: {
      ir::Action A;
      if (!resolveCompute(N.First, A))
        break;
      bool Fwd = A.Kind == ir::ActionKind::F;
      bool Send = N.Kind == ActionNodeKind::Send;
      ir::ActionKind K =
          Send ? (Fwd ? ir::ActionKind::SendF : ir::ActionKind::SendB)
               : (Fwd ? ir::ActionKind::RecvF : ir::ActionKind::RecvB);
      int64_t Peer;
      if (N.Operand) {
        Peer = evalInt(*N.Operand, "a rank");
        if (Failed)
          break;
        if (Peer < 0 || Peer >= Out.Topo.Ranks) {
          fail(DiagKind::OutOfRange, N.Operand->Loc,
               fmt::format("peer rank {} is out of range 0..{}", Peer,
                           Out.Topo.Ranks - 1));
          break;
        }
      } else {
        // The partner stage: forward data flows to s+1, gradients to s-1.
        int64_t Partner = A.Stage + ((Fwd == Send) ? 1 : -1);
        if (Partner < 0 || Partner >= Out.Topo.Stages) {
          fail(DiagKind::OutOfRange, N.Loc,
               fmt::format("stage {} has no {} stage to {}; give the peer",
                           A.Stage, Partner < 0 ? "previous" : "next",
                           Send ? "send to" : "receive from"));
          break;
        }
        Peer = Out.Topo.StageToRank[Partner];
      }
      emit(ir::Action::comm(K, A.Microbatch, A.Stage, int32_t(Peer), N.Loc),
           N.Loc);
      break;
    }
    case ActionNodeKind::Control: {
      int64_t St = evalInt(*N.Operand, "a stage");
      if (Failed)
        break;
      if (St < 0 || St >= Out.Topo.Stages) {
        fail(DiagKind::OutOfRange, N.Operand->Loc,
             fmt::format("stage {} is out of range 0..{}", St,
                         Out.Topo.Stages - 1));
        break;
      }
      emit(ir::Action::control(N.ControlKind, int32_t(St), N.Loc), N.Loc);
      break;
    }
    case ActionNodeKind::Idle: {
      float T = 1.0f;
      if (N.IdleTime) {
        if (!quantityOk(*N.IdleTime, "an idle time"))
          break;
        if (!N.IdleTime->Unit.empty() && N.IdleTime->Unit != "ms") {
          fail(DiagKind::InvalidValue, N.IdleTime->UnitLoc,
               fmt::format("unknown time unit '{}' (idle is in time units)",
                           N.IdleTime->Unit));
          break;
        }
        T = N.IdleTime->FloatValue;
      }
      emit(ir::Action::idle(T, N.Loc), N.Loc);
      break;
    }
    }
  }
  if (ListErrors && Depth == 0)
    Failed = true;
}

// ---------------------------------------------------------------------------
// The pipeline
// ---------------------------------------------------------------------------

bool Evaluator::ensureTopology(LocId L) {
  if (TopoDone)
    return true;
  if (TopoFailed) {
    Failed = true; // reported once already
    return false;
  }
  TopoFailed = true;
  if (!NRanks)
    NRanks = override("ranks");
  if (!NRanks) {
    fail(DiagKind::MissingField, Pl->Loc,
         fmt::format("pipeline '{}' does not declare 'ranks'", Pl->Name));
    return false;
  }
  if (!NStages)
    NStages = override("stages");
  ir::Topology &T = Out.Topo;
  T.Ranks = int32_t(*NRanks);
  T.Stages = int32_t(NStages ? *NStages : *NRanks);
  LocId PLoc =
      StagesItem ? (StagesItem->PlacementLoc != NoLoc ? StagesItem->PlacementLoc
                                                      : StagesItem->Loc)
                 : Pl->Loc;
  if (StagesItem && StagesItem->ExplicitPlacement) {
    T.Place = ir::Placement::Explicit;
    T.StageToRank.assign(T.Stages, -1);
    llvm::SmallVector<LocId, 16> Where(T.Stages, NoLoc);
    for (auto &[SE, RE] : StagesItem->PlacementMap) {
      int64_t S = evalInt(*SE, "a stage"), R = evalInt(*RE, "a rank");
      if (Failed)
        return false;
      if (S < 0 || S >= T.Stages) {
        fail(DiagKind::OutOfRange, SE->Loc,
             fmt::format("stage {} is out of range 0..{}", S, T.Stages - 1));
        return false;
      }
      if (R < 0 || R >= T.Ranks) {
        fail(DiagKind::OutOfRange, RE->Loc,
             fmt::format("rank {} is out of range 0..{}", R, T.Ranks - 1));
        return false;
      }
      if (T.StageToRank[S] >= 0) {
        fail(DiagKind::StagePlacement, SE->Loc,
             fmt::format("stage {} is placed twice", S))
            .note(Where[S], "first placed here");
        return false;
      }
      T.StageToRank[S] = int32_t(R);
      Where[S] = SE->Loc;
    }
    for (int32_t S = 0; S < T.Stages; ++S)
      if (T.StageToRank[S] < 0) {
        fail(DiagKind::StagePlacement, PLoc,
             fmt::format("stage {} is placed on no rank", S));
        return false;
      }
  } else {
    ir::Placement P = ir::Placement::Loop;
    if (StagesItem && !StagesItem->PlacementName.empty()) {
      llvm::StringRef N = StagesItem->PlacementName;
      if (N == "v") {
        P = ir::Placement::V;
      } else if (N != "loop") {
        fail(DiagKind::InvalidValue, PLoc,
             fmt::format("unknown placement '{}' (expected loop, v or an "
                         "explicit {{ stage -> rank }} map)",
                         N.str()));
        return false;
      }
    }
    if (P == ir::Placement::V && T.Stages % T.Ranks != 0) {
      fail(DiagKind::InvalidValue, PLoc,
           fmt::format("v placement needs stages ({}) to be a multiple of "
                       "ranks ({})",
                       T.Stages, T.Ranks));
      return false;
    }
    T.place(P);
  }
  RankStages.assign(T.Ranks, {});
  for (int32_t S = 0; S < T.Stages; ++S)
    RankStages[T.StageToRank[S]].push_back(S);
  for (int32_t R = 0; R < T.Ranks; ++R)
    if (RankStages[R].empty()) {
      fail(DiagKind::StagePlacement, PLoc,
           fmt::format("rank {} holds no stage ({} stages on {} ranks)", R,
                       T.Stages, T.Ranks));
      return false;
    }
  OnlyStage.assign(T.Ranks, -2);
  for (int32_t R = 0; R < T.Ranks; ++R)
    if (RankStages[R].size() == 1)
      OnlyStage[R] = RankStages[R][0];
  TopoDone = true;
  TopoFailed = false;
  (void)L;
  return true;
}

bool Evaluator::ensureReady(LocId L) {
  if (Ready)
    return true;
  if (!ensureTopology(L))
    return false;
  if (ReadyFailed) {
    Failed = true;
    return false;
  }
  if (!NMicro)
    NMicro = override("microbatches");
  if (!NMicro) {
    ReadyFailed = true;
    fail(
        DiagKind::MissingField, Pl->Loc,
        fmt::format("pipeline '{}' does not declare 'microbatches'", Pl->Name));
    return false;
  }
  Out.Topo.Microbatches = int32_t(*NMicro);
  if (Out.Topo.Directions == 2 &&
      (Out.Topo.Stages % 2 != 0 || Out.Topo.Microbatches % 2 != 0)) {
    ReadyFailed = true;
    fail(DiagKind::InvalidValue, DirectionsLoc,
         fmt::format("directions 2 needs an even number of stages and of "
                     "microbatches, got {} stages and {} microbatches",
                     Out.Topo.Stages, Out.Topo.Microbatches));
    return false;
  }
  Out.resetRanks();
  Ready = true;
  return true;
}

std::optional<int64_t> Evaluator::sizeField(PipelineItem &I, const char *Name,
                                            int64_t Min, int64_t Max) {
  if (TopoDone && std::string(Name) != "microbatches") {
    fail(DiagKind::InvalidValue, I.Loc,
         fmt::format("'{}' comes after the topology was used; declare it first",
                     Name));
    return std::nullopt;
  }
  std::optional<int64_t> V = override(Name);
  if (!V) {
    V = evalInt(*I.Value);
    if (Failed)
      return std::nullopt;
  }
  if (*V < Min || *V > Max) {
    fail(DiagKind::OutOfRange, I.Value->Loc,
         fmt::format("{} must be between {} and {}, got {}", Name, Min, Max,
                     *V));
    return std::nullopt;
  }
  return V;
}

bool Evaluator::quantityOk(const Quantity &Q, const char *What,
                           bool AllowZero) {
  if (!std::isfinite(Q.Value) || Q.Value < 0 || (!AllowZero && Q.Value == 0)) {
    fail(DiagKind::InvalidValue, Q.Loc,
         fmt::format("{} must be a {} finite number", What,
                     AllowZero ? "non-negative" : "positive"));
    return false;
  }
  return true;
}

static std::optional<double> bytesUnit(llvm::StringRef U) {
  return llvm::StringSwitch<std::optional<double>>(U)
      .Cases("", "B", "bytes", 1.0)
      .Case("KB", 1e3)
      .Case("MB", 1e6)
      .Case("GB", 1e9)
      .Case("TB", 1e12)
      .Case("KiB", 1024.0)
      .Case("MiB", 1048576.0)
      .Case("GiB", 1073741824.0)
      .Case("TiB", 1099511627776.0)
      .Default(std::nullopt);
}

static std::optional<double> msPerUnit(llvm::StringRef U) {
  return llvm::StringSwitch<std::optional<double>>(U)
      .Cases("", "ms", 1.0)
      .Case("us", 1e-3)
      .Case("s", 1e3)
      .Default(std::nullopt);
}

void Evaluator::applyCost(PipelineItem &I) {
  ir::CostModel &C = Out.Cost;
  enum { BF = 1, BI = 2, BW = 4, BB = 8 };
  unsigned DefaultGiven = 0;
  auto Slot = [](ir::StageCost &SC, char K) -> double & {
    switch (K) {
    case 'F':
      return SC.F;
    case 'I':
      return SC.I;
    case 'W':
      return SC.W;
    default:
      return SC.B;
    }
  };
  auto Bit = [](char K) {
    return K == 'F' ? BF : K == 'I' ? BI : K == 'W' ? BW : BB;
  };
  auto CheckEntry = [&](CostEntry &E) {
    if (!quantityOk(E.Value, "a cost"))
      return false;
    if (!E.Value.Unit.empty() && E.Value.Unit != "ms") {
      fail(DiagKind::InvalidValue, E.Value.UnitLoc,
           fmt::format("unknown cost unit '{}' (costs are in time units)",
                       E.Value.Unit));
      return false;
    }
    return true;
  };
  for (CostEntry &E : I.Costs) {
    if (E.Stage)
      continue;
    if (E.Key == "overlap") {
      if (CheckEntry(E))
        C.Overlap = E.Value.Value;
      continue;
    }
    if (E.Key.size() != 1 || !llvm::StringRef("FIWB").contains(E.Key[0])) {
      fail(DiagKind::InvalidValue, E.KeyLoc,
           fmt::format("unknown cost '{}' (expected F, I, W, B or overlap)",
                       E.Key));
      continue;
    }
    if (CheckEntry(E)) {
      Slot(C.Default, E.Key[0]) = E.Value.Value;
      DefaultGiven |= Bit(E.Key[0]);
    }
  }
  if ((DefaultGiven & (BI | BW)) == (BI | BW) && !(DefaultGiven & BB))
    C.Default.B = C.Default.I + C.Default.W;
  llvm::DenseMap<int64_t, unsigned> StageGiven;
  for (CostEntry &E : I.Costs) {
    if (!E.Stage)
      continue;
    if (E.Key.size() != 1 || !llvm::StringRef("FIWB").contains(E.Key[0])) {
      fail(DiagKind::InvalidValue, E.KeyLoc,
           fmt::format("per-stage cost '{}' must be F, I, W or B", E.Key));
      continue;
    }
    if (!ensureTopology(E.Loc))
      return;
    int64_t S = evalInt(*E.Stage, "a stage");
    if (Failed)
      return;
    if (S < 0 || S >= Out.Topo.Stages) {
      fail(DiagKind::OutOfRange, E.Stage->Loc,
           fmt::format("stage {} is out of range 0..{}", S,
                       Out.Topo.Stages - 1));
      continue;
    }
    if (!CheckEntry(E))
      continue;
    if (C.PerStage.empty())
      C.PerStage.assign(Out.Topo.Stages, C.Default);
    Slot(C.PerStage[S], E.Key[0]) = E.Value.Value;
    StageGiven[S] |= Bit(E.Key[0]);
  }
  for (auto &[S, Given] : StageGiven)
    if ((Given & (BI | BW)) == (BI | BW) && !(Given & BB))
      C.PerStage[S].B = C.PerStage[S].I + C.PerStage[S].W;
}

void Evaluator::applyComm(PipelineItem &I) {
  ir::CostModel &C = Out.Cost;
  for (CommEntry &E : I.Comms) {
    llvm::StringRef K = E.Key;
    bool IsValue = K == "latency" || K == "bandwidth" || K == "activation" ||
                   K == "gradient";
    bool IsFlag = K == "async" || K == "blocking";
    if (!IsValue && !IsFlag && K != "model") {
      fail(DiagKind::InvalidValue, E.Loc,
           fmt::format("unknown comm setting '{}' (expected model, latency, "
                       "bandwidth, activation, gradient, async or blocking)",
                       E.Key));
      continue;
    }
    if (IsValue != E.Value.has_value()) {
      fail(DiagKind::InvalidValue, E.Loc,
           IsValue ? fmt::format("'{}' needs a value", E.Key)
                   : fmt::format("'{}' takes no number", E.Key));
      continue;
    }
    if (K == "model") {
      auto M = llvm::StringSwitch<std::optional<ir::CommModel>>(E.Word)
                   .Case("rendezvous", ir::CommModel::Rendezvous)
                   .Case("eager", ir::CommModel::Eager)
                   .Case("batched", ir::CommModel::Batched)
                   .Default(std::nullopt);
      if (!M) {
        fail(DiagKind::InvalidValue, E.WordLoc != NoLoc ? E.WordLoc : E.Loc,
             fmt::format("unknown comm model '{}' (expected rendezvous, eager "
                         "or batched)",
                         E.Word));
        continue;
      }
      Out.Comm = *M;
      continue;
    }
    if (IsFlag) {
      if (!E.Word.empty()) {
        fail(DiagKind::InvalidValue, E.WordLoc,
             fmt::format("'{}' takes no argument", E.Key));
        continue;
      }
      C.AsyncComm = K == "async";
      continue;
    }
    const Quantity &Q = *E.Value;
    if (!quantityOk(Q, E.Key.c_str(), K != "bandwidth"))
      continue;
    if (K == "latency") {
      auto F = msPerUnit(Q.Unit);
      if (!F) {
        fail(DiagKind::InvalidValue, Q.UnitLoc,
             fmt::format("unknown time unit '{}' (expected ms, us or s)",
                         Q.Unit));
        continue;
      }
      C.Latency = Q.Value * *F;
      continue;
    }
    if (K == "bandwidth") {
      llvm::StringRef Bytes, Per;
      std::tie(Bytes, Per) = llvm::StringRef(Q.Unit).split('/');
      auto BF = bytesUnit(Bytes);
      auto TF = msPerUnit(Per);
      if (Q.Unit.empty() || Per.empty() || !BF || !TF) {
        fail(
            DiagKind::InvalidValue, Q.UnitLoc != NoLoc ? Q.UnitLoc : Q.Loc,
            fmt::format("bandwidth needs a unit such as GB/s or B/ms, got '{}'",
                        Q.Unit));
        continue;
      }
      C.BandwidthBytesPerMs = Q.Value * *BF / *TF;
      continue;
    }
    auto BF = bytesUnit(Q.Unit);
    if (!BF) {
      fail(DiagKind::InvalidValue, Q.UnitLoc,
           fmt::format("unknown size unit '{}' (expected B, KB, MB, GB, KiB, "
                       "MiB or GiB)",
                       Q.Unit));
      continue;
    }
    (K == "activation" ? C.ActivationBytes : C.GradientBytes) = Q.Value * *BF;
  }
}

std::optional<ir::Schedule> Evaluator::run(PipelineDecl &Decl) {
  Pl = &Decl;
  Out.Name = Decl.Name;
  Out.DeclLoc = Decl.Loc;
  Stack.resize(Decl.NumSlots);
  Base = 0;
  bool AnyFailed = false;
  PipelineItem *ScheduleItem = nullptr, *FirstRank = nullptr;
  for (PipelineItem &I : Decl.Items) {
    switch (I.Kind) {
    case PipelineItemKind::Ranks:
      NRanks = sizeField(I, "ranks", 1, MaxRanks);
      break;
    case PipelineItemKind::Stages:
      StagesItem = &I;
      NStages = sizeField(I, "stages", 1, MaxStages);
      break;
    case PipelineItemKind::Microbatches:
      if (Ready) {
        fail(DiagKind::InvalidValue, I.Loc,
             "'microbatches' comes after actions were emitted; declare it "
             "first");
        break;
      }
      NMicro = sizeField(I, "microbatches", 1, MaxMicrobatches);
      break;
    case PipelineItemKind::Directions: {
      if (Ready) {
        fail(DiagKind::InvalidValue, I.Loc,
             "'directions' comes after actions were emitted; declare it first");
        break;
      }
      int64_t V = evalInt(*I.Value);
      if (Failed)
        break;
      if (V != 1 && V != 2) {
        fail(DiagKind::InvalidValue, I.Value->Loc,
             fmt::format("directions must be 1 or 2, got {}", V));
        break;
      }
      Out.Topo.Directions = int32_t(V);
      DirectionsLoc = I.Loc;
      break;
    }
    case PipelineItemKind::Cost:
      applyCost(I);
      break;
    case PipelineItemKind::Comm:
      applyComm(I);
      break;
    case PipelineItemKind::Memory: {
      std::optional<int64_t> V = override("memory_limit");
      if (!V)
        V = evalInt(*I.Value);
      if (Failed)
        break;
      if (*V < 0) {
        fail(DiagKind::OutOfRange, I.Value->Loc,
             fmt::format("memory limit must not be negative, got {}", *V));
        break;
      }
      Out.MemoryLimit = *V;
      break;
    }
    case PipelineItemKind::Fsdp: {
      Out.Fsdp.Enabled = true;
      if (!I.Value)
        break;
      int64_t V = evalInt(*I.Value);
      if (Failed)
        break;
      if (V < 0 || V > INT32_MAX) {
        fail(DiagKind::OutOfRange, I.Value->Loc,
             fmt::format("fsdp prefetch must be between 0 and {}, got {}",
                         INT32_MAX, V));
        break;
      }
      Out.Fsdp.Prefetch = int32_t(V);
      break;
    }
    case PipelineItemKind::Let: {
      if (auto O = override(I.Var.Name)) {
        Stack[I.Var.Slot] = {*O, VT::Int};
        break;
      }
      Stack[I.Var.Slot] = eval(*I.Value);
      break;
    }
    case PipelineItemKind::Schedule: {
      ScheduleItem = &I;
      if (FirstRank) {
        fail(DiagKind::InvalidValue, I.Loc,
             "a pipeline gives a schedule or explicit rank lists, not both")
            .note(FirstRank->Loc, "rank list given here");
        break;
      }
      if (AnyFailed || !ensureReady(I.Loc))
        break;
      CallExpr &C = *I.Call;
      if (!C.Target) {
        // `schedule synth(memory: N, ...)`: a request for the synth pass.
        ir::SynthRequest R;
        R.Loc = C.Loc;
        bool HaveMemory = false;
        for (Arg &A : C.Args) {
          if (A.Name.empty()) {
            fail(DiagKind::InvalidValue, A.Value->Loc,
                 "synth takes named arguments, e.g. synth(memory: 4)");
            break;
          }
          std::optional<int64_t> V = override(A.Name);
          if (!V)
            V = evalInt(*A.Value);
          if (Failed)
            break;
          if (A.Name == "memory") {
            R.MemoryLimit = *V;
            HaveMemory = true;
          } else {
            R.Args.emplace_back(A.Name, *V);
          }
        }
        if (Failed)
          break;
        if (!HaveMemory) {
          if (auto O = override("memory"))
            R.MemoryLimit = *O, HaveMemory = true;
          else if (auto O = override("memory_limit"))
            R.MemoryLimit = *O, HaveMemory = true;
          else if (Out.MemoryLimit)
            R.MemoryLimit = *Out.MemoryLimit, HaveMemory = true;
        }
        if (!HaveMemory) {
          fail(DiagKind::MissingField, C.Loc,
               "synth needs a memory limit: synth(memory: N) or 'memory limit "
               "N;'");
          break;
        }
        if (R.MemoryLimit <= 0) {
          fail(DiagKind::OutOfRange, C.Loc,
               fmt::format("synth memory limit must be positive, got {}",
                           R.MemoryLimit));
          break;
        }
        std::sort(R.Args.begin(), R.Args.end());
        Out.Synth = std::move(R);
        break;
      }
      CallSite = C.Loc;
      CallName = C.Callee;
      callFn(C, &Opts.Overrides);
      CallSite = NoLoc;
      break;
    }
    case PipelineItemKind::Rank:
      if (ScheduleItem) {
        fail(DiagKind::InvalidValue, I.Loc,
             "a pipeline gives a schedule or explicit rank lists, not both")
            .note(ScheduleItem->Loc, "schedule given here");
        break;
      }
      if (!FirstRank)
        FirstRank = &I;
      ListErrors = 0;
      execRank(*I.Rank);
      break;
    }
    if (Failed) {
      AnyFailed = true;
      Failed = false;
      if (I.Kind == PipelineItemKind::Schedule)
        break;
    }
  }
  if (AnyFailed)
    return std::nullopt;
  if (!ensureReady(Decl.Loc))
    return std::nullopt;
  if (auto O = override("memory_limit"))
    Out.MemoryLimit = *O;
  if (!ScheduleItem && !FirstRank) {
    fail(DiagKind::MissingField, Decl.Loc,
         fmt::format("pipeline '{}' gives neither a schedule nor rank lists",
                     Decl.Name));
    return std::nullopt;
  }
  return std::move(Out);
}

} // namespace

std::optional<ir::Schedule> evaluatePipeline(PipelineDecl &Pl,
                                             DiagnosticEngine &Diags,
                                             const FrontendOptions &Opts,
                                             std::set<std::string> &Used) {
  Evaluator E(Diags, Opts, Used);
  return E.run(Pl);
}

} // namespace pps::frontend
