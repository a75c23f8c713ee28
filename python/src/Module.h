//===- Module.h - pps._pps: what the bindings share (private) -------------===//
//
// The data the extension's files hand each other (compiled units,
// simulations, reports) and the functions module.cpp's bindings call. The
// extension is split by topic: Diagnostics.cpp (diagnostics as data and as
// Python tuples), Compile.cpp (argument parsing, compiling and linting
// .pps and PyTorch CSV, cost overrides), Simulate.cpp, Actions.cpp (actions
// as pps.Action tuples, the runtime tables, the torch CSV text), Synth.cpp,
// Builder.cpp, and module.cpp (PYBIND11_MODULE: the Python names).
//
// Nothing here decides anything about a schedule: every finding, figure and
// text form comes from the compiler. These functions convert arguments,
// refuse bad ones with ValueError before the compiler could assert on them,
// and throw CompileFailure when the compiler reports errors (module.cpp
// translates it into pps.CompileError while the GIL is held).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/backends/Export.h"
#include "pps/import/TorchCsv.h"
#include "pps/ir/Builder.h"
#include "pps/ir/Schedule.h"
#include "pps/passes/PassManager.h"
#include "pps/pipeline/CommOptions.h"
#include "pps/pipeline/PassPipeline.h"
#include "pps/sim/Simulator.h"
#include "pps/support/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace pps::python {

namespace py = pybind11;

//===----------------------------------------------------------------------===//
// Diagnostics as data (Diagnostics.cpp)
//===----------------------------------------------------------------------===//

/// (message, file, line, column); file "" and 0s when there is no location.
using NoteData = std::tuple<std::string, std::string, uint32_t, uint32_t>;

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

/// "note", "warning" or "error".
const char *severityName(Severity S);

/// Collects (and clears) what Diags holds: the data in the engine's print
/// order (by file, line, column, then report order) and the text the
/// engine itself prints.
ReportData collect(DiagnosticEngine &Diags);

/// Throws CompileFailure with what Diags holds.
[[noreturn]] void fail(DiagnosticEngine &Diags);

/// (text, [finding tuples], errors, warnings): pps._types builds Findings.
py::tuple reportToPython(const ReportData &R);

//===----------------------------------------------------------------------===//
// Argument parsing (Compile.cpp; ValueError with the reason, never an assert)
//===----------------------------------------------------------------------===//

/// The comm options of a call: comm_model=, stream=, eager_threshold= and
/// comm_placement=, read as ppsc reads --comm-model, --stream,
/// --eager-threshold and --comm-placement (pps/pipeline/CommOptions.h).
struct CommArgs {
  pipeline::CommOverrides Overrides;
  std::optional<passes::CommPlacement> Placement;
};

/// CommArgs from the keywords (unset: not given); a ValueError in ppsc's
/// words, naming the keyword, for a bad value. The threshold is text as
/// the option takes it ("65536", "64K", "none").
CommArgs commArgs(const std::optional<std::string> &Model,
                  const std::optional<std::string> &Stream,
                  const std::optional<std::string> &Threshold,
                  const std::optional<std::string> &Placement);

/// Applies A's overrides to S: a ValueError if the result says two things
/// (ir::commConfigProblem), as ppsc's usage error says it.
void applyComm(const CommArgs &A, ir::Schedule &S);

/// "nccl" for the preset (ir::isNcclPreset), else the model's name.
std::string commModelText(ir::CommModel C, const ir::CommStream &St);

/// {"scope": "none" | "peer" | "rank", "eager_threshold": bytes or None}.
py::dict commStreamOf(const ir::CommStream &St);

/// The placement "loop" or "v".
ir::Placement placementNamed(const std::string &Name);

/// Kinds as the Python API spells them: PyTorch's names, "IDLE" for idle.
std::string kindName(ir::ActionKind K);

//===----------------------------------------------------------------------===//
// Compilation units (Compile.cpp)
//===----------------------------------------------------------------------===//

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
  /// The comm placement it was lowered with (comm_placement=), which lint,
  /// prove and simulate use too unless told another.
  std::optional<passes::CommPlacement> Placement;
};
/// Units are shared between Python objects and simulations.
using UnitPtr = std::shared_ptr<Unit>;

