//===- module.cpp - pps._pps: the compiler as a Python extension ----------===//
//
// pybind11 bindings over the compiler's public headers: the front end, the
// pass pipeline, the simulator, synthesis, the backends and the C++
// builder. Nothing here decides anything about a schedule: every finding,
// figure and text form comes from the compiler, and diagnostics come out as
// data (kind, severity, location, message, notes) plus the text ppsc
// prints. The pure-Python layer (python/pps/*.py) gives the API its shape;
// this file converts arguments, refuses bad ones with ValueError before the
// compiler could assert on them, and releases the GIL around compiler work.
//
// Compiler failures are thrown as CompileFailure and translated into
// pps.CompileError (defined in pps/_types.py) while the GIL is held again.
//
//===----------------------------------------------------------------------===//
#include "pps/analysis/Matching.h"
#include "pps/analysis/Memory.h"
#include "pps/backends/JsonEmitter.h"
#include "pps/backends/PpsPrinter.h"
#include "pps/backends/TorchCsv.h"
#include "pps/backends/Trace.h"
#include "pps/frontend/Frontend.h"
#include "pps/import/TorchCsv.h"
#include "pps/ir/Builder.h"
#include "pps/ir/Schedule.h"
#include "pps/passes/PassManager.h"
#include "pps/pipeline/PassPipeline.h"
#include "pps/sim/Simulator.h"
#include "pps/support/Diagnostics.h"
#include "pps/synth/Algorithms.h"
#include "pps/synth/SynthPass.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace py = pybind11;
using namespace pps;

// The largest sizes the builder accepts: the language's own limits
// (docs/language.md), checked before anything is allocated.
constexpr int64_t MaxRanks = 1 << 16;
constexpr int64_t MaxStages = 1 << 20;
constexpr int64_t MaxMicrobatches = 1 << 24;

//===----------------------------------------------------------------------===//
// Diagnostics as data
//===----------------------------------------------------------------------===//

/// (message, file, line, column); file "" and 0s when there is no location.
using NoteData = std::tuple<std::string, std::string, uint32_t, uint32_t>;

namespace {
/// One diagnostic: kind, severity, message, file, line, column, notes, and
/// the text ppsc prints for it (source line and caret included).
struct FindingData {
  std::string Kind, Severity, Message, File;
  uint32_t Line = 0, Col = 0;
  std::vector<NoteData> Notes;
  std::string Text;
};

/// Everything an engine reported, in the order ppsc prints it.
struct ReportData {
  std::vector<FindingData> Findings;
  /// The whole report exactly as ppsc prints it.
  std::string Text;
  unsigned Errors = 0, Warnings = 0;
};

/// Thrown by the bindings when the compiler reports errors.
struct CompileFailure {
  ReportData Report;
};
} // namespace

static const char *severityName(Severity S) {
  switch (S) {
  case Severity::Note:
    return "note";
  case Severity::Warning:
    return "warning";
  case Severity::Error:
    return "error";
  }
  return "error";
}

static std::tuple<std::string, uint32_t, uint32_t>
where(const SourceManager &SM, LocId Loc) {
  if (!SM.isValid(Loc))
    return {"", 0, 0};
  SourcePos P = SM.resolve(Loc);
  return {SM.fileName(P.File).str(), P.Line, P.Col};
}

/// The text ppsc prints for one diagnostic: the engine prints it.
static std::string diagnosticText(const SourceManager &SM,
                                  const Diagnostic &D) {
  DiagnosticEngine One(SM);
  Diagnostic &Copy = One.report(D.Kind, D.Sev, D.Loc, D.Message);
  for (const DiagNote &N : D.Notes)
    Copy.note(N.Loc, N.Message);
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  One.print(OS, DiagFormat::Text);
  OS.flush();
  return Out;
}

/// Collects (and clears) what Diags holds: the data in the engine's print
/// order (by file, line, column, then report order) and the text the
/// engine itself prints.
static ReportData collect(DiagnosticEngine &Diags) {
  const SourceManager &SM = Diags.sourceManager();
  ReportData R;
  R.Errors = Diags.numErrors();
  R.Warnings = Diags.numWarnings();
  std::vector<const Diagnostic *> Sorted;
  for (const Diagnostic &D : Diags.diagnostics())
    Sorted.push_back(&D);
  auto Key = [&](const Diagnostic *D) {
    SourcePos P = SM.resolve(SM.isValid(D->Loc) ? D->Loc : 0);
    return std::make_tuple(P.File, P.Line, P.Col, D->Order);
  };
  std::stable_sort(Sorted.begin(), Sorted.end(),
                   [&](const Diagnostic *A, const Diagnostic *B) {
                     return Key(A) < Key(B);
                   });
  for (const Diagnostic *D : Sorted) {
    FindingData F;
    F.Kind = diagKindName(D->Kind).str();
    F.Severity = severityName(D->Sev);
    F.Message = D->Message;
    std::tie(F.File, F.Line, F.Col) = where(SM, D->Loc);
    for (const DiagNote &N : D->Notes) {
      auto [File, Line, Col] = where(SM, N.Loc);
      F.Notes.emplace_back(N.Message, File, Line, Col);
    }
    F.Text = diagnosticText(SM, *D);
    R.Findings.push_back(std::move(F));
  }
  llvm::raw_string_ostream OS(R.Text);
  Diags.print(OS, DiagFormat::Text);
  OS.flush();
  return R;
}

