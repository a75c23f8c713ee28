//===- Transformer.h - ANTLR parse tree -> pps AST (private) --------------===//
//
// One typed transformX(XContext &) per grammar rule, split by topic across
// TransformDecl.cpp (files, imports, schedules, pipelines), TransformStmt.cpp
// (statements and actions) and TransformExpr.cpp (expressions, quantities).
// Requires: a parse tree without syntax errors (the parser skips the
// transform otherwise), so every child the grammar promises is present.
// Guarantees: an ast::Module whose nodes all carry locations; no ANTLR type
// escapes this component.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/frontend/AST.h"
#include "pps/frontend/LiteralList.h"
#include "pps/support/Diagnostics.h"

#include "PpsParser.h"

#include <algorithm>
#include <cassert>
#include <vector>

namespace pps::frontend {

using P = pps::grammar::PpsParser;

/// How the text ANTLR reads maps onto the buffer: the buffer itself, or the
/// buffer with its literal rank lists cut out (LiteralList.h), which the
/// transformer puts back into their RankStmts.
struct TextMap {
  struct Segment {
    uint32_t Text;   ///< where the segment starts in ANTLR's text
    uint32_t Buffer; ///< where it starts in the buffer
  };
  std::vector<Segment> Segments; ///< ascending; the first starts at 0
  std::vector<LiteralSpan> *Spans = nullptr; ///< ascending by Begin

  /// The buffer offset of an offset in ANTLR's text.
  uint32_t toBuffer(size_t TextOffset) const {
    auto It =
        std::upper_bound(Segments.begin(), Segments.end(), TextOffset,
                         [](size_t V, const Segment &S) { return V < S.Text; });
    const Segment &S = *(It - 1);
    return uint32_t(S.Buffer + (TextOffset - S.Text));
  }
  /// The literal list cut out at buffer offset Begin, or null.
  LiteralSpan *spanAt(uint32_t Begin) const {
    if (!Spans)
      return nullptr;
    auto It = std::lower_bound(
        Spans->begin(), Spans->end(), Begin,
        [](const LiteralSpan &S, uint32_t V) { return S.Begin < V; });
    return It != Spans->end() && It->Begin == Begin ? &*It : nullptr;
  }
};

class Transformer {
public:
  Transformer(SourceManager &SM, DiagnosticEngine &Diags, FileId File,
              const TextMap &Map)
      : SM(SM), Diags(Diags), File(File), Map(Map) {}

  std::unique_ptr<ast::Module> transformFile(P::FileContext &Ctx);

private:
  // --- locations -----------------------------------------------------------
  LocId loc(antlr4::Token *T);
  LocId loc(antlr4::ParserRuleContext &Ctx) { return loc(Ctx.getStart()); }
  LocId loc(antlr4::tree::TerminalNode *N) { return loc(N->getSymbol()); }

  // --- declarations (TransformDecl.cpp) ------------------------------------
  void transformTopDecl(P::TopDeclContext &Ctx, ast::Module &M);
  ast::ImportDecl transformImportDecl(P::ImportDeclContext &Ctx);
  std::unique_ptr<ast::FnDecl>
  transformScheduleDecl(P::ScheduleDeclContext &Ctx);
  std::unique_ptr<ast::FnDecl> transformFnDecl(P::FnDeclContext &Ctx);
  /// `schedule` and `fn` declarations share one shape: name, params, body.
  std::unique_ptr<ast::FnDecl> transformFnLike(bool IsSchedule,
                                               P::IdentContext &Name,
                                               P::ParamListContext *Params,
                                               P::BlockContext &Body);
  std::vector<ast::Param> transformParamList(P::ParamListContext *Ctx);
  ast::Param transformParam(P::ParamContext &Ctx);
  std::unique_ptr<ast::PipelineDecl>
  transformPipelineDecl(P::PipelineDeclContext &Ctx);
  ast::PipelineItem transformPipelineItem(P::PipelineItemContext &Ctx);
  ast::PipelineItem transformRanksItem(P::RanksItemContext &Ctx);
  ast::PipelineItem transformStagesItem(P::StagesItemContext &Ctx);
  ast::PipelineItem transformMicrobatchesItem(P::MicrobatchesItemContext &Ctx);
  ast::PipelineItem transformDirectionsItem(P::DirectionsItemContext &Ctx);
  ast::PipelineItem transformCostItem(P::CostItemContext &Ctx);
  ast::PipelineItem transformCommItem(P::CommItemContext &Ctx);
  ast::PipelineItem transformMemoryItem(P::MemoryItemContext &Ctx);
  ast::PipelineItem transformMemoryBlockItem(P::MemoryBlockItemContext &Ctx);
  ast::PipelineItem transformFsdpItem(P::FsdpItemContext &Ctx);
  ast::PipelineItem transformScheduleItem(P::ScheduleItemContext &Ctx);
  ast::PipelineItem transformLetItem(P::LetItemContext &Ctx);
  ast::PipelineItem transformRankListItem(P::RankListItemContext &Ctx);
  ast::PipelineItem transformRankBlockItem(P::RankBlockItemContext &Ctx);
  void transformPlacementSpec(P::PlacementSpecContext &Ctx,
                              ast::PipelineItem &Out);
  ast::CostEntry transformCostEntry(P::CostEntryContext &Ctx);
  ast::CommEntry transformCommEntry(P::CommEntryContext &Ctx);

