//===- EvaluateMemory.cpp - the memory block: the activation memory model -===//
//
// `memory { F = 1; I = -0.5; W = -0.5; limit 8; }` sets the schedule's
// memory model (ir::Schedule::Memory, the schema's MemoryModel) by the rule
// of pps/frontend/MemoryModel.h; the block's limit is the caller's
// (Evaluator.cpp), like `memory limit N;`.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorImpl.h"
#include "pps/frontend/Limits.h"
#include "pps/frontend/MemoryModel.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <array>
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
                          int *Culprit, bool Bytes) {
  auto Bad = [&](int Which, std::string Msg) {
    if (Culprit)
      *Culprit = Which;
    return Msg;
  };
  const std::optional<double> *All[4] = {&A.F, &A.I, &A.W, &A.B};
  const double Max = Bytes ? MaxMemoryBytes : MaxMemoryAmount;
  for (int K = 0; K < 4; ++K)
    if (*All[K] && (!std::isfinite(**All[K]) || std::fabs(**All[K]) > Max))
      return Bad(K, Bytes ? fmt::format("a memory amount in bytes must be "
                                        "at most {:.0f} (1 TiB)",
                                        Max)
                          : fmt::format("a memory amount must be a finite "
                                        "number of at most {:g} units",
                                        Max));
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

std::optional<double> bytesPerUnit(llvm::StringRef U) {
  return llvm::StringSwitch<std::optional<double>>(U)
      .Cases("", "B", "bytes", 1.0)
      .Case("KB", 1e3)
      .Case("MB", 1e6)
      .Case("GB", 1e9)
      .Case("TB", 1e12)
      .Case("KiB", 1024.0)
      .Case("MiB", 1048576.0)
      .Case("GiB", 1073741824.0)
      .Case("TiB", 1099511627776.0)
      .Default(std::nullopt);
}

std::string parseMemoryLimit(llvm::StringRef Text, int64_t &Out, bool &Bytes) {
  Text = Text.trim();
  size_t NumEnd = Text.find_first_not_of("0123456789.eE+");
  llvm::StringRef Num = Text.substr(0, NumEnd);
  llvm::StringRef Unit = Text.substr(Num.size()).trim();
  double V;
  if (Num.empty() || Num.getAsDouble(V) || !std::isfinite(V) || V < 1)
    return fmt::format("expected a limit like 8 (in the memory model's "
                       "units) or 2GiB (bytes), got '{}'",
                       Text.str());
  Bytes = !Unit.empty();
  if (!Bytes) {
    if (V != std::floor(V) || V > double(int64_t(1) << 50))
      return fmt::format("a memory limit in units is a whole number up to "
                         "2^50, got '{}'",
                         Text.str());
    Out = int64_t(V);
    return {};
  }
  std::optional<double> F = bytesPerUnit(Unit);
  if (!F)
    return fmt::format("unknown size unit '{}' (expected B, KB, MB, GB, KiB, "
                       "MiB or GiB)",
                       Unit.str());
  double B = std::floor(V * *F);
  if (B > double(MaxMemoryLimitBytes))
    return fmt::format("a memory limit in bytes must be at most {} (1 PiB)",
                       MaxMemoryLimitBytes);
  Out = int64_t(B);
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
    if (!stageInRange(Stage, *C.Args[0].Value))
      return std::nullopt;
  }
  if (ModelReadAt == NoLoc)
    ModelReadAt = C.Loc;
  const ir::CostModel &CM = Out.Cost;
  const bool MemQuery =
      B == Builtin::MemF || B == Builtin::MemI || B == Builtin::MemW;
  if (MemQuery && !Out.Memory.isUniform()) {
    fail(DiagKind::InvalidValue, C.Loc,
         "the memory model differs per stage: mem_f(), mem_i() and mem_w() "
         "read one model");
    return std::nullopt;
  }
  const schema::MemoryModel &MM = Out.Memory.Default;
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
  // The entries by kind (F I W B), as written: the block's own, and per
  // stage (index 1 + s).
  const char *Kinds = "FIWB";
  std::vector<std::array<const CostEntry *, 4>> Given(1);
  const CostEntry *WithUnit = nullptr, *WithoutUnit = nullptr;
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
    size_t Row = 0;
    if (E.Stage) {
      if (!ensureTopology(E.Loc))
        return;
      int64_t St = evalInt(*E.Stage, "a stage");
      if (Failed)
        return;
      if (!stageInRange(St, *E.Stage))
        continue;
      if (Given.size() == 1)
        Given.resize(size_t(Out.Topo.Stages) + 1);
      Row = size_t(St) + 1;
    }
    if (!E.Value.Unit.empty()) {
      std::optional<double> F = bytesPerUnit(E.Value.Unit);
      if (!F) {
        fail(DiagKind::InvalidValue, E.Value.UnitLoc,
             fmt::format("memory amounts are plain numbers, or bytes with a "
                         "size unit (B, KB, MB, GB, KiB, MiB, GiB), not '{}'",
                         E.Value.Unit));
        continue;
      }
      E.Value.Value *= *F;
      E.Value.Unit = "B";
      WithUnit = WithUnit ? WithUnit : &E;
    } else {
      WithoutUnit = WithoutUnit ? WithoutUnit : &E;
    }
    size_t Slot = size_t(K - Kinds);
    if (Given[Row][Slot]) {
      fail(DiagKind::DuplicateDefinition, E.Loc,
           fmt::format("the memory block gives {}{} twice", E.Key,
                       Row ? fmt::format("[stage {}]", Row - 1) : ""))
          .note(Given[Row][Slot]->Loc, "first given here");
      continue;
    }
    Given[Row][Slot] = &E;
  }
  if (Failed)
    return;
  if (WithUnit && WithoutUnit) {
    fail(DiagKind::InvalidValue, WithoutUnit->Value.Loc,
         "the memory amounts are bytes (a size unit is given): give this "
         "one a unit too")
        .note(WithUnit->Value.Loc, "a size unit is given here");
    return;
  }
  const bool Bytes = WithUnit != nullptr;
  // A stage's model: its own amounts, the block's for the kinds it does
  // not give (as per-stage costs do).
  auto ModelOf = [&](size_t Row, schema::MemoryModel &M, bool Report) {
    MemoryAmounts A;
    std::optional<double> *Slots[4] = {&A.F, &A.I, &A.W, &A.B};
    const CostEntry *Used[4] = {};
    for (int K = 0; K < 4; ++K) {
      Used[K] =
          Given[Row][size_t(K)] ? Given[Row][size_t(K)] : Given[0][size_t(K)];
      if (Used[K])
        *Slots[K] = Used[K]->Value.Value;
    }
    int Culprit = 0;
    std::string Err = memoryModelOf(A, M, &Culprit, Bytes);
    if (Err.empty())
      return true;
    if (!Report)
      return false;
    // A defaulted F is never wrong; the amount named is one written.
    const CostEntry *At = Used[Culprit] ? Used[Culprit] : Used[0];
    fail(DiagKind::InvalidValue, At ? At->Value.Loc : I.Loc,
         Row ? fmt::format("stage {}: {}", Row - 1, Err) : Err);
    return false;
  };
  ir::MemorySpec Spec;
  Spec.Bytes = Bytes;
  if (Bytes && !Given[0][0] && Given.size() == 1) {
    fail(DiagKind::InvalidValue, I.Loc,
         "a memory model in bytes needs F: what one F allocates");
    return;
  }
  // With per-stage amounts the block's own model is only the default of
  // the stages: it may not be whole on its own (`F[stage 0] = 8 MiB; I =
  // -4 MiB;` leaves F at its default), and is then not used.
  const bool PerStage = Given.size() > 1;
  bool DefaultOk = ModelOf(0, Spec.Default, /*Report=*/!PerStage);
  if (!PerStage && !DefaultOk)
    return;
  if (PerStage) {
    Spec.Stages.resize(size_t(Out.Topo.Stages));
    for (int32_t St = 0; St < Out.Topo.Stages; ++St)
      if (!ModelOf(size_t(St) + 1, Spec.Stages[size_t(St)], true))
        return;

    // In bytes every stage needs its own F or the block's.
    if (Bytes && !Given[0][0])
      for (int32_t St = 0; St < Out.Topo.Stages; ++St)
        if (!Given[size_t(St) + 1][0]) {
          fail(DiagKind::InvalidValue, I.Loc,
               fmt::format("the memory model in bytes gives no F for stage "
                           "{} (give F[stage {}] = N MiB, or F for every "
                           "stage)",
                           St, St));
          return;
        }
  }
  Spec.normalize();
  Out.Memory = Spec;
}

