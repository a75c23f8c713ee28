//===- EvaluateExpr.cpp - expressions, built-ins and calls ----------------===//
//
// Integers are 64-bit with checked overflow; division and modulo floor (the
// sign follows the divisor); every call pushes a frame on the value stack.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorImpl.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

namespace pps::frontend::eval {

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

int64_t Evaluator::notInt(Expr &E, Value V, const char *What) {
  fail(DiagKind::TypeMismatch, E.Loc,
       fmt::format("expected {}, got {}", What, typeName(V.T)));
  return 0;
}

bool Evaluator::notBool(Expr &E, Value V) {
  fail(DiagKind::TypeMismatch, E.Loc,
       fmt::format("expected a bool condition, got {}", typeName(V.T)));
  return false;
}

Value Evaluator::evalOther(Expr &E) {
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
    if (LLVM_UNLIKELY(A.T != VT::Array)) {
      fail(
          DiagKind::TypeMismatch, X.Base->Loc,
          fmt::format("'{}' is {}, not an array", X.Base->Name, typeName(A.T)));
      return {};
    }
    int64_t *Arr = elements(A), Len = length(A);
    if (LLVM_UNLIKELY(I < 0 || I >= Len)) {
      fail(DiagKind::OutOfRange, X.Index->Loc,
           fmt::format("index {} is outside '{}' of length {}", I, X.Base->Name,
                       Len));
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
  llvm_unreachable("every ExprKind is handled above");
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
  if (LLVM_LIKELY(L.T == VT::Int && R.T == VT::Int)) {
    int64_t X = L.I, Y = R.I, Z;
    switch (B.Op) {
    case BinOp::Add:
      if (LLVM_LIKELY(!__builtin_add_overflow(X, Y, &Z)))
        return {Z, VT::Int};
      break;
    case BinOp::Sub:
      if (LLVM_LIKELY(!__builtin_sub_overflow(X, Y, &Z)))
        return {Z, VT::Int};
      break;
    case BinOp::Mul:
      if (LLVM_LIKELY(!__builtin_mul_overflow(X, Y, &Z)))
        return {Z, VT::Int};
      break;
    case BinOp::Div:
      if (LLVM_LIKELY(Y != 0 && !(X == INT64_MIN && Y == -1)))
        return {floorDiv(X, Y), VT::Int};
      break;
    case BinOp::Mod:
      if (LLVM_LIKELY(Y != 0 && !(X == INT64_MIN && Y == -1)))
        return {floorMod(X, Y), VT::Int};
      break;
    case BinOp::Lt:
      return {X < Y, VT::Bool};
    case BinOp::Le:
      return {X <= Y, VT::Bool};
    case BinOp::Gt:
      return {X > Y, VT::Bool};
    case BinOp::Ge:
      return {X >= Y, VT::Bool};
    case BinOp::Eq:
      return {X == Y, VT::Bool};
    case BinOp::Ne:
      return {X != Y, VT::Bool};
    default:
      return {};
    }
    return binaryError(B, L, R);
  }
  if ((B.Op == BinOp::Eq || B.Op == BinOp::Ne) && L.T == R.T &&
      L.T != VT::Array)
    return {(L.I == R.I) == (B.Op == BinOp::Eq), VT::Bool};
  return binaryError(B, L, R);
}

Value Evaluator::binaryError(BinaryExpr &B, Value L, Value R) {
  if (B.Op == BinOp::Eq || B.Op == BinOp::Ne) {
    fail(
        DiagKind::TypeMismatch, B.Loc,
        fmt::format("cannot compare {} with {}", typeName(L.T), typeName(R.T)));
    return {};
  }
  if (L.T != VT::Int || R.T != VT::Int) {
    fail(DiagKind::TypeMismatch, B.Loc,
         fmt::format("'{}' needs integers, got {} and {}", binOpSpelling(B.Op),
                     typeName(L.T), typeName(R.T)));
    return {};
  }
  if ((B.Op == BinOp::Div || B.Op == BinOp::Mod) && R.I == 0) {
    fail(DiagKind::DivisionByZero, B.Loc,
         fmt::format("{} by zero", B.Op == BinOp::Div ? "division" : "modulo"));
    return {};
  }
  fail(
      DiagKind::IntegerOverflow, B.Loc,
      fmt::format("{} {} {} overflows 64 bits", L.I, binOpSpelling(B.Op), R.I));
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
  case Builtin::CostF:
  case Builtin::CostI:
  case Builtin::CostW:
  case Builtin::CostB:
  case Builtin::CommTime:
  case Builtin::MemF:
  case Builtin::MemI:
  case Builtin::MemW: {
    int64_t S = C.Args.empty() ? 0 : evalInt(Arg(0));
    if (Failed)
      return {};
    std::optional<int64_t> V = modelValue(C.BuiltinId, S, C);
    if (!V)
      return {};
    return {*V, VT::Int};
  }
  case Builtin::RankOf: {
    int64_t S = evalInt(Arg(0));
    if (Failed || !ensureTopology(C.Loc))
      return {};
    if (!stageInRange(S, Arg(0)))
      return {};
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
    return newArray(N, Init);
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
    return {length(A), VT::Int};
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
  size_t NewBase =
      pushFrame(frameSize(F), std::max<size_t>(F.NumSlots, F.Params.size()));
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
    Flow Fl = runBody(F);
    // HasRet is only meaningful right after this body's own return.
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
  return Result;
}

} // namespace pps::frontend::eval
