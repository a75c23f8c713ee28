//===- TransformExpr.cpp - expressions, names, quantities -> AST ----------===//
#include "Transformer.h"

#include <fmt/format.h>

#include <cstdlib>

namespace pps::frontend {

ast::ExprPtr Transformer::transformExpr(P::ExprContext &Ctx) {
  if (auto *C = dynamic_cast<P::PrimaryExprContext *>(&Ctx))
    return transformPrimary(*C->primary());
  if (auto *C = dynamic_cast<P::UnaryExprContext *>(&Ctx)) {
    ast::UnOp Op = C->MINUS() ? ast::UnOp::Neg : ast::UnOp::Not;
    return std::make_unique<ast::UnaryExpr>(loc(C->op), Op,
                                            transformExpr(*C->expr()));
  }
  // Binary operators: the location is the operator token, so messages such
  // as division by zero point at the operator.
  ast::BinOp Op;
  antlr4::Token *OpTok = nullptr;
  P::ExprContext *L = nullptr, *R = nullptr;
  if (auto *C = dynamic_cast<P::MulExprContext *>(&Ctx)) {
    OpTok = C->op;
    Op = C->STAR()    ? ast::BinOp::Mul
         : C->SLASH() ? ast::BinOp::Div
                      : ast::BinOp::Mod;
    L = C->expr(0), R = C->expr(1);
  } else if (auto *C = dynamic_cast<P::AddExprContext *>(&Ctx)) {
    OpTok = C->op;
    Op = C->PLUS() ? ast::BinOp::Add : ast::BinOp::Sub;
    L = C->expr(0), R = C->expr(1);
  } else if (auto *C = dynamic_cast<P::CmpExprContext *>(&Ctx)) {
    OpTok = C->op;
    Op = C->LT()   ? ast::BinOp::Lt
         : C->LE() ? ast::BinOp::Le
         : C->GT() ? ast::BinOp::Gt
                   : ast::BinOp::Ge;
    L = C->expr(0), R = C->expr(1);
  } else if (auto *C = dynamic_cast<P::EqExprContext *>(&Ctx)) {
    OpTok = C->op;
    Op = C->EQEQ() ? ast::BinOp::Eq : ast::BinOp::Ne;
    L = C->expr(0), R = C->expr(1);
  } else if (auto *C = dynamic_cast<P::AndExprContext *>(&Ctx)) {
    OpTok = C->ANDAND()->getSymbol();
    Op = ast::BinOp::And;
    L = C->expr(0), R = C->expr(1);
  } else {
    auto *O = dynamic_cast<P::OrExprContext *>(&Ctx);
    assert(O && "unhandled expression alternative");
    OpTok = O->OROR()->getSymbol();
    Op = ast::BinOp::Or;
    L = O->expr(0), R = O->expr(1);
  }
  return std::make_unique<ast::BinaryExpr>(loc(OpTok), Op, transformExpr(*L),
                                           transformExpr(*R));
}

ast::ExprPtr Transformer::transformPrimary(P::PrimaryContext &Ctx) {
  if (auto *C = dynamic_cast<P::IntLitContext *>(&Ctx))
    return transformIntToken(C->INT()->getSymbol());
  if (auto *C = dynamic_cast<P::BoolLitContext *>(&Ctx))
    return std::make_unique<ast::BoolLit>(loc(Ctx), C->TRUE() != nullptr);
  if (auto *C = dynamic_cast<P::CallExprContext *>(&Ctx))
    return transformCall(*C->ident(), C->argList(), loc(Ctx));
  if (auto *C = dynamic_cast<P::IndexExprContext *>(&Ctx)) {
    auto E = std::make_unique<ast::IndexExpr>(loc(C->LBRACK()));
    E->Base = std::make_unique<ast::NameExpr>(loc(*C->ident()),
                                              transformIdent(*C->ident()));
    E->Index = transformExpr(*C->expr());
    return E;
  }
  if (auto *C = dynamic_cast<P::NameExprContext *>(&Ctx))
    return std::make_unique<ast::NameExpr>(loc(Ctx),
                                           transformIdent(*C->ident()));
  auto *C = dynamic_cast<P::ParenExprContext *>(&Ctx);
  assert(C && "unhandled primary alternative");
  return transformExpr(*C->expr());
}

std::unique_ptr<ast::CallExpr>
Transformer::transformCall(P::IdentContext &Name, P::ArgListContext *Args,
                           LocId Loc) {
  auto C = std::make_unique<ast::CallExpr>(Loc, transformIdent(Name));
  C->Args = transformArgList(Args);
  return C;
}

std::vector<ast::Arg> Transformer::transformArgList(P::ArgListContext *Ctx) {
  std::vector<ast::Arg> Out;
  if (!Ctx)
    return Out;
  for (P::ArgContext *A : Ctx->arg())
    Out.push_back(transformArg(*A));
  return Out;
}

ast::Arg Transformer::transformArg(P::ArgContext &Ctx) {
  ast::Arg A;
  if (Ctx.ident()) {
    A.Name = transformIdent(*Ctx.ident());
    A.NameLoc = loc(*Ctx.ident());
  }
  A.Value = transformExpr(*Ctx.expr());
  return A;
}

ast::Binder Transformer::transformBinder(P::BinderContext &Ctx) {
  ast::Binder B;
  B.Name = tokenText(Ctx);
  B.Loc = loc(Ctx);
  B.Reserved = Ctx.ident() == nullptr;
  return B;
}

ast::ExprPtr Transformer::transformIntToken(antlr4::Token *T) {
  return transformIntLiteral(T->getText(), T, 0);
}

ast::ExprPtr Transformer::transformIntLiteral(llvm::StringRef Text,
                                              antlr4::Token *T,
                                              uint32_t Offset) {
  LocId L = SM.getLocAtOffset(File, offset(T) + Offset);
  size_t I = 0;
  uint64_t V = 0;
  bool Overflow = false;
  for (; I < Text.size(); ++I) {
    uint64_t D = uint64_t(Text[I] - '0');
    if (V > (uint64_t(INT64_MAX) - D) / 10) {
      Overflow = true;
      break;
    }
    V = V * 10 + D;
  }
  if (Overflow) {
    Diags.report(DiagKind::IntegerOverflow, L,
                 fmt::format("integer literal '{}' does not fit in 64 bits",
                             Text.size() > 40 ? Text.substr(0, 40).str() + "..."
                                              : Text.str()));
    V = 0;
  }
  return std::make_unique<ast::IntLit>(L, int64_t(V));
}

std::string Transformer::transformString(antlr4::Token *T) {
  // Take the text from the original buffer: the parser sees a copy where
  // non-ASCII bytes are masked.
  llvm::StringRef Src = SM.contents(File);
  size_t B = offset(T), E = B + (T->getStopIndex() - T->getStartIndex());
  llvm::StringRef Raw =
      E < Src.size() && B + 1 < E ? Src.slice(B + 1, E) : llvm::StringRef();
  std::string Out;
  for (size_t I = 0; I < Raw.size(); ++I) {
    char C = Raw[I];
    if (C == '\\' && I + 1 < Raw.size()) {
      char N = Raw[++I];
      Out += N == 'n' ? '\n' : N == 't' ? '\t' : N;
      continue;
    }
    Out += C;
  }
  return Out;
}

ast::Quantity Transformer::transformQuantity(P::QuantityContext &Ctx) {
  ast::Quantity Q;
  Q.Loc = loc(Ctx);
  std::string Text = tokenText(*Ctx.number());
  if (Ctx.MINUS())
    Text = "-" + Text;
  Q.Value = std::strtod(Text.c_str(), nullptr);
  Q.FloatValue = std::strtof(Text.c_str(), nullptr);
  if (Ctx.number()->INT()) {
    Q.IsInt = true;
    auto Lit = transformIntToken(Ctx.number()->INT()->getSymbol());
    Q.IntValue = static_cast<ast::IntLit &>(*Lit).Value;
    if (Ctx.MINUS())
      Q.IntValue = -Q.IntValue;
  }
  if (Ctx.unit()) {
    Q.Unit = transformUnit(*Ctx.unit());
    Q.UnitLoc = loc(*Ctx.unit());
  }
  return Q;
}

std::string Transformer::transformUnit(P::UnitContext &Ctx) {
  std::string U;
  for (P::UnitNameContext *N : Ctx.unitName()) {
    if (!U.empty())
      U += '/';
    U += tokenText(*N);
  }
  return U;
}

} // namespace pps::frontend
