//===- PassPipeline.h - the compiler's passes, in order -------------------===//
//
// The one list of passes every consumer runs: ppsc's subcommands (through
// driver::runPipeline, which adds the command-line options) and the tests
// that lint schedules through the C++ API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"
#include "pps/passes/InsertComms.h"
#include "pps/passes/PassManager.h"
#include "pps/passes/PassRegistry.h"

namespace pps::pipeline {

/// How far to run: Lower stops once comms are inserted (plus fsdp/align when
/// asked); Check also runs every verification and analysis (lint, sim,
/// executors).
enum class Goal { Lower, Check };

struct PipelineConfig {
  Goal Until = Goal::Check;
  /// Rewrite the schedule with explicit idle(t) slots (align-bubbles).
  bool AlignBubbles = false;
  /// Where insert-comms places the pairs, and whether it may replace the
  /// schedule's own comms by a faster order (pps/passes/InsertComms.h).
  passes::InsertCommsOptions Comms{};
};

/// Adds the passes for S to PM, in order. Requires: S as the front end or an
/// importer produced it (a synth request, or compute order with or without
/// comms). Guarantees: after PM.run succeeds with Goal::Check, S is lowered
/// (comms present), verified, proved deadlock-free and memory-analysed.
void addPasses(passes::PassManager &PM, const ir::Schedule &S,
               const PipelineConfig &Config);

/// True if a PassManager run of addPasses with Goal::Check established what
/// `ppsc lint` proves, from what its passes left in R: dependencies checked
/// (verify-deps, or insert-comms on the schedule's own comms), freedom from
/// deadlock under the comm model (the deadlock pass), memory analysed. What
/// the executable exports (docs/interop.md) call verified.
bool proved(const passes::AnalysisResults &R);

/// Every pass addPasses can add, in pipeline order, with what each check
/// leaves unchecked when it is disabled.
const passes::PassRegistry &passRegistry();

} // namespace pps::pipeline
