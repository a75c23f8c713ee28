//===- TraceModel.cpp - shades, colours and deadlocks for the timelines ---===//
#include "TraceModel.h"

#include "pps/analysis/Deadlock.h"
#include "pps/analysis/Matching.h"
#include "pps/backends/Trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pps::backends::detail {

/// What a legend entry of a compute or control kind says.
const char *kindWords(ir::ActionKind K) {
  switch (K) {
  case ir::ActionKind::F:
    return "forward";
  case ir::ActionKind::I:
    return "input gradient";
  case ir::ActionKind::W:
    return "weight gradient";
  case ir::ActionKind::B:
    return "backward";
  case ir::ActionKind::Unshard:
    return "FSDP unshard";
  case ir::ActionKind::Reshard:
    return "FSDP reshard";
  case ir::ActionKind::ReduceGrad:
    return "FSDP reduce-grad";
  default:
    return "";
  }
}

Shading::Shading(const ir::Schedule &S) {
  const ir::Topology &T = S.Topo;
  int32_t NS = int32_t(T.StageToRank.size());
  ChunkOfStage.assign(size_t(std::max(NS, 0)), 0);
  if (T.Directions == 2 && T.Stages % 2 == 0) {
    Directions = true;
    HalfStages = T.Stages / 2;
    for (int32_t St = 0; St < NS; ++St)
      ChunkOfStage[St] = St >= HalfStages ? 1 : 0;
    Chunks = 2;
    return;
  }
  // The k-th stage (ascending) a rank holds is its chunk k.
  std::vector<int32_t> Seen(size_t(std::max(T.Ranks, 0)), 0);
  for (int32_t St = 0; St < NS; ++St) {
    int32_t Rk = T.StageToRank[St];
    if (Rk < 0 || Rk >= T.Ranks)
      continue;
    ChunkOfStage[St] = Seen[Rk]++;
    Chunks = std::max(Chunks, ChunkOfStage[St] + 1);
  }
}

int32_t Shading::of(const ir::Action &A) const {
  if (A.Stage < 0 || size_t(A.Stage) >= ChunkOfStage.size())
    return 0;
  return ChunkOfStage[A.Stage];
}

std::string Shading::name(int32_t Shade) const {
  if (Directions)
    return Shade == 0 ? "down" : "up";
  return fmt::format("chunk {}", Shade);
}

std::string Shading::explanation(const ir::Schedule &S) const {
  int32_t P = S.Topo.Ranks, M = S.Topo.Microbatches;
  if (Directions)
    return fmt::format(
        "dark: microbatches 0-{} entering at rank 0 (stages 0-{}, going "
        "down); light: microbatches {}-{} entering at rank {} (stages {}-{}, "
        "going up)",
        M / 2 - 1, HalfStages - 1, M / 2, M - 1, P - 1, HalfStages,
        S.Topo.Stages - 1);
  if (Chunks == 2 && S.Topo.Place == ir::Placement::V)
    return "dark: chunk 0 (stages 0 to P-1, going down the ranks); light: "
           "chunk 1 (stages P to 2P-1, coming back up: the V)";
  if (Chunks == 2)
    return "dark: chunk 0 (each rank's first stage); light: chunk 1 (its "
           "second)";
  return fmt::format("darkest: chunk 0 (each rank's first stage) to lightest: "
                     "chunk {} (its last)",
                     Chunks - 1);
}

namespace {

struct Rgb {
  double R, G, B;
};

Rgb parse(const char *Hex) {
  auto Byte = [&](size_t I) {
    return double(std::stoi(std::string(Hex + 1 + 2 * I, 2), nullptr, 16));
  };
  return {Byte(0), Byte(1), Byte(2)};
}

/// Dark and light ends of each compute kind's shades.
std::pair<const char *, const char *> ends(ir::ActionKind K) {
  switch (K) {
  case ir::ActionKind::F:
    return {"#2f6aa8", "#a6c8ec"};
  case ir::ActionKind::I:
    return {"#1f7f78", "#98d6ce"};
  case ir::ActionKind::W:
    return {"#b8900f", "#f4dc8c"};
  case ir::ActionKind::B:
    return {"#37842f", "#a9db9b"};
  default:
    return {"#9c5f8f", "#9c5f8f"};
  }
}

} // namespace

std::string shadeColor(ir::ActionKind K, int32_t Shade, int32_t Shades) {
  auto [Dark, Light] = ends(K);
  double T = Shades <= 1 ? 0.0 : double(Shade) / double(Shades - 1);
  Rgb A = parse(Dark), B = parse(Light);
  auto Mix = [&](double X, double Y) {
    return int(std::lround(X + (Y - X) * T));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", Mix(A.R, B.R), Mix(A.G, B.G),
                     Mix(A.B, B.B));
}