[[noreturn]] static void fail(DiagnosticEngine &Diags) {
  throw CompileFailure{collect(Diags)};
}

static py::tuple findingToPython(const FindingData &F) {
  py::list Notes;
  for (const NoteData &N : F.Notes)
    Notes.append(py::make_tuple(std::get<0>(N), std::get<1>(N), std::get<2>(N),
                                std::get<3>(N)));
  return py::make_tuple(F.Kind, F.Severity, F.Message, F.File, F.Line, F.Col,
                        Notes, F.Text);
}

/// (text, [finding tuples], errors, warnings): pps._types builds Findings.
static py::tuple reportToPython(const ReportData &R) {
  py::list L;
  for (const FindingData &F : R.Findings)
    L.append(findingToPython(F));
  return py::make_tuple(R.Text, L, R.Errors, R.Warnings);
}

//===----------------------------------------------------------------------===//
// Argument parsing (ValueError with the reason, never an assert)
//===----------------------------------------------------------------------===//

static std::optional<ir::CommModel>
commModel(const std::optional<std::string> &Name) {
  if (!Name)
    return std::nullopt;
  for (ir::CommModel M : {ir::CommModel::Rendezvous, ir::CommModel::Eager,
                          ir::CommModel::Batched})
    if (*Name == ir::commModelName(M))
      return M;
  throw py::value_error(fmt::format(
      "comm_model must be 'rendezvous', 'eager' or 'batched', got '{}'",
      *Name));
}

static ir::Placement placementNamed(const std::string &Name) {
  if (Name == "loop")
    return ir::Placement::Loop;
  if (Name == "v")
    return ir::Placement::V;
  throw py::value_error(fmt::format(
      "placement must be 'loop', 'v' or a list of ranks, got '{}'", Name));
}

/// Kinds as the Python API spells them: PyTorch's names, "IDLE" for idle.
static std::string kindName(ir::ActionKind K) {
  if (K == ir::ActionKind::Idle)
    return "IDLE";
  return ir::actionKindTorchName(K).str();
}

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

//===----------------------------------------------------------------------===//
// Compilation units
//===----------------------------------------------------------------------===//

namespace {
/// A compiled schedule: its sources, the IR as the front end (and synthesis)
/// produced it, and the IR after the lowering passes.
struct Unit {
  std::shared_ptr<SourceManager> SM;
  /// Input to the pass pipeline: what lint and simulate start from, as
  /// ppsc does.
  ir::Schedule Source;
  /// Comms inserted, dependencies verified (pipeline Goal::Lower).
  ir::Schedule Lowered;
  /// Warnings the compilation reported (it had no errors).
  ReportData Warnings;
  /// The synthesis algorithm that made the schedule, if one did.
  std::optional<std::string> SynthAlgorithm;
};
using UnitPtr = std::shared_ptr<Unit>;
} // namespace

/// Runs the compiler's pass pipeline up to Goal on S. True if no error.
static bool runPasses(ir::Schedule &S, DiagnosticEngine &Diags,
                      pipeline::Goal Goal,
                      passes::AnalysisResults *Results = nullptr) {
  passes::PassManager PM;
  pipeline::PipelineConfig Config;
  Config.Until = Goal;
  pipeline::addPasses(PM, S, Config);
  passes::PassContext Ctx{Diags, {}};
  bool Ok = PM.run(S, Ctx);
  if (Results)
    *Results = std::move(Ctx.Results);
  return Ok && !Diags.hasErrors();
}

/// What the front end or an importer produced, made into a Unit: the comm
/// model applied, a synth request filled in, then lowered. Throws
/// CompileFailure on any error.
static UnitPtr finish(std::shared_ptr<SourceManager> SM,
                      DiagnosticEngine &Diags, std::optional<ir::Schedule> S,
                      std::optional<ir::CommModel> Comm) {
  if (!S || Diags.hasErrors())
    fail(Diags);
  if (Comm)
    S->Comm = *Comm;
  // Synthesis once, here, so lint and simulate do not repeat it.
  auto U = std::make_shared<Unit>();
  if (S->Synth) {
    synth::Result R;
    if (!synth::runSynthRequest(*S, Diags, &R))
      fail(Diags);
    U->SynthAlgorithm = R.Algorithm;
  }
  U->SM = std::move(SM);
  U->Source = *S;
  U->Lowered = std::move(*S);
  if (!runPasses(U->Lowered, Diags, pipeline::Goal::Lower))
    fail(Diags);
  U->Warnings = collect(Diags);
  return U;
}

