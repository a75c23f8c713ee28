//===- EvaluateCodeExpr.cpp - expressions -> register code ----------------===//
//
// CodeCompiler's expressions (EvaluateCodeImpl.h): each returns the
// register holding its value, a local's own slot, a constant or a
// temporary, and charges the step of every node it enters; which slots and
// expressions are always integers, so their type checks can be left out;
// the built-in and user fn calls.
//
//===----------------------------------------------------------------------===//
#include "EvaluateCodeImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <functional>

namespace pps::frontend::eval {

int32_t CodeCompiler::expr(Expr &E, int32_t Dst) {
  charge(E.Loc);
  switch (E.Kind) {
  case ExprKind::Int:
    return constant(static_cast<IntLit &>(E).Value, VT::Int);
  case ExprKind::Bool:
    return constant(static_cast<BoolLit &>(E).Value ? 1 : 0, VT::Bool);
  case ExprKind::Name: {
    auto &N = static_cast<NameExpr &>(E);
    if (N.Res == NameRes::Local)
      return N.Slot;
    if (ConstRegs)
      return builtinReg(N.BuiltinId);
    int32_t D = isReg(Dst) ? Dst : temp();
    emit(OpCode::Builtin, D, 0, 0, &N);
    return D;
  }
  case ExprKind::Binary: {
    auto &B = static_cast<BinaryExpr &>(E);
    if (B.Op == BinOp::And || B.Op == BinOp::Or) {
      // The result is written before the right side runs: never into a
      // register the right side may read.
      int32_t D = temp();
      int32_t L = expr(*B.LHS);
      size_t J =
          emit(OpCode::AndOr, D, L, 0, B.LHS.get(), B.Op == BinOp::And ? 1 : 0);
      int32_t R = expr(*B.RHS);
      emit(OpCode::ToBool, D, R, 0, B.RHS.get());
      Code.Ops[J].C = label();
      return D;
    }
    int32_t L = expr(*B.LHS);
    int32_t R = expr(*B.RHS);
    int32_t D = isReg(Dst) ? Dst : temp();
    OpCode Op = binaryOp(B.Op);
    if (alwaysInt(*B.LHS) && alwaysInt(*B.RHS))
      Op = OpCode(uint8_t(Op) + (uint8_t(OpCode::AddI) - uint8_t(OpCode::Add)));
    emit(Op, D, L, R, &B);
    return D;
  }
  case ExprKind::Unary: {
    auto &U = static_cast<UnaryExpr &>(E);
    // -literal is a constant (both nodes still cost their steps).
    if (U.Op == UnOp::Neg && U.Operand->Kind == ExprKind::Int &&
        static_cast<IntLit &>(*U.Operand).Value != INT64_MIN) {
      charge(U.Operand->Loc);
      return constant(-static_cast<IntLit &>(*U.Operand).Value, VT::Int);
    }
    int32_t V = expr(*U.Operand);
    int32_t D = isReg(Dst) ? Dst : temp();
    emit(OpCode::Unary, D, V, 0, &U);
    return D;
  }
  case ExprKind::Index: {
    auto &X = static_cast<IndexExpr &>(E);
    // The base is read (not entered: no step) before the index runs.
    int32_t A;
    if (X.Base->Res == NameRes::Local) {
      A = X.Base->Slot;
    } else if (ConstRegs) {
      A = builtinReg(X.Base->BuiltinId);
    } else {
      A = temp();
      emit(OpCode::Builtin, A, 0, 0, X.Base.get());
    }
    int32_t I = expr(*X.Index);
    int32_t D = isReg(Dst) ? Dst : temp();
    emit(OpCode::Index, D, A, I, &X);
    return D;
  }
  case ExprKind::Call:
    return call(static_cast<CallExpr &>(E), Dst, /*AsStatement=*/false);
  }
  llvm_unreachable("every ExprKind is handled above");
}

OpCode CodeCompiler::binaryOp(BinOp Op) {
  switch (Op) {
  case BinOp::Add:
    return OpCode::Add;
  case BinOp::Sub:
    return OpCode::Sub;
  case BinOp::Mul:
    return OpCode::Mul;
  case BinOp::Div:
    return OpCode::Div;
  case BinOp::Mod:
    return OpCode::Mod;
  case BinOp::Lt:
    return OpCode::Lt;
  case BinOp::Le:
    return OpCode::Le;
  case BinOp::Gt:
    return OpCode::Gt;
  case BinOp::Ge:
    return OpCode::Ge;
  case BinOp::Eq:
    return OpCode::Eq;
  case BinOp::Ne:
    return OpCode::Ne;
  case BinOp::And:
  case BinOp::Or:
    break;
  }
  llvm_unreachable("&& and || are jumps");
}

bool CodeCompiler::alwaysInt(Expr &E) const {
  switch (E.Kind) {
  case ExprKind::Int:
  case ExprKind::Index:
    return true;
  case ExprKind::Name: {
    auto &N = static_cast<NameExpr &>(E);
    return N.Res == NameRes::Builtin ||
           (N.Res == NameRes::Local && IntSlot[size_t(N.Slot)]);
  }
  case ExprKind::Binary: {
    BinOp Op = static_cast<BinaryExpr &>(E).Op;
    return Op == BinOp::Add || Op == BinOp::Sub || Op == BinOp::Mul ||
           Op == BinOp::Div || Op == BinOp::Mod;
  }
  case ExprKind::Unary:
    return static_cast<UnaryExpr &>(E).Op == UnOp::Neg;
  case ExprKind::Call: {
    Builtin B = static_cast<CallExpr &>(E).BuiltinId;
    return B != Builtin::None && B != Builtin::Array;
  }
  default:
    return false;
  }
}

void CodeCompiler::findIntSlots() {
  IntSlot.assign(size_t(Locals), 1);
  for (size_t I = 0; I < F.Params.size(); ++I)
    IntSlot[I] = I < 32 && ((IntParams >> I) & 1);
  std::vector<std::pair<int32_t, Expr *>> Writes;
  std::function<void(Block &)> Walk = [&](Block &B) {
    for (StmtPtr &S : B) {
      switch (S->Kind) {
      case StmtKind::Let: {
        auto &L = static_cast<LetStmt &>(*S);
        Writes.push_back({L.Var.Slot, L.Init.get()});
        break;
      }
      case StmtKind::Assign: {
        auto &A = static_cast<AssignStmt &>(*S);
        Writes.push_back({A.Target->Slot, A.Value.get()});
        break;
      }
      case StmtKind::For:
        Walk(static_cast<ForStmt &>(*S).Body);
        break;
      case StmtKind::While:
        Walk(static_cast<WhileStmt &>(*S).Body);
        break;
      case StmtKind::If:
        Walk(static_cast<IfStmt &>(*S).Then);
        Walk(static_cast<IfStmt &>(*S).Else);
        break;
      case StmtKind::RankBlock:
        Walk(static_cast<RankStmt &>(*S).Body);
        break;
      default:
        break;
      }
    }
  };
  Walk(F.Body);
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (auto &[Slot, E] : Writes)
      if (IntSlot[size_t(Slot)] && !alwaysInt(*E)) {
        IntSlot[size_t(Slot)] = 0;
        Changed = true;
      }
  }
}

