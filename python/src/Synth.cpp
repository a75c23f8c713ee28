//===- Synth.cpp - pps._pps: ppsc synth -----------------------------------===//
//
// A schedule synthesized from sizes, costs and a memory limit, as ppsc
// synth makes it: the arguments checked against the language's limits
// before anything is allocated, the search run without the GIL, the result
// compiled into a Unit.
//
//===----------------------------------------------------------------------===//
#include "Module.h"

#include "pps/frontend/Limits.h"
#include "pps/frontend/MemoryModel.h"
#include "pps/synth/Algorithms.h"
#include "pps/synth/SynthPass.h"

#include <fmt/format.h>

#include <cmath>

namespace pps::python {

using frontend::MaxMicrobatches;
using frontend::MaxRanks;
using frontend::MaxStages;

//===----------------------------------------------------------------------===//
// Synthesis
//===----------------------------------------------------------------------===//

/// Parses F / I (B is the zero-bubble papers' name for I, as in ppsc
/// synth) / W costs into C.
static void synthCosts(const std::map<std::string, double> &Entries,
                       synth::JobCost &C) {
  for (auto &[Key, V] : Entries) {
    if (!std::isfinite(V) || V < 0)
      throw py::value_error(
          fmt::format("cost {} must be a finite number >= 0, got {}", Key, V));
    if (Key == "F")
      C.F = V;
    else if (Key == "I" || Key == "B")
      C.I = V;
    else if (Key == "W")
      C.W = V;
    else
      throw py::value_error(fmt::format(
          "unknown cost '{}' (expected F, I (or B, the input-gradient "
          "backward) and W)",
          Key));
  }
}

UnitPtr synthesize(const SynthArgs &A) {
  // Bounds before Problem::make allocates per stage; Problem::validate
  // checks the rest (1M (stage, microbatch) pairs at most).
  if (A.Ranks < 1 || A.Ranks > MaxRanks)
    throw py::value_error(
        fmt::format("ranks must be 1..{}, got {}", MaxRanks, A.Ranks));
  if (A.Microbatches < 1 || A.Microbatches > MaxMicrobatches)
    throw py::value_error(fmt::format("microbatches must be 1..{}, got {}",
                                      MaxMicrobatches, A.Microbatches));
  if (A.Stages && (*A.Stages < 1 || *A.Stages > MaxStages))
    throw py::value_error(
        fmt::format("stages must be 1..{}, got {}", MaxStages, *A.Stages));
  if (A.MemoryLimit < 1)
    throw py::value_error(
        fmt::format("memory_limit must be at least 1, got {}", A.MemoryLimit));
  if (!(A.Latency >= 0) || !std::isfinite(A.Latency))
    throw py::value_error("latency must be a finite time >= 0");
  synth::JobCost C;
  synthCosts(A.Costs, C);
  synth::Problem P = synth::Problem::make(
      int32_t(A.Ranks), int32_t(A.Microbatches), placementNamed(A.Placement), C,
      A.MemoryLimit, A.Latency, int32_t(A.Stages.value_or(0)));
  for (auto &[Stage, Entries] : A.StageCosts) {
    if (Stage < 0 || Stage >= P.Stages)
      throw py::value_error(fmt::format(
          "cost for stage {}: the stages are 0..{}", Stage, P.Stages - 1));
    synthCosts(Entries, P.Cost[Stage]);
  }
  if (!A.MemoryModel.empty()) {
    frontend::MemoryAmounts Am;
    for (auto &[Key, V] : A.MemoryModel) {
      std::optional<double> *Slot = Key == "F"   ? &Am.F
                                    : Key == "I" ? &Am.I
                                    : Key == "W" ? &Am.W
                                    : Key == "B" ? &Am.B
                                                 : nullptr;
      if (!Slot)
        throw py::value_error(fmt::format(
            "unknown memory amount '{}' (expected F, I, W or B)", Key));
      *Slot = V;
    }
    schema::MemoryModel M;
    if (std::string Why = frontend::memoryModelOf(Am, M); !Why.empty())
      throw py::value_error("memory_model: " + Why);
    P.setMemory(M, A.MemoryLimit);
  }
  if (std::string Why = P.validate(); !Why.empty())
    throw py::value_error(Why);

  py::gil_scoped_release NoGil;
  synth::SynthOptions SO;
  SO.UseExact = A.Exact;
  SO.StdlibDir = A.StdlibDir;
  std::string Why;
  std::optional<synth::Result> Res = synth::synthesize(P, SO, &Why);
  auto SM = std::make_shared<SourceManager>();
  DiagnosticEngine Diags(*SM);
  if (!Res) {
    // No source to point at: the arguments are the request (ppsc synth
    // says the same without a location).
    Diags.report(DiagKind::SynthInfeasible, NoLoc, Why);
    fail(Diags);
  }
  UnitPtr U = finish(SM, Diags, synth::toSchedule(P, Res->Ord), CommArgs());
  U->SynthAlgorithm = Res->Algorithm;
  return U;
}

} // namespace pps::python