namespace {
struct SourceArgs {
  std::string Source; // a path, or the text itself
  bool IsText = false;
  std::string Name; // display name of a text
  std::vector<std::string> ImportPaths;
  std::string StdlibDir;
  std::string Pipeline;
  std::map<std::string, int64_t> Overrides;
  std::optional<uint64_t> StepBudget;
};
} // namespace

static frontend::FrontendOptions frontendOptions(const SourceArgs &A) {
  frontend::FrontendOptions FO;
  // The stdlib comes after the -I directories (as for ppsc); empty means
  // the front end's own search path ($PPS_STDLIB_PATH, ...).
  FO.ImportPaths = A.ImportPaths;
  FO.StdlibDir = A.StdlibDir;
  FO.PipelineName = A.Pipeline;
  FO.Overrides = A.Overrides;
  if (A.StepBudget)
    FO.StepBudget = *A.StepBudget;
  return FO;
}

/// The front end on a file or a text, as ppsc's Session::load does for .pps.
static std::optional<ir::Schedule>
runFrontend(const SourceArgs &A, SourceManager &SM, DiagnosticEngine &Diags) {
  frontend::FrontendOptions FO = frontendOptions(A);
  if (A.IsText)
    return frontend::compileBuffer(A.Name, A.Source, SM, Diags, FO);
  return frontend::compileFile(A.Source, SM, Diags, FO);
}

static UnitPtr compileSource(const SourceArgs &A,
                             std::optional<ir::CommModel> Comm) {
  auto SM = std::make_shared<SourceManager>();
  DiagnosticEngine Diags(*SM);
  std::optional<ir::Schedule> S = runFrontend(A, *SM, Diags);
  return finish(SM, Diags, std::move(S), Comm);
}

/// ppsc lint on what the front end or an importer produced: every finding,
/// theirs included.
static ReportData lintLoaded(DiagnosticEngine &Diags,
                             std::optional<ir::Schedule> S,
                             std::optional<ir::CommModel> Comm) {
  if (S) {
    if (Comm)
      S->Comm = *Comm;
    runPasses(*S, Diags, pipeline::Goal::Check);
  }
  return collect(Diags);
}

static ReportData lintSource(const SourceArgs &A,
                             std::optional<ir::CommModel> Comm) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  std::optional<ir::Schedule> S = runFrontend(A, SM, Diags);
  return lintLoaded(Diags, std::move(S), Comm);
}

namespace {
struct CsvArgs {
  std::string Source;
  bool IsText = false;
  std::string Name; // display name of a text
  import::TorchImportOptions Options;
};
} // namespace

static CsvArgs
csvArgs(const std::string &Source, bool IsText, const std::string &Name,
        const std::string &Pipeline, std::optional<int32_t> Ranks,
        std::optional<int32_t> Stages, std::optional<int32_t> Microbatches,
        const std::optional<std::string> &Placement, bool KeepIdle) {
  CsvArgs A;
  A.Source = Source;
  A.IsText = IsText;
  A.Name = Name;
  A.Options.Ranks = Ranks;
  A.Options.Stages = Stages;
  A.Options.Microbatches = Microbatches;
  if (Placement)
    A.Options.Place = placementNamed(*Placement);
  A.Options.Name = Pipeline;
  A.Options.KeepIdle = KeepIdle;
  return A;
}

/// The torch importer on a file or a text, as ppsc's Session::load does for
/// .csv.
static std::optional<ir::Schedule>
runImporter(const CsvArgs &A, SourceManager &SM, DiagnosticEngine &Diags) {
  if (A.IsText)
    return import::importTorchCsv(SM.addBuffer(A.Name, A.Source), SM, Diags,
                                  A.Options);
  return import::importTorchCsvFile(A.Source, SM, Diags, A.Options);
}

namespace {
/// Cost overrides in the shape of the language's `cost { }` block: kinds
/// for every stage first, then per-stage entries; giving I and W but not B
/// makes B = I + W, as the block does.
struct CostArgs {
  std::map<std::string, double> All;
  std::map<int64_t, std::map<std::string, double>> PerStage;
};
} // namespace

static double &costSlot(ir::StageCost &C, const std::string &Key) {
  if (Key == "F")
    return C.F;
  if (Key == "I")
    return C.I;
  if (Key == "W")
    return C.W;
  return C.B;
}

static void checkCostEntry(const std::string &Key, double V,
                           bool AllowOverlap) {
  bool Known = Key == "F" || Key == "I" || Key == "W" || Key == "B" ||
               (AllowOverlap && Key == "overlap");
  if (!Known)
    throw py::value_error(
        fmt::format("unknown cost '{}' (expected F, I, W, B{})", Key,
                    AllowOverlap ? " or overlap" : ""));
  if (!std::isfinite(V) || V < 0)
    throw py::value_error(
        fmt::format("cost {} must be a finite number >= 0, got {}", Key, V));
}

