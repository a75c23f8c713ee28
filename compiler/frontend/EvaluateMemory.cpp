//===- EvaluateMemory.cpp - the memory block: the activation memory model -===//
//
// `memory { F = 1; I = -0.5; W = -0.5; limit 8; }` sets the schedule's
// memory model (ir::Schedule::Memory, the schema's MemoryModel) by the rule
// of pps/frontend/MemoryModel.h; the block's limit is the caller's
// (Evaluator.cpp), like `memory limit N;`.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorImpl.h"
#include "pps/frontend/MemoryModel.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pps::frontend {

/// True if A and B are the same amount up to rounding of the decimals.
static bool sameAmount(double A, double B) {
  return std::fabs(A - B) <= 1e-9 * std::max({1.0, std::fabs(A), std::fabs(B)});
}

/// An amount as the user would write it.
static std::string amountText(double V) {
  return V == 0 ? std::string("0") : fmt::format("{:g}", V);
}

std::string memoryModelOf(const MemoryAmounts &A, schema::MemoryModel &Out,
                          int *Culprit) {
  auto Bad = [&](int Which, std::string Msg) {
    if (Culprit)
      *Culprit = Which;
    return Msg;
  };
  const std::optional<double> *All[4] = {&A.F, &A.I, &A.W, &A.B};
  for (int K = 0; K < 4; ++K)
    if (*All[K] &&
        (!std::isfinite(**All[K]) || std::fabs(**All[K]) > MaxMemoryAmount))
      return Bad(K, fmt::format("a memory amount must be a finite number of "
                                "at most {:g} units",
                                MaxMemoryAmount));
  schema::MemoryModel M;
  M.Forward = A.F.value_or(1.0);
  if (!(M.Forward > 0))
    return Bad(0, fmt::format("F must allocate a positive amount, got {}",
                              amountText(M.Forward)));
  // I frees part of F's amount; W alone says how much is left for it.
  if (A.I)
    M.InputGrad = -*A.I;
  else if (A.W)
    M.InputGrad = M.Forward + *A.W;
  if (M.InputGrad < 0 && sameAmount(M.InputGrad, 0))
    M.InputGrad = 0;
  if (M.InputGrad > M.Forward && sameAmount(M.InputGrad, M.Forward))
    M.InputGrad = M.Forward;
  if (M.InputGrad < 0 || M.InputGrad > M.Forward) {
    if (A.I)
      return Bad(1, fmt::format("I must free between 0 and what F allocates "
                                "(I from -{} to 0), got {}",
                                amountText(M.Forward), amountText(*A.I)));
    return Bad(2, fmt::format("W must free between 0 and what F allocates "
                              "(W from -{} to 0), got {}",
                              amountText(M.Forward), amountText(*A.W)));
  }
  // W and B, written with the amounts they follow from, must agree: the
  // last backward frees whatever is still live.
  if (A.I && A.W && !sameAmount(*A.W, -M.weightGrad()))
    return Bad(2, fmt::format("W frees the rest of what F allocated: W = "
                              "-(F + I) = {}, got {}",
                              amountText(-M.weightGrad()), amountText(*A.W)));
  if (A.B && !sameAmount(*A.B, -M.Forward))
    return Bad(3, fmt::format("B frees everything F allocated: B = -F = {}, "
                              "got {}",
                              amountText(-M.Forward), amountText(*A.B)));
  Out = M;
  return {};
}

std::string parseMemoryModel(llvm::StringRef Text, schema::MemoryModel &Out) {
  llvm::SmallVector<llvm::StringRef, 4> Parts;
  Text.split(Parts, ',', -1, /*KeepEmpty=*/false);
  if (Parts.empty())
    return fmt::format("expected amounts like F=2,I=-1,W=-1, got '{}'",
                       Text.str());
  MemoryAmounts A;
  for (llvm::StringRef Part : Parts) {
    auto [Key, Value] = Part.split('=');
    Key = Key.trim();
    double V;
    if (Value.trim().getAsDouble(V))
      return fmt::format("memory amount '{}' needs a number", Part.str());
    std::optional<double> *Slot = Key == "F"   ? &A.F
                                  : Key == "I" ? &A.I
                                  : Key == "W" ? &A.W
                                  : Key == "B" ? &A.B
                                               : nullptr;
    if (!Slot)
      return fmt::format("unknown memory amount '{}' (expected F, I, W or B)",
                         Key.str());
    if (*Slot)
      return fmt::format("memory amount {} is given twice", Key.str());
    *Slot = V;
  }
  return memoryModelOf(A, Out);
}

