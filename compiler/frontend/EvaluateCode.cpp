//===- EvaluateCode.cpp - schedule bodies -> register code ----------------===//
//
// One pass over a resolved body. Expressions return the register holding
// their value: a local's own slot, a constant, or a temporary; temporaries
// are a stack reset at each statement (a loop's and a rank block's
// registers stay below the statements inside them). Register numbers are
// symbolic while compiling (locals, temporaries and constants in three
// ranges) and laid out at the end. Steps: each node the walker enters adds
// its location to the pending charges, which the next op takes; a label
// (a jump target) first gets a Nop for whatever is pending, so a jump back
// never charges a node twice.
//
//===----------------------------------------------------------------------===//
#include "EvaluateCode.h"

#include "EvaluatorImpl.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <functional>

namespace pps::frontend::eval {

namespace {

constexpr int32_t TempTag = 0x10000000, ConstTag = 0x20000000,
                  BuiltinTag = 0x30000000, TagMask = 0x30000000;

/// What a CheckInt says the value should be ("expected an index, ...").
enum What : uint8_t { WInteger, WIndex, WMicrobatch, WStage, WRank };

class Compiler {
public:
  Compiler(FnDecl &F, bool ConstRegs) : F(F), ConstRegs(ConstRegs) {
    Locals = int32_t(std::max<size_t>(size_t(F.NumSlots), F.Params.size()));
    findIntSlots();
  }

  FnCode run() {
    block(F.Body);
    emit(OpCode::End);
    fuse();
    layout();
    return std::move(Code);
  }

private:
  // --- registers ------------------------------------------------------------
  int32_t temp() {
    int32_t T = TempTag | TempTop++;
    MaxTemps = std::max(MaxTemps, TempTop);
    return T;
  }
  int32_t constant(int64_t V, VT T) {
    auto Key = std::make_pair(V, uint8_t(T));
    auto It = ConstIds.find(Key);
    if (It != ConstIds.end())
      return It->second;
    int32_t Id = ConstTag | int32_t(Code.Consts.size());
    Code.Consts.push_back({V, T});
    ConstIds[Key] = Id;
    return Id;
  }
  bool isReg(int32_t R) const { return R >= 0; }
  /// With ConstRegs: P, S, M, V and D are registers after the constants,
  /// filled at each call (the schedule call's sizes cannot change).
  int32_t builtinReg(Builtin B) {
    Code.UsesBuiltins = true;
    return BuiltinTag | int32_t(B);
  }
  int32_t resolve(int32_t R) const {
    if (R < 0)
      return R;
    switch (R & TagMask) {
    case TempTag:
      return Locals + (R & ~TagMask);
    case ConstTag:
      return Locals + MaxTemps + (R & ~TagMask);
    case BuiltinTag:
      return Locals + MaxTemps + int32_t(Code.Consts.size()) + (R & ~TagMask);
    default:
      return R;
    }
  }

  // --- ops ------------------------------------------------------------------
  void charge(LocId L) { Pending.push_back(L); }
  size_t emit(OpCode C, int32_t A = 0, int32_t B = 0, int32_t Cc = 0,
              const void *Node = nullptr, uint8_t Sub = 0) {
    // An op takes the pending charges (a Nop first if they overflow).
    while (Pending.size() > 0xffff) {
      Op N;
      N.Code = OpCode::Nop;
      N.Charge = 0xffff;
      N.ChargeAt = uint32_t(Code.ChargeLocs.size());
      Code.ChargeLocs.insert(Code.ChargeLocs.end(), Pending.begin(),
                             Pending.begin() + 0xffff);
      Pending.erase(Pending.begin(), Pending.begin() + 0xffff);
      Code.Ops.push_back(N);
    }
    Op O;
    O.Code = C;
    O.Sub = Sub;
    O.A = A;
    O.B = B;
    O.C = Cc;
    O.Node = Node;
    O.Charge = uint16_t(Pending.size());
    O.ChargeAt = uint32_t(Code.ChargeLocs.size());
    Code.ChargeLocs.insert(Code.ChargeLocs.end(), Pending.begin(),
                           Pending.end());
    Pending.clear();
    Code.Ops.push_back(O);
    return Code.Ops.size() - 1;
  }
  /// The position a jump may target; pending charges are taken first.
  int32_t label() {
    if (!Pending.empty())
      emit(OpCode::Nop);
    return int32_t(Code.Ops.size());
  }