static void applyCosts(ir::Schedule &S, const CostArgs &A) {
  ir::CostModel &C = S.Cost;
  for (auto &[Key, V] : A.All)
    checkCostEntry(Key, V, /*AllowOverlap=*/true);
  for (auto &[Stage, Entries] : A.PerStage) {
    if (Stage < 0 || Stage >= S.Topo.Stages)
      throw py::value_error(fmt::format("cost for stage {}: the stages are "
                                        "0..{}",
                                        Stage, S.Topo.Stages - 1));
    for (auto &[Key, V] : Entries)
      checkCostEntry(Key, V, /*AllowOverlap=*/false);
  }
  auto Apply = [](ir::StageCost &SC,
                  const std::map<std::string, double> &Entries) {
    for (auto &[Key, V] : Entries)
      if (Key != "overlap")
        costSlot(SC, Key) = V;
    if (Entries.count("I") && Entries.count("W") && !Entries.count("B"))
      SC.B = SC.I + SC.W;
  };
  if (auto It = A.All.find("overlap"); It != A.All.end())
    C.Overlap = It->second;
  Apply(C.Default, A.All);
  for (ir::StageCost &SC : C.PerStage)
    Apply(SC, A.All);
  if (!A.PerStage.empty() && C.PerStage.empty())
    C.PerStage.assign(S.Topo.Stages, C.Default);
  for (auto &[Stage, Entries] : A.PerStage)
    Apply(C.PerStage[Stage], Entries);
}

//===----------------------------------------------------------------------===//
// Simulation
//===----------------------------------------------------------------------===//

namespace {
/// A simulated schedule: the checked IR and the simulator's result (the
/// trace backends need both).
struct SimState {
  std::shared_ptr<SourceManager> SM;
  ir::Schedule S;
  sim::SimResult R;
  ReportData Warnings;
};
using SimPtr = std::shared_ptr<SimState>;

struct SimArgs {
  CostArgs Costs;
  std::optional<double> Latency;
  std::optional<std::string> CommModel;
  std::optional<bool> Blocking;
  std::string Timing = "auto";
};
} // namespace

/// ppsc sim: the pass pipeline to its Check goal, then the simulator.
static SimPtr simulate(const Unit &U, const SimArgs &A) {
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
  auto St = std::make_shared<SimState>();
  St->SM = U.SM;
  St->S = U.Source;
  applyCosts(St->S, A.Costs);
  if (SO.CommModel)
    St->S.Comm = *SO.CommModel; // the checks run under the same model
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

static std::string render(const std::function<void(llvm::raw_ostream &)> &Fn) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  Fn(OS);
  OS.flush();
  return Out;
}

static py::list rankStats(const sim::SimResult &R) {
  py::list L;
  for (size_t I = 0; I < R.Ranks.size(); ++I) {
    const sim::RankStats &X = R.Ranks[I];
    L.append(py::make_tuple(I, X.ComputeBusy, X.Idle, X.CommBusy, X.CommWait,
                            X.End, X.PeakMemory, X.PeakMemoryAt, X.Computes,
                            X.Sends, X.Recvs));
  }
  return L;
}

//===----------------------------------------------------------------------===//
// Actions
//===----------------------------------------------------------------------===//

namespace {
/// The Python types results are made of, registered by pps/_types.py when
/// it is imported (_register_types) and kept for the life of the process.
struct PythonTypes {
  py::handle Action, TimedAction, CompileError;
};
} // namespace

static PythonTypes Types;

static py::handle registered(py::handle T, const char *Name) {
  if (!T)
    throw std::runtime_error(fmt::format(
        "pps._pps is used without the pps package (pps.{} is not registered)",
        Name));
  return T;
}

/// An instance of a named tuple type from its fields, built in C (as
/// tuple.__new__(Type, Fields) does): a schedule can hold millions of
/// actions. The fields are numbers, strings, None or such tuples, so the
/// result cannot be part of a reference cycle: it is untracked by the cycle
/// collector (as CPython untracks such tuples itself, but only once a
/// collection has scanned them), which keeps a million-action list from
/// costing repeated collections while it is built.
static py::object namedTuple(py::handle Type, const py::tuple &Fields) {
  py::tuple Args = py::make_tuple(Fields);
  PyObject *Obj = PyTuple_Type.tp_new(
      reinterpret_cast<PyTypeObject *>(Type.ptr()), Args.ptr(), nullptr);
  if (!Obj)
    throw py::error_already_set();
  PyObject_GC_UnTrack(Obj); // a no-op if it is not tracked
  return py::reinterpret_steal<py::object>(Obj);
}

namespace {
/// Converts actions into pps.Action tuples: kind, microbatch, stage, peer,
/// overlap_next, idle_time, text, file, line, column: what a runtime needs
/// to run the action and to name it in the lint's words. File names are
/// shared between the actions of one file.
class ActionConverter {
public:
  explicit ActionConverter(const SourceManager &SM)
      : SM(SM), ActionType(registered(Types.Action, "Action")) {}

