//===- Builder.cpp - pps._pps: the schedule builder -----------------------===//
//
// pps.ScheduleBuilder's core: ir::ScheduleBuilder behind checks that turn
// every mistake into a ValueError (sizes within the language's limits, a
// placement that fits, ranks, stages and microbatches in range, kinds by
// their Python names), so the builder's own assertions cannot fire.
//
//===----------------------------------------------------------------------===//
#include "Module.h"

#include "pps/backends/PpsPrinter.h"
#include "pps/frontend/Limits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <fmt/format.h>

#include <cmath>

namespace pps::python {

using frontend::MaxMicrobatches;
using frontend::MaxRanks;
using frontend::MaxStages;

//===----------------------------------------------------------------------===//
// The builder
//===----------------------------------------------------------------------===//

static std::optional<ir::ActionKind> kindNamed(llvm::StringRef Name) {
  for (unsigned I = 0; I < ir::NumActionKinds; ++I) {
    auto K = ir::ActionKind(I);
    if (Name.equals_insensitive(kindName(K)))
      return K;
  }
  return std::nullopt;
}

static std::string kindList() {
  std::string Out;
  for (unsigned I = 0; I < ir::NumActionKinds; ++I)
    Out += (I ? ", " : "") + kindName(ir::ActionKind(I));
  return Out;
}

static void checkSizes(int64_t Ranks, int64_t Stages, int64_t Mbs) {
  if (Ranks < 1 || Ranks > MaxRanks)
    throw py::value_error(
        fmt::format("ranks must be 1..{}, got {}", MaxRanks, Ranks));
  if (Stages < 1 || Stages > MaxStages)
    throw py::value_error(
        fmt::format("stages must be 1..{}, got {}", MaxStages, Stages));
  if (Mbs < 1 || Mbs > MaxMicrobatches)
    throw py::value_error(fmt::format("microbatches must be 1..{}, got {}",
                                      MaxMicrobatches, Mbs));
}

/// Checks the sizes, then returns loop or v by name (checked so that
/// ir::ScheduleBuilder's assertion cannot fire), or loop for an explicit
/// list, which the constructor then applies.
static ir::Placement namedPlacement(const py::object &P, int64_t Ranks,
                                    int64_t Stages, int64_t Microbatches) {
  checkSizes(Ranks, Stages, Microbatches);
  if (!py::isinstance<py::str>(P))
    return ir::Placement::Loop;
  ir::Placement Pl = placementNamed(P.cast<std::string>());
  if (Pl == ir::Placement::V && Stages % Ranks != 0)
    throw py::value_error(fmt::format(
        "placement 'v' needs stages to be a multiple of ranks, got {} "
        "stages on {} ranks",
        Stages, Ranks));
  return Pl;
}

Builder::Builder(int64_t Ranks, int64_t Stages, int64_t Microbatches,
                 const py::object &Placement, const std::string &Name)
    : B(int32_t(Ranks), int32_t(Stages), int32_t(Microbatches),
        namedPlacement(Placement, Ranks, Stages, Microbatches)) {
  if (!py::isinstance<py::str>(Placement)) {
    std::vector<int64_t> Map;
    try {
      Map = Placement.cast<std::vector<int64_t>>();
    } catch (const py::cast_error &) {
      throw py::type_error(
          "placement must be 'loop', 'v' or a list of ranks (one per stage)");
    }
    if (int64_t(Map.size()) != Stages)
      throw py::value_error(fmt::format(
          "placement lists {} ranks for {} stages", Map.size(), Stages));
    llvm::SmallVector<int32_t, 16> M;
    for (size_t St = 0; St < Map.size(); ++St) {
      if (Map[St] < 0 || Map[St] >= Ranks)
        throw py::value_error(fmt::format(
            "placement puts stage {} on rank {}, but the ranks are 0..{}", St,
            Map[St], Ranks - 1));
      M.push_back(int32_t(Map[St]));
    }
    B.placement(M);
  }
  if (!Name.empty())
    B.name(Name);
  const ir::Topology &T = B.schedule().Topo;
  for (int32_t St = 0; St < T.Stages; ++St)
    StagesOf[T.StageToRank[St]].push_back(St);
}

void Builder::add(int64_t Rank, const std::string &Kind,
                  std::optional<int64_t> Mb, std::optional<int64_t> Stage,
                  std::optional<int64_t> Peer) {
  checkRank(B.schedule(), Rank);
  std::optional<ir::ActionKind> K = kindNamed(Kind);
  if (!K)
    throw py::value_error(fmt::format("unknown action kind '{}' (expected "
                                      "one of {})",
                                      Kind, kindList()));
  if (*K == ir::ActionKind::Idle)
    throw py::value_error("use add_idle(rank, time) for an idle slot");
  if (Peer && !ir::isComm(*K))
    throw py::value_error(
        fmt::format("{} takes no peer (only sends and receives do)", Kind));
  int32_t St = resolveStage(int32_t(Rank), Stage, Kind);
  auto R = B.rank(int32_t(Rank));
  if (ir::isControl(*K)) {
    if (Mb)
      throw py::value_error(
          fmt::format("{} takes no microbatch, only a stage", Kind));
    R.control(*K, St);
    return;
  }
  int32_t M = checkMicrobatch(Mb, Kind);
  if (ir::isCompute(*K)) {
    R.compute(*K, M, St);
    return;
  }
  // A send or receive without a peer gets it from the stage map when the
  // text is compiled (the text form's rule).
  int32_t P = -1;
  if (Peer) {
    checkRank(B.schedule(), *Peer);
    P = int32_t(*Peer);
  }
  R.comm(*K, M, St, P);
}

void Builder::addOverlap(int64_t Rank, const std::string &K1, int64_t Mb1,
                         std::optional<int64_t> St1, const std::string &K2,
                         int64_t Mb2, std::optional<int64_t> St2) {
  checkRank(B.schedule(), Rank);
  auto Compute = [&](const std::string &Kind, int64_t Mb,
                     std::optional<int64_t> Stage) {
    std::optional<ir::ActionKind> K = kindNamed(Kind);
    if (!K || !ir::isCompute(*K))
      throw py::value_error(fmt::format(
          "overlap pairs two computes (F, I, W or B), got '{}'", Kind));
    return ir::Action::compute(*K, checkMicrobatch(Mb, Kind),
                               resolveStage(int32_t(Rank), Stage, Kind));
  };
  ir::Action A = Compute(K1, Mb1, St1), C = Compute(K2, Mb2, St2);
  B.rank(int32_t(Rank)).overlap(A, C);
}

void Builder::addIdle(int64_t Rank, double Time) {
  checkRank(B.schedule(), Rank);
  if (!std::isfinite(Time) || Time < 0 || Time > 3.0e38)
    throw py::value_error(
        fmt::format("an idle time must be a finite number >= 0, got {}", Time));
  B.rank(int32_t(Rank)).idle(float(Time));
}

void Builder::setCosts(const CostArgs &A) { applyCosts(B.schedule(), A); }
void Builder::setComm(const CommArgs &A) { applyComm(A, B.schedule()); }
void Builder::setLatency(double L) {
  if (!(L >= 0) || !std::isfinite(L))
    throw py::value_error("latency must be a finite time >= 0");
  B.latency(L);
}
void Builder::setMemoryLimit(int64_t L) {
  if (L < 0)
    throw py::value_error(fmt::format("memory_limit must be >= 0, got {}", L));
  B.memoryLimit(L);
}

std::string Builder::text() {
  return render(
      [&](llvm::raw_ostream &OS) { backends::printPps(B.schedule(), OS); });
}
SourceArgs Builder::sourceArgs(const std::string &Name) {
  SourceArgs A;
  A.Source = text();
  A.IsText = true;
  A.Name = Name;
  return A;
}
size_t Builder::numActions() { return B.schedule().numActions(); }

int32_t Builder::checkMicrobatch(std::optional<int64_t> Mb,
                                 const std::string &Kind) {
  int32_t M = B.schedule().Topo.Microbatches;
  if (!Mb)
    throw py::value_error(fmt::format("{} needs a microbatch", Kind));
  if (*Mb < 0 || *Mb >= M)
    throw py::value_error(
        fmt::format("microbatch {} is out of range 0..{}", *Mb, M - 1));
  return int32_t(*Mb);
}

/// The stage given, or the rank's only one. A stage held by another rank
/// is accepted: the lint reports it (stray-action).
int32_t Builder::resolveStage(int32_t Rank, std::optional<int64_t> Stage,
                              const std::string &Kind) {
  const ir::Topology &T = B.schedule().Topo;
  if (Stage) {
    if (*Stage < 0 || *Stage >= T.Stages)
      throw py::value_error(
          fmt::format("stage {} is out of range 0..{}", *Stage, T.Stages - 1));
    return int32_t(*Stage);
  }
  const std::vector<int32_t> &Mine = StagesOf[Rank];
  if (Mine.size() == 1)
    return Mine[0];
  if (Mine.empty())
    throw py::value_error(
        fmt::format("rank {} holds no stage: give {} a stage", Rank, Kind));
  throw py::value_error(fmt::format(
      "rank {} holds stages {}: give {} a stage", Rank,
      llvm::join(
          llvm::map_range(Mine, [](int32_t S) { return std::to_string(S); }),
          ", "),
      Kind));
}

} // namespace pps::python
