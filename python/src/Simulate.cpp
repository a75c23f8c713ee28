//===- Simulate.cpp - pps._pps: ppsc sim ----------------------------------===//
//
// A compiled Unit simulated as ppsc sim does it: the overrides checked and
// applied, the pass pipeline to its Check goal, then the simulator, with
// the GIL released while the compiler works.
//
//===----------------------------------------------------------------------===//
#include "Module.h"

#include <fmt/format.h>

#include <cmath>

namespace pps::python {

//===----------------------------------------------------------------------===//
// Simulation
//===----------------------------------------------------------------------===//

/// ppsc sim: the pass pipeline to its Check goal, then the simulator.
SimPtr simulate(const Unit &U, const SimArgs &A) {
  sim::SimOptions SO;
  SO.CommModel = commModel(A.CommModel);
  SO.BlockingComm = A.Blocking;
  if (A.Latency) {
    if (!(*A.Latency >= 0) || !std::isfinite(*A.Latency))
      throw py::value_error("latency must be a finite time >= 0");
    SO.Latency = *A.Latency;
  }
  if (A.Timing == "comms")
    SO.Dataflow = sim::DataflowMode::Comms;
  else if (A.Timing == "dataflow")
    SO.Dataflow = sim::DataflowMode::Dataflow;
  else if (A.Timing != "auto")
    throw py::value_error(fmt::format(
        "timing must be 'auto', 'comms' or 'dataflow', got '{}'", A.Timing));
  if (U.Source.ReadsModelAt != NoLoc &&
      (A.Costs.File || !A.Costs.All.empty() || !A.Costs.PerStage.empty() ||
       A.Latency))
    throw py::value_error(
        "this schedule read its cost model when it was built (cost_f(s), "
        "comm_time(), ...): simulating it under other costs would time an "
        "order built for the old ones; compile it with these costs in its "
        "`cost { }` and `comm { }` blocks instead");
  auto St = std::make_shared<SimState>();
  St->SM = U.SM;
  St->S = U.Source;
  applyCosts(St->S, A.Costs, *U.SM);
  // Before the passes: insert-comms orders messages with these costs.
  sim::applyScheduleOverrides(St->S, SO);
  py::gil_scoped_release NoGil;
  DiagnosticEngine Diags(*U.SM);
  if (!runPasses(St->S, Diags, pipeline::Goal::Check))
    fail(Diags);
  St->R = sim::simulate(St->S, SO, &Diags);
  if (St->R.Deadlocked || Diags.hasErrors())
    fail(Diags);
  St->Warnings = collect(Diags);
  return St;
}

std::string render(const std::function<void(llvm::raw_ostream &)> &Fn) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  Fn(OS);
  OS.flush();
  return Out;
}

py::list rankStats(const sim::SimResult &R) {
  py::list L;
  for (size_t I = 0; I < R.Ranks.size(); ++I) {
    const sim::RankStats &X = R.Ranks[I];
    L.append(py::make_tuple(I, X.ComputeBusy, X.Idle, X.CommBusy, X.CommWait,
                            X.End, memoryAmount(X.PeakMemory), X.PeakMemoryAt,
                            X.Computes, X.Sends, X.Recvs));
  }
  return L;
}

} // namespace pps::python