  py::object operator()(const ir::Action &A) {
    bool Idle = A.Kind == ir::ActionKind::Idle;
    py::object File = py::none(), Line = py::none(), Col = py::none();
    if (SM.isValid(A.Loc)) {
      SourcePos P = SM.resolve(A.Loc);
      auto It = Files.find(P.File);
      if (It == Files.end())
        It = Files.emplace(P.File, py::str(SM.fileName(P.File).str())).first;
      File = It->second;
      Line = py::int_(P.Line);
      Col = py::int_(P.Col);
    }
    return namedTuple(ActionType,
                      py::make_tuple(Kinds[unsigned(A.Kind)], A.Microbatch,
                                     A.Stage, ir::isComm(A.Kind) ? A.Peer : -1,
                                     A.overlapsNext(),
                                     Idle ? double(A.idleTime()) : 0.0,
                                     ir::actionText(A), File, Line, Col));
  }

private:
  const SourceManager &SM;
  py::handle ActionType;
  std::map<FileId, py::str> Files;
  std::vector<py::str> Kinds = [] {
    std::vector<py::str> K;
    for (unsigned I = 0; I < ir::NumActionKinds; ++I)
      K.emplace_back(kindName(ir::ActionKind(I)));
    return K;
  }();
};
} // namespace

static void checkRank(const ir::Schedule &S, int64_t Rank) {
  if (Rank < 0 || Rank >= S.Topo.Ranks)
    throw py::value_error(
        fmt::format("rank {} is out of range 0..{}", Rank, S.Topo.Ranks - 1));
}

static py::list actionsOf(const SourceManager &SM, const ir::Schedule &S,
                          int64_t Rank) {
  checkRank(S, Rank);
  ActionConverter Convert(SM);
  const std::vector<ir::Action> &Acts = S.Ranks[Rank].Actions;
  py::list L(Acts.size());
  for (size_t I = 0; I < Acts.size(); ++I)
    L[I] = Convert(Acts[I]);
  return L;
}

//===----------------------------------------------------------------------===//
// What a runtime needs (pps.torch), by the action schema
//===----------------------------------------------------------------------===//

/// One rank's program as the schema sees it, for a runtime to walk: per
/// action (kind number, microbatch, stage, peer, overlap_next, memory
/// effect, producer stage, consumer stage, partner stage, text, partner's
/// text). The memory effect is schema::memoryEffect (W(m, s) on this rank
/// decides whether I(m, s) releases); the producer and consumer stages are
/// the schema's cross-stage producer of a compute's input and consumer of
/// its output (-1 if none: the route's first or last stage, W); the
/// partner of a comm is the matching comm on its peer.
static py::list runtimeTable(const ir::Schedule &S, int64_t Rank) {
  checkRank(S, Rank);
  const std::vector<ir::Action> &Acts = S.Ranks[size_t(Rank)].Actions;
  schema::Route R = S.Topo.route();
  auto Key = [](int32_t Mb, int32_t Stage) {
    return (uint64_t(uint32_t(Mb)) << 32) | uint32_t(Stage);
  };
  llvm::DenseSet<uint64_t> HasW;
  for (const ir::Action &A : Acts)
    if (A.Kind == ir::ActionKind::W)
      HasW.insert(Key(A.Microbatch, A.Stage));
  py::list L(Acts.size());
  for (size_t I = 0; I < Acts.size(); ++I) {
    const ir::Action &A = Acts[I];
    schema::Kind K = A.Kind;
    bool Comm = schema::isComm(K);
    int32_t Producer = -1, Consumer = -1, PartnerStage = -1;
    std::string Partner;
    if (schema::isCompute(K)) {
      schema::Producer P = schema::producerOf(K, A.Microbatch, A.Stage, R);
      Producer = P.CrossStage ? P.Stage : -1;
      Consumer = schema::consumerStage(K, A.Microbatch, A.Stage, R);
    } else if (Comm) {
      schema::Action M = schema::matchingComm(
          schema::Action{K, A.Flags, A.Peer, A.Microbatch, A.Stage},
          int32_t(Rank));
      PartnerStage = M.stage;
      Partner = schema::actionText(M.kind, M.mb, M.stage, M.peer);
    }
    auto Effect =
        schema::memoryEffect(K, HasW.contains(Key(A.Microbatch, A.Stage)));
    L[I] =
        py::make_tuple(unsigned(K), A.Microbatch, A.Stage, Comm ? A.Peer : -1,
                       A.overlapsNext(), unsigned(Effect), Producer, Consumer,
                       PartnerStage, ir::actionText(A), Partner);
  }
  return L;
}