std::string memoryModelText(const schema::MemoryModel &M) {
  return fmt::format("F = {}; I = {}; W = {}", amountText(M.Forward),
                     amountText(-M.InputGrad), amountText(-M.weightGrad()));
}

namespace eval {

std::optional<int64_t> Evaluator::modelValue(Builtin B, int64_t Stage,
                                             CallExpr &C) {
  bool PerStage = B == Builtin::CostF || B == Builtin::CostI ||
                  B == Builtin::CostW || B == Builtin::CostB;
  if (PerStage) {
    if (!ensureTopology(C.Loc))
      return std::nullopt;
    if (Stage < 0 || Stage >= Out.Topo.Stages) {
      fail(DiagKind::OutOfRange, C.Args[0].Value->Loc,
           fmt::format("stage {} is out of range 0..{}", Stage,
                       Out.Topo.Stages - 1));
      return std::nullopt;
    }
  }
  if (ModelReadAt == NoLoc)
    ModelReadAt = C.Loc;
  const ir::CostModel &CM = Out.Cost;
  const schema::MemoryModel &MM = Out.Memory;
  double V = 0;
  switch (B) {
  case Builtin::CostF:
    V = CM.computeCost(ir::ActionKind::F, int32_t(Stage));
    break;
  case Builtin::CostI:
    V = CM.computeCost(ir::ActionKind::I, int32_t(Stage));
    break;
  case Builtin::CostW:
    V = CM.computeCost(ir::ActionKind::W, int32_t(Stage));
    break;
  case Builtin::CostB:
    V = CM.computeCost(ir::ActionKind::B, int32_t(Stage));
    break;
  case Builtin::CommTime:
    V = CM.messageTime(ir::ActionKind::SendF);
    break;
  case Builtin::MemF:
    V = MM.Forward;
    break;
  case Builtin::MemI:
    V = -MM.InputGrad;
    break;
  case Builtin::MemW:
    V = -MM.weightGrad();
    break;
  default:
    llvm_unreachable("not a model query");
  }
  // Times are at most MaxTime and amounts at most MaxMemoryAmount, so
  // thousandths fit 64 bits with room for sums.
  return int64_t(std::llround(V * 1000.0));
}

void Evaluator::applyMemory(PipelineItem &I) {
  // The entries by kind, as written: F I W B.
  const CostEntry *Given[4] = {};
  const char *Kinds = "FIWB";
  for (CostEntry &E : I.Costs) {
    if (E.Key == "limit") {
      fail(DiagKind::DuplicateDefinition, E.Loc,
           "the memory block gives its limit twice");
      continue;
    }
    const char *K = E.Key.size() == 1 ? std::strchr(Kinds, E.Key[0]) : nullptr;
    if (!K || !*K) {
      fail(DiagKind::InvalidValue, E.KeyLoc,
           fmt::format("unknown memory entry '{}' (expected F, I, W, B or "
                       "`limit N;`)",
                       E.Key));
      continue;
    }
    if (E.Stage) {
      fail(DiagKind::InvalidValue, E.Stage->Loc,
           "the memory model is the same for every stage: write the amount "
           "without [stage ...]");
      continue;
    }
    if (!E.Value.Unit.empty()) {
      fail(DiagKind::InvalidValue, E.Value.UnitLoc,
           fmt::format("memory amounts are plain numbers in the unit of the "
                       "memory limit, not '{}'",
                       E.Value.Unit));
      continue;
    }
    size_t Slot = size_t(K - Kinds);
    if (Given[Slot]) {
      fail(DiagKind::DuplicateDefinition, E.Loc,
           fmt::format("the memory block gives {} twice", E.Key))
          .note(Given[Slot]->Loc, "first given here");
      continue;
    }
    Given[Slot] = &E;
  }
  if (Failed)
    return;
  MemoryAmounts A;
  std::optional<double> *Slots[4] = {&A.F, &A.I, &A.W, &A.B};
  for (int K = 0; K < 4; ++K)
    if (Given[K])
      *Slots[K] = Given[K]->Value.Value;
  int Culprit = 0;
  schema::MemoryModel M;
  std::string Err = memoryModelOf(A, M, &Culprit);
  if (!Err.empty()) {
    // A defaulted F is never wrong; the amount named is one written.
    const CostEntry *At = Given[Culprit] ? Given[Culprit] : Given[0];
    fail(DiagKind::InvalidValue, At ? At->Value.Loc : I.Loc, Err);
    return;
  }
  Out.Memory = M;
}

} // namespace eval

} // namespace pps::frontend