/// Runs the compiler's pass pipeline up to Goal on S, insert-comms with
/// Comms. True if no error.
bool runPasses(ir::Schedule &S, DiagnosticEngine &Diags, pipeline::Goal Goal,
               passes::AnalysisResults *Results = nullptr,
               const passes::InsertCommsOptions &Comms = {});

/// What the front end or an importer produced, made into a Unit: the comm
/// options applied, a synth request filled in, then lowered. Throws
/// CompileFailure on any error.
UnitPtr finish(std::shared_ptr<SourceManager> SM, DiagnosticEngine &Diags,
               std::optional<ir::Schedule> S, const CommArgs &Comm);

/// A .pps source for the front end: a file or a text, and ppsc's options.
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

/// SourceArgs from the Python keyword arguments.
SourceArgs sourceArgs(const std::string &Source, bool IsText,
                      const std::string &Name,
                      const std::vector<std::string> &ImportPaths,
                      const std::string &StdlibDir, const std::string &Pipeline,
                      const std::map<std::string, int64_t> &Overrides,
                      std::optional<uint64_t> StepBudget);

/// The proof `ppsc lint` runs (the Check pipeline) on U under Comm (the
/// schedule's model if unset): an empty report if it passed, else every
/// finding. The one check behind every export and pps.torch. ComputesOnly
/// proves U's computes with the comms pps inserts, ignoring the source's
/// own (what a compute-only torch CSV carries). Lowered proves U's lowered
/// form, comms as placed, instead of its source: what a runtime runs,
/// whatever placement Comm's model would choose.
std::optional<ReportData> prove(const Unit &U, const CommArgs &Comm,
                                bool ComputesOnly = false,
                                bool Lowered = false);

/// `ppsc lint` of U under Comm: every finding.
ReportData lintUnit(const Unit &U, const CommArgs &Comm);

/// What `ppsc lint --fix` / `emit --reorder-comms` did to U's comms.
struct Reordering {
  /// The schedule with the new comm order (or its own, if none was
  /// faster), checked as lint checks it.
  UnitPtr Result;
  /// Makespans under the comm model before and after (Before is infinite
  /// if the schedule's own order does not finish).
  double Before = 0, After = 0;
  /// The comms-reordered note ppsc prints.
  std::string Text;
};

/// `ppsc lint --fix` on U under Comm: the comms replaced by the optimized
/// placement if that is faster (passes::InsertCommsOptions::ReorderComms).
/// Throws CompileFailure if the schedule does not check.
Reordering reorderComms(const Unit &U, const CommArgs &Comm);

/// What an export of U says about its proof: verified after prove()
/// passed (a CompileFailure with lint's findings if it fails), or, with
/// Verify false, unverified because of OptOut (the argument that said so).
backends::ExportStatus exportStatus(const Unit &U, bool Verify,
                                    const char *OptOut,
                                    bool ComputesOnly = false);

/// ppsc compile of a .pps source into a Unit. Throws CompileFailure.
UnitPtr compileSource(const SourceArgs &A, const CommArgs &Comm);

/// ppsc lint on what the front end or an importer produced: every finding,
/// theirs included.
ReportData lintLoaded(DiagnosticEngine &Diags, std::optional<ir::Schedule> S,
                      const CommArgs &Comm);

/// ppsc lint of a .pps source.
ReportData lintSource(const SourceArgs &A, const CommArgs &Comm);

/// A PyTorch schedule CSV for the importer: a file or a text, and options.
struct CsvArgs {
  std::string Source;
  bool IsText = false;
  std::string Name; // display name of a text
  import::TorchImportOptions Options;
};

/// CsvArgs from the Python keyword arguments.
CsvArgs csvArgs(const std::string &Source, bool IsText, const std::string &Name,
                const std::string &Pipeline, std::optional<int32_t> Ranks,
                std::optional<int32_t> Stages,
                std::optional<int32_t> Microbatches,
                const std::optional<std::string> &Placement, bool KeepIdle);

/// The torch importer on a file or a text, as ppsc's Session::load does for
/// .csv.
std::optional<ir::Schedule> runImporter(const CsvArgs &A, SourceManager &SM,
                                        DiagnosticEngine &Diags);

