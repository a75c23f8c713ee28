//===- TransformStmt.cpp - statements and actions -> AST ------------------===//
#include "Transformer.h"

#include <fmt/format.h>

namespace pps::frontend {

ast::Block Transformer::transformBlock(P::BlockContext &Ctx) {
  ast::Block B;
  for (P::StmtContext *S : Ctx.stmt())
    B.push_back(transformStmt(*S));
  return B;
}

ast::StmtPtr Transformer::transformStmt(P::StmtContext &Ctx) {
  if (auto *C = dynamic_cast<P::LetStmtContext *>(&Ctx))
    return transformLetStmt(*C);
  if (auto *C = dynamic_cast<P::AssignStmtContext *>(&Ctx))
    return transformAssignStmt(*C);
  if (auto *C = dynamic_cast<P::IndexAssignStmtContext *>(&Ctx))
    return transformIndexAssignStmt(*C);
  if (auto *C = dynamic_cast<P::CompoundAssignStmtContext *>(&Ctx))
    return transformCompoundAssignStmt(*C);
  if (auto *C = dynamic_cast<P::IncrementStmtContext *>(&Ctx))
    return transformIncrementStmt(*C);
  if (auto *C = dynamic_cast<P::ForStmtContext *>(&Ctx))
    return transformForStmt(*C);
  if (auto *C = dynamic_cast<P::WhileStmtContext *>(&Ctx))
    return transformWhileStmt(*C);
  if (dynamic_cast<P::BreakStmtContext *>(&Ctx))
    return std::make_unique<ast::SimpleStmt>(ast::StmtKind::Break, loc(Ctx));
  if (dynamic_cast<P::ContinueStmtContext *>(&Ctx))
    return std::make_unique<ast::SimpleStmt>(ast::StmtKind::Continue, loc(Ctx));
  if (auto *C = dynamic_cast<P::IfStmtContext *>(&Ctx))
    return transformIfChain(*C->ifChain());
  if (auto *C = dynamic_cast<P::RankStmtContext *>(&Ctx))
    return transformRankStmt(*C);
  if (auto *C = dynamic_cast<P::RankListStmtContext *>(&Ctx))
    return transformRankListStmt(*C);
  if (auto *C = dynamic_cast<P::ReturnStmtContext *>(&Ctx))
    return transformReturnStmt(*C);
  if (auto *C = dynamic_cast<P::AssertStmtContext *>(&Ctx))
    return transformAssertStmt(*C);
  if (auto *C = dynamic_cast<P::CallStmtContext *>(&Ctx))
    return transformCallStmt(*C);
  if (auto *C = dynamic_cast<P::ActionStmtContext *>(&Ctx))
    return transformActionStmt(*C);
  return std::make_unique<ast::SimpleStmt>(ast::StmtKind::Empty, loc(Ctx));
}

ast::StmtPtr Transformer::transformLetStmt(P::LetStmtContext &Ctx) {
  auto S = std::make_unique<ast::LetStmt>(loc(Ctx));
  S->Var = transformBinder(*Ctx.binder());
  S->Init = transformExpr(*Ctx.expr());
  return S;
}

ast::StmtPtr Transformer::transformAssignStmt(P::AssignStmtContext &Ctx) {
  auto S = std::make_unique<ast::AssignStmt>(ast::StmtKind::Assign, loc(Ctx));
  S->Target = std::make_unique<ast::NameExpr>(loc(*Ctx.ident()),
                                              transformIdent(*Ctx.ident()));
  S->Value = transformExpr(*Ctx.expr());
  return S;
}

/// `x op= e` as the language spells it, `x = x op e`: reported (the
/// language has no compound assignment), and kept as that assignment so
/// that nothing else is reported about x.
static ast::StmtPtr desugared(LocId Loc, LocId NameLoc, std::string Name,
                              ast::BinOp Op, ast::ExprPtr Value) {
  auto S = std::make_unique<ast::AssignStmt>(ast::StmtKind::Assign, Loc);
  S->Target = std::make_unique<ast::NameExpr>(NameLoc, Name);
  S->Value = std::make_unique<ast::BinaryExpr>(
      Loc, Op, std::make_unique<ast::NameExpr>(NameLoc, Name),
      std::move(Value));
  return S;
}

static ast::BinOp binOpOf(size_t Token) {
  switch (Token) {
  case P::PLUS:
    return ast::BinOp::Add;
  case P::MINUS:
    return ast::BinOp::Sub;
  case P::STAR:
    return ast::BinOp::Mul;
  case P::SLASH:
    return ast::BinOp::Div;
  default:
    return ast::BinOp::Mod;
  }
}

ast::StmtPtr
Transformer::transformCompoundAssignStmt(P::CompoundAssignStmtContext &Ctx) {
  std::string Name = transformIdent(*Ctx.ident());
  std::string Op = Ctx.op->getText();
  // The value as written (getText() would drop the spaces).
  antlr4::Token *First = Ctx.expr()->getStart(), *Last = Ctx.expr()->getStop();
  std::string Value = First->getInputStream()->getText(
      antlr4::misc::Interval(First->getStartIndex(), Last->getStopIndex()));
  Diags.report(
      DiagKind::SyntaxError, loc(Ctx.op),
      fmt::format("'{}=' is not an operator in pps; write '{} = {} "
                  "{} {}'",
                  Op, Name, Name, Op,
                  Value.size() > 30 || Value.find('\n') != std::string::npos
                      ? "..."
                      : Value));
  return desugared(loc(Ctx), loc(*Ctx.ident()), Name,
                   binOpOf(Ctx.op->getType()), transformExpr(*Ctx.expr()));
}

ast::StmtPtr Transformer::transformIncrementStmt(P::IncrementStmtContext &Ctx) {
  std::string Name = transformIdent(*Ctx.ident());
  std::string Op = Ctx.op->getText();
  Diags.report(DiagKind::SyntaxError, loc(Ctx.op),
               fmt::format("'{0}{0}' is not an operator in pps; write '{1} = "
                           "{1} {0} 1'",
                           Op, Name));
  auto One = std::make_unique<ast::IntLit>(loc(Ctx.op), 1);
  return desugared(loc(Ctx), loc(*Ctx.ident()), Name,
                   binOpOf(Ctx.op->getType()), std::move(One));
}

ast::StmtPtr
Transformer::transformIndexAssignStmt(P::IndexAssignStmtContext &Ctx) {
  auto S =
      std::make_unique<ast::AssignStmt>(ast::StmtKind::IndexAssign, loc(Ctx));
  S->Target = std::make_unique<ast::NameExpr>(loc(*Ctx.ident()),
                                              transformIdent(*Ctx.ident()));
  S->Index = transformExpr(*Ctx.expr(0));
  S->Value = transformExpr(*Ctx.expr(1));
  return S;
}

ast::StmtPtr Transformer::transformForStmt(P::ForStmtContext &Ctx) {
  auto S = std::make_unique<ast::ForStmt>(loc(Ctx));
  S->Var = transformBinder(*Ctx.binder());
  S->From = transformExpr(*Ctx.expr(0));
  S->To = transformExpr(*Ctx.expr(1));
  if (Ctx.STEP())
    S->Step = transformExpr(*Ctx.expr(2));
  S->Body = transformBlock(*Ctx.block());
  return S;
}

ast::StmtPtr Transformer::transformWhileStmt(P::WhileStmtContext &Ctx) {
  auto S = std::make_unique<ast::WhileStmt>(loc(Ctx));
  S->Cond = transformExpr(*Ctx.expr());
  S->Body = transformBlock(*Ctx.block());
  return S;
}

ast::StmtPtr Transformer::transformIfChain(P::IfChainContext &Ctx) {
  auto S = std::make_unique<ast::IfStmt>(loc(Ctx));
  S->Cond = transformExpr(*Ctx.expr());
  S->Then = transformBlock(*Ctx.block(0));
  if (Ctx.ifChain())
    S->Else.push_back(transformIfChain(*Ctx.ifChain()));
  else if (Ctx.block().size() > 1)
    S->Else = transformBlock(*Ctx.block(1));
  return S;
}

ast::StmtPtr Transformer::transformRankStmt(P::RankStmtContext &Ctx) {
  auto S = std::make_unique<ast::RankStmt>(ast::StmtKind::RankBlock, loc(Ctx));
  S->Rank = transformExpr(*Ctx.expr());
  S->Body = transformBlock(*Ctx.block());
  return S;
}

ast::StmtPtr Transformer::transformRankListStmt(P::RankListStmtContext &Ctx) {
  auto S = std::make_unique<ast::RankStmt>(ast::StmtKind::RankList, loc(Ctx));
  S->Rank = transformExpr(*Ctx.expr());
  transformRankListActions(Ctx.COLON(), Ctx.action(), *S);
  return S;
}

void Transformer::transformRankListActions(
    antlr4::tree::TerminalNode *Colon,
    const std::vector<P::ActionContext *> &Ctxs, ast::RankStmt &Out) {
  if (Ctxs.empty())
    if (LiteralSpan *Sp = Map.spanAt(offset(Colon->getSymbol()) + 1)) {
      Out.Literal = std::move(Sp->Actions);
      return;
    }
  Out.Actions = transformActions(Ctxs);
}

ast::StmtPtr Transformer::transformReturnStmt(P::ReturnStmtContext &Ctx) {
  auto S = std::make_unique<ast::ReturnStmt>(loc(Ctx));
  if (Ctx.expr())
    S->Value = transformExpr(*Ctx.expr());
  return S;
}

ast::StmtPtr Transformer::transformAssertStmt(P::AssertStmtContext &Ctx) {
  auto S = std::make_unique<ast::AssertStmt>(loc(Ctx));
  S->Cond = transformExpr(*Ctx.expr());
  if (Ctx.STRING())
    S->Message = transformString(Ctx.STRING()->getSymbol());
  return S;
}

ast::StmtPtr Transformer::transformCallStmt(P::CallStmtContext &Ctx) {
  auto S = std::make_unique<ast::CallStmt>(loc(Ctx));
  S->Call = transformCall(*Ctx.ident(), Ctx.argList(), loc(Ctx));
  return S;
}

ast::StmtPtr Transformer::transformActionStmt(P::ActionStmtContext &Ctx) {
  auto S = std::make_unique<ast::ActionStmt>(loc(Ctx));
  S->Actions = transformActions(Ctx.action());
  return S;
}

std::vector<ast::ActionNode>
Transformer::transformActions(const std::vector<P::ActionContext *> &Ctxs) {
  std::vector<ast::ActionNode> Out;
  Out.reserve(Ctxs.size());
  for (P::ActionContext *A : Ctxs)
    Out.push_back(transformAction(*A));
  return Out;
}

ast::ActionNode Transformer::transformAction(P::ActionContext &Ctx) {
  ast::ActionNode A;
  A.Loc = loc(Ctx);
  if (auto *C = dynamic_cast<P::ComputeActionContext *>(&Ctx)) {
    A.Kind = ast::ActionNodeKind::Compute;
    A.First = transformComputeRef(*C->computeRef());
    return A;
  }
  if (auto *C = dynamic_cast<P::OverlapActionContext *>(&Ctx)) {
    A.Kind = ast::ActionNodeKind::Overlap;
    A.First = transformComputeRef(*C->computeRef(0));
    A.Second = transformComputeRef(*C->computeRef(1));
    return A;
  }
  if (auto *C = dynamic_cast<P::SendActionContext *>(&Ctx)) {
    A.Kind = ast::ActionNodeKind::Send;
    A.First = transformComputeRef(*C->computeRef());
    if (C->primary())
      A.Operand = transformPrimary(*C->primary());
    return A;
  }
  if (auto *C = dynamic_cast<P::RecvActionContext *>(&Ctx)) {
    A.Kind = ast::ActionNodeKind::Recv;
    A.First = transformComputeRef(*C->computeRef());
    if (C->primary())
      A.Operand = transformPrimary(*C->primary());
    return A;
  }
  if (auto *C = dynamic_cast<P::ControlActionContext *>(&Ctx)) {
    A.Kind = ast::ActionNodeKind::Control;
    A.ControlKind = transformControlKind(*C->controlKind());
    A.Operand = transformPrimary(*C->primary());
    return A;
  }
  auto *C = dynamic_cast<P::IdleActionContext *>(&Ctx);
  assert(C && "unhandled action alternative");
  A.Kind = ast::ActionNodeKind::Idle;
  if (C->quantity())
    A.IdleTime = transformQuantity(*C->quantity());
  return A;
}

static ir::ActionKind computeKindOf(char C) {
  switch (C) {
  case 'F':
    return ir::ActionKind::F;
  case 'I':
    return ir::ActionKind::I;
  case 'W':
    return ir::ActionKind::W;
  default:
    return ir::ActionKind::B;
  }
}

ast::ComputeRef Transformer::transformComputeRef(P::ComputeRefContext &Ctx) {
  ast::ComputeRef R;
  R.Loc = loc(Ctx);
  if (auto *L = dynamic_cast<P::LiteralRefContext *>(&Ctx)) {
    antlr4::Token *T = L->COMPUTE_LIT()->getSymbol();
    std::string Text = T->getText();
    R.Kind = computeKindOf(Text[0]);
    size_t At = Text.find('@');
    R.Microbatch =
        transformIntLiteral(llvm::StringRef(Text).slice(1, At), T, 1);
    if (At != std::string::npos)
      R.Stage = transformIntLiteral(llvm::StringRef(Text).substr(At + 1), T,
                                    uint32_t(At + 1));
    else if (L->primary())
      R.Stage = transformPrimary(*L->primary());
    return R;
  }
  auto *E = dynamic_cast<P::ExprRefContext *>(&Ctx);
  assert(E && "unhandled compute ref alternative");
  R.Kind = computeKindOf(E->COMPUTE_KIND()->getText()[0]);
  R.Microbatch = transformExpr(*E->expr());
  if (E->primary())
    R.Stage = transformPrimary(*E->primary());
  return R;
}

ir::ActionKind Transformer::transformControlKind(P::ControlKindContext &Ctx) {
  if (Ctx.UNSHARD())
    return ir::ActionKind::Unshard;
  if (Ctx.RESHARD())
    return ir::ActionKind::Reshard;
  return ir::ActionKind::ReduceGrad;
}

} // namespace pps::frontend
