//===- Memory.h - activation memory per rank: the one rule ----------------===//
//
// The activation memory analysis every component uses: the memory pass (lint
// and the memory limit), the simulator's figures, synthesis, and the peaks
// the C++ emitter writes for the executor to compare with what it measures.
//
// The rule (the schema's, ppsrt/Schema.h memoryEffect; the runtime's
// Executor releases by it too): per rank, in program order, F(m, s) makes
// the activations of (m, s) live; they are released at the last backward of
// (m, s): B, or W, or I when the rank has no W(m, s). An (m, s) is counted
// once even if its F appears twice, and a backward of an (m, s) that is not
// live changes nothing.
//
// How much is live is the schedule's memory model (`memory { ... }`, one
// MemoryModel per stage, ir::MemorySpec): the chunk model (the default)
// counts one unit per live (m, s) -- one stage's activations of one
// microbatch, a chunk under V placement. A finer model lets I free part of
// what F allocated, as the zero-bubble papers count (F = +1, I = -0.5,
// W = -0.5); the last backward always frees the rest, so every (m, s)
// returns to zero. Per-stage models in bytes (what a profile measures)
// count each stage's own activations.
//
// Requires: nothing (any schedule; out-of-range actions are ignored).
// Guarantees: work linear in the number of actions plus, for dense
//   (stage, microbatch) spaces, one byte per pair; sparse spaces (huge
//   declared sizes, few actions) are hashed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace pps::analysis {

/// How much memory the actions of one (microbatch, stage) hold, and the
/// arithmetic of the rule: the schema's (ppsrt/Schema.h), which the
/// runtimes count by too. A schedule carries its model (ir::Schedule::
/// Memory, the `memory { ... }` block).
using schema::memoryDelta;
using schema::MemoryModel;

struct MemoryOptions {
  /// The model to count by; unset: the schedule's own (ir::Schedule::Memory).
  std::optional<ir::MemorySpec> Model;
  /// Keep each rank's running curve (RankMemory::Curve).
  bool KeepCurve = false;
  /// Find where each rank first holds more than this (RankMemory::OverAt).
  std::optional<double> Limit;
};

/// One rank's activation memory.
struct RankMemory {
  /// The most the rank holds at once.
  double Peak = 0;
  /// Index of the action at which Peak is first reached (-1 if it is 0).
  int64_t PeakAt = -1;
  /// With a limit: the first action after which the rank holds more than
  /// the limit (-1 if never), and how much it holds then.
  int64_t OverAt = -1;
  double OverLevel = 0;
  /// With KeepCurve: (action index, memory held after it) at every action
  /// that changes it, in program order; the rank starts at 0.
  std::vector<std::pair<uint32_t, double>> Curve;
};

/// Activation memory of every rank.
struct MemoryProfile {
  ir::MemorySpec Model;
  std::vector<RankMemory> Ranks;

  /// The largest peak over ranks (0 with no ranks).
  double maxPeak() const;
  /// Peaks in whole units, for the chunk model's counts (what the runtime
  /// measures and what lint prints): rounded to the nearest integer.
  std::vector<int64_t> wholePeaks() const;
};

/// Activation memory of each rank of S under the rule above.
MemoryProfile analyzeMemory(const ir::Schedule &S,
                            const MemoryOptions &Opts = {});

/// A memory amount as a whole count when it is one (chunk model).
inline int64_t wholeUnits(double V) { return int64_t(std::llround(V)); }

} // namespace pps::analysis
