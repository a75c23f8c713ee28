//===- TraceModel.h - what the SVG and HTML timelines draw (private) ------===//
//
// The pieces both pictures share: the shade of each compute (its chunk, the
// position of its stage among its rank's stages, or under two directions
// the direction of its microbatch, so the V of interleaved and V schedules
// and DualPipe's two directions are visible), the colours, and for a run
// that deadlocked where each rank blocks and the cycle of waits (the
// deadlock analysis' explanation, pps/analysis/Deadlock.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"
#include "pps/sim/Simulator.h"

#include <string>
#include <vector>

namespace pps::backends::detail {

/// Which shade each compute gets.
class Shading {
public:
  explicit Shading(const ir::Schedule &S);
  /// 0 .. chunks() - 1.
  int32_t of(const ir::Action &A) const;
  /// How many shades occur (1: every compute has the same).
  int32_t chunks() const { return Chunks; }
  /// True if the shades are DualPipe's directions rather than chunks.
  bool byDirection() const { return Directions; }
  /// "chunk 1", or "down" / "up" for directions.
  std::string name(int32_t Shade) const;
  /// A sentence for the legend: what dark and light mean.
  std::string explanation(const ir::Schedule &S) const;

private:
  std::vector<int32_t> ChunkOfStage;
  int32_t Chunks = 1;
  int32_t HalfStages = 0;
  bool Directions = false;
};

/// The fill of a compute (or control) kind in shade Shade of Shades: the
/// darkest for shade 0, lighter for later chunks.
std::string shadeColor(ir::ActionKind K, int32_t Shade, int32_t Shades);
/// Text colour that reads on Fill ("#ffffff" or a dark grey).
const char *inkOn(const std::string &Fill);

/// What a legend entry of a compute or control kind says ("forward").
const char *kindWords(ir::ActionKind K);

/// Where one rank of a deadlocked run stops.
struct BlockedRank {
  int32_t Rank = 0;
  /// The action it blocks at, and from when.
  uint32_t Index = 0;
  double Time = 0;
  /// The rank it waits for (-1: nothing ever matches the action).
  int32_t WaitsFor = -1;
  bool OnCycle = false;
  /// "send F1@0 -> 1", and "waiting for rank 1 to post `recv F1@1 <- 0`".
  std::string Name, Why;
};

struct DeadlockView {
  /// One headline: "ranks 0 and 1 wait on each other under the rendezvous
  /// model".
  std::string Headline;
  std::vector<BlockedRank> Ranks;
  /// The shortest cycle of waiting ranks, in order (may be empty).
  std::vector<int32_t> Cycle;
};

/// Explains R (which must have Deadlocked set and per-action times).
DeadlockView deadlockView(const ir::Schedule &S, const sim::SimResult &R);

} // namespace pps::backends::detail
