//===- TransformDecl.cpp - files, imports, schedules, pipelines -> AST ----===//
#include "Transformer.h"

#include <fmt/format.h>

namespace pps::frontend {

LocId Transformer::loc(antlr4::Token *T) {
  if (!T)
    return NoLoc;
  return SM.getLocAtOffset(File, offset(T));
}

std::unique_ptr<ast::Module> Transformer::transformFile(P::FileContext &Ctx) {
  auto M = std::make_unique<ast::Module>();
  M->File = File;
  M->Path = SM.fileName(File).str();
  for (P::TopDeclContext *D : Ctx.topDecl())
    transformTopDecl(*D, *M);
  for (auto &F : M->Fns)
    F->Owner = M.get();
  for (auto &Pl : M->Pipelines)
    Pl->Owner = M.get();
  return M;
}

void Transformer::transformTopDecl(P::TopDeclContext &Ctx, ast::Module &M) {
  if (auto *I = Ctx.importDecl())
    M.Imports.push_back(transformImportDecl(*I));
  else if (auto *S = Ctx.scheduleDecl())
    M.Fns.push_back(transformScheduleDecl(*S));
  else if (auto *F = Ctx.fnDecl())
    M.Fns.push_back(transformFnDecl(*F));
  else if (auto *Pl = Ctx.pipelineDecl())
    M.Pipelines.push_back(transformPipelineDecl(*Pl));
}

ast::ImportDecl Transformer::transformImportDecl(P::ImportDeclContext &Ctx) {
  ast::ImportDecl D;
  D.Loc = loc(*Ctx.modulePath());
  P::ModulePathContext &MP = *Ctx.modulePath();
  if (MP.STRING()) {
    D.IsString = true;
    D.Path = transformString(MP.STRING()->getSymbol());
    return D;
  }
  for (P::IdentContext *I : MP.ident()) {
    if (!D.Path.empty())
      D.Path += '.';
    D.Path += transformIdent(*I);
  }
  return D;
}

std::unique_ptr<ast::FnDecl>
Transformer::transformScheduleDecl(P::ScheduleDeclContext &Ctx) {
  return transformFnLike(/*IsSchedule=*/true, *Ctx.ident(), Ctx.paramList(),
                         *Ctx.block());
}

std::unique_ptr<ast::FnDecl>
Transformer::transformFnDecl(P::FnDeclContext &Ctx) {
  return transformFnLike(/*IsSchedule=*/false, *Ctx.ident(), Ctx.paramList(),
                         *Ctx.block());
}

std::unique_ptr<ast::FnDecl>
Transformer::transformFnLike(bool IsSchedule, P::IdentContext &Name,
                             P::ParamListContext *Params,
                             P::BlockContext &Body) {
  auto F = std::make_unique<ast::FnDecl>();
  F->IsSchedule = IsSchedule;
  F->Name = transformIdent(Name);
  F->Loc = loc(Name);
  F->Params = transformParamList(Params);
  F->Body = transformBlock(Body);
  return F;
}

std::vector<ast::Param>
Transformer::transformParamList(P::ParamListContext *Ctx) {
  std::vector<ast::Param> Out;
  if (!Ctx)
    return Out;
  for (P::ParamContext *PC : Ctx->param())
    Out.push_back(transformParam(*PC));
  return Out;
}

ast::Param Transformer::transformParam(P::ParamContext &Ctx) {
  ast::Param Pm;
  Pm.Var = transformBinder(*Ctx.binder());
  if (Ctx.expr())
    Pm.Default = transformExpr(*Ctx.expr());
  return Pm;
}

std::unique_ptr<ast::PipelineDecl>
Transformer::transformPipelineDecl(P::PipelineDeclContext &Ctx) {
  auto Pl = std::make_unique<ast::PipelineDecl>();
  Pl->Name = transformIdent(*Ctx.ident());
  Pl->Loc = loc(*Ctx.ident());
  for (P::PipelineItemContext *I : Ctx.pipelineItem())
    Pl->Items.push_back(transformPipelineItem(*I));
  return Pl;
}

ast::PipelineItem
Transformer::transformPipelineItem(P::PipelineItemContext &Ctx) {
  if (auto *C = dynamic_cast<P::RanksItemContext *>(&Ctx))
    return transformRanksItem(*C);
  if (auto *C = dynamic_cast<P::StagesItemContext *>(&Ctx))
    return transformStagesItem(*C);
  if (auto *C = dynamic_cast<P::MicrobatchesItemContext *>(&Ctx))
    return transformMicrobatchesItem(*C);
  if (auto *C = dynamic_cast<P::DirectionsItemContext *>(&Ctx))
    return transformDirectionsItem(*C);
  if (auto *C = dynamic_cast<P::CostItemContext *>(&Ctx))
    return transformCostItem(*C);
  if (auto *C = dynamic_cast<P::CommItemContext *>(&Ctx))
    return transformCommItem(*C);
  if (auto *C = dynamic_cast<P::MemoryItemContext *>(&Ctx))
    return transformMemoryItem(*C);
  if (auto *C = dynamic_cast<P::MemoryBlockItemContext *>(&Ctx))
    return transformMemoryBlockItem(*C);
  if (auto *C = dynamic_cast<P::FsdpItemContext *>(&Ctx))
    return transformFsdpItem(*C);
  if (auto *C = dynamic_cast<P::ScheduleItemContext *>(&Ctx))
    return transformScheduleItem(*C);
  if (auto *C = dynamic_cast<P::LetItemContext *>(&Ctx))
    return transformLetItem(*C);
  if (auto *C = dynamic_cast<P::RankListItemContext *>(&Ctx))
    return transformRankListItem(*C);
  auto *C = dynamic_cast<P::RankBlockItemContext *>(&Ctx);
  assert(C && "unhandled pipeline item alternative");
  return transformRankBlockItem(*C);
}

static ast::PipelineItem item(ast::PipelineItemKind K, LocId L) {
  ast::PipelineItem I;
  I.Kind = K;
  I.Loc = L;
  return I;
}

ast::PipelineItem Transformer::transformRanksItem(P::RanksItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Ranks, loc(Ctx));
  I.Value = transformExpr(*Ctx.expr());
  return I;
}

