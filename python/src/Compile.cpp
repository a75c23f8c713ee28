//===- Compile.cpp - pps._pps: arguments, compiling and linting -----------===//
//
// Python's arguments parsed into the compiler's terms (a ValueError with
// the reason, never an assert), and the front end, the PyTorch CSV
// importer and the pass pipeline run as ppsc runs them: compiling into a
// Unit, linting into a report, cost overrides applied as the language's
// `cost { }` block applies them.
//
//===----------------------------------------------------------------------===//
#include "Module.h"

#include "pps/frontend/CostsFile.h"

#include "pps/frontend/Frontend.h"
#include "pps/synth/SynthPass.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <cmath>

namespace pps::python {

//===----------------------------------------------------------------------===//
// Argument parsing (ValueError with the reason, never an assert)
//===----------------------------------------------------------------------===//

CommArgs commArgs(const std::optional<std::string> &Model,
                  const std::optional<std::string> &Stream,
                  const std::optional<std::string> &Threshold,
                  const std::optional<std::string> &Placement) {
  CommArgs A;
  auto Check = [](const std::string &Why) {
    if (!Why.empty())
      throw py::value_error(Why);
  };
  if (Model)
    Check(pipeline::parseCommModel(*Model, "comm_model", A.Overrides));
  if (Stream)
    Check(pipeline::parseStreamScope(*Stream, "stream", A.Overrides));
  if (Threshold)
    Check(pipeline::parseEagerThreshold(*Threshold, "eager_threshold",
                                        A.Overrides));
  if (Placement)
    Check(pipeline::parseCommPlacement(*Placement, "comm_placement",
                                       A.Placement));
  return A;
}

void applyComm(const CommArgs &A, ir::Schedule &S) {
  std::string Why = pipeline::applyCommOverrides(A.Overrides, S);
  if (!Why.empty())
    throw py::value_error(Why);
}

std::string commModelText(ir::CommModel C, const ir::CommStream &St) {
  return ir::isNcclPreset(C, St) ? "nccl" : ir::commModelName(C).str();
}

py::dict commStreamOf(const ir::CommStream &St) {
  py::dict D;
  D["scope"] = ir::streamScopeName(St.Scope).str();
  if (St.EagerThreshold >= 0)
    D["eager_threshold"] = memoryAmount(St.EagerThreshold);
  else
    D["eager_threshold"] = py::none();
  return D;
}

/// The insert-comms options of a run on U under Comm: Comm's placement,
/// else the one U was lowered with.
static passes::InsertCommsOptions
insertOptions(const Unit &U, const CommArgs &Comm, bool Reorder = false) {
  passes::InsertCommsOptions O;
  O.Placement = Comm.Placement ? Comm.Placement : U.Placement;
  O.ReorderComms = Reorder;
  return O;
}

ir::Placement placementNamed(const std::string &Name) {
  if (Name == "loop")
    return ir::Placement::Loop;
  if (Name == "v")
    return ir::Placement::V;
  throw py::value_error(fmt::format(
      "placement must be 'loop', 'v' or a list of ranks, got '{}'", Name));
}

/// Kinds as the Python API spells them: PyTorch's names, "IDLE" for idle.
std::string kindName(ir::ActionKind K) {
  if (K == ir::ActionKind::Idle)
    return "IDLE";
  return ir::actionKindTorchName(K).str();
}

//===----------------------------------------------------------------------===//
// Compilation units
//===----------------------------------------------------------------------===//

/// Runs the compiler's pass pipeline up to Goal on S. True if no error.
bool runPasses(ir::Schedule &S, DiagnosticEngine &Diags, pipeline::Goal Goal,
               passes::AnalysisResults *Results,
               const passes::InsertCommsOptions &Comms) {
  passes::PassManager PM;
  pipeline::PipelineConfig Config;
  Config.Until = Goal;
  Config.Comms = Comms;
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
UnitPtr finish(std::shared_ptr<SourceManager> SM, DiagnosticEngine &Diags,
               std::optional<ir::Schedule> S, const CommArgs &Comm) {
  if (!S || Diags.hasErrors())
    fail(Diags);
  applyComm(Comm, *S);
  // Synthesis once, here, so lint and simulate do not repeat it.
  auto U = std::make_shared<Unit>();
  U->Placement = Comm.Placement;
  if (S->Synth) {
    synth::Result R;
    if (!synth::runSynthRequest(*S, Diags, &R))
      fail(Diags);
    U->SynthAlgorithm = R.Algorithm;
  }
  U->SM = std::move(SM);
  U->Source = *S;
  U->Lowered = std::move(*S);
  if (!runPasses(U->Lowered, Diags, pipeline::Goal::Lower, nullptr,
                 insertOptions(*U, Comm)))
    fail(Diags);
  U->Warnings = collect(Diags);
  return U;
}

std::optional<ReportData> prove(const Unit &U, const CommArgs &Comm,
                                bool ComputesOnly, bool Lowered) {
  ir::Schedule S = Lowered ? U.Lowered : U.Source;
  applyComm(Comm, S);
  // As `ppsc emit --target=torch` without --with-comms: the file carries no
  // comms, so what is proved is its computes with the order pps inserts.
  if (ComputesOnly)
    for (ir::RankProgram &R : S.Ranks)
      llvm::erase_if(R.Actions,
                     [](const ir::Action &A) { return ir::isComm(A.Kind); });
  DiagnosticEngine Diags(*U.SM);
  passes::AnalysisResults Results;
  if (runPasses(S, Diags, pipeline::Goal::Check, &Results,
                insertOptions(U, Comm)) &&
      pipeline::proved(Results)) {
    (void)collect(Diags); // warnings do not fail the proof
    return std::nullopt;
  }
  return collect(Diags);
}

ReportData lintUnit(const Unit &U, const CommArgs &Comm) {
  ir::Schedule S = U.Source;
  applyComm(Comm, S);
  DiagnosticEngine Diags(*U.SM);
  runPasses(S, Diags, pipeline::Goal::Check, nullptr, insertOptions(U, Comm));
  return collect(Diags);
}

Reordering reorderComms(const Unit &U, const CommArgs &Comm) {
  // As lint --fix: the schedule's own comms when it has them, else the ones
  // the lowering placed.
  ir::Schedule S = U.Source.hasComms() ? U.Source : U.Lowered;
  applyComm(Comm, S);
  DiagnosticEngine Diags(*U.SM);
  passes::AnalysisResults Results;
  if (!runPasses(S, Diags, pipeline::Goal::Check, &Results,
                 insertOptions(U, Comm, /*Reorder=*/true)))
    fail(Diags);
  Reordering R;
  R.Result = std::make_shared<Unit>();
  R.Result->SM = U.SM;
  R.Result->SynthAlgorithm = U.SynthAlgorithm;
  R.Result->Placement = Comm.Placement ? Comm.Placement : U.Placement;
  R.Result->Warnings = collect(Diags);
  if (Results.Reordered) {
    R.Before = Results.Reordered->first;
    R.After = Results.Reordered->second;
    R.Text = pipeline::reorderedText(S, R.Before, R.After);
  }
  R.Result->Source = S;
  R.Result->Lowered = std::move(S);
  return R;
}

backends::ExportStatus exportStatus(const Unit &U, bool Verify,
                                    const char *OptOut, bool ComputesOnly) {
  if (!Verify)
    return backends::ExportStatus::unverified(
        U.Lowered,
        fmt::format("exported with {}; `ppsc lint` checks it", OptOut));
  if (std::optional<ReportData> R = prove(U, CommArgs(), ComputesOnly))
    throw CompileFailure{std::move(*R)};
  return backends::ExportStatus::verified(U.Lowered);
}

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

UnitPtr compileSource(const SourceArgs &A, const CommArgs &Comm) {
  auto SM = std::make_shared<SourceManager>();
  DiagnosticEngine Diags(*SM);
  std::optional<ir::Schedule> S = runFrontend(A, *SM, Diags);
  return finish(SM, Diags, std::move(S), Comm);
}

/// ppsc lint on what the front end or an importer produced: every finding,
/// theirs included.
ReportData lintLoaded(DiagnosticEngine &Diags, std::optional<ir::Schedule> S,
                      const CommArgs &Comm) {
  if (S) {
    applyComm(Comm, *S);
    passes::InsertCommsOptions O;
    O.Placement = Comm.Placement;
    runPasses(*S, Diags, pipeline::Goal::Check, nullptr, O);
  }
  return collect(Diags);
}

ReportData lintSource(const SourceArgs &A, const CommArgs &Comm) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  std::optional<ir::Schedule> S = runFrontend(A, SM, Diags);
  return lintLoaded(Diags, std::move(S), Comm);
}

CsvArgs csvArgs(const std::string &Source, bool IsText, const std::string &Name,
                const std::string &Pipeline, std::optional<int32_t> Ranks,
                std::optional<int32_t> Stages,
                std::optional<int32_t> Microbatches,
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
std::optional<ir::Schedule> runImporter(const CsvArgs &A, SourceManager &SM,
                                        DiagnosticEngine &Diags) {
  if (A.IsText)
    return import::importTorchCsv(SM.addBuffer(A.Name, A.Source), SM, Diags,
                                  A.Options);
  return import::importTorchCsvFile(A.Source, SM, Diags, A.Options);
}

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

void applyCosts(ir::Schedule &S, const CostArgs &A, SourceManager &SM) {
  if (A.File) {
    DiagnosticEngine Diags(SM);
    std::optional<frontend::CostsFile> F =
        frontend::readCostsFile(*A.File, SM, Diags, {});
    if (!F || !frontend::applyCostsFile(*F, S, Diags))
      fail(Diags);
  }
  applyCosts(S, A);
}

void applyCosts(ir::Schedule &S, const CostArgs &A) {
  ir::CostModel &C = S.Cost;
  for (auto &[Key, V] : A.All)
    checkCostEntry(Key, V, /*AllowOverlap=*/true);
  for (auto &[Stage, Entries] : A.PerStage) {
    if (Stage < 0 || Stage >= S.Topo.Stages)
      throw py::value_error(fmt::format("cost for stage {}: the stages are "
                                        "0..{}",
                                        Stage, S.Topo.Stages - 1));
    for (auto &[Key, V] : Entries)
      checkCostEntry(Key, V, /*AllowOverlap=*/true);
  }
  auto Apply = [](ir::StageCost &SC,
                  const std::map<std::string, double> &Entries) {
    for (auto &[Key, V] : Entries)
      if (Key != "overlap")
        costSlot(SC, Key) = V;
    if (Entries.count("I") && Entries.count("W") && !Entries.count("B"))
      SC.B = SC.I + SC.W;
  };
  if (auto It = A.All.find("overlap"); It != A.All.end()) {
    // Every stage's, as an F for all stages sets every stage's F.
    C.Overlap = It->second;
    C.StageOverlap.clear();
  }
  Apply(C.Default, A.All);
  for (ir::StageCost &SC : C.PerStage)
    Apply(SC, A.All);
  if (!A.PerStage.empty() && C.PerStage.empty())
    C.PerStage.assign(S.Topo.Stages, C.Default);
  for (auto &[Stage, Entries] : A.PerStage) {
    Apply(C.PerStage[Stage], Entries);
    // overlap per stage: pairs whose first compute is on that stage.
    if (auto It = Entries.find("overlap"); It != Entries.end()) {
      if (C.StageOverlap.empty())
        C.StageOverlap.resize(size_t(S.Topo.Stages));
      C.StageOverlap[size_t(Stage)] = It->second;
    }
  }
}

//===----------------------------------------------------------------------===//
// Argument bundles from Python keyword arguments
//===----------------------------------------------------------------------===//

SourceArgs sourceArgs(const std::string &Source, bool IsText,
                      const std::string &Name,
                      const std::vector<std::string> &ImportPaths,
                      const std::string &StdlibDir, const std::string &Pipeline,
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

} // namespace pps::python
