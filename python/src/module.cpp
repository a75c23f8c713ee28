//===- module.cpp - pps._pps: the compiler as a Python extension ----------===//
//
// pybind11 bindings over the compiler's public headers: the front end, the
// pass pipeline, the simulator, synthesis, the backends and the C++
// builder. Nothing here decides anything about a schedule: every finding,
// figure and text form comes from the compiler, and diagnostics come out as
// data (kind, severity, location, message, notes) plus the text ppsc
// prints. The pure-Python layer (python/pps/*.py) gives the API its shape;
// this file names what the other files of the extension do (Module.h) in
// Python and releases the GIL around compiler work; they convert
// arguments and refuse bad ones with ValueError before the compiler could
// assert on them.
//
// Compiler failures are thrown as CompileFailure and translated into
// pps.CompileError (defined in pps/_types.py) while the GIL is held again.
//
//===----------------------------------------------------------------------===//
#include "Module.h"

#include "pps/analysis/Memory.h"
#include "pps/backends/JsonEmitter.h"
#include "pps/backends/PpsPrinter.h"
#include "pps/frontend/Frontend.h"

#include <fmt/format.h>

using namespace pps;
using namespace pps::python;

PYBIND11_MODULE(_pps, m) {
  m.doc() = "The pps compiler (pybind11 core of the pps package; use `pps`)";
  m.attr("__version__") = PPS_VERSION;

  py::register_exception_translator(
      [](std::exception_ptr P) { // NOLINT: pybind11 takes it by value
        try {
          if (P)
            std::rethrow_exception(P);
        } catch (const CompileFailure &F) {
          py::handle Cls = registered(Types.CompileError, "CompileError");
          py::object Err = Cls.attr("_from_report")(reportToPython(F.Report));
          PyErr_SetObject(Cls.ptr(), Err.ptr());
        }
      });

  m.def(
      "_register_types",
      [](py::object Action, py::object TimedAction, py::object CompileError) {
        for (py::handle T : {Action, TimedAction, CompileError})
          if (!PyType_Check(T.ptr()))
            throw py::type_error("_register_types takes three types");
        if (!PyType_IsSubtype(reinterpret_cast<PyTypeObject *>(Action.ptr()),
                              &PyTuple_Type) ||
            !PyType_IsSubtype(
                reinterpret_cast<PyTypeObject *>(TimedAction.ptr()),
                &PyTuple_Type))
          throw py::type_error("Action and TimedAction must be named tuples");
        Types.Action = Action.release();
        Types.TimedAction = TimedAction.release();
        Types.CompileError = CompileError.release();
      },
      "Called once by pps._types: the types results are built from");

  m.def(
      "stdlib_search_path",
      [] {
        std::vector<std::pair<std::string, std::string>> Out;
        for (const frontend::StdlibDir &D : frontend::stdlibSearchPath())
          Out.emplace_back(D.Path, D.Origin);
        return Out;
      },
      "The front end's stdlib search path: (directory, why) pairs");

  m.def(
      "action_kinds",
      [] {
        py::list L;
        for (unsigned I = 0; I < ir::NumActionKinds; ++I) {
          auto K = ir::ActionKind(I);
          const char *Class = ir::isCompute(K)   ? "compute"
                              : ir::isSend(K)    ? "send"
                              : ir::isRecv(K)    ? "recv"
                              : ir::isControl(K) ? "control"
                                                 : "idle";
          L.append(
              py::make_tuple(kindName(K), Class, ir::actionKindName(K).str()));
        }
        return L;
      },
      "(name, class, text-form name) of every action kind");

  m.def(
      "runtime_kinds",
      [] {
        py::list L;
        for (unsigned I = 0; I < schema::NumKinds; ++I) {
          auto K = schema::Kind(I);
          const char *Class = schema::isCompute(K)   ? "compute"
                              : schema::isComm(K)    ? "comm"
                              : schema::isControl(K) ? "control"
                                                     : "idle";
          const char *Role = schema::isSend(K)   ? "send"
                             : schema::isRecv(K) ? "recv"
                                                 : "";
          L.append(py::make_tuple(kindName(K), Class, Role,
                                  schema::isForward(K), schema::kindName(K),
                                  schema::traceCategory(K)));
        }
        return L;
      },
      "The action schema by kind number: (name, class, comm role, forward, "
      "trace kind, trace category)");

  // runtime_table's memory effects, by number.
  static_assert(unsigned(schema::MemoryEffect::None) == 0 &&
                    unsigned(schema::MemoryEffect::Acquire) == 1 &&
                    unsigned(schema::MemoryEffect::ReleaseInput) == 2 &&
                    unsigned(schema::MemoryEffect::Release) == 3,
                "MEMORY_EFFECTS lists the schema's effects in order");
  m.attr("MEMORY_EFFECTS") =
      py::make_tuple("none", "acquire", "release_input", "release");
  m.def(
      "memory_delta",
      [](double Forward, double InputGrad, unsigned Effect, bool Live,
         bool InputDone) {
        if (Effect > unsigned(schema::MemoryEffect::Release))
          throw py::value_error(fmt::format("no memory effect {}", Effect));
        schema::MemoryModel M;
        M.Forward = Forward;
        M.InputGrad = InputGrad;
        return schema::memoryDelta(M, schema::MemoryEffect(Effect), Live,
                                   InputDone);
      },
      "The schema's memory arithmetic: the change of live memory when an "
      "action of the effect runs on an (m, s) (live before it? its I "
      "already ran?), under the model (F allocates Forward, I frees "
      "InputGrad)");

  m.def(
      "action_text",
      [](unsigned Kind, int32_t Mb, int32_t Stage, int32_t Peer) {
        if (Kind >= schema::NumKinds)
          throw py::value_error(fmt::format("no action kind {}", Kind));
        return schema::actionText(schema::Kind(Kind), Mb, Stage, Peer);
      },
      "The text form of an action (the schema's), as the lint writes it");

  m.def(
      "diagnostic_kinds",
      [] {
        py::list L;
        for (unsigned I = 0; I < unsigned(DiagKind::NumKinds); ++I) {
          auto K = DiagKind(I);
          L.append(py::make_tuple(diagKindName(K).str(),
                                  severityName(diagKindSeverity(K)),
                                  diagKindDescription(K).str()));
        }
        return L;
      },
      "(name, default severity, description) of every diagnostic kind");

  // The comm options of a call, read once (ValueError in ppsc's words) and
  // handed to every function that compiles, checks or simulates.
  py::class_<CommArgs> CommArgsType(m, "CommArgs",
                                    "comm_model=, stream=, ... read");
  m.def("comm_args", &commArgs, py::arg("comm_model"), py::arg("stream"),
        py::arg("eager_threshold"), py::arg("comm_placement"),
        "Reads the comm options as ppsc reads --comm-model, --stream, "
        "--eager-threshold and --comm-placement");

  py::class_<Unit, UnitPtr> U(m, "Unit", "A compiled schedule");
  U.def_property_readonly("name", [](const Unit &U) { return U.Lowered.Name; })
      .def_property_readonly("ranks",
                             [](const Unit &U) { return U.Lowered.Topo.Ranks; })
      .def_property_readonly(
          "stages", [](const Unit &U) { return U.Lowered.Topo.Stages; })
      .def_property_readonly(
          "microbatches",
          [](const Unit &U) { return U.Lowered.Topo.Microbatches; })
      .def_property_readonly(
          "directions", [](const Unit &U) { return U.Lowered.Topo.Directions; })
      .def_property_readonly(
          "placement",
          [](const Unit &U) {
            return ir::placementName(U.Lowered.Topo.Place).str();
          })
      .def_property_readonly("stage_to_rank",
                             [](const Unit &U) {
                               const auto &M = U.Lowered.Topo.StageToRank;
                               return std::vector<int32_t>(M.begin(), M.end());
                             })
      .def("stages_of",
           [](const Unit &U, int64_t Rank) {
             checkRank(U.Lowered, Rank);
             auto St = U.Lowered.Topo.stagesOf(int32_t(Rank));
             return std::vector<int32_t>(St.begin(), St.end());
           })
      .def_property_readonly("comm_model",
                             [](const Unit &U) {
                               return commModelText(U.Lowered.Comm,
                                                    U.Lowered.Stream);
                             })
      .def_property_readonly(
          "comm_stream",
          [](const Unit &U) { return commStreamOf(U.Lowered.Stream); })
      // The comm model and stream rule a run under Comm uses: (name as
      // comm_model reports it, the matching model's name, comm_stream, the
      // words messages use, whether a forward and a backward message is
      // sent eagerly by its declared size, as the C++ executor decides);
      // a ValueError if they say two things.
      .def("comm_config",
           [](const Unit &U, const CommArgs &Comm) {
             ir::Schedule S;
             S.Comm = U.Source.Comm;
             S.Stream = U.Source.Stream;
             applyComm(Comm, S);
             const ir::CostModel &C = U.Lowered.Cost;
             auto Eager = [&](ir::ActionKind K) {
               return schema::sendIsEager(S.Comm, S.Stream, C.messageBytes(K));
             };
             return py::make_tuple(
                 commModelText(S.Comm, S.Stream),
                 ir::commModelName(S.Comm).str(), commStreamOf(S.Stream),
                 ir::commDescription(S.Comm, S.Stream),
                 Eager(ir::ActionKind::SendF), Eager(ir::ActionKind::SendB));
           })
      .def_property_readonly(
          "comm_placement",
          [](const Unit &U) -> std::optional<std::string> {
            if (!U.Placement)
              return std::nullopt;
            return passes::commPlacementName(*U.Placement).str();
          })
      .def("route",
           [](const Unit &U, int64_t Mb) {
             const ir::Topology &T = U.Lowered.Topo;
             if (Mb < 0 || Mb >= T.Microbatches)
               throw py::value_error(
                   fmt::format("microbatch {} is out of range 0..{}", Mb,
                               T.Microbatches - 1));
             return std::make_pair(T.firstStage(int32_t(Mb)),
                                   T.lastStage(int32_t(Mb)));
           })
      .def_property_readonly(
          "memory_limit", [](const Unit &U) { return U.Lowered.MemoryLimit; })
      .def_property_readonly(
          "num_actions", [](const Unit &U) { return U.Lowered.numActions(); })
      // The memory analysis' peak per rank in the memory model's units, and
      // in live activations (what the generated executors and pps.torch
      // compare their measured peaks with).
      .def_property_readonly("peak_memory_per_rank",
                             [](const Unit &U) {
                               py::list L;
                               for (const analysis::RankMemory &RM :
                                    analysis::analyzeMemory(U.Lowered).Ranks)
                                 L.append(memoryAmount(RM.Peak));
                               return L;
                             })
      .def_property_readonly(
          "peak_activations_per_rank",
          [](const Unit &U) {
            analysis::MemoryOptions Chunks;
            Chunks.Model = analysis::MemoryModel::chunks();
            return analysis::analyzeMemory(U.Lowered, Chunks).wholePeaks();
          })
      .def_property_readonly(
          "memory_model",
          [](const Unit &U) { return memoryModelOf(U.Lowered.Memory); })
      .def("runtime_table",
           [](const Unit &U, int64_t Rank) {
             return runtimeTable(U.Lowered, Rank);
           })
      .def("fifo_mismatch",
           [](const Unit &U) { return fifoMismatch(U.Lowered); })
      .def("costs",
           [](const Unit &U, int64_t Stage) {
             if (Stage < 0 || Stage >= U.Lowered.Topo.Stages)
               throw py::value_error(
                   fmt::format("stage {} is out of range 0..{}", Stage,
                               U.Lowered.Topo.Stages - 1));
             return costsOf(U.Lowered, int32_t(Stage));
           })
      .def_property_readonly("latency",
                             [](const Unit &U) {
                               return U.Lowered.Cost.messageTime(
                                   ir::ActionKind::SendF);
                             })
      .def_property_readonly(
          "warnings", [](const Unit &U) { return reportToPython(U.Warnings); })
      .def_property_readonly("synth_algorithm",
                             [](const Unit &U) { return U.SynthAlgorithm; })
      .def("actions",
           [](const Unit &U, int64_t Rank) {
             return actionsOf(*U.SM, U.Lowered, Rank);
           })
      // Emitting is pure C++ (no Python object is touched): other threads
      // run meanwhile.
      .def(
          "to_pps",
          [](const Unit &U) {
            return render([&](llvm::raw_ostream &OS) {
              backends::printPps(U.Lowered, OS);
            });
          },
          py::call_guard<py::gil_scoped_release>())
      // The executable exports: proved as lint does first unless verify is
      // false (then they say they are unverified).
      .def(
          "to_json",
          [](const Unit &U, bool Verify) {
            backends::ExportStatus St =
                exportStatus(U, Verify, "to_json(verify=False)");
            return render([&](llvm::raw_ostream &OS) {
              backends::emitJson(U.Lowered, OS, St);
            });
          },
          py::arg("verify") = true, py::call_guard<py::gil_scoped_release>())
      .def("to_torch_csv", &torchCsv, py::arg("with_comms"),
           py::arg("verify") = true, py::call_guard<py::gil_scoped_release>())
      // The proof alone: None if it passed, else lint's report; lowered:
      // of the comms as placed (what pps.torch runs).
      .def(
          "prove",
          [](const Unit &U, const CommArgs &Comm, bool Lowered) -> py::object {
            std::optional<ReportData> R;
            {
              py::gil_scoped_release NoGil;
              R = prove(U, Comm, /*ComputesOnly=*/false, Lowered);
            }
            if (!R)
              return py::none();
            return reportToPython(*R);
          },
          py::arg("comm"), py::arg("lowered") = false)
      // Routes, data and loss ranks, weight-sharing groups: derived once by
      // the compiler (analysis/Routes.h) for every runtime.
      .def_property_readonly("layout",
                             [](const Unit &U) { return layoutOf(U.Lowered); })
      .def(
          "lint",
          [](const Unit &U, const CommArgs &Comm) {
            ReportData R;
            {
              py::gil_scoped_release NoGil;
              R = lintUnit(U, Comm);
            }
            return reportToPython(R);
          },
          py::arg("comm"))
      // lint --fix: (new unit, makespan before, after, the note's text), or
      // None for the figures when the schedule has no comms to reorder.
      .def(
          "reorder_comms",
          [](const Unit &U, const CommArgs &Comm) {
            Reordering R;
            {
              py::gil_scoped_release NoGil;
              R = reorderComms(U, Comm);
            }
            return py::make_tuple(R.Result, R.Before, R.After, R.Text);
          },
          py::arg("comm"))
      .def(
          "simulate",
          [](const Unit &U, std::map<std::string, double> Costs,
             std::map<int64_t, std::map<std::string, double>> StageCosts,
             std::optional<std::string> CostsFile,
             std::optional<double> Latency, const CommArgs &Comm,
             std::optional<bool> Blocking, std::string Timing) {
            SimArgs A;
            A.Costs.All = std::move(Costs);
            A.Costs.PerStage = std::move(StageCosts);
            A.Costs.File = std::move(CostsFile);
            A.Latency = Latency;
            A.Comm = Comm;
            A.Blocking = Blocking;
            A.Timing = std::move(Timing);
            return simulate(U, A);
          },
          py::arg("costs"), py::arg("stage_costs"), py::arg("costs_file"),
          py::arg("latency"), py::arg("comm"), py::arg("blocking"),
          py::arg("timing"));

  bindSimulation(m);

  m.def(
      "compile",
      [](const std::string &Source, bool IsText, const std::string &Name,
         const std::vector<std::string> &ImportPaths,
         const std::string &StdlibDir, const std::string &Pipeline,
         const std::map<std::string, int64_t> &Overrides,
         std::optional<uint64_t> StepBudget, const CommArgs &Comm) {
        SourceArgs A = sourceArgs(Source, IsText, Name, ImportPaths, StdlibDir,
                                  Pipeline, Overrides, StepBudget);
        py::gil_scoped_release NoGil;
        return compileSource(A, Comm);
      },
      py::arg("source"), py::arg("is_text"), py::arg("name"),
      py::arg("import_paths"), py::arg("stdlib_dir"), py::arg("pipeline"),
      py::arg("overrides"), py::arg("step_budget"), py::arg("comm"));

  m.def(
      "lint",
      [](const std::string &Source, bool IsText, const std::string &Name,
         const std::vector<std::string> &ImportPaths,
         const std::string &StdlibDir, const std::string &Pipeline,
         const std::map<std::string, int64_t> &Overrides,
         std::optional<uint64_t> StepBudget, const CommArgs &Comm) {
        SourceArgs A = sourceArgs(Source, IsText, Name, ImportPaths, StdlibDir,
                                  Pipeline, Overrides, StepBudget);
        ReportData R;
        {
          py::gil_scoped_release NoGil;
          R = lintSource(A, Comm);
        }
        return reportToPython(R);
      },
      py::arg("source"), py::arg("is_text"), py::arg("name"),
      py::arg("import_paths"), py::arg("stdlib_dir"), py::arg("pipeline"),
      py::arg("overrides"), py::arg("step_budget"), py::arg("comm"));

  m.def(
      "import_torch_csv",
      [](const std::string &Source, bool IsText, const std::string &Name,
         const std::string &Pipeline, std::optional<int32_t> Ranks,
         std::optional<int32_t> Stages, std::optional<int32_t> Microbatches,
         const std::optional<std::string> &Placement, bool KeepIdle,
         const CommArgs &Comm) {
        CsvArgs A = csvArgs(Source, IsText, Name, Pipeline, Ranks, Stages,
                            Microbatches, Placement, KeepIdle);
        py::gil_scoped_release NoGil;
        auto SM = std::make_shared<SourceManager>();
        DiagnosticEngine Diags(*SM);
        std::optional<ir::Schedule> S = runImporter(A, *SM, Diags);
        return finish(SM, Diags, std::move(S), Comm);
      },
      py::arg("source"), py::arg("is_text"), py::arg("name"),
      py::arg("pipeline"), py::arg("ranks"), py::arg("stages"),
      py::arg("microbatches"), py::arg("placement"), py::arg("keep_idle"),
      py::arg("comm"));

  m.def(
      "lint_torch_csv",
      [](const std::string &Source, bool IsText, const std::string &Name,
         const std::string &Pipeline, std::optional<int32_t> Ranks,
         std::optional<int32_t> Stages, std::optional<int32_t> Microbatches,
         const std::optional<std::string> &Placement, bool KeepIdle,
         const CommArgs &Comm) {
        CsvArgs A = csvArgs(Source, IsText, Name, Pipeline, Ranks, Stages,
                            Microbatches, Placement, KeepIdle);
        ReportData R;
        {
          py::gil_scoped_release NoGil;
          SourceManager SM;
          DiagnosticEngine Diags(SM);
          std::optional<ir::Schedule> S = runImporter(A, SM, Diags);
          R = lintLoaded(Diags, std::move(S), Comm);
        }
        return reportToPython(R);
      },
      py::arg("source"), py::arg("is_text"), py::arg("name"),
      py::arg("pipeline"), py::arg("ranks"), py::arg("stages"),
      py::arg("microbatches"), py::arg("placement"), py::arg("keep_idle"),
      py::arg("comm"));

  m.def(
      "synth",
      [](int64_t Ranks, int64_t Microbatches, int64_t MemoryLimit,
         std::string Placement, std::optional<int64_t> Stages,
         std::map<std::string, double> Costs,
         std::map<int64_t, std::map<std::string, double>> StageCosts,
         double Latency, bool Exact, std::string StdlibDir,
         std::map<std::string, double> MemoryModel) {
        SynthArgs A;
        A.Ranks = Ranks;
        A.Microbatches = Microbatches;
        A.MemoryLimit = MemoryLimit;
        A.Placement = std::move(Placement);
        A.Stages = Stages;
        A.Costs = std::move(Costs);
        A.StageCosts = std::move(StageCosts);
        A.Latency = Latency;
        A.Exact = Exact;
        A.StdlibDir = std::move(StdlibDir);
        A.MemoryModel = std::move(MemoryModel);
        return synthesize(A);
      },
      py::arg("ranks"), py::arg("microbatches"), py::arg("memory_limit"),
      py::arg("placement"), py::arg("stages"), py::arg("costs"),
      py::arg("stage_costs"), py::arg("latency"), py::arg("exact"),
      py::arg("stdlib_dir"),
      py::arg("memory_model") = std::map<std::string, double>());

  py::class_<Builder>(m, "Builder", "ir::ScheduleBuilder with checks")
      .def(py::init<int64_t, int64_t, int64_t, py::object, std::string>(),
           py::arg("ranks"), py::arg("stages"), py::arg("microbatches"),
           py::arg("placement"), py::arg("name"))
      .def("add", &Builder::add, py::arg("rank"), py::arg("kind"),
           py::arg("microbatch"), py::arg("stage"), py::arg("peer"))
      .def("add_overlap", &Builder::addOverlap)
      .def("add_idle", &Builder::addIdle)
      .def("set_costs",
           [](Builder &B, std::map<std::string, double> All,
              std::map<int64_t, std::map<std::string, double>> PerStage) {
             CostArgs A;
             A.All = std::move(All);
             A.PerStage = std::move(PerStage);
             B.setCosts(A);
           })
      .def("set_comm", &Builder::setComm)
      .def("set_latency", &Builder::setLatency)
      .def("set_memory_limit", &Builder::setMemoryLimit)
      .def_property_readonly("num_actions", &Builder::numActions)
      .def("to_pps", &Builder::text)
      .def("build",
           [](Builder &B, const std::string &Name) {
             SourceArgs A = B.sourceArgs(Name);
             py::gil_scoped_release NoGil;
             return compileSource(A, CommArgs());
           })
      .def("lint",
           [](Builder &B, const std::string &Name, const CommArgs &Comm) {
             SourceArgs A = B.sourceArgs(Name);
             ReportData R;
             {
               py::gil_scoped_release NoGil;
               R = lintSource(A, Comm);
             }
             return reportToPython(R);
           });
}
