//===- Limits.h - the sizes a schedule may declare ------------------------===//
//
// Work and memory are bounded by what the input contains, not by the sizes
// it declares: every front end (the .pps evaluator, the PyTorch CSV
// importer) checks these before anything is allocated per rank, stage or
// microbatch, so a short file declaring huge sizes is answered at once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"

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
/// The longest time one thing may take, in time units: a cost, an idle
/// slot, a latency, one message (latency + bytes / bandwidth). 10^9 units
/// is over eleven days at one millisecond per unit. With it, a makespan
/// over any number of actions the IR can hold stays far inside a double's
/// exact range and every integer conversion downstream (synthesis ticks,
/// Gantt columns, trace nanoseconds, the runtime's durations) is defined.
constexpr double MaxTime = 1e9;
/// The largest message a comm block may declare (activation, gradient), in
/// bytes: 1 PiB.
constexpr double MaxMessageBytes = 1125899906842624.0;
/// The largest amount a memory model may give one action (`memory { F =
/// ..; }`), in the model's units: 10^6. With it, and a limit below 2^31
/// units, a rank's memory over any number of actions stays exact in a
/// double and synthesis' whole ticks fit 64 bits.
constexpr double MaxMemoryAmount = 1e6;
/// The same in bytes (`memory { F[stage 0] = 48 MiB; }`): 1 TiB. A rank's
/// bytes stay exact in a double up to 2^13 live amounts of the largest
/// size, and synthesis' ticks (bytes) fit 64 bits for any problem it takes.
constexpr double MaxMemoryBytes = 1099511627776.0;
/// The largest memory limit in bytes (`limit N GiB;`): 1 PiB.
constexpr int64_t MaxMemoryLimitBytes = int64_t(1) << 50;
/// Bounds the IR's memory (20 bytes an action) whatever the step budget;
/// the default of FrontendOptions::MaxActions, which --max-actions sets.
/// The passes check the same limit against what they add (send/recv,
/// idle, FSDP controls).
constexpr uint64_t MaxActions = ir::DefaultMaxActions;

/// Evaluation steps per compile by default (--step-budget): about two
/// seconds of evaluation, so an endless loop stops soon, while the
/// stdlib's constructions fit at the depths models use (V-Half's steps
/// at 128 ranks: about 230M).
constexpr uint64_t DefaultStepBudget = 1'000'000'000;

} // namespace pps::frontend
