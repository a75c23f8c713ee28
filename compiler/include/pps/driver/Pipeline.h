//===- Pipeline.h - the compiler's pass pipeline --------------------------===//
//
// pipeline::addPasses (compiler/pipeline) lists the passes in order; this adds
// the command-line options (print-after, disable-pass, ...). Every
// subcommand that needs a checked, lowered schedule runs it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/driver/Command.h"

namespace pps::driver {

/// How far to run: Lower stops once comms are inserted (emit); Check also
/// runs every verification and analysis (lint, sim, emit of executors).
enum class PipelineGoal { Lower, Check };

/// Checks the pass options every subcommand takes: the names given to
/// --print-after, --disable-pass and --time-passes (unknown-pass, with the
/// nearest name as a suggestion) and the value of --fsdp (usage). Reports
/// through Diags; false if anything was wrong (the caller exits with 2).
bool checkPipelineOptions(DiagnosticEngine &Diags);

/// Reports a check-skipped note for each check --disable-pass turned off
/// (in pipeline order), saying what stays unchecked.
void noteSkippedChecks(DiagnosticEngine &Diags);

/// True if --disable-pass names Pass.
bool isPassDisabled(llvm::StringRef Pass);

/// Why a Check run did not prove the schedule as lint does, given what the
/// passes left in Results: "" if it did (verify-deps and insert-comms
/// checked the dependencies, the deadlock pass proved it free of deadlock,
/// the memory pass ran), else which check --disable-pass turned off.
std::string skippedProof(const passes::AnalysisResults &Results);

/// Runs the pass pipeline on S. Returns false if a pass reported an error.
/// Analysis results (peak memory, ...) are left in Results. ReorderComms
/// lets insert-comms replace the schedule's own comms by a faster order
/// (emit --reorder-comms, lint --fix; AnalysisResults::Reordered).
bool runPipeline(Session &Sess, ir::Schedule &S, PipelineGoal Goal,
                 passes::AnalysisResults &Results, bool ReorderComms = false);

/// With AnalysisResults::Reordered: a comms-reordered note at S saying what
/// the reordering gained (or that it kept the schedule's order).
void noteReordered(Session &Sess, const ir::Schedule &S,
                   const passes::AnalysisResults &Results);

/// Prints a schedule in the lowered .pps form (for --print-after).
void printSchedule(const ir::Schedule &S, llvm::raw_ostream &OS);

} // namespace pps::driver