/// The first FIFO mismatch of S in the runtimes' words (the analysis
/// layer's matching, the schema's wording, as ppsrt::checkMatch words it),
/// or nothing.
static std::optional<std::string> fifoMismatch(const ir::Schedule &S) {
  analysis::Matching M = analysis::matchComms(S);
  for (const analysis::ChannelMatch &C : M.Channels) {
    if (C.FirstBad == analysis::NoAction)
      continue;
    uint32_t Send = M.Partner[C.FirstBad];
    if (Send == analysis::NoAction)
      continue;
    auto Text = [&](uint32_t G) {
      const ir::Action &A =
          S.Ranks[size_t(M.Ids.rankOf(G))].Actions[M.Ids.indexOf(G)];
      return "`" + ir::actionText(A) + "`";
    };
    return fmt::format("{} ({}) [fifo-mismatch]",
                       schema::fifoMismatchMessage(C.BadOrdinal, C.Src, C.Dst,
                                                   Text(Send),
                                                   Text(C.FirstBad)),
                       schema::FifoRule);
  }
  return std::nullopt;
}

static py::dict costsOf(const ir::Schedule &S, int32_t Stage) {
  py::dict D;
  for (ir::ActionKind K : {ir::ActionKind::F, ir::ActionKind::I,
                           ir::ActionKind::W, ir::ActionKind::B})
    D[py::str(kindName(K))] = S.Cost.computeCost(K, Stage);
  return D;
}

static std::string torchCsv(const Unit &U, bool WithComms) {
  const ir::Schedule &S = U.Lowered;
  // PyTorch's schedules send every microbatch through stages 0..S-1 (the
  // same refusal as `ppsc emit --target=torch`).
  if (S.Topo.Directions != 1) {
    DiagnosticEngine Diags(*U.SM);
    Diags.report(
        DiagKind::InvalidValue, S.DeclLoc,
        fmt::format("the torch target cannot express `directions {}`: "
                    "PyTorch sends every microbatch through every stage",
                    S.Topo.Directions));
    fail(Diags);
  }
  return render([&](llvm::raw_ostream &OS) {
    backends::emitTorchCsv(S, OS, {WithComms});
  });
}

//===----------------------------------------------------------------------===//
// Synthesis
//===----------------------------------------------------------------------===//

namespace {
struct SynthArgs {
  int64_t Ranks = 0, Microbatches = 0, MemoryLimit = 0;
  std::string Placement = "loop";
  std::optional<int64_t> Stages;
  std::map<std::string, double> Costs;
  std::map<int64_t, std::map<std::string, double>> StageCosts;
  double Latency = 0;
  bool Exact = true;
};
} // namespace

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

static UnitPtr synthesize(const SynthArgs &A) {
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
  if (std::string Why = P.validate(); !Why.empty())
    throw py::value_error(Why);

  py::gil_scoped_release NoGil;
  synth::SynthOptions SO;
  SO.UseExact = A.Exact;
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
  UnitPtr U = finish(SM, Diags, synth::toSchedule(P, Res->Ord), std::nullopt);
  U->SynthAlgorithm = Res->Algorithm;
  return U;
}

//===----------------------------------------------------------------------===//
// The builder
//===----------------------------------------------------------------------===//

