//===- EvaluateRun.cpp - running schedule bodies as register code ---------===//
//
// The loop over the ops of EvaluateCode.h, direct-threaded (each op's
// handler ends in the dispatch of the next). Each op first pays its steps
// (running out reports the budget error at the node the walker would have
// stopped at), then does what the walker does for its node, with the same
// checks and messages (the walker's helpers where they exist). The frame
// pointer is reloaded after anything that may grow the value stack (a
// call, the walker).
//
//===----------------------------------------------------------------------===//
// One dispatch per op: GCC would otherwise merge the handlers' dispatches
// into a few shared tails, one more jump per op (about 3% of the loop's
// instructions). Clang keeps them apart by itself.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-crossjumping")
#endif

#include "EvaluateCode.h"
#include "EvaluatorImpl.h"

#include "llvm/Support/ErrorHandling.h"

namespace pps::frontend::eval {

namespace {
const char *whatName(uint8_t W) {
  static const char *Names[] = {"an integer", "an index", "a microbatch",
                                "a stage", "a rank"};
  return Names[W];
}
} // namespace

// Every op, in OpCode's order: the dispatch table of run() is made from it.
// clang-format off
#define PPS_OPCODES(X) \
  X(Nop) X(Move) X(Builtin) X(Add) X(Sub) X(Mul) X(Div) X(Mod) X(Lt) X(Le) \
  X(Gt) X(Ge) X(Eq) X(Ne) X(AddI) X(SubI) X(MulI) X(DivI) X(ModI) X(LtI) \
  X(LeI) X(GtI) X(GeI) X(EqI) X(NeI) X(LtIJ) X(LeIJ) X(GtIJ) X(GeIJ) \
  X(EqIJ) X(NeIJ) X(AndOr) X(ToBool) X(Unary) X(Index) X(IndexSum) \
  X(CheckInt) X(MinMax) X(DivMod) X(Abs) X(RankOf) X(Model) \
  X(StageOf) X(Array) X(Len) X(CallEnter) X(CallInvoke) X(Jump) \
  X(BranchFalse) X(ForInit) X(ForIter) X(ForNext) X(ForNext1) X(ForNextStep) X(IndexStore) X(Assert) \
  X(Return) X(RankEnter) X(RankEmit) X(RankExit) X(EmitCompute) \
  X(EmitSum) X(OverlapFirst) X(EmitOverlap) X(WalkExpr) X(WalkStmt) \
  X(WalkActions) X(End)
// clang-format on

// The table is indexed by OpCode: the list must be the enum, in order.
constexpr OpCode OpOrder[] = {
#define PPS_OP(Name) OpCode::Name,
    PPS_OPCODES(PPS_OP)
#undef PPS_OP
};
constexpr bool opOrderIsTheEnums() {
  for (size_t I = 0; I < sizeof(OpOrder) / sizeof(OpOrder[0]); ++I)
    if (size_t(OpOrder[I]) != I)
      return false;
  return sizeof(OpOrder) / sizeof(OpOrder[0]) == size_t(OpCode::End) + 1;
}
static_assert(opOrderIsTheEnums(), "PPS_OPCODES must list OpCode in order");

Flow Evaluator::run(const FnCode &FC) {
  const Op *Ops = FC.Ops.data();
  // The frame; register fields of the ops are byte offsets into it.
  char *R = reinterpret_cast<char *>(Stack.data() + Base);
#define PPS_REG(Offset) (*reinterpret_cast<Value *>(R + (Offset)))
  // The budget lives in a register here; StepsLeft is brought up to date
  // before anything that reads it (the walker, a call, an error) and read
  // back after.
  uint64_t Left = StepsLeft;
  // Op Target next: pay its steps, then run it. O is the op running.
#define PPS_GO(Target)                                                         \
  do {                                                                         \
    O = (Target);                                                              \
    if (LLVM_UNLIKELY(__builtin_sub_overflow(Left, O->Charge, &Left)))         \
      goto BudgetRanOut;                                                       \
    goto *Handlers[size_t(O->Code)];                                           \
  } while (false)
#define PPS_NEXT() PPS_GO(O + 1)
#define PPS_SYNC() (StepsLeft = Left)
#define PPS_RELOAD()                                                           \
  (Left = StepsLeft, R = reinterpret_cast<char *>(Stack.data() + Base))
#define PPS_ABORT()                                                            \
  do {                                                                         \
    PPS_SYNC();                                                                \
    return Flow::Abort;                                                        \
  } while (false)
  // An integer operation: on overflow (or division by zero) the walker's
  // error.
#define PPS_ARITH(Expr)                                                        \
  {                                                                            \
    Value L = PPS_REG(O->B), Rv = PPS_REG(O->C);                               \
    int64_t X = L.I, Y = Rv.I, Z;                                              \
    if (LLVM_UNLIKELY(L.T != VT::Int || Rv.T != VT::Int || !(Expr))) {         \
      PPS_SYNC();                                                              \
      binaryError(*static_cast<BinaryExpr *>(const_cast<void *>(O->Node)), L,  \
                  Rv);                                                         \
      return Flow::Abort;                                                      \
    }                                                                          \
    PPS_REG(O->A) = {Z, VT::Int};                                              \
    PPS_NEXT();                                                                \
  }
  // A comparison of integers (or, for == and !=, of two bools), and the
  // jump of the test it is fused with.
#define PPS_COMPARE(Cmp, Equality)                                             \
  {                                                                            \
    Value L = PPS_REG(O->B), Rv = PPS_REG(O->C);                               \
    bool Res;                                                                  \
    if (LLVM_LIKELY(L.T == VT::Int && Rv.T == VT::Int) ||                      \
        ((Equality) && L.T == Rv.T && L.T != VT::Array)) {                     \
      Res = L.I Cmp Rv.I;                                                      \
    } else {                                                                   \
      PPS_SYNC();                                                              \
      binaryError(*static_cast<BinaryExpr *>(const_cast<void *>(O->Node)), L,  \
                  Rv);                                                         \
      return Flow::Abort;                                                      \
    }                                                                          \
    PPS_REG(O->A) = {Res, VT::Bool};                                           \
    PPS_GO(Res == O->Sub ? Ops + O->D : O + 1);                                \
  }
  // The same two for operands known to be integers.
#define PPS_ARITH_I(Expr)                                                      \
  {                                                                            \
    int64_t X = PPS_REG(O->B).I, Y = PPS_REG(O->C).I, Z;                       \
    if (LLVM_UNLIKELY(!(Expr))) {                                              \
      PPS_SYNC();                                                              \
      binaryError(*static_cast<BinaryExpr *>(const_cast<void *>(O->Node)),     \
                  PPS_REG(O->B), PPS_REG(O->C));                               \
      return Flow::Abort;                                                      \
    }                                                                          \
    PPS_REG(O->A) = {Z, VT::Int};                                              \
    PPS_NEXT();                                                                \
  }
#define PPS_COMPARE_I(Cmp)                                                     \
  {                                                                            \
    bool Res = PPS_REG(O->B).I Cmp PPS_REG(O->C).I;                            \
    PPS_REG(O->A) = {Res, VT::Bool};                                           \
    PPS_GO(Res == O->Sub ? Ops + O->D : O + 1);                                \
  }
#define PPS_JUMP_I(Cmp)                                                        \
  {                                                                            \
    bool Res = PPS_REG(O->B).I Cmp PPS_REG(O->C).I;                            \
    PPS_GO(Res == O->Sub ? Ops + O->D : O + 1);                                \
  }
  // Direct threading: every handler ends in its own copy of the dispatch
  // (fetch, pay the steps, jump through the table), so each has its own
  // indirect branch to predict, instead of one shared by all ops.
  static const void *const Handlers[] = {
#define PPS_HANDLER(Name) &&Do##Name,
      PPS_OPCODES(PPS_HANDLER)
#undef PPS_HANDLER
  };
  // The common case of an EmitCompute, checkCompute's and emit's checks
  // inline: a rank, a microbatch and a stage in range (written in StReg,
  // or the rank's only one), room under the action limit. False: nothing
  // was emitted, the checks of the slow path say why.
  auto emitFast = [&](const ActionNode &N, int64_t Mb, int32_t StReg)
      __attribute__((always_inline)) {
    if (LLVM_LIKELY(CurRank >= 0 && Mb >= 0 && Mb < *NMicro &&
                    Emitted < Opts.MaxActions)) {
      int64_t St = StReg >= 0 ? PPS_REG(StReg).I : OnlyStage[size_t(CurRank)];
      if (LLVM_LIKELY(St >= 0 && St < Out.Topo.Stages)) {
        ++Emitted;
        Out.Ranks[size_t(CurRank)].Actions.push_back(ir::Action::compute(
            N.First.Kind, int32_t(Mb), int32_t(St), N.First.Loc));
        return true;
      }
    }
    return false;
  };
  const Op *O;
  int64_t EmitMb;    // the microbatch EmitCompute and EmitSum emit
  int64_t NextIndex; // the index ForNext1 and ForNextStep enter the body with
  PPS_GO(Ops);
BudgetRanOut:
  StepsLeft = Left + O->Charge;
  budgetRanOut(FC, *O);
  return Flow::Abort;
DoNop:
  PPS_NEXT();
DoMove:
  PPS_REG(O->A) = PPS_REG(O->B);
  PPS_NEXT();
DoBuiltin : {
  auto &N = *static_cast<NameExpr *>(const_cast<void *>(O->Node));
  if (LLVM_LIKELY(ConstsReady)) {
    PPS_REG(O->A) = {Consts[size_t(N.BuiltinId)], VT::Int};
    PPS_NEXT();
  }
  PPS_SYNC();
  PPS_REG(O->A) = builtinConst(N.BuiltinId, N.Loc);
  if (Failed)
    return Flow::Abort;
  PPS_NEXT();
}
DoAdd:
  PPS_ARITH(!__builtin_add_overflow(X, Y, &Z))
DoSub:
  PPS_ARITH(!__builtin_sub_overflow(X, Y, &Z))
DoMul:
  PPS_ARITH(!__builtin_mul_overflow(X, Y, &Z))
DoDiv:
  PPS_ARITH(Y != 0 && !(X == INT64_MIN && Y == -1) &&
            ((Z = floorDiv(X, Y)), true))
DoMod:
  PPS_ARITH(Y != 0 && !(X == INT64_MIN && Y == -1) &&
            ((Z = floorMod(X, Y)), true))
DoLt:
  PPS_COMPARE(<, false)
DoLe:
  PPS_COMPARE(<=, false)
DoGt:
  PPS_COMPARE(>, false)
DoGe:
  PPS_COMPARE(>=, false)
DoEq:
  PPS_COMPARE(==, true)
DoNe:
  PPS_COMPARE(!=, true)
DoAddI:
  PPS_ARITH_I(!__builtin_add_overflow(X, Y, &Z))
DoSubI:
  PPS_ARITH_I(!__builtin_sub_overflow(X, Y, &Z))
DoMulI:
  PPS_ARITH_I(!__builtin_mul_overflow(X, Y, &Z))
DoDivI:
  PPS_ARITH_I(Y != 0 && !(X == INT64_MIN && Y == -1) &&
              ((Z = floorDiv(X, Y)), true))
DoModI:
  PPS_ARITH_I(Y != 0 && !(X == INT64_MIN && Y == -1) &&
              ((Z = floorMod(X, Y)), true))
DoLtI:
  PPS_COMPARE_I(<)
DoLeI:
  PPS_COMPARE_I(<=)
DoGtI:
  PPS_COMPARE_I(>)
DoGeI:
  PPS_COMPARE_I(>=)
DoEqI:
  PPS_COMPARE_I(==)
DoNeI:
  PPS_COMPARE_I(!=)
DoLtIJ:
  PPS_JUMP_I(<)
DoLeIJ:
  PPS_JUMP_I(<=)
DoGtIJ:
  PPS_JUMP_I(>)
DoGeIJ:
  PPS_JUMP_I(>=)
DoEqIJ:
  PPS_JUMP_I(==)
DoNeIJ:
  PPS_JUMP_I(!=)
DoAndOr : {
  Value V = PPS_REG(O->B);
  if (LLVM_UNLIKELY(V.T != VT::Bool)) {
    notBool(*static_cast<Expr *>(const_cast<void *>(O->Node)), V);
    PPS_ABORT();
  }
  bool L = V.I != 0;
  PPS_REG(O->A) = {L, VT::Bool};
  PPS_GO((O->Sub ? !L : L) ? Ops + O->C : O + 1);
}
DoToBool : {
  Value V = PPS_REG(O->B);
  if (LLVM_UNLIKELY(V.T != VT::Bool)) {
    notBool(*static_cast<Expr *>(const_cast<void *>(O->Node)), V);
    PPS_ABORT();
  }
  PPS_REG(O->A) = {V.I != 0, VT::Bool};
  PPS_NEXT();
}
DoUnary : {
  auto &U = *static_cast<UnaryExpr *>(const_cast<void *>(O->Node));
  Value V = PPS_REG(O->B);
  if (U.Op == UnOp::Not) {
    if (V.T != VT::Bool) {
      fail(DiagKind::TypeMismatch, U.Loc,
           fmt::format("'!' needs a bool, got {}", typeName(V.T)));
      PPS_ABORT();
    }
    PPS_REG(O->A) = {!V.I, VT::Bool};
    PPS_NEXT();
  }
  if (V.T != VT::Int) {
    fail(DiagKind::TypeMismatch, U.Loc,
         fmt::format("'-' needs an integer, got {}", typeName(V.T)));
    PPS_ABORT();
  }
  if (V.I == INT64_MIN) {
    fail(DiagKind::IntegerOverflow, U.Loc, "negation overflows 64 bits");
    PPS_ABORT();
  }
  PPS_REG(O->A) = {-V.I, VT::Int};
  PPS_NEXT();
}
DoIndex : {
  Value A = PPS_REG(O->B), I = PPS_REG(O->C);
  auto &X = *static_cast<IndexExpr *>(const_cast<void *>(O->Node));
  if (LLVM_UNLIKELY(I.T != VT::Int)) {
    notInt(*X.Index, I, "an index");
    PPS_ABORT();
  }
  if (LLVM_UNLIKELY(A.T != VT::Array)) {
    fail(DiagKind::TypeMismatch, X.Base->Loc,
         fmt::format("'{}' is {}, not an array", X.Base->Name, typeName(A.T)));
    PPS_ABORT();
  }
  if (LLVM_UNLIKELY(uint64_t(I.I) >= uint64_t(length(A)))) {
    fail(DiagKind::OutOfRange, X.Index->Loc,
         fmt::format("index {} is outside '{}' of length {}", I.I, X.Base->Name,
                     length(A)));
    PPS_ABORT();
  }
  PPS_REG(O->A) = {elements(A)[I.I], VT::Int};
  PPS_NEXT();
}
DoIndexSum : {
  auto &X = *static_cast<IndexExpr *>(const_cast<void *>(O->Node));
  Value L = PPS_REG(O->C), Rv = PPS_REG(O->D);
  int64_t I;
  // IndexSumKind: bit 0 says the operands are integers, bit 1 a difference.
  bool Typed = (O->Sub & 1) || (L.T == VT::Int && Rv.T == VT::Int);
  bool Fits = O->Sub & 2 ? !__builtin_sub_overflow(L.I, Rv.I, &I)
                         : !__builtin_add_overflow(L.I, Rv.I, &I);
  if (LLVM_UNLIKELY(!Typed || !Fits)) {
    PPS_SYNC();
    binaryError(static_cast<BinaryExpr &>(*X.Index), L, Rv);
    return Flow::Abort;
  }
  Value A = PPS_REG(O->B);
  if (LLVM_UNLIKELY(A.T != VT::Array)) {
    fail(DiagKind::TypeMismatch, X.Base->Loc,
         fmt::format("'{}' is {}, not an array", X.Base->Name, typeName(A.T)));
    PPS_ABORT();
  }
  if (LLVM_UNLIKELY(uint64_t(I) >= uint64_t(length(A)))) {
    fail(DiagKind::OutOfRange, X.Index->Loc,
         fmt::format("index {} is outside '{}' of length {}", I, X.Base->Name,
                     length(A)));
    PPS_ABORT();
  }
  PPS_REG(O->A) = {elements(A)[I], VT::Int};
  PPS_NEXT();
}
DoCheckInt : {
  Value V = PPS_REG(O->A);
  if (LLVM_UNLIKELY(V.T != VT::Int)) {
    notInt(*static_cast<Expr *>(const_cast<void *>(O->Node)), V,
           whatName(O->Sub));
    PPS_ABORT();
  }
  PPS_NEXT();
}
DoMinMax : {
  Value V = PPS_REG(O->C);
  if (LLVM_UNLIKELY(V.T != VT::Int)) {
    notInt(*static_cast<Expr *>(const_cast<void *>(O->Node)), V, "an integer");
    PPS_ABORT();
  }
  int64_t X = PPS_REG(O->B).I;
  PPS_REG(O->A) = {O->Sub ? std::min(X, V.I) : std::max(X, V.I), VT::Int};
  PPS_NEXT();
}
DoDivMod : {
  auto &C = *static_cast<CallExpr *>(const_cast<void *>(O->Node));
  Value Y = PPS_REG(O->C);
  if (Y.T != VT::Int) {
    notInt(*C.Args[1].Value, Y, "an integer");
    PPS_ABORT();
  }
  int64_t X = PPS_REG(O->B).I;
  if (Y.I == 0) {
    fail(DiagKind::DivisionByZero, C.Args[1].Value->Loc,
         fmt::format("{} by zero", C.Callee));
    PPS_ABORT();
  }
  if (X == INT64_MIN && Y.I == -1) {
    fail(DiagKind::IntegerOverflow, C.Loc, "division overflows 64 bits");
    PPS_ABORT();
  }
  PPS_REG(O->A) = {C.BuiltinId == Builtin::Div ? floorDiv(X, Y.I)
                                               : floorMod(X, Y.I),
                   VT::Int};
  PPS_NEXT();
}
DoAbs : {
  auto &C = *static_cast<CallExpr *>(const_cast<void *>(O->Node));
  Value X = PPS_REG(O->B);
  if (X.T != VT::Int) {
    notInt(*C.Args[0].Value, X, "an integer");
    PPS_ABORT();
  }
  if (X.I == INT64_MIN) {
    fail(DiagKind::IntegerOverflow, C.Loc, "abs overflows 64 bits");
    PPS_ABORT();
  }
  PPS_REG(O->A) = {X.I < 0 ? -X.I : X.I, VT::Int};
  PPS_NEXT();
}
DoModel : {
  auto &C = *static_cast<CallExpr *>(const_cast<void *>(O->Node));
  PPS_SYNC();
  std::optional<int64_t> V =
      modelValue(Builtin(O->Sub), O->B < 0 ? 0 : PPS_REG(O->B).I, C);
  if (!V)
    PPS_ABORT();
  PPS_REG(O->A) = {*V, VT::Int};
  PPS_NEXT();
}
DoRankOf : {
  auto &C = *static_cast<CallExpr *>(const_cast<void *>(O->Node));
  Value S = PPS_REG(O->B);
  if (S.T != VT::Int) {
    notInt(*C.Args[0].Value, S, "an integer");
    PPS_ABORT();
  }
  if (!ensureTopology(C.Loc))
    PPS_ABORT();
  if (S.I < 0 || S.I >= Out.Topo.Stages) {
    fail(DiagKind::OutOfRange, C.Args[0].Value->Loc,
         fmt::format("stage {} is out of range 0..{}", S.I,
                     Out.Topo.Stages - 1));
    PPS_ABORT();
  }
  PPS_REG(O->A) = {Out.Topo.StageToRank[size_t(S.I)], VT::Int};
  PPS_NEXT();
}
DoStageOf : {
  auto &C = *static_cast<CallExpr *>(const_cast<void *>(O->Node));
  Value Ch = PPS_REG(O->C);
  if (Ch.T != VT::Int) {
    notInt(*C.Args[1].Value, Ch, "an integer");
    PPS_ABORT();
  }
  int64_t Rk = PPS_REG(O->B).I;
  if (!ensureTopology(C.Loc))
    PPS_ABORT();
  if (Rk < 0 || Rk >= Out.Topo.Ranks) {
    fail(DiagKind::OutOfRange, C.Args[0].Value->Loc,
         fmt::format("rank {} is out of range 0..{}", Rk, Out.Topo.Ranks - 1));
    PPS_ABORT();
  }
  auto &L = RankStages[size_t(Rk)];
  if (Ch.I < 0 || Ch.I >= int64_t(L.size())) {
    fail(DiagKind::OutOfRange, C.Args[1].Value->Loc,
         fmt::format("rank {} holds {} stage{}; chunk {} is out of range", Rk,
                     L.size(), L.size() == 1 ? "" : "s", Ch.I));
    PPS_ABORT();
  }
  PPS_REG(O->A) = {L[size_t(Ch.I)], VT::Int};
  PPS_NEXT();
}
DoArray : {
  auto &C = *static_cast<CallExpr *>(const_cast<void *>(O->Node));
  Value Init = PPS_REG(O->C);
  if (Init.T != VT::Int) {
    notInt(*C.Args[1].Value, Init, "an integer");
    PPS_ABORT();
  }
  int64_t N = PPS_REG(O->B).I;
  if (N < 0 || N > MaxArray) {
    fail(DiagKind::OutOfRange, C.Args[0].Value->Loc,
         fmt::format("array length {} is out of range 0..{}", N, MaxArray));
    PPS_ABORT();
  }
  ArrayElements += uint64_t(N);
  if (ArrayElements > MaxArrayTotal) {
    fail(DiagKind::OutOfRange, C.Loc,
         fmt::format("arrays made by this schedule hold more than {} "
                     "elements in total",
                     MaxArrayTotal));
    PPS_ABORT();
  }
  PPS_REG(O->A) = newArray(N, Init.I);
  PPS_NEXT();
}
DoLen : {
  auto &C = *static_cast<CallExpr *>(const_cast<void *>(O->Node));
  Value A = PPS_REG(O->B);
  if (A.T != VT::Array) {
    fail(DiagKind::TypeMismatch, C.Args[0].Value->Loc,
         fmt::format("len needs an array, got {}", typeName(A.T)));
    PPS_ABORT();
  }
  PPS_REG(O->A) = {length(A), VT::Int};
  PPS_NEXT();
}
DoCallEnter : {
  auto &C = *static_cast<CallExpr *>(const_cast<void *>(O->Node));
  if (Depth >= Opts.RecursionLimit) {
    fail(DiagKind::RecursionLimit, C.Loc,
         fmt::format("calls nested deeper than the recursion limit of {}",
                     Opts.RecursionLimit));
    PPS_ABORT();
  }
  PPS_SYNC();
  if (!step(C.Loc))
    return Flow::Abort;
  Left = StepsLeft;
  PPS_NEXT();
}
DoCallInvoke : {
  auto &C = *static_cast<CallExpr *>(const_cast<void *>(O->Node));
  FnDecl &F = *C.Target;
  const int32_t *Args = FC.ArgRegs.data() + O->B;
  int32_t NArgs = O->C;
  // The arguments go to the top of the stack, where the callee's frame
  // starts (a default's slot starts as 0, as pushFrame leaves it); the
  // callee's code is the one for the arguments that are integers (a
  // default's parameter is not one): one body per mask seen, the call's
  // last one kept.
  size_t NewBase = Top;
  if (Stack.size() < NewBase + size_t(NArgs)) {
    Stack.resize(std::max(NewBase + size_t(NArgs), Stack.size() * 2));
    R = reinterpret_cast<char *>(Stack.data() + Base);
  }
  Value *Frame = Stack.data() + NewBase;
  uint32_t Mask = 0;
  int32_t Masked = std::min(NArgs, 32);
  if (LLVM_LIKELY(!(O->Sub & 2))) {
    for (int32_t I = 0; I < Masked; ++I) {
      Value V = PPS_REG(Args[I]);
      Frame[I] = V;
      Mask |= uint32_t(V.T == VT::Int) << I;
    }
    for (int32_t I = Masked; I < NArgs; ++I)
      Frame[I] = PPS_REG(Args[I]);
  } else {
    for (int32_t I = 0; I < NArgs; ++I) {
      Frame[I] = Args[I] >= 0 ? PPS_REG(Args[I]) : Value();
      if (I < 32 && Args[I] >= 0 && Frame[I].T == VT::Int)
        Mask |= 1u << I;
    }
  }
  FnCode *&Callee = FC.Callees[size_t(O->D)];
  if (!Callee || Callee->IntParams != Mask)
    Callee = &codeOf(F, Mask);
  PPS_SYNC();
  pushFrame(size_t(Callee->FrameSize),
            std::max<size_t>(F.NumSlots, F.Params.size()), size_t(NArgs));
  R = reinterpret_cast<char *>(Stack.data() + Base);
  size_t SavedBase = Base;
  Base = NewBase;
  ++Depth;
  Calls.push_back(&C);
  // Defaults run in the callee's frame, as the walker runs them.
  if (O->Sub & 2)
    for (int32_t I = 0; I < O->C && !Failed; ++I)
      if (Args[I] < 0)
        Stack[Base + size_t(I)] = eval(*F.Params[size_t(I)].Default);
  Value Result;
  bool Returned = false;
  if (!Failed) {
    Flow Fl = runCode(*Callee);
    if (Fl == Flow::Return && HasRet) {
      Result = RetVal;
      Returned = true;
    }
  }
  --Depth;
  Calls.pop_back();
  Base = SavedBase;
  Top = NewBase;
  HasRet = Returned;
  PPS_RELOAD();
  if (Failed)
    return Flow::Abort;
  if (O->Sub & 1)
    PPS_NEXT(); // a call statement: the value is not used
  if (!HasRet) {
    fail(DiagKind::TypeMismatch, C.Loc,
         fmt::format("'{}' returned no value", C.Callee));
    PPS_ABORT();
  }
  PPS_REG(O->A) = Result;
  PPS_NEXT();
}
DoJump:
  PPS_GO(Ops + O->A);
DoBranchFalse : {
  Value V = PPS_REG(O->A);
  if (LLVM_UNLIKELY(V.T != VT::Bool)) {
    notBool(*static_cast<Expr *>(const_cast<void *>(O->Node)), V);
    PPS_ABORT();
  }
  PPS_GO(V.I ? O + 1 : Ops + O->B);
}
DoForInit : {
  auto &Fs = *static_cast<ForStmt *>(const_cast<void *>(O->Node));
  PPS_REG(O->A) = PPS_REG(O->B);
  PPS_REG(O->A + RegBytes) = PPS_REG(O->C);
  if (!O->Sub)
    PPS_REG(O->A + 2 * RegBytes) = {1, VT::Int};
  if (PPS_REG(O->A + 2 * RegBytes).I == 0) {
    fail(DiagKind::InvalidValue, Fs.Step->Loc, "a for step must not be 0");
    PPS_ABORT();
  }
  PPS_NEXT();
}
DoForIter : {
  int64_t I = PPS_REG(O->A).I, To = PPS_REG(O->A + RegBytes).I,
          Step = PPS_REG(O->A + 2 * RegBytes).I;
  if (!(Step > 0 ? I < To : I > To))
    PPS_GO(Ops + O->B);
  if (LLVM_UNLIKELY(Left == 0)) {
    StepsLeft = 0;
    outOfBudget(static_cast<const ForStmt *>(O->Node)->Loc);
    return Flow::Abort;
  }
  --Left;
  PPS_REG(O->C) = {I, VT::Int};
  PPS_NEXT();
}
DoForNext : {
  int64_t I;
  if (__builtin_add_overflow(PPS_REG(O->A).I, PPS_REG(O->A + 2 * RegBytes).I,
                             &I))
    PPS_GO(Ops + O->C);
  PPS_REG(O->A).I = I;
  // The loop's ForIter, run here (it charges nothing of its own: it
  // sits at a label), saves a dispatch per iteration.
  const Op &It = Ops[O->B];
  if (LLVM_UNLIKELY(It.Charge != 0))
    PPS_GO(&It);
  int64_t To = PPS_REG(O->A + RegBytes).I,
          Step = PPS_REG(O->A + 2 * RegBytes).I;
  if (!(Step > 0 ? I < To : I > To))
    PPS_GO(Ops + It.B);
  if (LLVM_UNLIKELY(Left == 0)) {
    StepsLeft = 0;
    outOfBudget(static_cast<const ForStmt *>(It.Node)->Loc);
    return Flow::Abort;
  }
  --Left;
  PPS_REG(It.C) = {I, VT::Int};
  PPS_GO(&It + 1);
}
DoForNext1 : {
  // The index was below the end when the body ran: one more cannot
  // overflow.
  NextIndex = PPS_REG(O->A).I + 1;
  PPS_REG(O->A).I = NextIndex;
  if (NextIndex >= PPS_REG(O->A + RegBytes).I)
    PPS_GO(Ops + O->D);
  goto ForNextEnter;
}
DoForNextStep : {
  int64_t Step = PPS_REG(O->A + 2 * RegBytes).I;
  if (__builtin_add_overflow(PPS_REG(O->A).I, Step, &NextIndex))
    PPS_GO(Ops + O->D);
  PPS_REG(O->A).I = NextIndex;
  int64_t To = PPS_REG(O->A + RegBytes).I;
  if (!(Step > 0 ? NextIndex < To : NextIndex > To))
    PPS_GO(Ops + O->D);
  goto ForNextEnter;
}
ForNextEnter:
  // NextIndex enters the body: the ForIter's step and loop variable.
  if (LLVM_UNLIKELY(Left == 0)) {
    StepsLeft = 0;
    outOfBudget(static_cast<const ForStmt *>(Ops[O->B].Node)->Loc);
    return Flow::Abort;
  }
  --Left;
  PPS_REG(O->C) = {NextIndex, VT::Int};
  PPS_GO(Ops + O->B + 1);
DoIndexStore : {
  auto &A = *static_cast<AssignStmt *>(const_cast<void *>(O->Node));
  Value V = PPS_REG(O->C);
  if (LLVM_UNLIKELY(V.T != VT::Int)) {
    notInt(*A.Value, V, "an integer");
    PPS_ABORT();
  }
  Value Arr = PPS_REG(O->A);
  int64_t I = PPS_REG(O->B).I;
  if (LLVM_UNLIKELY(Arr.T != VT::Array)) {
    fail(DiagKind::TypeMismatch, A.Target->Loc,
         fmt::format("'{}' is {}, not an array", A.Target->Name,
                     typeName(Arr.T)));
    PPS_ABORT();
  }
  if (LLVM_UNLIKELY(uint64_t(I) >= uint64_t(length(Arr)))) {
    fail(DiagKind::OutOfRange, A.Index->Loc,
         fmt::format("index {} is outside '{}' of length {}", I, A.Target->Name,
                     length(Arr)));
    PPS_ABORT();
  }
  elements(Arr)[I] = V.I;
  PPS_NEXT();
}
DoAssert : {
  auto &A = *static_cast<AssertStmt *>(const_cast<void *>(O->Node));
  Value V = PPS_REG(O->A);
  if (V.T != VT::Bool) {
    notBool(*A.Cond, V);
    PPS_ABORT();
  }
  if (!V.I) {
    fail(DiagKind::AssertionFailed, A.Loc,
         A.Message.empty() ? "assertion failed"
                           : fmt::format("assertion failed: {}", A.Message));
    PPS_ABORT();
  }
  PPS_NEXT();
}
DoReturn:
  PPS_SYNC();
  HasRet = false;
  if (O->A >= 0) {
    RetVal = PPS_REG(O->A);
    HasRet = true;
  }
  return Flow::Return;
DoRankEmit:
DoRankEnter : {
  auto &Rs = *static_cast<RankStmt *>(const_cast<void *>(O->Node));
  Value V = PPS_REG(O->B);
  if (V.T != VT::Int) {
    notInt(*Rs.Rank, V, "a rank");
    PPS_ABORT();
  }
  if (LLVM_UNLIKELY(!Ready) && !ensureReady(Rs.Loc))
    PPS_ABORT();
  if (V.I < 0 || V.I >= Out.Topo.Ranks) {
    fail(DiagKind::OutOfRange, Rs.Rank->Loc,
         fmt::format("rank {} is out of range 0..{}", V.I, Out.Topo.Ranks - 1));
    PPS_ABORT();
  }
  PPS_REG(O->A) = {CurRank, VT::Int};
  enterRank(int32_t(V.I));
  if (O->Code == OpCode::RankEmit) {
    // The block's one compute and its RankExit, when the compute takes
    // the fast path; else they run as ops.
    const Op *E = O + 1;
    if (LLVM_LIKELY(Left >= E->Charge) &&
        LLVM_LIKELY(emitFast(*static_cast<const ActionNode *>(E->Node),
                             PPS_REG(E->A).I, E->B))) {
      Left -= E->Charge;
      CurRank = int32_t(PPS_REG((O + 2)->A).I);
      PPS_GO(O + 3);
    }
  }
  PPS_NEXT();
}
DoRankExit:
  CurRank = int32_t(PPS_REG(O->A).I);
  PPS_NEXT();
DoEmitSum : {
  // The microbatch is R[A] + R[C], checked as AddI checks it.
  Value L = PPS_REG(O->A), Rv = PPS_REG(O->C);
  if (LLVM_UNLIKELY(__builtin_add_overflow(L.I, Rv.I, &EmitMb))) {
    auto &N = *static_cast<ActionNode *>(const_cast<void *>(O->Node));
    PPS_SYNC();
    binaryError(static_cast<BinaryExpr &>(*N.First.Microbatch), L, Rv);
    return Flow::Abort;
  }
  // Then the EmitCompute's own steps (its locations follow the sum's).
  if (LLVM_UNLIKELY(Left < uint64_t(O->D))) {
    Op Second = *O;
    Second.ChargeAt += O->Charge;
    StepsLeft = Left;
    budgetRanOut(FC, Second);
    return Flow::Abort;
  }
  Left -= uint64_t(O->D);
  goto EmitMicrobatch;
}
DoEmitCompute:
  EmitMb = PPS_REG(O->A).I;
EmitMicrobatch : {
  auto &N = *static_cast<ActionNode *>(const_cast<void *>(O->Node));
  int64_t Mb = EmitMb;
  if (LLVM_LIKELY(emitFast(N, Mb, O->B)))
    PPS_NEXT();
  ir::Action A;
  if (!checkCompute(N.First, Mb, O->B >= 0 ? PPS_REG(O->B).I : -1, A))
    PPS_ABORT();
  if (!emit(A, N.Loc))
    PPS_ABORT();
  PPS_NEXT();
}
DoOverlapFirst : {
  auto &N = *static_cast<ActionNode *>(const_cast<void *>(O->Node));
  ir::Action A;
  if (!checkCompute(N.First, PPS_REG(O->A).I, O->B >= 0 ? PPS_REG(O->B).I : -1,
                    A))
    PPS_ABORT();
  PPS_NEXT();
}
DoEmitOverlap : {
  auto &N = *static_cast<ActionNode *>(const_cast<void *>(O->Node));
  ir::Action A, B;
  // The first was checked by OverlapFirst: this cannot fail.
  checkCompute(N.First, PPS_REG(O->A).I, O->B >= 0 ? PPS_REG(O->B).I : -1, A);
  if (!checkCompute(N.Second, PPS_REG(O->C).I, O->D >= 0 ? PPS_REG(O->D).I : -1,
                    B))
    PPS_ABORT();
  A.Loc = N.Loc;
  A.Flags |= ir::ActionFlags::OverlapNext;
  if (!emit(A, N.Loc) || !emit(B, N.Loc))
    PPS_ABORT();
  PPS_NEXT();
}
DoWalkExpr : {
  PPS_SYNC();
  Value V = eval(*static_cast<Expr *>(const_cast<void *>(O->Node)));
  PPS_RELOAD();
  if (Failed)
    return Flow::Abort;
  PPS_REG(O->A) = V;
  PPS_NEXT();
}
DoWalkStmt : {
  PPS_SYNC();
  exec(*static_cast<Stmt *>(const_cast<void *>(O->Node)));
  PPS_RELOAD();
  if (Failed)
    return Flow::Abort;
  PPS_NEXT();
}
DoWalkActions : {
  auto &Rs = *static_cast<RankStmt *>(const_cast<void *>(O->Node));
  PPS_SYNC();
  if (!Rs.Literal.empty())
    emitLiteral(Rs.Literal);
  else
    emitActions(Rs.Actions);
  PPS_RELOAD();
  if (Failed)
    return Flow::Abort;
  PPS_NEXT();
}
DoEnd:
  PPS_SYNC();
  return Flow::Next;
#undef PPS_GO
#undef PPS_REG
#undef PPS_NEXT
#undef PPS_SYNC
#undef PPS_RELOAD
#undef PPS_ABORT
#undef PPS_ARITH
#undef PPS_COMPARE
#undef PPS_ARITH_I
#undef PPS_COMPARE_I
#undef PPS_JUMP_I
}

} // namespace pps::frontend::eval
