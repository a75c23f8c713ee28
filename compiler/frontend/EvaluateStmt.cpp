//===- EvaluateStmt.cpp - statements, rank blocks and actions -------------===//
//
// Statements return a Flow code; actions are range-checked and appended
// straight to the current rank's vector with their source location.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorImpl.h"

#include "pps/frontend/LiteralList.h"

#include <algorithm>
#include <cstring>

namespace pps::frontend::eval {

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
    int64_t *Vec = elements(Arr), Len = length(Arr);
    if (I < 0 || I >= Len) {
      fail(DiagKind::OutOfRange, A.Index->Loc,
           fmt::format("index {} is outside '{}' of length {}", I,
                       A.Target->Name, Len));
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
  enterRank(int32_t(Rank));
  Flow Fl = Flow::Next;
  if (R.Kind == StmtKind::RankList && !R.Literal.empty())
    emitLiteral(R.Literal);
  else if (R.Kind == StmtKind::RankList)
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
  return checkCompute(R, Mb, St, A);
}

bool Evaluator::checkCompute(ComputeRef &R, int64_t Mb, int64_t St,
                             ir::Action &A) {
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
      std::optional<int64_t> Peer;
      if (N.Operand) {
        Peer = evalInt(*N.Operand, "a rank");
        if (Failed)
          break;
      }
      emitComm(
          A, N.Kind == ActionNodeKind::Send, Peer,
          [&] { return N.Operand->Loc; }, N.Loc);
      break;
    }
    case ActionNodeKind::Control: {
      int64_t St = evalInt(*N.Operand, "a stage");
      if (Failed)
        break;
      if (!stageInRange(St, *N.Operand))
        break;
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

void Evaluator::emitComm(const ir::Action &A, bool Send,
                         std::optional<int64_t> Peer,
                         llvm::function_ref<LocId()> PeerLoc, LocId Loc) {
  bool Fwd = A.Kind == ir::ActionKind::F;
  ir::ActionKind K =
      Send ? (Fwd ? ir::ActionKind::SendF : ir::ActionKind::SendB)
           : (Fwd ? ir::ActionKind::RecvF : ir::ActionKind::RecvB);
  if (Peer) {
    if (*Peer < 0 || *Peer >= Out.Topo.Ranks) {
      fail(DiagKind::OutOfRange, PeerLoc(),
           fmt::format("peer rank {} is out of range 0..{}", *Peer,
                       Out.Topo.Ranks - 1));
      return;
    }
  } else {
    int64_t Partner = A.Stage + ((Fwd == Send) ? 1 : -1);
    if (Partner < 0 || Partner >= Out.Topo.Stages) {
      fail(DiagKind::OutOfRange, Loc,
           fmt::format("stage {} has no {} stage to {}; give the peer", A.Stage,
                       Partner < 0 ? "previous" : "next",
                       Send ? "send to" : "receive from"));
      return;
    }
    Peer = Out.Topo.StageToRank[Partner];
  }
  emit(ir::Action::comm(K, A.Microbatch, A.Stage, int32_t(*Peer), Loc), Loc);
}

bool Evaluator::literalCompute(const LiteralAction &N, LocId RefLoc,
                               ir::Action &A) {
  // As resolveCompute over IntLit nodes: one step per number, then the
  // range checks; the parts' locations are read again only for a message.
  auto Parts = [&] { return literalParts(Diags.sourceManager(), N); };
  if (LLVM_UNLIKELY(StepsLeft == 0))
    outOfBudget(Parts().Microbatch);
  else
    --StepsLeft;
  if (N.Flags & LiteralAction::HasStage) {
    if (LLVM_UNLIKELY(StepsLeft == 0))
      outOfBudget(Parts().Stage);
    else
      --StepsLeft;
  }
  if (Failed)
    return false;
  int32_t Mb = N.Microbatch, St = N.Stage;
  if (LLVM_UNLIKELY(Mb >= *NMicro)) {
    fail(DiagKind::OutOfRange, Parts().Microbatch,
         fmt::format("microbatch {} is out of range 0..{}", Mb, *NMicro - 1));
    return false;
  }
  if (!(N.Flags & LiteralAction::HasStage)) {
    St = OnlyStage[CurRank];
    if (LLVM_UNLIKELY(St < 0)) {
      LocId L = RefLoc != NoLoc ? RefLoc : Parts().Compute;
      if (St == -2)
        fail(DiagKind::AmbiguousStage, L,
             fmt::format("rank {} holds several stages; say which with @stage",
                         CurRank));
      else
        fail(DiagKind::StagePlacement, L,
             fmt::format("rank {} holds no stage", CurRank));
      return false;
    }
  } else if (LLVM_UNLIKELY(St >= Out.Topo.Stages)) {
    fail(
        DiagKind::OutOfRange, Parts().Stage,
        fmt::format("stage {} is out of range 0..{}", St, Out.Topo.Stages - 1));
    return false;
  }
  A = ir::Action::compute(N.Op, Mb, St, RefLoc);
  return true;
}

void Evaluator::emitLiteral(const std::vector<LiteralAction> &As) {
  // Mirrors emitActions case by case (the literal reader's contract).
  auto &Acts = Out.Ranks[CurRank].Actions;
  if (Acts.capacity() < Acts.size() + As.size())
    Acts.reserve(std::max(Acts.size() + As.size(), Acts.capacity() * 2));
  for (size_t K = 0; K < As.size(); ++K) {
    const LiteralAction &N = As[K];
    if (Failed) {
      if (Depth != 0 || ListErrors >= 20)
        return;
      ++ListErrors;
      Failed = false;
    }
    switch (N.Kind) {
    case ActionNodeKind::Compute: {
      ir::Action A;
      if (literalCompute(N, N.Loc, A))
        emit(A, N.Loc);
      break;
    }
    case ActionNodeKind::Overlap: {
      const LiteralAction &Second = As[++K];
      ir::Action A, B;
      if (!literalCompute(N, NoLoc, A) ||
          !literalCompute(Second, Second.Loc, B))
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
      if (!literalCompute(N, NoLoc, A))
        break;
      std::optional<int64_t> Peer;
      if (N.Flags & LiteralAction::HasPeer) {
        if (LLVM_UNLIKELY(StepsLeft == 0)) {
          outOfBudget(literalParts(Diags.sourceManager(), N).Operand);
          break;
        }
        --StepsLeft;
        Peer = N.Peer;
      }
      emitComm(
          A, N.Kind == ActionNodeKind::Send, Peer,
          [&] { return literalParts(Diags.sourceManager(), N).Operand; },
          N.Loc);
      break;
    }
    case ActionNodeKind::Control: {
      if (LLVM_UNLIKELY(StepsLeft == 0)) {
        outOfBudget(literalParts(Diags.sourceManager(), N).Operand);
        break;
      }
      --StepsLeft;
      int64_t St = N.Stage;
      if (St >= Out.Topo.Stages) {
        fail(DiagKind::OutOfRange,
             literalParts(Diags.sourceManager(), N).Operand,
             fmt::format("stage {} is out of range 0..{}", St,
                         Out.Topo.Stages - 1));
        break;
      }
      emit(ir::Action::control(N.Op, int32_t(St), N.Loc), N.Loc);
      break;
    }
    case ActionNodeKind::Idle: {
      // The reader took only lengths that quantityOk accepts, unitless.
      float T;
      std::memcpy(&T, &N.Peer, sizeof(float));
      emit(ir::Action::idle(T, N.Loc), N.Loc);
      break;
    }
    }
  }
  if (ListErrors && Depth == 0)
    Failed = true;
}

} // namespace pps::frontend::eval
