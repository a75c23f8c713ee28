//===- CommVolumeTest.cpp - the comm-volume report on hand-computed plans -===//
#include "SimTestUtil.h"

#include "pps/sim/CommVolume.h"

#include <gtest/gtest.h>

using namespace pps;
using namespace pps::sim;

namespace {

/// GPipe on 2 ranks, 2 microbatches, payload 10 bytes. In time order the
/// requests are F0@0, F1@0 (forward, rank 0 -> 1) and B0@1, B1@1
/// (backward on stage 1).
CommVolumeReport gpipe2(CommVolumeOptions O) {
  ir::Schedule S = simtest::gpipe(2, 2);
  O.PayloadBytes = 10;
  SimResult R = simulate(S);
  return computeCommVolume(S, O, &R);
}

CommVolumeOptions residual(uint32_t Inflight, CacheEviction E,
                           CachePolicy P = CachePolicy::Fifo) {
  CommVolumeOptions O;
  O.Kind = CommVolumeKind::BlockResidualCache;
  O.Cache.Enabled = true;
  O.Cache.Policy = P;
  O.Cache.MaxInflightMicrobatches = Inflight;
  O.Cache.Eviction = E;
  return O;
}

} // namespace

TEST(CommVolume, ActivationTensorSendsEverything) {
  CommVolumeReport R = gpipe2({});
  EXPECT_EQ(R.ForwardRequests, 2u);
  EXPECT_EQ(R.BackwardRequests, 2u);
  EXPECT_EQ(R.BytesRequested, 40u);
  EXPECT_EQ(R.BytesTransmitted, 40u);
  // A bypass counts as a miss, as in burn_dragon_train's simulator.
  EXPECT_EQ(R.Misses, 4u);
  EXPECT_EQ(R.Hits, 0u);
  ASSERT_EQ(R.TransmittedBySource.size(), 2u);
  EXPECT_EQ(R.TransmittedBySource[0], 20u); // activations 0 -> 1
  EXPECT_EQ(R.TransmittedBySource[1], 20u); // gradients 1 -> 0
}

TEST(CommVolume, ResidualCacheDisabledResendsFromTheSource) {
  CommVolumeOptions O;
  O.Kind = CommVolumeKind::BlockResidualCache;
  CommVolumeReport R = gpipe2(O);
  EXPECT_EQ(R.BytesTransmitted, 40u);
  EXPECT_EQ(R.Misses, 4u);
  EXPECT_EQ(R.TransmittedBySource[0], 40u); // the residual comes from rank 0
  EXPECT_EQ(R.TransmittedBySource[1], 0u);
  O.Cache.Enabled = true;
  O.Cache.Policy = CachePolicy::Disabled;
  EXPECT_EQ(gpipe2(O).BytesTransmitted, 40u);
}

TEST(CommVolume, ResidualCacheReusesAcrossBackward) {
  CommVolumeReport R = gpipe2(residual(2, CacheEviction::StepBoundary));
  EXPECT_EQ(R.BytesRequested, 40u);
  EXPECT_EQ(R.BytesTransmitted, 20u);
  EXPECT_EQ(R.Hits, 2u);
  EXPECT_EQ(R.Misses, 2u);
  EXPECT_EQ(R.ResendsAvoided, 2u);
  EXPECT_EQ(R.BackwardReuseHits, 2u);
  EXPECT_EQ(R.InvalidatedEntries, 0u);
  EXPECT_EQ(R.TransmittedBySource[0], 20u);

  CommVolumeOptions NoReuse = residual(2, CacheEviction::StepBoundary);
  NoReuse.Cache.ReuseAcrossBackward = false;
  R = gpipe2(NoReuse);
  EXPECT_EQ(R.BytesTransmitted, 40u);
  EXPECT_EQ(R.Hits, 0u);
}

TEST(CommVolume, OneMicrobatchInFlightEvicts) {
  // F0 inserts m0; F1 evicts m0 (1); B0 misses, inserts m0 evicting m1 (2);
  // B1 misses, inserts m1 evicting m0 (3).
  CommVolumeReport R = gpipe2(residual(1, CacheEviction::StepBoundary));
  EXPECT_EQ(R.Hits, 0u);
  EXPECT_EQ(R.Misses, 4u);
  EXPECT_EQ(R.BytesTransmitted, 40u);
  EXPECT_EQ(R.InvalidatedEntries, 3u);
}

TEST(CommVolume, StepsAndEviction) {
  CommVolumeOptions O = residual(2, CacheEviction::StepBoundary);
  O.Steps = 2;
  CommVolumeReport R = gpipe2(O);
  // Each step as before; the second step clears the two entries left.
  EXPECT_EQ(R.Hits, 4u);
  EXPECT_EQ(R.BytesRequested, 80u);
  EXPECT_EQ(R.BytesTransmitted, 40u);
  EXPECT_EQ(R.InvalidatedEntries, 2u);

  O.Cache.Eviction = CacheEviction::None;
  R = gpipe2(O);
  // No clearing: the new step's microbatches push the old ones out one by one.
  EXPECT_EQ(R.Hits, 4u);
  EXPECT_EQ(R.InvalidatedEntries, 2u);
  O.Cache.MaxInflightMicrobatches = 4;
  R = gpipe2(O);
  EXPECT_EQ(R.InvalidatedEntries, 0u);
}

TEST(CommVolume, LruKeepsWhatWasJustUsed) {
  // Program order (no times): F0@0, F1@0, B0@1 (hit, m0 most recent),
  // F2@0 (evicts m0 under FIFO, m1 under LRU), B1@1.
  ir::ScheduleBuilder B(2, 2, 3);
  B.rank(0).F(0).F(1).idle().F(2).idle();
  B.rank(1).idle().idle().B(0).idle().B(1);
  ir::Schedule S = B.build();
  CommVolumeOptions O = residual(2, CacheEviction::None);
  O.PayloadBytes = 1;
  CommVolumeReport Fifo = computeCommVolume(S, O);
  EXPECT_EQ(Fifo.Hits, 2u);
  EXPECT_EQ(Fifo.Misses, 3u);
  O.Cache.Policy = CachePolicy::Lru;
  CommVolumeReport Lru = computeCommVolume(S, O);
  EXPECT_EQ(Lru.Hits, 1u);
  EXPECT_EQ(Lru.Misses, 4u);
  EXPECT_EQ(Lru.InvalidatedEntries, 2u);
}

TEST(CommVolume, SameRankStagesAndBlocks) {
  // 4 stages on 2 ranks placed 0,0,1,1: only the 1 -> 2 boundary crosses.
  ir::ScheduleBuilder B(2, 4, 1);
  B.placement({0, 0, 1, 1});
  B.rank(0).F(0, 0).F(0, 1).B(0, 1).B(0, 0);
  B.rank(1).F(0, 2).F(0, 3).B(0, 3).B(0, 2);
  ir::Schedule S = B.build();
  CommVolumeOptions O;
  O.PayloadBytes = 7;
  CommVolumeReport R = computeCommVolume(S, O);
  EXPECT_EQ(R.ForwardRequests, 1u);
  EXPECT_EQ(R.BackwardRequests, 1u);
  EXPECT_EQ(R.BytesTransmitted, 14u);
  EXPECT_EQ(parseCachePolicy("lru"), CachePolicy::Lru);
  EXPECT_EQ(parseCommVolumeKind("block-residual-cache"),
            CommVolumeKind::BlockResidualCache);
  EXPECT_FALSE(parseCacheEviction("sometimes"));
}
