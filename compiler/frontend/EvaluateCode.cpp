//===- EvaluateCode.cpp - schedule bodies -> register code ----------------===//
//
// compileFn and CodeCompiler's statements (EvaluateCodeImpl.h has the
// method): loops, branches and rank blocks as jumps, action statements as
// ops or handed to the walker; then, after the walk, comparisons fused with
// the test of their result (and a sum with the Index or EmitCompute that
// reads it), ops specialised by their neighbours, and symbolic registers
// laid out in the frame.
//
//===----------------------------------------------------------------------===//
#include "EvaluateCodeImpl.h"

namespace pps::frontend::eval {

FnCode CodeCompiler::run() {
  block(F.Body);
  emit(OpCode::End);
  fuse();
  specialize();
  layout();
  return std::move(Code);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void CodeCompiler::block(Block &B) {
  for (StmtPtr &S : B)
    stmt(*S);
}

void CodeCompiler::into(int32_t Dst, int32_t R) {
  if (R != Dst)
    emit(OpCode::Move, Dst, R);
}

void CodeCompiler::stmt(Stmt &S) {
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

void CodeCompiler::actions(ActionStmt &S) {
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

void CodeCompiler::patch(Loop &L, int32_t Continue, int32_t Break) {
  for (size_t J : L.Continues)
    Code.Ops[J].A = Continue;
  for (size_t J : L.Breaks)
    Code.Ops[J].A = Break;
}

void CodeCompiler::leaveRanks(int32_t Depth) {
  for (int32_t D = RankDepth; D-- > Depth;)
    emit(OpCode::RankExit, RankSaves[size_t(D)]);
}

//===----------------------------------------------------------------------===//
// After the walk: fused ops, specialised ops, the register layout
//===----------------------------------------------------------------------===//

bool CodeCompiler::isComparison(OpCode C) {
  return (C >= OpCode::Lt && C <= OpCode::Ne) ||
         (C >= OpCode::LtI && C <= OpCode::NeIJ);
}

template <typename Fn> void CodeCompiler::forEachTarget(Fn F) {
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
    case OpCode::ForNext1:
    case OpCode::ForNextStep:
      F(O.B);
      F(O.D);
      break;
    default:
      if (isComparison(O.Code) && O.Sub != FuseNone)
        F(O.D);
      break;
    }
}

void CodeCompiler::fuse() {
  std::vector<Op> &Ops = Code.Ops;
  std::vector<uint8_t> Target(Ops.size() + 1, 0);
  forEachTarget([&](int32_t &T) { Target[size_t(T)] = 1; });
  std::vector<int32_t> NewIndex(Ops.size() + 1, 0);
  std::vector<Op> Out;
  Out.reserve(Ops.size());
  for (size_t I = 0; I < Ops.size(); ++I) {
    NewIndex[I] = int32_t(Out.size());
    // F stands for ops I and I + 1.
    auto TakeTwo = [&](const Op &F) {
      Out.push_back(F);
      NewIndex[I + 1] = int32_t(Out.size() - 1);
      ++I;
    };
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
      TakeTwo(O);
      continue;
    }
    if (I + 1 < Ops.size() && !Target[I + 1] && fusesWithEmit(O, Ops[I + 1])) {
      Op F = Ops[I + 1]; // the EmitCompute's stage and node
      F.Code = OpCode::EmitSum;
      F.A = O.B;
      F.C = O.C;
      F.D = F.Charge;
      F.Charge = O.Charge;
      F.ChargeAt = O.ChargeAt;
      TakeTwo(F);
      continue;
    }
    if (I + 1 < Ops.size() && !Target[I + 1] && fusesWithIndex(O, Ops[I + 1])) {
      const Op &N = Ops[I + 1];
      Op F = N; // the Index's registers, node and (no) charges
      F.Code = OpCode::IndexSum;
      F.Sub = O.Code == OpCode::Add    ? SumAdd
              : O.Code == OpCode::AddI ? SumAddI
              : O.Code == OpCode::Sub  ? SumSub
                                       : SumSubI;
      F.C = O.B;
      F.D = O.C;
      F.Charge = O.Charge;
      F.ChargeAt = O.ChargeAt;
      TakeTwo(F);
      continue;
    }
    Out.push_back(O);
  }
  NewIndex[Ops.size()] = int32_t(Out.size());
  Ops = std::move(Out);
  forEachTarget([&](int32_t &T) { T = NewIndex[size_t(T)]; });
  threadJumps();
}

bool CodeCompiler::fusesWithIndex(const Op &O, const Op &N) {
  if (O.Code != OpCode::Add && O.Code != OpCode::AddI &&
      O.Code != OpCode::Sub && O.Code != OpCode::SubI)
    return false;
  // The Index reads the sum from a temporary, nothing else does (an
  // expression's temporary is read by its parent only), and it charges
  // nothing of its own between the two.
  if (N.Code != OpCode::Index || N.Charge != 0 || N.C != O.A ||
      (O.A & TagMask) != TempTag)
    return false;
  const auto *X = static_cast<const IndexExpr *>(N.Node);
  return X->Index.get() == O.Node;
}

bool CodeCompiler::fusesWithEmit(const Op &O, const Op &N) {
  // As for an Index: the EmitCompute reads the sum from a temporary, and
  // only it, as its microbatch. Its own steps (its stage's) are those
  // right after the sum's in ChargeLocs: the fused op charges them after
  // the sum (D).
  if (O.Code != OpCode::AddI || N.Code != OpCode::EmitCompute || N.A != O.A ||
      (O.A & TagMask) != TempTag || N.ChargeAt != O.ChargeAt + O.Charge)
    return false;
  const auto *X = static_cast<const ActionNode *>(N.Node);
  return X->First.Microbatch.get() == O.Node;
}

void CodeCompiler::threadJumps() {
  std::vector<Op> &Ops = Code.Ops;
  for (Op &J : Ops) {
    if (J.Code != OpCode::Jump)
      continue;
    // Through jumps that charge nothing (at most as many as there are ops,
    // so a loop of jumps cannot hold the compiler).
    int32_t T = J.A;
    for (size_t K = 0; K < Ops.size() && Ops[size_t(T)].Code == OpCode::Jump &&
                       Ops[size_t(T)].Charge == 0;
         ++K)
      T = Ops[size_t(T)].A;
    J.A = T;
    // A jump to an op that charges nothing and only moves on (a loop's
    // step, the end of the body) becomes that op, with the jump's charges.
    const Op &To = Ops[size_t(T)];
    if (To.Charge == 0 &&
        (To.Code == OpCode::ForNext || To.Code == OpCode::End)) {
      uint16_t Charge = J.Charge;
      uint32_t ChargeAt = J.ChargeAt;
      J = To;
      J.Charge = Charge;
      J.ChargeAt = ChargeAt;
      continue;
    }
    // A while loop's jump back to its test, a comparison that leaves the
    // loop when false (to the op right after this jump), becomes the test
    // itself, entering the body again when true: it charges the jump's
    // steps, then the test's.
    size_t Here = size_t(&J - Ops.data());
    if (isComparison(To.Code) && To.Sub == FuseBranchFalse &&
        To.D == int32_t(Here + 1) && uint32_t(J.Charge) + To.Charge <= 0xffff) {
      Op Test = To;
      Test.Sub = FuseLoopTest;
      Test.D = T + 1;
      Test.Charge = uint16_t(J.Charge + To.Charge);
      Test.ChargeAt = uint32_t(Code.ChargeLocs.size());
      for (const Op *From : {static_cast<const Op *>(&J), &To})
        for (uint32_t K = 0; K < From->Charge; ++K) {
          LocId L = Code.ChargeLocs[From->ChargeAt + K];
          Code.ChargeLocs.push_back(L);
        }
      J = Test;
    }
  }
}

void CodeCompiler::specialize() {
  std::vector<Op> &Ops = Code.Ops;
  for (size_t I = 0; I < Ops.size(); ++I) {
    Op &O = Ops[I];
    // A rank block of one compute: RankEnter, EmitCompute, RankExit.
    if (O.Code == OpCode::RankEnter && I + 2 < Ops.size() &&
        Ops[I + 1].Code == OpCode::EmitCompute &&
        Ops[I + 2].Code == OpCode::RankExit && Ops[I + 2].Charge == 0 &&
        Ops[I + 2].A == O.A)
      O.Code = OpCode::RankEmit;
    // A loop's step with its test (ForIter at a label charges nothing):
    // the test's exit and loop variable in the step's op, so it needs no
    // look at the ForIter. The overflow exit is the loop's exit.
    if (O.Code == OpCode::ForNext) {
      const Op &It = Ops[size_t(O.B)];
      auto &Fs = *static_cast<const ForStmt *>(It.Node);
      if (It.Code == OpCode::ForIter && It.Charge == 0 && It.A == O.A &&
          (!Fs.Step || O.C == It.B)) {
        O.Code = Fs.Step ? OpCode::ForNextStep : OpCode::ForNext1;
        O.C = It.C;
        O.D = It.B;
      }
      continue;
    }
    if (!isComparison(O.Code))
      continue;
    // An if's or a while's test in a temporary: nothing reads the result.
    bool OnlyJumps = (O.Sub == FuseBranchFalse || O.Sub == FuseLoopTest) &&
                     (O.A & TagMask) == TempTag;
    if (OnlyJumps && O.Code >= OpCode::LtI && O.Code <= OpCode::NeI)
      O.Code = OpCode(uint8_t(OpCode::LtIJ) +
                      (uint8_t(O.Code) - uint8_t(OpCode::LtI)));
    O.Sub = O.Sub == FuseNone                          ? JumpNever
            : O.Sub == FuseOr || O.Sub == FuseLoopTest ? JumpIfTrue
                                                       : JumpIfFalse;
  }
}

void CodeCompiler::layout() {
  Code.ConstBase = Locals + MaxTemps;
  Code.BuiltinBase = Code.ConstBase + int32_t(Code.Consts.size());
  Code.FrameSize =
      Code.BuiltinBase + (Code.BuiltinsUsed ? int32_t(Builtin::D) + 1 : 0);
  auto Fix = [&](int32_t &R) {
    R = resolve(R);
    if (R >= 0)
      R *= RegBytes;
  };
  for (Op &O : Code.Ops) {
    switch (O.Code) {
    case OpCode::Jump:
      break;              // A is a target
    case OpCode::ForIter: // B a target, C a slot
      Fix(O.A);
      Fix(O.C);
      break;
    case OpCode::ForNext:     // B, C targets
    case OpCode::BranchFalse: // B is a target
      Fix(O.A);
      break;
    case OpCode::ForNext1: // B, D targets, C a slot
    case OpCode::ForNextStep:
      Fix(O.A);
      Fix(O.C);
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
    case OpCode::IndexSum:
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
    Fix(R);
}

FnCode compileFn(FnDecl &F, bool ConstRegs, uint32_t IntParams) {
  return CodeCompiler(F, ConstRegs, IntParams).run();
}

//===----------------------------------------------------------------------===//
// Entering a function's code
//===----------------------------------------------------------------------===//

FnCode &Evaluator::codeOf(FnDecl &F, uint32_t IntParams) {
  // Bit 0 of the key: ConstsReady; the rest: the integer parameters.
  auto Key = std::make_pair(&F, uint64_t(IntParams) << 1 | ConstsReady);
  auto It = Code.find(Key);
  if (It != Code.end())
    return *It->second;
  // A few bodies per function: past them, calls with other integer
  // arguments run the plain one (as fast as before, and the memory stays
  // bounded by the program, not by its calls).
  if (IntParams != 0 && ++Variants[&F] > MaxVariants)
    return codeOf(F, 0);
  std::unique_ptr<FnCode> &Slot = Code[Key];
  Slot = std::make_unique<FnCode>(compileFn(F, ConstsReady, IntParams));
  return *Slot;
}

size_t Evaluator::frameSize(FnDecl &F) {
  size_t N = std::max<size_t>(size_t(F.NumSlots), F.Params.size());
  if (!Opts.TreeWalk)
    N = std::max(N, size_t(codeOf(F).FrameSize));
  return N;
}

Flow Evaluator::runBody(FnDecl &F) {
  if (Opts.TreeWalk)
    return execBlock(F.Body);
  return runCode(codeOf(F));
}

Flow Evaluator::runCode(const FnCode &FC) {
  Value *R = Stack.data() + Base;
  for (size_t K = 0; K < FC.Consts.size(); ++K)
    R[FC.ConstBase + int32_t(K)] = FC.Consts[K];
  for (unsigned Used = FC.BuiltinsUsed; Used; Used &= Used - 1) {
    unsigned K = unsigned(__builtin_ctz(Used));
    R[FC.BuiltinBase + int32_t(K)] = {Consts[K], VT::Int};
  }
  return run(FC);
}

void Evaluator::budgetRanOut(const FnCode &FC, const Op &O) {
  // The walker would have entered StepsLeft of the op's nodes and stopped
  // at the next one.
  LocId L = FC.ChargeLocs[O.ChargeAt + uint32_t(StepsLeft)];
  StepsLeft = 0;
  outOfBudget(L);
}

} // namespace pps::frontend::eval
