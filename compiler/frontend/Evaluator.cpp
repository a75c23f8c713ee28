//===- Evaluator.cpp - run a checked pipeline into the IR -----------------===//
//
// The entry point, error reporting with the call chain, and the walk over a
// pipeline's items in order (see EvaluatorImpl.h for how the interpreter is
// split).
//
//===----------------------------------------------------------------------===//
#include "EvaluatorImpl.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

namespace pps::frontend {

namespace eval {

const char *typeName(VT T) {
  switch (T) {
  case VT::Int:
    return "an integer";
  case VT::Bool:
    return "a bool";
  case VT::Array:
    return "an array";
  }
  llvm_unreachable("every value type has a name");
}

Diagnostic &Evaluator::fail(DiagKind K, LocId L, std::string Msg) {
  Failed = true;
  Diagnostic &D = Diags.report(K, L, std::move(Msg));
  // The innermost calls that led here (the outermost is the pipeline's
  // schedule call, noted below).
  size_t Shown = 0;
  for (size_t I = Calls.size(); I-- > 1 && Shown < 4; ++Shown)
    D.note(Calls[I]->Loc, fmt::format("in '{}' called here", Calls[I]->Callee));
  if (CallSite != NoLoc)
    D.note(CallSite,
           fmt::format("while evaluating schedule '{}' called here", CallName));
  return D;
}

bool Evaluator::modelStillOpen(PipelineItem &I, const char *What) {
  if (ModelReadAt == NoLoc)
    return true;
  fail(DiagKind::InvalidValue, I.Loc,
       fmt::format("'{}' comes after the schedule read the cost and memory "
                   "models; declare it before `schedule`",
                   What))
      .note(ModelReadAt, "read here");
  return false;
}

std::optional<ir::Schedule> Evaluator::run(PipelineDecl &Decl) {
  Pl = &Decl;
  Out.Name = Decl.Name;
  Out.DeclLoc = Decl.Loc;
  pushFrame(size_t(Decl.NumSlots), size_t(Decl.NumSlots));
  Base = 0;
  bool AnyFailed = false;
  PipelineItem *ScheduleItem = nullptr, *FirstRank = nullptr;
  for (PipelineItem &I : Decl.Items) {
    switch (I.Kind) {
    case PipelineItemKind::Ranks:
      NRanks = sizeField(I, "ranks", 1, MaxRanks);
      break;
    case PipelineItemKind::Stages:
      StagesItem = &I;
      NStages = sizeField(I, "stages", 1, MaxStages);
      break;
    case PipelineItemKind::Microbatches:
      if (Ready) {
        fail(DiagKind::InvalidValue, I.Loc,
             "'microbatches' comes after actions were emitted; declare it "
             "first");
        break;
      }
      NMicro = sizeField(I, "microbatches", 1, MaxMicrobatches);
      break;
    case PipelineItemKind::Directions: {
      if (Ready) {
        fail(DiagKind::InvalidValue, I.Loc,
             "'directions' comes after actions were emitted; declare it first");
        break;
      }
      int64_t V = evalInt(*I.Value);
      if (Failed)
        break;
      if (V != 1 && V != 2) {
        fail(DiagKind::InvalidValue, I.Value->Loc,
             fmt::format("directions must be 1 or 2, got {}", V));
        break;
      }
      Out.Topo.Directions = int32_t(V);
      DirectionsLoc = I.Loc;
      break;
    }
    case PipelineItemKind::Cost:
      if (!modelStillOpen(I, "cost"))
        break;
      applyCost(I);
      break;
    case PipelineItemKind::Comm:
      if (!modelStillOpen(I, "comm"))
        break;
      applyComm(I);
      break;
    case PipelineItemKind::Memory: {
      if (I.MemoryBlock && !modelStillOpen(I, "memory"))
        break;
      if (I.MemoryBlock)
        applyMemory(I);
      if (!I.Value)
        break;
      // An override is in the model's unit already.
      std::optional<int64_t> V = override("memory_limit");
      const bool Overridden = V.has_value();
      if (!V)
        V = evalInt(*I.Value);
      if (Failed)
        break;
      if (*V < 0) {
        fail(DiagKind::OutOfRange, I.Value->Loc,
             fmt::format("memory limit must not be negative, got {}", *V));
        break;
      }
      if (!Overridden && !memoryLimitUnit(I, *V))
        break;
      Out.MemoryLimit = *V;
      break;
    }
    case PipelineItemKind::Fsdp: {
      Out.Fsdp.Enabled = true;
      if (!I.Value)
        break;
      int64_t V = evalInt(*I.Value);
      if (Failed)
        break;
      if (V < 0 || V > INT32_MAX) {
        fail(DiagKind::OutOfRange, I.Value->Loc,
             fmt::format("fsdp prefetch must be between 0 and {}, got {}",
                         INT32_MAX, V));
        break;
      }
      Out.Fsdp.Prefetch = int32_t(V);
      break;
    }
    case PipelineItemKind::Let: {
      if (auto O = override(I.Var.Name)) {
        Stack[I.Var.Slot] = {*O, VT::Int};
        break;
      }
      Stack[I.Var.Slot] = eval(*I.Value);
      break;
    }
    case PipelineItemKind::Schedule: {
      ScheduleItem = &I;
      if (FirstRank) {
        fail(DiagKind::InvalidValue, I.Loc,
             "a pipeline gives a schedule or explicit rank lists, not both")
            .note(FirstRank->Loc, "rank list given here");
        break;
      }
      if (AnyFailed || !ensureReady(I.Loc))
        break;
      CallExpr &C = *I.Call;
      if (!C.Target) {
        // `schedule synth(memory: N, ...)`: a request for the synth pass.
        buildSynthRequest(C);
        break;
      }
      // The schedule may read the cost and memory models: as the passes
      // will see them, the command line's changes included.
      if (Opts.ModelOverrides)
        Opts.ModelOverrides(Out);
      CallSite = C.Loc;
      CallName = C.Callee;
      // The sizes are fixed from here on (a later item may not change
      // them): P, S, M, V and D are read without checks during the call.
      Consts[size_t(Builtin::P)] = *NRanks;
      Consts[size_t(Builtin::S)] = Out.Topo.Stages;
      Consts[size_t(Builtin::M)] = *NMicro;
      Consts[size_t(Builtin::V)] = Out.Topo.chunks();
      Consts[size_t(Builtin::D)] = Out.Topo.Directions;
      ConstsReady = true;
      callFn(C, &Opts.Overrides);
      ConstsReady = false;
      CallSite = NoLoc;
      break;
    }
    case PipelineItemKind::Rank:
      if (ScheduleItem) {
        fail(DiagKind::InvalidValue, I.Loc,
             "a pipeline gives a schedule or explicit rank lists, not both")
            .note(ScheduleItem->Loc, "schedule given here");
        break;
      }
      if (!FirstRank)
        FirstRank = &I;
      ListErrors = 0;
      execRank(*I.Rank);
      break;
    }
    if (Failed) {
      AnyFailed = true;
      Failed = false;
      if (I.Kind == PipelineItemKind::Schedule)
        break;
    }
  }
  if (AnyFailed)
    return std::nullopt;
  if (!ensureReady(Decl.Loc))
    return std::nullopt;
  if (auto O = override("memory_limit"))
    Out.MemoryLimit = *O;
  Out.ReadsModelAt = ModelReadAt;
  if (!ScheduleItem && !FirstRank) {
    fail(DiagKind::MissingField, Decl.Loc,
         fmt::format("pipeline '{}' gives neither a schedule nor rank lists",
                     Decl.Name));
    return std::nullopt;
  }
  return std::move(Out);
}

} // namespace eval

std::optional<ir::Schedule> evaluatePipeline(ast::PipelineDecl &Pl,
                                             DiagnosticEngine &Diags,
                                             const FrontendOptions &Opts,
                                             std::set<std::string> &Used) {
  eval::Evaluator E(Diags, Opts, Used);
  return E.run(Pl);
}

} // namespace pps::frontend
