//===- Limits.h - the sizes a schedule may declare ------------------------===//
//
// Work and memory are bounded by what the input contains, not by the sizes
// it declares: every front end (the .pps evaluator, the PyTorch CSV
// importer) checks these before anything is allocated per rank, stage or
// microbatch, so a short file declaring huge sizes is answered at once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace pps::frontend {

/// Most ranks a pipeline may declare.
constexpr int64_t MaxRanks = 1 << 16;
/// Most stages a pipeline may declare.
constexpr int64_t MaxStages = 1 << 20;
/// Most microbatches a pipeline may declare.
constexpr int64_t MaxMicrobatches = 1 << 24;
/// Longest array a schedule may make with array(n, v).
constexpr int64_t MaxArray = 1 << 24;
/// Arrays live until evaluation ends, so their total size is bounded too.
constexpr uint64_t MaxArrayTotal = uint64_t(1) << 25;
/// Bounds the IR's memory (20 bytes an action) whatever the step budget.
constexpr uint64_t MaxActions = uint64_t(1) << 25;

} // namespace pps::frontend