  // --- statements and actions (TransformStmt.cpp) --------------------------
  ast::Block transformBlock(P::BlockContext &Ctx);
  ast::StmtPtr transformStmt(P::StmtContext &Ctx);
  ast::StmtPtr transformLetStmt(P::LetStmtContext &Ctx);
  ast::StmtPtr transformAssignStmt(P::AssignStmtContext &Ctx);
  ast::StmtPtr transformIndexAssignStmt(P::IndexAssignStmtContext &Ctx);
  ast::StmtPtr transformCompoundAssignStmt(P::CompoundAssignStmtContext &Ctx);
  ast::StmtPtr transformIncrementStmt(P::IncrementStmtContext &Ctx);
  ast::StmtPtr transformForStmt(P::ForStmtContext &Ctx);
  ast::StmtPtr transformWhileStmt(P::WhileStmtContext &Ctx);
  ast::StmtPtr transformIfChain(P::IfChainContext &Ctx);
  ast::StmtPtr transformRankStmt(P::RankStmtContext &Ctx);
  ast::StmtPtr transformRankListStmt(P::RankListStmtContext &Ctx);
  ast::StmtPtr transformReturnStmt(P::ReturnStmtContext &Ctx);
  ast::StmtPtr transformAssertStmt(P::AssertStmtContext &Ctx);
  ast::StmtPtr transformCallStmt(P::CallStmtContext &Ctx);
  ast::StmtPtr transformActionStmt(P::ActionStmtContext &Ctx);
  /// The actions of a rank list: the literal list cut out after its ':',
  /// or the parse tree's.
  void transformRankListActions(antlr4::tree::TerminalNode *Colon,
                                const std::vector<P::ActionContext *> &Ctxs,
                                ast::RankStmt &Out);
  std::vector<ast::ActionNode>
  transformActions(const std::vector<P::ActionContext *> &Ctxs);
  ast::ActionNode transformAction(P::ActionContext &Ctx);
  ast::ComputeRef transformComputeRef(P::ComputeRefContext &Ctx);
  ir::ActionKind transformControlKind(P::ControlKindContext &Ctx);

  // --- expressions (TransformExpr.cpp) -------------------------------------
  ast::ExprPtr transformExpr(P::ExprContext &Ctx);
  ast::ExprPtr transformPrimary(P::PrimaryContext &Ctx);
  std::unique_ptr<ast::CallExpr>
  transformCall(P::IdentContext &Name, P::ArgListContext *Args, LocId Loc);
  std::vector<ast::Arg> transformArgList(P::ArgListContext *Ctx);
  ast::Arg transformArg(P::ArgContext &Ctx);
  ast::Binder transformBinder(P::BinderContext &Ctx);
  std::string transformIdent(P::IdentContext &Ctx) { return tokenText(Ctx); }
  /// The text of a rule that is one token (ident, binder, costKey, number,
  /// unitName; the transformer only sees trees without syntax errors): the
  /// token's own text, where RuleContext::getText would gather the children
  /// through a stringstream.
  static std::string tokenText(antlr4::ParserRuleContext &Ctx) {
    assert(Ctx.getStart() == Ctx.getStop() && "not a one-token rule");
    return Ctx.getStart()->getText();
  }
  ast::Quantity transformQuantity(P::QuantityContext &Ctx);
  std::string transformUnit(P::UnitContext &Ctx);
  ast::ExprPtr transformIntToken(antlr4::Token *T);
  /// An integer spelled inside token T, starting Offset columns into it.
  ast::ExprPtr transformIntLiteral(llvm::StringRef Digits, antlr4::Token *T,
                                   uint32_t Offset);
  std::string transformString(antlr4::Token *T);

  /// The buffer offset of a token's first character.
  uint32_t offset(antlr4::Token *T) const {
    return Map.toBuffer(T->getStartIndex());
  }

  SourceManager &SM;
  DiagnosticEngine &Diags;
  FileId File;
  const TextMap &Map;
};

} // namespace pps::frontend
