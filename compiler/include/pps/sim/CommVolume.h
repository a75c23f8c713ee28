//===- CommVolume.h - communication volume with a cross-stage cache -------===//
//
// The communication-volume report (after the pipeline communication
// simulator of the Rust crate burn_dragon_train): walk the forward and
// backward computes of a schedule in execution order and count the bytes
// that cross between ranks ("physical stages"), under one of two ways of
// communicating and an optional cross-stage cache.
//
//  * activation-tensor: F(m,s) sends its output activation to the rank of
//    s+1; B/I(m,s) sends the input gradient to the rank of s-1 (keyed by the
//    destination's block). Every request is transmitted (the cache is
//    bypassed, and a bypass counts as a miss, as there).
//  * block-residual-cache: F(m,s) sends the block residual to the rank of
//    s+1 through the cache; the backward B/I(m,s) of the receiving stage asks
//    for the same residual again (key: source rank, destination rank, the
//    source stage's block, microbatch, step), which is a hit when it is
//    still resident and `reuse across backward` is on.
//
// A transfer between two stages on the same rank costs nothing and is not
// a request. Blocks: stage s holds layers [s*L, (s+1)*L) with L =
// LayersPerStage; its block is (last layer) / LayersPerBlock.
// The cache holds entries of at most MaxInflightMicrobatches (step,
// microbatch) pairs; inserting an entry for a new pair beyond that evicts
// every entry of the oldest pair (Fifo) or of the least recently used pair
// (Lru). With StepBoundary eviction the cache is cleared when a new step
// starts (Steps > 1 repeats the schedule; each repetition is a step).
// Evicted and cleared entries count as invalidated.
//
// Requires: a schedule with valid stages and microbatches. Guarantees: a
// deterministic report; work O(n log n) in the number of computes (sorting
// by start time) plus O(1) amortised per cache access.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"
#include "pps/sim/Simulator.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace pps::sim {

enum class CommVolumeKind : uint8_t { ActivationTensor, BlockResidualCache };
enum class CachePolicy : uint8_t { Disabled, Fifo, Lru };
enum class CacheEviction : uint8_t { StepBoundary, None };

llvm::StringRef commVolumeKindName(CommVolumeKind K);
llvm::StringRef cachePolicyName(CachePolicy P);
llvm::StringRef cacheEvictionName(CacheEviction E);
/// Parsers for the command line spellings; nullopt if unknown.
std::optional<CommVolumeKind> parseCommVolumeKind(llvm::StringRef S);
std::optional<CachePolicy> parseCachePolicy(llvm::StringRef S);
std::optional<CacheEviction> parseCacheEviction(llvm::StringRef S);

struct CacheConfig {
  bool Enabled = false;
  CachePolicy Policy = CachePolicy::Fifo;
  bool ReuseAcrossBackward = true;
  /// At least 1.
  uint32_t MaxInflightMicrobatches = 1;
  CacheEviction Eviction = CacheEviction::StepBoundary;
};

struct CommVolumeOptions {
  CommVolumeKind Kind = CommVolumeKind::ActivationTensor;
  CacheConfig Cache;
  /// Bytes per transfer; unset = the schedule's activation size (or 1 when
  /// the schedule declares none, so the figures count transfers).
  std::optional<uint64_t> PayloadBytes;
  uint32_t LayersPerStage = 1;
  uint32_t LayersPerBlock = 1;
  /// How many times the schedule runs (training steps), at least 1.
  uint32_t Steps = 1;
};

struct CommVolumeReport {
  CommVolumeKind Kind = CommVolumeKind::ActivationTensor;
  uint64_t PayloadBytes = 0;
  uint64_t ForwardRequests = 0;
  uint64_t BackwardRequests = 0;
  uint64_t BytesRequested = 0;
  uint64_t BytesTransmitted = 0;
  uint64_t Hits = 0;
  uint64_t Misses = 0;
  uint64_t ResendsAvoided = 0;
  uint64_t BackwardReuseHits = 0;
  uint64_t InvalidatedEntries = 0;
  /// Indexed by source rank.
  std::vector<uint64_t> TransmittedBySource;
};

/// Computes the report. Events are ordered by their start in Times (a
/// simulation of S) when given, by (program position, rank) otherwise.
CommVolumeReport computeCommVolume(const ir::Schedule &S,
                                   const CommVolumeOptions &Opts,
                                   const SimResult *Times = nullptr);

} // namespace pps::sim