ast::PipelineItem Transformer::transformStagesItem(P::StagesItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Stages, loc(Ctx));
  I.Value = transformExpr(*Ctx.expr());
  if (Ctx.placementSpec())
    transformPlacementSpec(*Ctx.placementSpec(), I);
  return I;
}

void Transformer::transformPlacementSpec(P::PlacementSpecContext &Ctx,
                                         ast::PipelineItem &Out) {
  Out.PlacementLoc = loc(Ctx);
  if (auto *N = dynamic_cast<P::NamedPlacementContext *>(&Ctx)) {
    Out.PlacementName = transformIdent(*N->ident());
    return;
  }
  auto *E = dynamic_cast<P::ExplicitPlacementContext *>(&Ctx);
  assert(E && "unhandled placement alternative");
  Out.ExplicitPlacement = true;
  for (P::StageMappingContext *SM : E->stageMapping())
    Out.PlacementMap.emplace_back(transformExpr(*SM->expr(0)),
                                  transformExpr(*SM->expr(1)));
}

ast::PipelineItem
Transformer::transformMicrobatchesItem(P::MicrobatchesItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Microbatches, loc(Ctx));
  I.Value = transformExpr(*Ctx.expr());
  return I;
}

ast::PipelineItem
Transformer::transformDirectionsItem(P::DirectionsItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Directions, loc(Ctx));
  I.Value = transformExpr(*Ctx.expr());
  return I;
}

ast::PipelineItem Transformer::transformCostItem(P::CostItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Cost, loc(Ctx));
  for (P::CostEntryContext *E : Ctx.costEntry())
    I.Costs.push_back(transformCostEntry(*E));
  return I;
}

ast::CostEntry Transformer::transformCostEntry(P::CostEntryContext &Ctx) {
  ast::CostEntry E;
  E.Loc = loc(Ctx);
  E.Key = tokenText(*Ctx.costKey());
  E.KeyLoc = loc(*Ctx.costKey());
  if (Ctx.expr())
    E.Stage = transformExpr(*Ctx.expr());
  E.Value = transformQuantity(*Ctx.quantity());
  return E;
}

ast::PipelineItem Transformer::transformCommItem(P::CommItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Comm, loc(Ctx));
  for (P::CommEntryContext *E : Ctx.commEntry())
    I.Comms.push_back(transformCommEntry(*E));
  return I;
}