namespace {
/// ir::ScheduleBuilder behind checks that turn every mistake into a
/// ValueError. build() and lint() print the schedule in the lowered .pps
/// form and compile that text, so findings point at the action in it.
class Builder {
public:
  Builder(int64_t Ranks, int64_t Stages, int64_t Microbatches,
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

  void add(int64_t Rank, const std::string &Kind, std::optional<int64_t> Mb,
           std::optional<int64_t> Stage, std::optional<int64_t> Peer) {
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

  void addOverlap(int64_t Rank, const std::string &K1, int64_t Mb1,
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

  void addIdle(int64_t Rank, double Time) {
    checkRank(B.schedule(), Rank);
    if (!std::isfinite(Time) || Time < 0 || Time > 3.0e38)
      throw py::value_error(fmt::format(
          "an idle time must be a finite number >= 0, got {}", Time));
    B.rank(int32_t(Rank)).idle(float(Time));
  }

  void setCosts(const CostArgs &A) { applyCosts(B.schedule(), A); }
  void setCommModel(const std::string &M) {
    B.comm(*commModel(std::optional<std::string>(M)));
  }
  void setLatency(double L) {
    if (!(L >= 0) || !std::isfinite(L))
      throw py::value_error("latency must be a finite time >= 0");
    B.latency(L);
  }
  void setMemoryLimit(int64_t L) {
    if (L < 0)
      throw py::value_error(
          fmt::format("memory_limit must be >= 0, got {}", L));
    B.memoryLimit(L);
  }

  std::string text() {
    return render(
        [&](llvm::raw_ostream &OS) { backends::printPps(B.schedule(), OS); });
  }
  SourceArgs sourceArgs(const std::string &Name) {
    SourceArgs A;
    A.Source = text();
    A.IsText = true;
    A.Name = Name;
    return A;
  }
  size_t numActions() { return B.schedule().numActions(); }

private:
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

  int32_t checkMicrobatch(std::optional<int64_t> Mb, const std::string &Kind) {
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
  int32_t resolveStage(int32_t Rank, std::optional<int64_t> Stage,
                       const std::string &Kind) {
    const ir::Topology &T = B.schedule().Topo;
    if (Stage) {
      if (*Stage < 0 || *Stage >= T.Stages)
        throw py::value_error(fmt::format("stage {} is out of range 0..{}",
                                          *Stage, T.Stages - 1));
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

  ir::ScheduleBuilder B;
  std::map<int32_t, std::vector<int32_t>> StagesOf;
};
} // namespace

//===----------------------------------------------------------------------===//
// Argument bundles from Python keyword arguments
//===----------------------------------------------------------------------===//

static SourceArgs sourceArgs(const std::string &Source, bool IsText,
                             const std::string &Name,
                             const std::vector<std::string> &ImportPaths,
                             const std::string &StdlibDir,
                             const std::string &Pipeline,
                             const std::map<std::string, int64_t> &Overrides,
                             std::optional<uint64_t> StepBudget) {
  SourceArgs A;
  A.Source = Source;
  A.IsText = IsText;
  A.Name = Name;
  A.ImportPaths = ImportPaths;
  A.StdlibDir = StdlibDir;
  A.Pipeline = Pipeline;
  A.Overrides = Overrides;
  A.StepBudget = StepBudget;
  return A;
}

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
      .def_property_readonly(
          "comm_model",
          [](const Unit &U) { return ir::commModelName(U.Lowered.Comm).str(); })
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
      // The memory analysis' peak activations per rank (what the generated
      // executors and pps.torch compare their measured peaks with).
      .def_property_readonly(
          "peak_memory_per_rank",
          [](const Unit &U) {
            return analysis::analyzeMemory(U.Lowered).wholePeaks();
          })
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
      .def(
          "to_json",
          [](const Unit &U) {
            return render([&](llvm::raw_ostream &OS) {
              backends::emitJson(U.Lowered, OS);
            });
          },
          py::call_guard<py::gil_scoped_release>())
      .def("to_torch_csv", &torchCsv, py::call_guard<py::gil_scoped_release>())
      .def(
          "lint",
          [](const Unit &U, const std::optional<std::string> &Comm) {
            std::optional<ir::CommModel> M = commModel(Comm);
            ReportData R;
            {
              py::gil_scoped_release NoGil;
              ir::Schedule S = U.Source;
              if (M)
                S.Comm = *M;
              DiagnosticEngine Diags(*U.SM);
              runPasses(S, Diags, pipeline::Goal::Check);
              R = collect(Diags);
            }
            return reportToPython(R);
          },
          py::arg("comm_model") = py::none())
      .def(
          "simulate",
          [](const Unit &U, std::map<std::string, double> Costs,
             std::map<int64_t, std::map<std::string, double>> StageCosts,
             std::optional<double> Latency, std::optional<std::string> Comm,
             std::optional<bool> Blocking, std::string Timing) {
            SimArgs A;
            A.Costs.All = std::move(Costs);
            A.Costs.PerStage = std::move(StageCosts);
            A.Latency = Latency;
            A.CommModel = std::move(Comm);
            A.Blocking = Blocking;
            A.Timing = std::move(Timing);
            return simulate(U, A);
          },
          py::arg("costs"), py::arg("stage_costs"), py::arg("latency"),
          py::arg("comm_model"), py::arg("blocking"), py::arg("timing"));

  py::class_<SimState, SimPtr> Sim(m, "Simulation", "A simulated schedule");
  Sim.def_property_readonly("makespan",
                            [](const SimState &S) { return S.R.Makespan; })
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
      .def_property_readonly("peak_memory",
                             [](const SimState &S) { return S.R.PeakMemory; })
      .def_property_readonly("messages",
                             [](const SimState &S) { return S.R.Messages; })
      .def_property_readonly("bytes",
                             [](const SimState &S) { return S.R.Bytes; })
      .def_property_readonly(
          "comm_model",
          [](const SimState &S) { return ir::commModelName(S.R.Comm).str(); })
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

  m.def(
      "compile",
      [](const std::string &Source, bool IsText, const std::string &Name,
         const std::vector<std::string> &ImportPaths,
         const std::string &StdlibDir, const std::string &Pipeline,
         const std::map<std::string, int64_t> &Overrides,
         std::optional<uint64_t> StepBudget,
         const std::optional<std::string> &Comm) {
        SourceArgs A = sourceArgs(Source, IsText, Name, ImportPaths, StdlibDir,
                                  Pipeline, Overrides, StepBudget);
        std::optional<ir::CommModel> M = commModel(Comm);
        py::gil_scoped_release NoGil;
        return compileSource(A, M);
      },
      py::arg("source"), py::arg("is_text"), py::arg("name"),
      py::arg("import_paths"), py::arg("stdlib_dir"), py::arg("pipeline"),
      py::arg("overrides"), py::arg("step_budget"), py::arg("comm_model"));

  m.def(
      "lint",
      [](const std::string &Source, bool IsText, const std::string &Name,
         const std::vector<std::string> &ImportPaths,
         const std::string &StdlibDir, const std::string &Pipeline,
         const std::map<std::string, int64_t> &Overrides,
         std::optional<uint64_t> StepBudget,
         const std::optional<std::string> &Comm) {
        SourceArgs A = sourceArgs(Source, IsText, Name, ImportPaths, StdlibDir,
                                  Pipeline, Overrides, StepBudget);
        std::optional<ir::CommModel> M = commModel(Comm);
        ReportData R;
        {
          py::gil_scoped_release NoGil;
          R = lintSource(A, M);
        }
        return reportToPython(R);
      },
      py::arg("source"), py::arg("is_text"), py::arg("name"),
      py::arg("import_paths"), py::arg("stdlib_dir"), py::arg("pipeline"),
      py::arg("overrides"), py::arg("step_budget"), py::arg("comm_model"));

  m.def(
      "import_torch_csv",
      [](const std::string &Source, bool IsText, const std::string &Name,
         const std::string &Pipeline, std::optional<int32_t> Ranks,
         std::optional<int32_t> Stages, std::optional<int32_t> Microbatches,
         const std::optional<std::string> &Placement, bool KeepIdle,
         const std::optional<std::string> &Comm) {
        CsvArgs A = csvArgs(Source, IsText, Name, Pipeline, Ranks, Stages,
                            Microbatches, Placement, KeepIdle);
        std::optional<ir::CommModel> M = commModel(Comm);
        py::gil_scoped_release NoGil;
        auto SM = std::make_shared<SourceManager>();
        DiagnosticEngine Diags(*SM);
        std::optional<ir::Schedule> S = runImporter(A, *SM, Diags);
        return finish(SM, Diags, std::move(S), M);
      },
      py::arg("source"), py::arg("is_text"), py::arg("name"),
      py::arg("pipeline"), py::arg("ranks"), py::arg("stages"),
      py::arg("microbatches"), py::arg("placement"), py::arg("keep_idle"),
      py::arg("comm_model"));

  m.def(
      "lint_torch_csv",
      [](const std::string &Source, bool IsText, const std::string &Name,
         const std::string &Pipeline, std::optional<int32_t> Ranks,
         std::optional<int32_t> Stages, std::optional<int32_t> Microbatches,
         const std::optional<std::string> &Placement, bool KeepIdle,
         const std::optional<std::string> &Comm) {
        CsvArgs A = csvArgs(Source, IsText, Name, Pipeline, Ranks, Stages,
                            Microbatches, Placement, KeepIdle);
        std::optional<ir::CommModel> M = commModel(Comm);
        ReportData R;
        {
          py::gil_scoped_release NoGil;
          SourceManager SM;
          DiagnosticEngine Diags(SM);
          std::optional<ir::Schedule> S = runImporter(A, SM, Diags);
          R = lintLoaded(Diags, std::move(S), M);
        }
        return reportToPython(R);
      },
      py::arg("source"), py::arg("is_text"), py::arg("name"),
      py::arg("pipeline"), py::arg("ranks"), py::arg("stages"),
      py::arg("microbatches"), py::arg("placement"), py::arg("keep_idle"),
      py::arg("comm_model"));

  m.def(
      "synth",
      [](int64_t Ranks, int64_t Microbatches, int64_t MemoryLimit,
         std::string Placement, std::optional<int64_t> Stages,
         std::map<std::string, double> Costs,
         std::map<int64_t, std::map<std::string, double>> StageCosts,
         double Latency, bool Exact) {
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
        return synthesize(A);
      },
      py::arg("ranks"), py::arg("microbatches"), py::arg("memory_limit"),
      py::arg("placement"), py::arg("stages"), py::arg("costs"),
      py::arg("stage_costs"), py::arg("latency"), py::arg("exact"));

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
      .def("set_comm_model", &Builder::setCommModel)
      .def("set_latency", &Builder::setLatency)
      .def("set_memory_limit", &Builder::setMemoryLimit)
      .def_property_readonly("num_actions", &Builder::numActions)
      .def("to_pps", &Builder::text)
      .def("build",
           [](Builder &B, const std::string &Name) {
             SourceArgs A = B.sourceArgs(Name);
             py::gil_scoped_release NoGil;
             return compileSource(A, std::nullopt);
           })
      .def("lint", [](Builder &B, const std::string &Name,
                      const std::optional<std::string> &Comm) {
        SourceArgs A = B.sourceArgs(Name);
        std::optional<ir::CommModel> M = commModel(Comm);
        ReportData R;
        {
          py::gil_scoped_release NoGil;
          R = lintSource(A, M);
        }
        return reportToPython(R);
      });
}