int32_t CodeCompiler::intExpr(Expr &E, What W) {
  int32_t R = expr(E);
  if (!alwaysInt(E))
    emit(OpCode::CheckInt, R, 0, 0, &E, W);
  return R;
}

int32_t CodeCompiler::call(CallExpr &C, int32_t Dst, bool AsStatement) {
  auto Arg = [&](size_t I) -> Expr & { return *C.Args[I].Value; };
  if (C.BuiltinId != Builtin::None) {
    int32_t D = isReg(Dst) ? Dst : temp();
    switch (C.BuiltinId) {
    case Builtin::Min:
    case Builtin::Max: {
      // min(a, b, ...): each argument is checked right after it runs.
      int32_t R = intExpr(Arg(0), WInteger);
      int32_t Acc = temp();
      emit(OpCode::Move, Acc, R);
      for (size_t I = 1; I < C.Args.size(); ++I) {
        int32_t V = expr(Arg(I));
        emit(OpCode::MinMax, Acc, Acc, V, &Arg(I), C.BuiltinId == Builtin::Min);
      }
      emit(OpCode::Move, D, Acc);
      return D;
    }
    case Builtin::Div:
    case Builtin::Mod: {
      int32_t X = intExpr(Arg(0), WInteger);
      int32_t Y = expr(Arg(1));
      emit(OpCode::DivMod, D, X, Y, &C);
      return D;
    }
    case Builtin::Abs: {
      int32_t X = expr(Arg(0));
      emit(OpCode::Abs, D, X, 0, &C);
      return D;
    }
    case Builtin::RankOf: {
      int32_t X = expr(Arg(0));
      emit(OpCode::RankOf, D, X, 0, &C);
      return D;
    }
    case Builtin::CostF:
    case Builtin::CostI:
    case Builtin::CostW:
    case Builtin::CostB:
    case Builtin::CommTime:
    case Builtin::MemF:
    case Builtin::MemI:
    case Builtin::MemW: {
      int32_t X = C.Args.empty() ? -1 : intExpr(Arg(0), WInteger);
      emit(OpCode::Model, D, X, 0, &C, uint8_t(C.BuiltinId));
      return D;
    }
    case Builtin::StageOf: {
      int32_t R = intExpr(Arg(0), WInteger);
      int32_t Ch = expr(Arg(1));
      emit(OpCode::StageOf, D, R, Ch, &C);
      return D;
    }
    case Builtin::Array: {
      int32_t N = intExpr(Arg(0), WInteger);
      int32_t Init = expr(Arg(1));
      emit(OpCode::Array, D, N, Init, &C);
      return D;
    }
    case Builtin::Len: {
      int32_t A = expr(Arg(0));
      emit(OpCode::Len, D, A, 0, &C);
      return D;
    }
    default:
      // Constants are names, not calls; nothing else is a builtin.
      Pending.pop_back();
      emit(OpCode::WalkExpr, D, 0, 0, &C);
      return D;
    }
  }
  // A user fn: the recursion check and the call's own step, then the
  // arguments in parameter order, then the call.
  emit(OpCode::CallEnter, 0, 0, 0, &C);
  std::vector<int32_t> Args;
  for (size_t I = 0; I < C.Ordered.size(); ++I) {
    if (!C.Ordered[I]) {
      Args.push_back(-1);
      continue;
    }
    // Temporaries are not reused within a statement, and no expression
    // assigns a local: each argument's register holds until the call.
    Args.push_back(expr(*C.Ordered[I]));
  }
  int32_t At = int32_t(Code.ArgRegs.size());
  Code.ArgRegs.insert(Code.ArgRegs.end(), Args.begin(), Args.end());
  int32_t D = isReg(Dst) ? Dst : temp();
  bool Defaults = llvm::is_contained(Args, -1);
  size_t Call = emit(OpCode::CallInvoke, D, At, int32_t(Args.size()), &C,
                     uint8_t((AsStatement ? 1 : 0) | (Defaults ? 2 : 0)));
  Code.Ops[Call].D = int32_t(Code.Callees.size());
  Code.Callees.push_back(nullptr);
  return D;
}

} // namespace pps::frontend::eval