  // --- expressions ----------------------------------------------------------
  /// The register holding E's value. Dst, if given, is where the final op
  /// should write (the caller copies if the result lands elsewhere).
  int32_t expr(Expr &E, int32_t Dst = -1) {
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
        size_t J = emit(OpCode::AndOr, D, L, 0, B.LHS.get(),
                        B.Op == BinOp::And ? 1 : 0);
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
        Op = OpCode(uint8_t(Op) +
                    (uint8_t(OpCode::AddI) - uint8_t(OpCode::Add)));
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

  static OpCode binaryOp(BinOp Op) {
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

  /// True if E's value is an integer whenever it has one (so the walker's
  /// evalInt check cannot fail on it).
  bool alwaysInt(Expr &E) const {
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

  /// The slots that only ever hold integers: every write to them (let,
  /// assignment, loop variable; not a parameter, whose caller decides) is
  /// an integer expression, given the others (the largest such set: a
  /// value in a slot comes from some write, or is the initial 0).
  void findIntSlots() {
    IntSlot.assign(size_t(Locals), 1);
    for (size_t I = 0; I < F.Params.size(); ++I)
      IntSlot[I] = 0;
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

  /// An expression checked to be an integer right after it runs (the
  /// walker's evalInt).
  int32_t intExpr(Expr &E, What W) {
    int32_t R = expr(E);
    if (!alwaysInt(E))
      emit(OpCode::CheckInt, R, 0, 0, &E, W);
    return R;
  }

  int32_t call(CallExpr &C, int32_t Dst, bool AsStatement) {
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
          emit(OpCode::MinMax, Acc, Acc, V, &Arg(I),
               C.BuiltinId == Builtin::Min);
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

  // --- statements -----------------------------------------------------------
  void block(Block &B) {
    for (StmtPtr &S : B)
      stmt(*S);
  }

  /// Copies R into Dst when the expression did not land there.
  void into(int32_t Dst, int32_t R) {
    if (R != Dst)
      emit(OpCode::Move, Dst, R);
  }

  void stmt(Stmt &S) {
    int32_t SavedTop = TempTop;
    switch (S.Kind) {
    case StmtKind::Let: {
      auto &L = static_cast<LetStmt &>(S);
      charge(S.Loc);
      into(L.Var.Slot, expr(*L.Init, L.Var.Slot));
      break;
    }
    case StmtKind::Assign: {
      auto &A = static_cast<AssignStmt &>(S);
      charge(S.Loc);
      into(A.Target->Slot, expr(*A.Value, A.Target->Slot));
      break;
    }
    case StmtKind::IndexAssign: {
      auto &A = static_cast<AssignStmt &>(S);
      charge(S.Loc);
      int32_t I = intExpr(*A.Index, WIndex);
      int32_t V = expr(*A.Value);
      emit(OpCode::IndexStore, A.Target->Slot, I, V, &A);
      break;
    }
    case StmtKind::For: {
      auto &Fs = static_cast<ForStmt &>(S);
      charge(S.Loc);
      int32_t Regs = temp();
      temp();
      temp();
      int32_t From = intExpr(*Fs.From, WInteger);
      int32_t To = intExpr(*Fs.To, WInteger);
      uint8_t HasStep = 0;
      if (Fs.Step) {
        int32_t St = intExpr(*Fs.Step, WInteger);
        emit(OpCode::Move, Regs + 2, St);
        HasStep = 1;
      }
      emit(OpCode::ForInit, Regs, From, To, &Fs, HasStep);
      int32_t Top = TempTop;
      int32_t Cond = label();
      size_t Iter = emit(OpCode::ForIter, Regs, 0, Fs.Var.Slot, &Fs);
      Loops.push_back({{}, {}, RankDepth});
      block(Fs.Body);
      TempTop = Top;
      int32_t Next = label();
      size_t Step = emit(OpCode::ForNext, Regs, Cond, 0);
      int32_t End = label();
      Code.Ops[Iter].B = End;
      Code.Ops[Step].C = End;
      patch(Loops.back(), Next, End);
      Loops.pop_back();
      break;
    }
    case StmtKind::While: {
      auto &W = static_cast<WhileStmt &>(S);
      charge(S.Loc);
      int32_t Cond = label();
      int32_t C = expr(*W.Cond);
      size_t Br = emit(OpCode::BranchFalse, C, 0, 0, W.Cond.get());
      int32_t Top = TempTop;
      Loops.push_back({{}, {}, RankDepth});
      block(W.Body);
      TempTop = Top;
      emit(OpCode::Jump, Cond);
      int32_t End = label();
      Code.Ops[Br].B = End;
      patch(Loops.back(), Cond, End);
      Loops.pop_back();
      break;
    }
    case StmtKind::Break:
    case StmtKind::Continue: {
      charge(S.Loc);
      Loop &L = Loops.back();
      leaveRanks(L.RankDepth);
      size_t J = emit(OpCode::Jump);
      (S.Kind == StmtKind::Break ? L.Breaks : L.Continues).push_back(J);
      break;
    }
    case StmtKind::If: {
      auto &I = static_cast<IfStmt &>(S);
      charge(S.Loc);
      int32_t C = expr(*I.Cond);
      size_t Br = emit(OpCode::BranchFalse, C, 0, 0, I.Cond.get());
      TempTop = SavedTop;
      block(I.Then);
      if (I.Else.empty()) {
        // No jump over an empty else (the then side's pending steps go to
        // a Nop only it runs).
        Code.Ops[Br].B = label();
        break;
      }
      size_t J = emit(OpCode::Jump);
      Code.Ops[Br].B = label();
      block(I.Else);
      Code.Ops[J].A = label();
      break;
    }
    case StmtKind::RankBlock:
    case StmtKind::RankList: {
      auto &R = static_cast<RankStmt &>(S);
      charge(S.Loc);
      int32_t Save = temp();
      int32_t Rank = expr(*R.Rank);
      emit(OpCode::RankEnter, Save, Rank, 0, &R);
      int32_t Top = TempTop;
      ++RankDepth;
      RankSaves.push_back(Save);
      if (S.Kind == StmtKind::RankList)
        emit(OpCode::WalkActions, 0, 0, 0, &R);
      else
        block(R.Body);
      RankSaves.pop_back();
      --RankDepth;
      TempTop = Top;
      emit(OpCode::RankExit, Save);
      break;
    }
    case StmtKind::Return: {
      auto &R = static_cast<ReturnStmt &>(S);
      charge(S.Loc);
      int32_t V = R.Value ? expr(*R.Value) : -1;
      leaveRanks(0);
      emit(OpCode::Return, V);
      break;
    }
    case StmtKind::Assert: {
      auto &A = static_cast<AssertStmt &>(S);
      charge(S.Loc);
      int32_t C = expr(*A.Cond);
      emit(OpCode::Assert, C, 0, 0, &A);
      break;
    }
    case StmtKind::Call:
      charge(S.Loc);
      call(*static_cast<CallStmt &>(S).Call, -1, /*AsStatement=*/true);
      break;
    case StmtKind::Actions:
      actions(static_cast<ActionStmt &>(S));
      break;
    case StmtKind::Empty:
      charge(S.Loc);
      break;
    }
    TempTop = SavedTop;
  }

  /// The plain computes and overlaps of an action statement run as ops;
  /// a statement with anything else goes to the walker whole.
  void actions(ActionStmt &S) {
    for (ActionNode &N : S.Actions)
      if (N.Kind != ActionNodeKind::Compute &&
          N.Kind != ActionNodeKind::Overlap) {
        emit(OpCode::WalkStmt, 0, 0, 0, &S);
        return;
      }
    charge(S.Loc);
    for (ActionNode &N : S.Actions) {
      int32_t Top = TempTop;
      // The registers hold until the action is emitted: no temporary is
      // reused within it and no expression assigns a local.
      auto Ref = [&](ComputeRef &R, int32_t &Mb, int32_t &St) {
        Mb = intExpr(*R.Microbatch, WMicrobatch);
        St = R.Stage ? intExpr(*R.Stage, WStage) : -1;
      };
      int32_t Mb, St;
      Ref(N.First, Mb, St);
      if (N.Kind == ActionNodeKind::Compute) {
        emit(OpCode::EmitCompute, Mb, St, 0, &N);
      } else {
        // The first compute is checked before the second runs.
        emit(OpCode::OverlapFirst, Mb, St, 0, &N);
        int32_t Mb2, St2;
        Ref(N.Second, Mb2, St2);
        size_t E = emit(OpCode::EmitOverlap, Mb, St, Mb2, &N);
        Code.Ops[E].D = St2;
      }
      TempTop = Top;
    }
  }

  struct Loop {
    std::vector<size_t> Breaks, Continues;
    int32_t RankDepth;
  };
  void patch(Loop &L, int32_t Continue, int32_t Break) {
    for (size_t J : L.Continues)
      Code.Ops[J].A = Continue;
    for (size_t J : L.Breaks)
      Code.Ops[J].A = Break;
  }
  /// Restores the current rank of every rank block left by a jump out.
  void leaveRanks(int32_t Depth) {
    for (int32_t D = RankDepth; D-- > Depth;)
      emit(OpCode::RankExit, RankSaves[size_t(D)]);
  }

  static bool isComparison(OpCode C) {
    return (C >= OpCode::Lt && C <= OpCode::Ne) ||
           (C >= OpCode::LtI && C <= OpCode::NeI);
  }

  /// A comparison followed by the op that tests its result (BranchFalse,
  /// AndOr, ToBool), where that op charges no step and is no jump target,
  /// becomes one op: the test of a comparison's result cannot fail, and
  /// nothing observable happens between the two.
  void fuse() {
    std::vector<Op> &Ops = Code.Ops;
    std::vector<uint8_t> Target(Ops.size() + 1, 0);
    forEachTarget([&](int32_t &T) { Target[size_t(T)] = 1; });
    std::vector<int32_t> NewIndex(Ops.size() + 1, 0);
    std::vector<Op> Out;
    Out.reserve(Ops.size());
    for (size_t I = 0; I < Ops.size(); ++I) {
      NewIndex[I] = int32_t(Out.size());
      Op O = Ops[I];
      if (isComparison(O.Code) && I + 1 < Ops.size() && !Target[I + 1] &&
          Ops[I + 1].Charge == 0) {
        const Op &N = Ops[I + 1];
        bool Uses = N.Code == OpCode::BranchFalse ? N.A == O.A
                    : N.Code == OpCode::AndOr || N.Code == OpCode::ToBool
                        ? N.B == O.A
                        : false;
        if (Uses && N.Code == OpCode::BranchFalse) {
          O.Sub = FuseBranchFalse;
          O.D = N.B;
        } else if (Uses && N.Code == OpCode::AndOr) {
          O.A = N.A; // the && / || result register
          O.Sub = N.Sub ? FuseAnd : FuseOr;
          O.D = N.C;
        } else if (Uses && N.Code == OpCode::ToBool) {
          O.A = N.A;
        } else {
          Out.push_back(O);
          continue;
        }
        Out.push_back(O);
        NewIndex[I + 1] = int32_t(Out.size() - 1);
        ++I;
        continue;
      }
      Out.push_back(O);
    }
    NewIndex[Ops.size()] = int32_t(Out.size());
    Ops = std::move(Out);
    forEachTarget([&](int32_t &T) { T = NewIndex[size_t(T)]; });
  }

  /// Calls F on every jump target field of the ops.
  template <typename Fn> void forEachTarget(Fn F) {
    for (Op &O : Code.Ops)
      switch (O.Code) {
      case OpCode::Jump:
        F(O.A);
        break;
      case OpCode::BranchFalse:
      case OpCode::ForIter:
        F(O.B);
        break;
      case OpCode::AndOr:
        F(O.C);
        break;
      case OpCode::ForNext:
        F(O.B);
        F(O.C);
        break;
      default:
        if (isComparison(O.Code) && O.Sub != FuseNone)
          F(O.D);
        break;
      }
  }

  /// Symbolic registers -> frame indices.
  void layout() {
    Code.ConstBase = Locals + MaxTemps;
    Code.BuiltinBase = Code.ConstBase + int32_t(Code.Consts.size());
    Code.FrameSize =
        Code.BuiltinBase + (Code.UsesBuiltins ? int32_t(Builtin::D) + 1 : 0);
    auto Fix = [&](int32_t &R) { R = resolve(R); };
    for (Op &O : Code.Ops) {
      switch (O.Code) {
      case OpCode::Jump:
        break;                  // A is a target
      case OpCode::ForIter:     // B a target, C a slot
      case OpCode::ForNext:     // B, C targets
      case OpCode::BranchFalse: // B is a target
        Fix(O.A);
        break;
      case OpCode::AndOr:
        Fix(O.A);
        Fix(O.B);
        break; // C is a target
      case OpCode::CallInvoke:
        Fix(O.A);
        break; // B, C index ArgRegs
      case OpCode::Return:
      case OpCode::EmitCompute:
      case OpCode::OverlapFirst:
        Fix(O.A);
        Fix(O.B); // -1 stays
        break;
      case OpCode::EmitOverlap:
        Fix(O.A);
        Fix(O.B);
        Fix(O.C);
        Fix(O.D);
        break;
      default:
        Fix(O.A);
        Fix(O.B);
        Fix(O.C);
        break;
      }
    }
    for (int32_t &R : Code.ArgRegs)
      R = resolve(R);
  }

  FnDecl &F;
  bool ConstRegs;
  FnCode Code;
  std::vector<uint8_t> IntSlot;
  int32_t Locals = 0, TempTop = 0, MaxTemps = 0, RankDepth = 0;
  std::vector<LocId> Pending;
  std::vector<Loop> Loops;
  std::vector<int32_t> RankSaves;
  llvm::DenseMap<std::pair<int64_t, uint8_t>, int32_t> ConstIds;
};

} // namespace

FnCode compileFn(FnDecl &F, bool ConstRegs) {
  return Compiler(F, ConstRegs).run();
}

} // namespace pps::frontend::eval