/// Cost overrides in the shape of the language's `cost { }` block: kinds
/// for every stage first, then per-stage entries; giving I and W but not B
/// makes B = I + W, as the block does.
struct CostArgs {
  std::map<std::string, double> All;
  std::map<int64_t, std::map<std::string, double>> PerStage;
  /// A costs file (ppsc --costs, pps/frontend/CostsFile.h), applied first.
  std::optional<std::string> File;
};

/// Checks A (ValueError), then applies its entries to S's cost model.
void applyCosts(ir::Schedule &S, const CostArgs &A);
/// Applies A.File, if any, to S (read into SM; CompileError with its
/// located diagnostics), then A's entries over it.
void applyCosts(ir::Schedule &S, const CostArgs &A, SourceManager &SM);

//===----------------------------------------------------------------------===//
// Simulation (Simulate.cpp)
//===----------------------------------------------------------------------===//

/// A simulated schedule: the checked IR and the simulator's result (the
/// trace backends need both).
struct SimState {
  std::shared_ptr<SourceManager> SM;
  ir::Schedule S;
  sim::SimResult R;
  ReportData Warnings;
};
/// Simulations are owned by their Python objects.
using SimPtr = std::shared_ptr<SimState>;

/// What pps.Schedule.simulate overrides.
struct SimArgs {
  CostArgs Costs;
  std::optional<double> Latency;
  CommArgs Comm;
  std::optional<bool> Blocking;
  std::string Timing = "auto";
};

/// ppsc sim: the pass pipeline to its Check goal, then the simulator.
SimPtr simulate(const Unit &U, const SimArgs &A);

/// What Fn writes, as a string.
std::string render(const std::function<void(llvm::raw_ostream &)> &Fn);

/// Per rank: (rank, compute busy, idle, comm busy, comm wait, end, peak
/// memory, peak memory at, computes, sends, recvs, stream held, stream
/// bubble); the last two None without a stream rule.
py::list rankStats(const sim::SimResult &R);

/// The comms a stream rule held back: (rank, index, held, holder rank,
/// holder index) for each with a hold, by rank and index; the holder is
/// (-1, -1) when no operation ahead of it caused it (RankTimeline::Held,
/// HeldBy).
py::list heldComms(const sim::SimResult &R);

/// Binds pps._pps.Simulation (module.cpp calls it).
void bindSimulation(py::module_ &M);

//===----------------------------------------------------------------------===//
// Actions (Actions.cpp)
//===----------------------------------------------------------------------===//

/// The Python types results are made of, registered by pps/_types.py when
/// it is imported (_register_types) and kept for the life of the process.
struct PythonTypes {
  py::handle Action, TimedAction, CompileError;
};

/// The registered types (none until pps._types registers them).
extern PythonTypes Types;

/// T, or a RuntimeError naming pps.Name if it is not registered yet.
py::handle registered(py::handle T, const char *Name);

/// An instance of a named tuple type from its fields, built in C and
/// untracked by the cycle collector (see Actions.cpp).
py::object namedTuple(py::handle Type, const py::tuple &Fields);

/// Converts actions into pps.Action tuples: kind, microbatch, stage, peer,
/// overlap_next, idle_time, text, file, line, column: what a runtime needs
/// to run the action and to name it in the lint's words. File names are
/// shared between the actions of one file.
class ActionConverter {
public:
  explicit ActionConverter(const SourceManager &SM);

  /// The pps.Action tuple of A.
  py::object operator()(const ir::Action &A);

private:
  const SourceManager &SM;
  py::handle ActionType;
  std::map<FileId, py::str> Files;
  std::vector<py::str> Kinds;
};

/// ValueError unless Rank is one of S's ranks.
void checkRank(const ir::Schedule &S, int64_t Rank);

/// The pps.Action tuples of a rank's actions.
py::list actionsOf(const SourceManager &SM, const ir::Schedule &S,
                   int64_t Rank);

//===----------------------------------------------------------------------===//
// What a runtime needs (pps.torch), by the action schema (Actions.cpp)
//===----------------------------------------------------------------------===//

/// One rank's program as the schema sees it, for a runtime to walk (the
/// tuple's fields are listed in Actions.cpp).
py::list runtimeTable(const ir::Schedule &S, int64_t Rank);

/// The first FIFO mismatch of S in the runtimes' words, or nothing.
std::optional<std::string> fifoMismatch(const ir::Schedule &S);