bool Evaluator::memoryLimitUnit(PipelineItem &I, int64_t &V) {
  const bool Bytes = Out.Memory.Bytes;
  if (I.LimitUnit.empty()) {
    if (!Bytes)
      return true;
    fail(DiagKind::InvalidValue, I.Value->Loc,
         fmt::format("the memory amounts are bytes: give the limit a size "
                     "unit ({} B, or in KiB, MiB, GiB)",
                     V));
    return false;
  }
  std::optional<double> F = bytesPerUnit(I.LimitUnit);
  if (!F) {
    fail(DiagKind::InvalidValue, I.LimitUnitLoc,
         fmt::format("unknown size unit '{}' (expected B, KB, MB, GB, KiB, "
                     "MiB or GiB)",
                     I.LimitUnit));
    return false;
  }
  if (!Bytes) {
    fail(DiagKind::InvalidValue, I.LimitUnitLoc,
         "a memory limit in bytes needs the memory model in bytes: `memory "
         "{ F[stage 0] = 48 MiB; ...; limit 2 GiB; }`");
    return false;
  }
  double Limit = double(V) * *F;
  if (!(Limit <= double(MaxMemoryLimitBytes))) {
    fail(DiagKind::OutOfRange, I.Value->Loc,
         fmt::format("a memory limit in bytes must be at most {} (1 PiB)",
                     MaxMemoryLimitBytes));
    return false;
  }
  V = int64_t(Limit);
  return true;
}

} // namespace eval

} // namespace pps::frontend
