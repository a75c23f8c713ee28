//===- EvaluateTopology.cpp - sizes, placement, cost and comm -------------===//
//
// Builds the IR's Topology (ranks, stages and the stage -> rank map) the
// first time a schedule needs it, and the cost model and comm settings from
// the pipeline's `cost { }` and `comm { }` blocks, with units.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorImpl.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>
#include <tuple>

namespace pps::frontend::eval {

bool Evaluator::ensureTopology(LocId L) {
  if (TopoDone)
    return true;
  if (TopoFailed) {
    Failed = true; // reported once already
    return false;
  }
  TopoFailed = true;
  if (!NRanks)
    NRanks = override("ranks");
  if (!NRanks) {
    fail(DiagKind::MissingField, Pl->Loc,
         fmt::format("pipeline '{}' does not declare 'ranks'", Pl->Name));
    return false;
  }
  if (!NStages)
    NStages = override("stages");
  ir::Topology &T = Out.Topo;
  T.Ranks = int32_t(*NRanks);
  T.Stages = int32_t(NStages ? *NStages : *NRanks);
  LocId PLoc =
      StagesItem ? (StagesItem->PlacementLoc != NoLoc ? StagesItem->PlacementLoc
                                                      : StagesItem->Loc)
                 : Pl->Loc;
  if (StagesItem && StagesItem->ExplicitPlacement) {
    T.Place = ir::Placement::Explicit;
    T.StageToRank.assign(T.Stages, -1);
    llvm::SmallVector<LocId, 16> Where(T.Stages, NoLoc);
    for (auto &[SE, RE] : StagesItem->PlacementMap) {
      int64_t S = evalInt(*SE, "a stage"), R = evalInt(*RE, "a rank");
      if (Failed)
        return false;
      if (S < 0 || S >= T.Stages) {
        fail(DiagKind::OutOfRange, SE->Loc,
             fmt::format("stage {} is out of range 0..{}", S, T.Stages - 1));
        return false;
      }
      if (R < 0 || R >= T.Ranks) {
        fail(DiagKind::OutOfRange, RE->Loc,
             fmt::format("rank {} is out of range 0..{}", R, T.Ranks - 1));
        return false;
      }
      if (T.StageToRank[S] >= 0) {
        fail(DiagKind::StagePlacement, SE->Loc,
             fmt::format("stage {} is placed twice", S))
            .note(Where[S], "first placed here");
        return false;
      }
      T.StageToRank[S] = int32_t(R);
      Where[S] = SE->Loc;
    }
    for (int32_t S = 0; S < T.Stages; ++S)
      if (T.StageToRank[S] < 0) {
        fail(DiagKind::StagePlacement, PLoc,
             fmt::format("stage {} is placed on no rank", S));
        return false;
      }
  } else {
    ir::Placement P = ir::Placement::Loop;
    if (StagesItem && !StagesItem->PlacementName.empty()) {
      llvm::StringRef N = StagesItem->PlacementName;
      if (N == "v") {
        P = ir::Placement::V;
      } else if (N != "loop") {
        fail(DiagKind::InvalidValue, PLoc,
             fmt::format("unknown placement '{}' (expected loop, v or an "
                         "explicit {{ stage -> rank }} map)",
                         N.str()));
        return false;
      }
    }
    if (P == ir::Placement::V && T.Stages % T.Ranks != 0) {
      fail(DiagKind::InvalidValue, PLoc,
           fmt::format("v placement needs stages ({}) to be a multiple of "
                       "ranks ({})",
                       T.Stages, T.Ranks));
      return false;
    }
    T.place(P);
  }
  RankStages.assign(T.Ranks, {});
  for (int32_t S = 0; S < T.Stages; ++S)
    RankStages[T.StageToRank[S]].push_back(S);
  for (int32_t R = 0; R < T.Ranks; ++R)
    if (RankStages[R].empty()) {
      fail(DiagKind::StagePlacement, PLoc,
           fmt::format("rank {} holds no stage ({} stages on {} ranks)", R,
                       T.Stages, T.Ranks));
      return false;
    }
  OnlyStage.assign(T.Ranks, -2);
  for (int32_t R = 0; R < T.Ranks; ++R)
    if (RankStages[R].size() == 1)
      OnlyStage[R] = RankStages[R][0];
  TopoDone = true;
  TopoFailed = false;
  (void)L;
  return true;
}

bool Evaluator::ensureReady(LocId L) {
  if (Ready)
    return true;
  if (!ensureTopology(L))
    return false;
  if (ReadyFailed) {
    Failed = true;
    return false;
  }
  if (!NMicro)
    NMicro = override("microbatches");
  if (!NMicro) {
    ReadyFailed = true;
    fail(
        DiagKind::MissingField, Pl->Loc,
        fmt::format("pipeline '{}' does not declare 'microbatches'", Pl->Name));
    return false;
  }
  Out.Topo.Microbatches = int32_t(*NMicro);
  if (Out.Topo.Directions == 2 &&
      (Out.Topo.Stages % 2 != 0 || Out.Topo.Microbatches % 2 != 0)) {
    ReadyFailed = true;
    fail(DiagKind::InvalidValue, DirectionsLoc,
         fmt::format("directions 2 needs an even number of stages and of "
                     "microbatches, got {} stages and {} microbatches",
                     Out.Topo.Stages, Out.Topo.Microbatches));
    return false;
  }
  Out.resetRanks();
  Ready = true;
  return true;
}

std::optional<int64_t> Evaluator::sizeField(PipelineItem &I, const char *Name,
                                            int64_t Min, int64_t Max) {
  if (TopoDone && std::string(Name) != "microbatches") {
    fail(DiagKind::InvalidValue, I.Loc,
         fmt::format("'{}' comes after the topology was used; declare it first",
                     Name));
    return std::nullopt;
  }
  std::optional<int64_t> V = override(Name);
  if (!V) {
    V = evalInt(*I.Value);
    if (Failed)
      return std::nullopt;
  }
  if (*V < Min || *V > Max) {
    fail(DiagKind::OutOfRange, I.Value->Loc,
         fmt::format("{} must be between {} and {}, got {}", Name, Min, Max,
                     *V));
    return std::nullopt;
  }
  return V;
}

bool Evaluator::quantityOk(const Quantity &Q, const char *What, bool AllowZero,
                           double Max) {
  if (!std::isfinite(Q.Value) || Q.Value < 0 || (!AllowZero && Q.Value == 0)) {
    fail(DiagKind::InvalidValue, Q.Loc,
         fmt::format("{} must be a {} finite number", What,
                     AllowZero ? "non-negative" : "positive"));
    return false;
  }
  if (Q.Value > Max) {
    fail(DiagKind::OutOfRange, Q.Loc,
         fmt::format("{} must be at most {:.10g} time units, got {:.10g}", What,
                     Max, Q.Value));
    return false;
  }
  return true;
}

bool Evaluator::convertedOk(const Quantity &Q, double Value, double Max,
                            const char *What, const char *Unit) {
  if (Value <= Max)
    return true;
  fail(DiagKind::OutOfRange, Q.Loc,
       fmt::format("{} must be at most {:.10g} {}, got {:.10g}", What, Max,
                   Unit, Value));
  return false;
}

static std::optional<double> msPerUnit(llvm::StringRef U) {
  return llvm::StringSwitch<std::optional<double>>(U)
      .Cases("", "ms", 1.0)
      .Case("us", 1e-3)
      .Case("s", 1e3)
      .Default(std::nullopt);
}

void Evaluator::applyCost(PipelineItem &I) {
  ir::CostModel &C = Out.Cost;
  enum { BF = 1, BI = 2, BW = 4, BB = 8 };
  unsigned DefaultGiven = 0;
  auto Slot = [](ir::StageCost &SC, char K) -> double & {
    switch (K) {
    case 'F':
      return SC.F;
    case 'I':
      return SC.I;
    case 'W':
      return SC.W;
    default:
      return SC.B;
    }
  };
  auto Bit = [](char K) {
    return K == 'F' ? BF : K == 'I' ? BI : K == 'W' ? BW : BB;
  };
  auto CheckEntry = [&](CostEntry &E) {
    if (!quantityOk(E.Value, "a cost"))
      return false;
    if (!E.Value.Unit.empty() && E.Value.Unit != "ms") {
      fail(DiagKind::InvalidValue, E.Value.UnitLoc,
           fmt::format("unknown cost unit '{}' (costs are in time units)",
                       E.Value.Unit));
      return false;
    }
    return true;
  };
  for (CostEntry &E : I.Costs) {
    if (E.Stage)
      continue;
    if (E.Key == "overlap") {
      if (CheckEntry(E))
        C.Overlap = E.Value.Value;
      continue;
    }
    if (E.Key.size() != 1 || !llvm::StringRef("FIWB").contains(E.Key[0])) {
      fail(DiagKind::InvalidValue, E.KeyLoc,
           fmt::format("unknown cost '{}' (expected F, I, W, B or overlap)",
                       E.Key));
      continue;
    }
    if (CheckEntry(E)) {
      Slot(C.Default, E.Key[0]) = E.Value.Value;
      DefaultGiven |= Bit(E.Key[0]);
    }
  }
  if ((DefaultGiven & (BI | BW)) == (BI | BW) && !(DefaultGiven & BB))
    C.Default.B = C.Default.I + C.Default.W;
  llvm::DenseMap<int64_t, unsigned> StageGiven;
  for (CostEntry &E : I.Costs) {
    if (!E.Stage)
      continue;
    bool IsOverlap = E.Key == "overlap";
    if (!IsOverlap &&
        (E.Key.size() != 1 || !llvm::StringRef("FIWB").contains(E.Key[0]))) {
      fail(DiagKind::InvalidValue, E.KeyLoc,
           fmt::format("per-stage cost '{}' must be F, I, W, B or overlap",
                       E.Key));
      continue;
    }
    if (!ensureTopology(E.Loc))
      return;
    int64_t S = evalInt(*E.Stage, "a stage");
    if (Failed)
      return;
    if (!stageInRange(S, *E.Stage))
      continue;
    if (!CheckEntry(E))
      continue;
    if (IsOverlap) {
      // overlap[stage s]: pairs whose first compute is on stage s.
      if (C.StageOverlap.empty())
        C.StageOverlap.resize(size_t(Out.Topo.Stages));
      C.StageOverlap[size_t(S)] = E.Value.Value;
      continue;
    }
    if (C.PerStage.empty())
      C.PerStage.assign(Out.Topo.Stages, C.Default);
    Slot(C.PerStage[S], E.Key[0]) = E.Value.Value;
    StageGiven[S] |= Bit(E.Key[0]);
  }
  for (auto &[S, Given] : StageGiven)
    if ((Given & (BI | BW)) == (BI | BW) && !(Given & BB))
      C.PerStage[S].B = C.PerStage[S].I + C.PerStage[S].W;
}

bool Evaluator::stageInRange(int64_t St, const Expr &E) {
  if (St >= 0 && St < Out.Topo.Stages)
    return true;
  fail(DiagKind::OutOfRange, E.Loc,
       fmt::format("stage {} is out of range 0..{}", St, Out.Topo.Stages - 1));
  return false;
}

void Evaluator::applyComm(PipelineItem &I) {
  ir::CostModel &C = Out.Cost;
  for (CommEntry &E : I.Comms) {
    llvm::StringRef K = E.Key;
    bool IsThreshold = K == "eager" && E.Word == "threshold";
    bool IsValue = K == "latency" || K == "bandwidth" || K == "activation" ||
                   K == "gradient" || IsThreshold;
    bool IsFlag = K == "async" || K == "blocking";
    if (!IsValue && !IsFlag && K != "model" && K != "stream") {
      fail(DiagKind::InvalidValue, E.Loc,
           fmt::format("unknown comm setting '{}' (expected model, stream, "
                       "eager threshold, latency, bandwidth, activation, "
                       "gradient, async or blocking)",
                       E.Key));
      continue;
    }
    if (IsValue != E.Value.has_value()) {
      fail(DiagKind::InvalidValue, E.Loc,
           IsValue ? fmt::format("'{}' needs a value",
                                 IsThreshold ? "eager threshold" : E.Key)
                   : fmt::format("'{}' takes no number", E.Key));
      continue;
    }
    if (IsValue && !IsThreshold && !E.Word.empty()) {
      fail(DiagKind::InvalidValue, E.WordLoc,
           fmt::format("'{}' takes one value, not '{}'", E.Key, E.Word));
      continue;
    }
    if (K == "model") {
      if (E.Word == "nccl") {
        // NCCL as PyTorch's pipelining runs it (docs/simulation.md).
        Out.Comm = ir::CommModel::Rendezvous;
        Out.Stream = schema::NcclStream;
        continue;
      }
      auto M = llvm::StringSwitch<std::optional<ir::CommModel>>(E.Word)
                   .Case("rendezvous", ir::CommModel::Rendezvous)
                   .Case("eager", ir::CommModel::Eager)
                   .Case("batched", ir::CommModel::Batched)
                   .Default(std::nullopt);
      if (!M) {
        fail(DiagKind::InvalidValue, E.WordLoc != NoLoc ? E.WordLoc : E.Loc,
             fmt::format("unknown comm model '{}' (expected rendezvous, eager, "
                         "batched or nccl)",
                         E.Word));
        continue;
      }
      Out.Comm = *M;
      continue;
    }
    if (K == "stream") {
      auto Sc = llvm::StringSwitch<std::optional<ir::StreamScope>>(E.Word)
                    .Case("none", ir::StreamScope::None)
                    .Case("peer", ir::StreamScope::Peer)
                    .Case("rank", ir::StreamScope::Rank)
                    .Default(std::nullopt);
      if (!Sc) {
        fail(DiagKind::InvalidValue, E.WordLoc != NoLoc ? E.WordLoc : E.Loc,
             E.Word.empty()
                 ? std::string("'stream' needs a scope: none, peer or rank")
                 : fmt::format("unknown stream scope '{}' (expected none, "
                               "peer or rank)",
                               E.Word));
        continue;
      }
      Out.Stream.Scope = *Sc;
      continue;
    }
    if (IsFlag) {
      if (!E.Word.empty()) {
        fail(DiagKind::InvalidValue, E.WordLoc,
             fmt::format("'{}' takes no argument", E.Key));
        continue;
      }
      C.AsyncComm = K == "async";
      continue;
    }
    const Quantity &Q = *E.Value;
    // Latencies and sizes are checked once converted from their units.
    if (!quantityOk(Q, IsThreshold ? "eager threshold" : E.Key.c_str(),
                    K != "bandwidth", std::numeric_limits<double>::infinity()))
      continue;
    if (K == "latency") {
      auto F = msPerUnit(Q.Unit);
      if (!F) {
        fail(DiagKind::InvalidValue, Q.UnitLoc,
             fmt::format("unknown time unit '{}' (expected ms, us or s)",
                         Q.Unit));
        continue;
      }
      if (!convertedOk(Q, Q.Value * *F, MaxTime, "latency", "time units"))
        continue;
      C.Latency = Q.Value * *F;
      continue;
    }
    if (K == "bandwidth") {
      llvm::StringRef Bytes, Per;
      std::tie(Bytes, Per) = llvm::StringRef(Q.Unit).split('/');
      auto BF = bytesPerUnit(Bytes);
      auto TF = msPerUnit(Per);
      if (Q.Unit.empty() || Per.empty() || !BF || !TF) {
        fail(
            DiagKind::InvalidValue, Q.UnitLoc != NoLoc ? Q.UnitLoc : Q.Loc,
            fmt::format("bandwidth needs a unit such as GB/s or B/ms, got '{}'",
                        Q.Unit));
        continue;
      }
      C.BandwidthBytesPerMs = Q.Value * *BF / *TF;
      continue;
    }
    auto BF = bytesPerUnit(Q.Unit);
    if (!BF) {
      fail(DiagKind::InvalidValue, Q.UnitLoc,
           fmt::format("unknown size unit '{}' (expected B, KB, MB, GB, KiB, "
                       "MiB or GiB)",
                       Q.Unit));
      continue;
    }
    if (!convertedOk(Q, Q.Value * *BF, MaxMessageBytes,
                     IsThreshold ? "eager threshold" : E.Key.c_str(), "bytes"))
      continue;
    if (IsThreshold)
      Out.Stream.EagerThreshold = Q.Value * *BF;
    else
      (K == "activation" ? C.ActivationBytes : C.GradientBytes) = Q.Value * *BF;
  }
  if (std::string Why = ir::commConfigProblem(Out.Comm, Out.Stream);
      !Why.empty()) {
    fail(DiagKind::InvalidValue, I.Loc, Why);
    return;
  }
  // One message must fit the time limit too (a tiny bandwidth makes a
  // small size take forever).
  for (ir::ActionKind K : {ir::ActionKind::SendF, ir::ActionKind::SendB}) {
    double T = C.messageTime(K);
    if (T > MaxTime) {
      fail(
          DiagKind::OutOfRange, I.Loc,
          fmt::format("one {} message would take {:.10g} time units (latency + "
                      "size / bandwidth), more than the limit of {:.10g}",
                      K == ir::ActionKind::SendF ? "activation" : "gradient", T,
                      MaxTime));
      return;
    }
  }
}

} // namespace pps::frontend::eval
