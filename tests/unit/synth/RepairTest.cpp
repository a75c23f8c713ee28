//===- RepairTest.cpp - repairOrder against the rule it implements --------===//
//
// repairOrder keeps what is ready up to date instead of scanning every
// rank's rest at each move. This test holds it against the rule written
// the plain way (run the order; when every rank is stuck, scan the ranks in
// order for the first job that could run, an I or W before any F, an F only
// where the rank's memory stays within the limit, and rotate it to the head
// of its rank's rest) on random orders, which mostly wait on themselves.
//
//===----------------------------------------------------------------------===//
#include "pps/synth/Problem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace pps;
using namespace pps::synth;

namespace {

/// The rule, step by step (the implementation before the ready sets).
bool repairByScanning(const Problem &P, Order &O, unsigned MaxMoves) {
  const int32_t N = P.numJobs();
  std::vector<uint8_t> Done(N, 0);
  auto Ready = [&](const Job &J) {
    std::optional<Job> Pr = P.producerOf(J);
    return !Pr || Done[P.index(Pr->Kind, Pr->Stage, Pr->Mb)];
  };
  size_t Total = 0;
  for (const auto &Jobs : O.Ranks)
    Total += Jobs.size();
  std::vector<size_t> Ptr(P.Ranks, 0);
  std::vector<int64_t> MemAtPtr(P.Ranks, 0);
  size_t Finished = 0;
  unsigned Moves = 0;
  while (Finished < Total) {
    bool Progress = false;
    for (int32_t R = 0; R < P.Ranks; ++R) {
      std::vector<Job> &Jobs = O.Ranks[R];
      while (Ptr[R] < Jobs.size() && Ready(Jobs[Ptr[R]])) {
        const Job &J = Jobs[Ptr[R]++];
        Done[P.index(J.Kind, J.Stage, J.Mb)] = 1;
        MemAtPtr[R] += P.memoryDelta(J.Kind, J.Stage);
        ++Finished;
        Progress = true;
      }
    }
    if (Progress)
      continue;
    if (Moves++ >= MaxMoves)
      return false;
    bool Moved = false;
    for (int Pass = 0; Pass < 2 && !Moved; ++Pass)
      for (int32_t R = 0; R < P.Ranks && !Moved; ++R) {
        std::vector<Job> &Jobs = O.Ranks[R];
        int64_t Mem = MemAtPtr[R], Peak = Mem;
        for (size_t K = Ptr[R]; K < Jobs.size(); ++K) {
          const Job &J = Jobs[K];
          bool IsF = J.Kind == JobKind::F;
          if ((Pass == 1) == IsF && Ready(J) &&
              (!IsF ||
               Peak + P.memoryDelta(J.Kind, J.Stage) <= P.MemoryLimit)) {
            std::rotate(Jobs.begin() + Ptr[R], Jobs.begin() + K,
                        Jobs.begin() + K + 1);
            Moved = true;
            break;
          }
          Mem += P.memoryDelta(J.Kind, J.Stage);
          Peak = std::max(Peak, Mem);
        }
      }
    if (!Moved)
      return false;
  }
  return true;
}

/// Every job of each rank, in a random order.
Order randomOrder(const Problem &P, std::mt19937 &Rng) {
  Order O;
  O.Ranks.assign(P.Ranks, {});
  for (int32_t S = 0; S < P.Stages; ++S)
    for (int32_t Mb = 0; Mb < P.Microbatches; ++Mb)
      for (JobKind K : {JobKind::F, JobKind::I, JobKind::W})
        O.Ranks[P.rankOf(S)].push_back({K, Mb, S});
  for (auto &Jobs : O.Ranks)
    std::shuffle(Jobs.begin(), Jobs.end(), Rng);
  return O;
}

TEST(SynthRepair, AgreesWithTheScanningRule) {
  std::mt19937 Rng(20261127);
  int Repaired = 0, Refused = 0;
  for (int Case = 0; Case < 3000; ++Case) {
    int32_t Ranks = 2 + int32_t(Rng() % 5);
    int32_t Mb = 1 + int32_t(Rng() % 6);
    ir::Placement Pl = Rng() % 2 ? ir::Placement::V : ir::Placement::Loop;
    int64_t Chunks = Pl == ir::Placement::V ? 2 : 1;
    int64_t Limit = Chunks + int64_t(Rng() % (Chunks * Mb + 1));
    unsigned MaxMoves = Rng() % 4 == 0 ? 3u : ~0u;
    Problem P = Problem::make(Ranks, Mb, Pl, {1, 1, 1}, Limit);
    Order O = randomOrder(P, Rng);
    Order Want = O, Got = O;
    bool WantOk = repairByScanning(P, Want, MaxMoves);
    bool GotOk = repairOrder(P, Got, MaxMoves);
    ASSERT_EQ(GotOk, WantOk) << "case " << Case;
    if (!GotOk) {
      ++Refused;
      // A refused order is left as it was.
      for (int32_t R = 0; R < Ranks; ++R)
        ASSERT_TRUE(Got.Ranks[R] == O.Ranks[R]) << "case " << Case;
      continue;
    }
    ++Repaired;
    for (int32_t R = 0; R < Ranks; ++R)
      ASSERT_TRUE(Got.Ranks[R] == Want.Ranks[R])
          << "case " << Case << ", rank " << R;
    EXPECT_TRUE(evaluate(P, Got).Valid) << "case " << Case;
  }
  // Both outcomes are exercised.
  EXPECT_GT(Repaired, 300);
  EXPECT_GT(Refused, 100);
}

TEST(SynthRepair, RefusesOrdersThatMissJobs) {
  Problem P = Problem::make(2, 2, ir::Placement::Loop, {1, 1, 1}, 2);
  std::mt19937 Rng(1);
  Order O = randomOrder(P, Rng);
  O.Ranks[1].pop_back();
  Order Before = O;
  EXPECT_FALSE(repairOrder(P, O));
  EXPECT_TRUE(O.Ranks[1] == Before.Ranks[1]);
}

} // namespace