/// {kind: cost} of F, I, W and B on Stage.
py::dict costsOf(const ir::Schedule &S, int32_t Stage);

/// An amount of memory in the memory model's units: an int when whole (the
/// chunk model's counts), else a float.
py::object memoryAmount(double V);
/// The memory model as Python sees it: {"F": .., "I": .., "W": ..}.
py::dict memoryModelOf(const schema::MemoryModel &M);
/// A schedule's: the same, plus "unit": "bytes" when the amounts are bytes
/// and "stages": [{"F": .., ...}, ...] when the stages differ (then F, I,
/// W are the chunk model and unused), as the JSON export writes it.
py::dict memoryModelOf(const ir::MemorySpec &M);

/// `ppsc emit --target=torch` of U (with comms or not), proved first unless
/// Verify is false. Throws CompileFailure for what PyTorch cannot express,
/// or lint's findings.
std::string torchCsv(const Unit &U, bool WithComms, bool Verify);

/// The model layout (analysis/Routes.h) as Python data: {"routes":
/// [(first microbatch, microbatches, first stage, last stage, data rank,
/// loss rank)], "data_ranks", "loss_ranks", "weight_groups": [[stage]]}.
py::dict layoutOf(const ir::Schedule &S);

//===----------------------------------------------------------------------===//
// Synthesis (Synth.cpp)
//===----------------------------------------------------------------------===//

/// What pps.synth asks for.
struct SynthArgs {
  int64_t Ranks = 0, Microbatches = 0, MemoryLimit = 0;
  std::string Placement = "loop";
  std::optional<int64_t> Stages;
  std::map<std::string, double> Costs;
  std::map<int64_t, std::map<std::string, double>> StageCosts;
  double Latency = 0;
  bool Exact = true;
  /// The memory model's amounts ({"F": 2, "I": -1, "W": -1}), as a memory
  /// block gives them; empty: the chunk model.
  std::map<std::string, double> MemoryModel;
  /// Where the floor's V-Half and V-Min are compiled from ("" : the front
  /// end's search path), as compile's stdlib_dir.
  std::string StdlibDir;
};

/// ppsc synth: the arguments checked, then a schedule synthesized and
/// compiled. Throws CompileFailure if none fits.
UnitPtr synthesize(const SynthArgs &A);

//===----------------------------------------------------------------------===//
// The builder (Builder.cpp)
//===----------------------------------------------------------------------===//

/// ir::ScheduleBuilder behind checks that turn every mistake into a
/// ValueError. build() and lint() print the schedule in the lowered .pps
/// form and compile that text, so findings point at the action in it.
class Builder {
public:
  /// Placement is "loop", "v" or a list of ranks, one per stage.
  Builder(int64_t Ranks, int64_t Stages, int64_t Microbatches,
          const py::object &Placement, const std::string &Name);

  /// Adds a compute, a comm or a control action to Rank.
  void add(int64_t Rank, const std::string &Kind, std::optional<int64_t> Mb,
           std::optional<int64_t> Stage, std::optional<int64_t> Peer);
  /// Adds overlap(K1 Mb1@St1, K2 Mb2@St2) to Rank.
  void addOverlap(int64_t Rank, const std::string &K1, int64_t Mb1,
                  std::optional<int64_t> St1, const std::string &K2,
                  int64_t Mb2, std::optional<int64_t> St2);
  /// Adds an idle slot of Time to Rank.
  void addIdle(int64_t Rank, double Time);

  /// Overrides the cost model.
  void setCosts(const CostArgs &A);
  /// Applies the comm options (the model, stream rule, threshold).
  void setComm(const CommArgs &A);
  /// Sets the message latency.
  void setLatency(double L);
  /// Sets the activation memory limit (0: none).
  void setMemoryLimit(int64_t L);

  /// The schedule in the lowered .pps form.
  std::string text();
  /// The lowered .pps text as a source named Name.
  SourceArgs sourceArgs(const std::string &Name);
  /// How many actions were added.
  size_t numActions();

private:
  int32_t checkMicrobatch(std::optional<int64_t> Mb, const std::string &Kind);
  int32_t resolveStage(int32_t Rank, std::optional<int64_t> Stage,
                       const std::string &Kind);

  ir::ScheduleBuilder B;
  std::map<int32_t, std::vector<int32_t>> StagesOf;
};

} // namespace pps::python
