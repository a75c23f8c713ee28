//===- Memory.h - memory: activation memory per rank ----------------------===//
//
// Requires: nothing (works on any schedule; meaningful after verify-deps).
// Walks each rank's program: +1 activation (one chunk) when F(m,s) runs,
// -1 at its last backward: B(m,s), or W(m,s) when the backward is split.
// Guarantees: AnalysisResults::PeakMemory holds the peak per rank; if the
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