ast::CommEntry Transformer::transformCommEntry(P::CommEntryContext &Ctx) {
  ast::CommEntry E;
  E.Loc = loc(Ctx);
  auto Word = [&](P::CommWordContext *W) {
    if (!W)
      return;
    E.Word = W->ident() ? transformIdent(*W->ident()) : std::string("rank");
    E.WordLoc = loc(*W);
  };
  if (auto *V = dynamic_cast<P::CommValueContext *>(&Ctx)) {
    E.Key = transformIdent(*V->ident());
    Word(V->commWord());
    E.Value = transformQuantity(*V->quantity());
    return E;
  }
  auto *F = dynamic_cast<P::CommFlagContext *>(&Ctx);
  assert(F && "unhandled comm entry alternative");
  E.Key = transformIdent(*F->ident());
  Word(F->commWord());
  return E;
}

ast::PipelineItem Transformer::transformMemoryItem(P::MemoryItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Memory, loc(Ctx));
  I.Value = transformExpr(*Ctx.expr());
  if (Ctx.unit()) {
    I.LimitUnit = transformUnit(*Ctx.unit());
    I.LimitUnitLoc = loc(*Ctx.unit());
  }
  return I;
}

ast::PipelineItem
Transformer::transformMemoryBlockItem(P::MemoryBlockItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Memory, loc(Ctx));
  I.MemoryBlock = true;
  for (P::MemoryEntryContext *E : Ctx.memoryEntry()) {
    if (auto *L = dynamic_cast<P::MemoryLimitEntryContext *>(E)) {
      if (I.Value) {
        // Given twice inside the block: the evaluator says so, here.
        ast::CostEntry Dup;
        Dup.Loc = loc(*L);
        Dup.Key = "limit";
        Dup.KeyLoc = loc(*L);
        I.Costs.push_back(std::move(Dup));
        continue;
      }
      I.Value = transformExpr(*L->expr());
      I.LimitLoc = loc(*L);
      if (L->unit()) {
        I.LimitUnit = transformUnit(*L->unit());
        I.LimitUnitLoc = loc(*L->unit());
      }
      continue;
    }
    auto *A = dynamic_cast<P::MemoryAmountEntryContext *>(E);
    assert(A && "unhandled memory entry alternative");
    ast::CostEntry C;
    C.Loc = loc(*A);
    C.Key = tokenText(*A->costKey());
    C.KeyLoc = loc(*A->costKey());
    if (A->expr())
      C.Stage = transformExpr(*A->expr());
    C.Value = transformQuantity(*A->quantity());
    I.Costs.push_back(std::move(C));
  }
  return I;
}

ast::PipelineItem Transformer::transformFsdpItem(P::FsdpItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Fsdp, loc(Ctx));
  if (Ctx.expr())
    I.Value = transformExpr(*Ctx.expr());
  return I;
}

ast::PipelineItem
Transformer::transformScheduleItem(P::ScheduleItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Schedule, loc(Ctx));
  I.Call = transformCall(*Ctx.ident(), Ctx.argList(), loc(*Ctx.ident()));
  return I;
}

ast::PipelineItem Transformer::transformLetItem(P::LetItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Let, loc(Ctx));
  I.Var = transformBinder(*Ctx.binder());
  I.Value = transformExpr(*Ctx.expr());
  return I;
}

ast::PipelineItem
Transformer::transformRankListItem(P::RankListItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Rank, loc(Ctx));
  I.Rank = std::make_unique<ast::RankStmt>(ast::StmtKind::RankList, loc(Ctx));
  I.Rank->Rank = transformExpr(*Ctx.expr());
  transformRankListActions(Ctx.COLON(), Ctx.action(), *I.Rank);
  return I;
}

ast::PipelineItem
Transformer::transformRankBlockItem(P::RankBlockItemContext &Ctx) {
  auto I = item(ast::PipelineItemKind::Rank, loc(Ctx));
  I.Rank = std::make_unique<ast::RankStmt>(ast::StmtKind::RankBlock, loc(Ctx));
  I.Rank->Rank = transformExpr(*Ctx.expr());
  I.Rank->Body = transformBlock(*Ctx.block());
  return I;
}

} // namespace pps::frontend
