//===- CostsFile.h - --costs=FILE: a schedule's costs from another file
//----===//
//
// A costs file is a .pps file whose one pipeline's `cost { }` and `comm { }`
// blocks say what each stage's F, I, W and B and each message cost. The
// executors write one when they profile a run (`--profile=FILE`,
// docs/runtime.md): the run's topology, its measured costs and a request to
// synthesise a schedule for them (`schedule synth();`), with the measured
// figures and their spread as comments. Any pipeline will do as a costs
// file, though: its costs are taken, its schedule is never synthesised or
// lowered.
//
// `--costs=FILE` (every ppsc subcommand) and Python's `costs="FILE"` replace
// the schedule's cost model with the file's, before any pass reads it: the
// compute costs of every stage (what the file does not give takes the
// language's defaults, as in any pipeline), the overlap times (per stage
// too), and the comm
// figures (latency, bandwidth, message sizes). The schedule keeps its comm
// model and whether comms block: they say how the schedule runs, not what
// it costs. Costs are per stage, so the file must have as many stages as
// the schedule; its ranks, placement and microbatches are not used.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/frontend/Frontend.h"
#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace pps::frontend {

/// What a costs file gives.
struct CostsFile {
  std::string Path;
  /// The cost model of the file's pipeline, as the front end evaluates it.
  ir::CostModel Cost;
  /// How many stages it gives costs for.
  int32_t Stages = 0;
  /// The file's pipeline, where a mismatch is reported.
  std::string Name;
  LocId Loc = NoLoc;
};

/// Reads Path as a costs file: the front end with Opts' import paths and
/// stdlib (never its overrides: --stages and -D are the schedule's), so
/// its errors are located like any .pps file's. Empty on error.
std::optional<CostsFile> readCostsFile(llvm::StringRef Path, SourceManager &SM,
                                       DiagnosticEngine &Diags,
                                       const FrontendOptions &Opts);

/// Replaces the cost figures of S with F's (see above); `costs-mismatch` at
/// F's pipeline if the stage counts differ. False on error.
bool applyCostsFile(const CostsFile &F, ir::Schedule &S,
                    DiagnosticEngine &Diags);

/// The check applyCostsFile makes, for callers without a schedule (ppsc
/// synth from flags): `costs-mismatch` unless F gives Stages stages.
/// ForWhat names the schedule ("pipeline 'x'", "the problem").
bool checkCostsStages(const CostsFile &F, int32_t Stages,
                      llvm::StringRef ForWhat, LocId ForLoc,
                      DiagnosticEngine &Diags);

} // namespace pps::frontend