const char *inkOn(const std::string &Fill) {
  Rgb C = parse(Fill.c_str());
  // Perceived lightness (ITU-R BT.601 weights).
  double Y = (0.299 * C.R + 0.587 * C.G + 0.114 * C.B) / 255.0;
  return Y > 0.6 ? "#1f2328" : "#ffffff";
}

DeadlockView deadlockView(const ir::Schedule &S, const sim::SimResult &R) {
  DeadlockView V;
  if (!R.Deadlocked || R.Times.size() != S.Ranks.size())
    return V;
  // A rank is stuck from when it last did anything: the later of the end
  // of its last finished action (under async comm, computes after a
  // blocked receive they do not need still run) and when the blocked
  // action was posted.
  auto TimeOf = [&](int32_t Rk, uint32_t I) {
    const sim::RankTimeline &T = R.Times[Rk];
    double Last = 0;
    for (double E : T.End)
      if (std::isfinite(E))
        Last = std::max(Last, E);
    if (I < T.Start.size() && std::isfinite(T.Start[I]))
      Last = std::max(Last, T.Start[I]);
    return Last;
  };
  std::string Model = ir::commDescription(R.Comm, R.Stream);
  if (!R.UsedDataflow && S.hasComms()) {
    analysis::Matching M = analysis::matchComms(S);
    analysis::DeadlockResult DR =
        analysis::checkDeadlock(S, M, R.Comm, R.Stream);
    analysis::DeadlockExplanation X = analysis::explainDeadlock(S, M, DR);
    if (!X.Ranks.empty()) {
      V.Cycle = X.Cycle;
      for (const analysis::DeadlockExplanation::Blocked &B : X.Ranks) {
        BlockedRank BR;
        BR.Rank = B.Rank;
        BR.Index = B.Index;
        BR.Time = TimeOf(B.Rank, B.Index);
        BR.WaitsFor = B.WaitsFor;
        BR.OnCycle = llvm::is_contained(V.Cycle, B.Rank);
        const ir::Action &A = S.Ranks[B.Rank].Actions[B.Index];
        BR.Name = actionName(A);
        BR.Why =
            B.WaitsFor >= 0
                ? fmt::format(
                      "waiting for rank {} to post `{}`", B.WaitsFor,
                      actionName(S.Ranks[B.WaitsFor].Actions[B.PartnerIndex]))
                : fmt::format("which no {} ever matches",
                              ir::isSend(A.Kind) ? "receive" : "send");
        V.Ranks.push_back(std::move(BR));
      }
      std::string Ranks;
      for (size_t K = 0; K < V.Cycle.size(); ++K)
        Ranks += (K ? (K + 1 == V.Cycle.size() ? " and " : ", ") : "") +
                 std::to_string(V.Cycle[K]);
      V.Headline =
          V.Cycle.empty()
              ? fmt::format("the schedule cannot finish under the "
                            "{}: {} rank{} forever",
                            Model, V.Ranks.size(),
                            V.Ranks.size() > 1 ? "s block" : " blocks")
          : V.Cycle.size() == 1
              ? fmt::format("deadlock under the {}: rank {} waits on "
                            "itself",
                            Model, Ranks)
          : V.Cycle.size() == 2
              ? fmt::format("deadlock under the {}: ranks {} wait on "
                            "each other",
                            Model, Ranks)
              : fmt::format("deadlock under the {}: ranks {} wait in a "
                            "cycle",
                            Model, Ranks);
      return V;
    }
  }
  // The happens-before check sees no deadlock (dataflow timing, or a stall
  // of blocking timing): say where each rank stopped.
  for (int32_t Rk = 0; Rk < int32_t(S.Ranks.size()); ++Rk) {
    if (size_t(Rk) >= R.StuckAt.size())
      break;
    uint32_t I = R.StuckAt[Rk];
    const auto &Acts = S.Ranks[Rk].Actions;
    while (I < Acts.size() && Acts[I].Kind == ir::ActionKind::Idle)
      ++I;
    if (I >= Acts.size())
      continue;
    BlockedRank BR;
    BR.Rank = Rk;
    BR.Index = I;
    BR.Time = TimeOf(Rk, I);
    BR.Name = actionName(Acts[I]);
    BR.Why = "waiting for an input that never comes";
    V.Ranks.push_back(std::move(BR));
  }
  V.Headline =
      fmt::format("no rank can progress under {} timing: {} rank{} "
                  "stuck",
                  R.UsedDataflow ? "dataflow" : ir::commModelName(R.Comm).str(),
                  V.Ranks.size(), V.Ranks.size() == 1 ? " is" : "s are");
  return V;
}

} // namespace pps::backends::detail
