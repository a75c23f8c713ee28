//===- Simulate.cpp - pps._pps: ppsc sim ----------------------------------===//
//
// A compiled Unit simulated as ppsc sim does it: the overrides checked and
// applied, the pass pipeline to its Check goal, then the simulator, with
// the GIL released while the compiler works; and pps._pps.Simulation, the
// result's figures, timeline and trace formats.
//
//===----------------------------------------------------------------------===//
#include "Module.h"

#include "pps/backends/Trace.h"

#include <fmt/format.h>

#include <cmath>

namespace pps::python {

//===----------------------------------------------------------------------===//
// Simulation
//===----------------------------------------------------------------------===//

/// ppsc sim: the pass pipeline to its Check goal, then the simulator.
SimPtr simulate(const Unit &U, const SimArgs &A) {
  sim::SimOptions SO;
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
  // Before the passes, as ppsc sim applies --comm-model & co.: insert-comms
  // orders messages with these costs and this comm model.
  applyComm(A.Comm, St->S);
  sim::applyScheduleOverrides(St->S, SO);
  passes::InsertCommsOptions IO;
  IO.Placement = A.Comm.Placement ? A.Comm.Placement : U.Placement;
  py::gil_scoped_release NoGil;
  DiagnosticEngine Diags(*U.SM);
  if (!runPasses(St->S, Diags, pipeline::Goal::Check, nullptr, IO))
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

/// A figure that exists under a stream rule only (as sim's JSON has it).
static py::object streamFigure(const sim::SimResult &R, double V) {
  if (!std::isfinite(R.MakespanWithoutStreams))
    return py::none();
  return py::float_(V);
}

py::list rankStats(const sim::SimResult &R) {
  py::list L;
  for (size_t I = 0; I < R.Ranks.size(); ++I) {
    const sim::RankStats &X = R.Ranks[I];
    L.append(py::make_tuple(I, X.ComputeBusy, X.Idle, X.CommBusy, X.CommWait,
                            X.End, memoryAmount(X.PeakMemory), X.PeakMemoryAt,
                            X.Computes, X.Sends, X.Recvs,
                            streamFigure(R, X.StreamHeld),
                            streamFigure(R, X.StreamBubble)));
  }
  return L;
}

py::list heldComms(const sim::SimResult &R) {
  py::list L;
  for (size_t Rk = 0; Rk < R.Times.size(); ++Rk) {
    const sim::RankTimeline &T = R.Times[Rk];
    for (size_t I = 0; I < T.Held.size(); ++I) {
      if (!(T.Held[I] > 0))
        continue;
      uint64_t By = I < T.HeldBy.size() ? T.HeldBy[I] : ~uint64_t(0);
      bool Known = By != ~uint64_t(0);
      L.append(py::make_tuple(Rk, I, T.Held[I],
                              Known ? int64_t(By >> 32) : int64_t(-1),
                              Known ? int64_t(uint32_t(By)) : int64_t(-1)));
    }
  }
  return L;
}

void bindSimulation(py::module_ &M) {
  py::class_<SimState, SimPtr> Sim(M, "Simulation", "A simulated schedule");
  Sim.def_property_readonly("makespan",
                            [](const SimState &S) { return S.R.Makespan; })
      .def_property_readonly("span", [](const SimState &S) { return S.R.Span; })
      .def_property_readonly("ideal",
                             [](const SimState &S) { return S.R.Ideal; })
      .def_property_readonly(
          "bubble_over_makespan",
          [](const SimState &S) { return S.R.BubbleOverMakespan; })
      .def_property_readonly(
          "bubble_over_ideal",
          [](const SimState &S) { return S.R.BubbleOverIdeal; })
      .def_property_readonly(
          "mean_idle_fraction",
          [](const SimState &S) { return S.R.MeanIdleFraction; })
      .def_property_readonly(
          "peak_memory",
          [](const SimState &S) { return memoryAmount(S.R.PeakMemory); })
      .def_property_readonly("messages",
                             [](const SimState &S) { return S.R.Messages; })
      .def_property_readonly("bytes",
                             [](const SimState &S) { return S.R.Bytes; })
      .def_property_readonly(
          "comm_model",
          [](const SimState &S) { return commModelText(S.R.Comm, S.R.Stream); })
      .def_property_readonly(
          "comm_stream",
          [](const SimState &S) { return commStreamOf(S.R.Stream); })
      .def_property_readonly("makespan_without_streams",
                             [](const SimState &S) -> std::optional<double> {
                               if (!std::isfinite(S.R.MakespanWithoutStreams))
                                 return std::nullopt;
                               return S.R.MakespanWithoutStreams;
                             })
      .def_property_readonly("held_comms",
                             [](const SimState &S) { return heldComms(S.R); })
      .def_property_readonly("blocking",
                             [](const SimState &S) { return S.R.Blocking; })
      .def_property_readonly("dataflow",
                             [](const SimState &S) { return S.R.UsedDataflow; })
      .def_property_readonly("per_rank",
                             [](const SimState &S) { return rankStats(S.R); })
      .def_property_readonly(
          "channels",
          [](const SimState &S) {
            py::list L;
            for (const sim::ChannelStats &C : S.R.Channels)
              L.append(py::make_tuple(C.Src, C.Dst, C.Messages, C.Bytes));
            return L;
          })
      .def_property_readonly("critical_path",
                             [](const SimState &S) {
                               py::list L;
                               for (const sim::ActionRef &A : S.R.CriticalPath)
                                 L.append(py::make_tuple(A.Rank, A.Index));
                               return L;
                             })
      .def_property_readonly(
          "warnings",
          [](const SimState &S) { return reportToPython(S.Warnings); })
      .def_property_readonly("ranks",
                             [](const SimState &S) { return S.S.Topo.Ranks; })
      .def(
          "timeline",
          [](const SimState &S, int64_t Rank) {
            checkRank(S.S, Rank);
            py::handle Type = registered(Types.TimedAction, "TimedAction");
            ActionConverter Convert(*S.SM);
            const auto &Acts = S.S.Ranks[Rank].Actions;
            const sim::RankTimeline &T = S.R.Times[Rank];
            py::list L(Acts.size());
            for (size_t I = 0; I < Acts.size(); ++I)
              L[I] = namedTuple(
                  Type, py::make_tuple(Rank, I, Convert(Acts[I]), T.Start[I],
                                       T.TransferStart[I], T.End[I]));
            return L;
          },
          "pps.TimedAction of each action of a rank")
      .def(
          "to_json",
          [](const SimState &S) {
            return render([&](llvm::raw_ostream &OS) {
              backends::writeFiguresJson(S.S, S.R, OS);
            });
          },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "to_chrome_trace",
          [](const SimState &S) {
            return render([&](llvm::raw_ostream &OS) {
              backends::writeChromeTrace(S.S, S.R, OS);
            });
          },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "to_csv",
          [](const SimState &S) {
            return render([&](llvm::raw_ostream &OS) {
              backends::writeActionCsv(S.S, S.R, OS);
            });
          },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "to_svg",
          [](const SimState &S) {
            return render([&](llvm::raw_ostream &OS) {
              backends::writeSvg(S.S, S.R, OS);
            });
          },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "to_html",
          [](const SimState &S) {
            return render([&](llvm::raw_ostream &OS) {
              backends::writeHtml(S.S, S.R, OS);
            });
          },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "summary",
          [](const SimState &S) {
            return render([&](llvm::raw_ostream &OS) {
              backends::writeSummary(S.S, S.R, OS);
            });
          },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "gantt",
          [](const SimState &S, unsigned Width) {
            if (Width != 0 && Width < 10)
              throw py::value_error(
                  "the Gantt chart needs a width of at least 10");
            backends::GanttOptions GO;
            GO.Width = Width;
            return render([&](llvm::raw_ostream &OS) {
              backends::writeGantt(S.S, S.R, OS, GO);
            });
          },
          py::call_guard<py::gil_scoped_release>());
}

} // namespace pps::python
