//===- Memory.h - memory: activation memory per rank ----------------------===//
//
// Requires: nothing (works on any schedule; meaningful after verify-deps).
// Runs the activation memory analysis (pps/analysis/Memory.h) under the
// schedule's memory model (by default +1 chunk at F(m,s), released at its
// last backward: B, or W, or I when no W(m,s) exists; each (m,s) counted
// once), the figure the simulator, synthesis and the executor's predicted
// peak use too.
// Guarantees: AnalysisResults::PeakMemory holds the peak per rank, in the
// model's units; if the
// schedule has a memory limit, a memory-limit error names, per rank, the
// action where the limit is first exceeded.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/passes/PassManager.h"

namespace pps::passes {

/// The memory pass.
std::unique_ptr<Pass> createMemoryPass();

} // namespace pps::passes
