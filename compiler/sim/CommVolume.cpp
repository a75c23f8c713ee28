//===- CommVolume.cpp - communication volume with a cross-stage cache -----===//
#include "pps/sim/CommVolume.h"

#include "pps/analysis/Dependencies.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>

namespace pps::sim {

llvm::StringRef commVolumeKindName(CommVolumeKind K) {
  return K == CommVolumeKind::ActivationTensor ? "activation-tensor"
                                               : "block-residual-cache";
}
llvm::StringRef cachePolicyName(CachePolicy P) {
  switch (P) {
  case CachePolicy::Disabled:
    return "disabled";
  case CachePolicy::Fifo:
    return "fifo";
  case CachePolicy::Lru:
    return "lru";
  }
  llvm_unreachable("every CachePolicy has a name");
}
llvm::StringRef cacheEvictionName(CacheEviction E) {
  return E == CacheEviction::StepBoundary ? "step-boundary" : "none";
}

std::optional<CommVolumeKind> parseCommVolumeKind(llvm::StringRef S) {
  return llvm::StringSwitch<std::optional<CommVolumeKind>>(S)
      .Cases("activation-tensor", "activation",
             CommVolumeKind::ActivationTensor)
      .Cases("block-residual-cache", "residual",
             CommVolumeKind::BlockResidualCache)
      .Default(std::nullopt);
}
std::optional<CachePolicy> parseCachePolicy(llvm::StringRef S) {
  return llvm::StringSwitch<std::optional<CachePolicy>>(S)
      .Case("disabled", CachePolicy::Disabled)
      .Case("fifo", CachePolicy::Fifo)
      .Case("lru", CachePolicy::Lru)
      .Default(std::nullopt);
}
std::optional<CacheEviction> parseCacheEviction(llvm::StringRef S) {
  return llvm::StringSwitch<std::optional<CacheEviction>>(S)
      .Case("step-boundary", CacheEviction::StepBoundary)
      .Case("none", CacheEviction::None)
      .Default(std::nullopt);
}

namespace {

/// (source rank, destination rank, block) and (microbatch, step).
using CacheKey = std::pair<uint64_t, uint64_t>;
using Resident = uint64_t; // (step << 32) | microbatch

struct Key {
  int32_t Src, Dst;
  uint32_t Block;
  uint32_t Mb, Step;
  CacheKey pack() const {
    return {(uint64_t(uint32_t(Src)) << 40) | (uint64_t(uint32_t(Dst)) << 20) |
                Block,
            (uint64_t(Step) << 32) | Mb};
  }
  Resident resident() const { return (uint64_t(Step) << 32) | Mb; }
};

/// The cross-stage cache of burn_dragon_train's pipeline communication
/// simulator (a Rust crate), with FIFO or LRU replacement of
/// whole (step, microbatch) groups.
class CrossStageCache {
public:
  CrossStageCache(const CacheConfig &C, CommVolumeReport &Rep)
      : Cfg(C), Rep(Rep),
        Enabled(C.Enabled && C.Policy != CachePolicy::Disabled),
        MaxInflight(std::max<uint32_t>(1, C.MaxInflightMicrobatches)) {}

  uint64_t bypass(const Key &K, uint64_t Bytes) {
    freshness(K.Step);
    Rep.BytesRequested += Bytes;
    Rep.BytesTransmitted += Bytes;
    ++Rep.Misses;
    return Bytes;
  }

  uint64_t forward(const Key &K, uint64_t Bytes) {
    return access(K, Bytes, false);
  }

  uint64_t backward(const Key &K, uint64_t Bytes) {
    if (Enabled && Cfg.ReuseAcrossBackward)
      return access(K, Bytes, true);
    return bypass(K, Bytes);
  }

private:
  uint64_t access(const Key &K, uint64_t Bytes, bool BackwardReuse) {
    freshness(K.Step);
    Rep.BytesRequested += Bytes;
    if (!Enabled) {
      Rep.BytesTransmitted += Bytes;
      ++Rep.Misses;
      return Bytes;
    }
    CacheKey CK = K.pack();
    if (Entries.contains(CK)) {
      ++Rep.Hits;
      ++Rep.ResendsAvoided;
      if (BackwardReuse)
        ++Rep.BackwardReuseHits;
      if (Cfg.Policy == CachePolicy::Lru)
        touch(K.resident());
      return 0;
    }
    ++Rep.Misses;
    Rep.BytesTransmitted += Bytes;
    insert(K, CK);
    return Bytes;
  }

  void freshness(uint32_t Step) {
    if (HaveStep && CurStep == Step)
      return;
    HaveStep = true;
    CurStep = Step;
    if (Cfg.Eviction == CacheEviction::StepBoundary)
      clear();
  }

  void clear() {
    Rep.InvalidatedEntries += Entries.size();
    Entries.clear();
    Order.clear();
    Groups.clear();
  }

  /// Most recently used group to the back.
  void touch(Resident R) {
    auto It = llvm::find(Order, R);
    if (It == Order.end())
      return;
    Order.erase(It);
    Order.push_back(R);
  }

  void insert(const Key &K, CacheKey CK) {
    Resident R = K.resident();
    if (!Groups.count(R)) {
      while (Order.size() >= MaxInflight) {
        Resident Old = Order.front();
        Order.erase(Order.begin());
        auto G = Groups.find(Old);
        if (G == Groups.end())
          continue;
        for (const CacheKey &E : G->second)
          Rep.InvalidatedEntries += Entries.erase(E) ? 1 : 0;
        Groups.erase(G);
      }
      Order.push_back(R);
    }
    if (Entries.insert(CK).second)
      Groups[R].push_back(CK);
  }

  const CacheConfig &Cfg;
  CommVolumeReport &Rep;
  bool Enabled;
  uint32_t MaxInflight;
  bool HaveStep = false;
  uint32_t CurStep = 0;
  llvm::DenseSet<CacheKey> Entries;
  /// Resident (step, microbatch) groups, oldest (or least recent) first.
  std::vector<Resident> Order;
  llvm::DenseMap<Resident, std::vector<CacheKey>> Groups;
};

struct Event {
  double Start;
  uint32_t Index;
  int32_t Rank;
  ir::Action A;
};

} // namespace

CommVolumeReport computeCommVolume(const ir::Schedule &S,
                                   const CommVolumeOptions &Opts,
                                   const SimResult *Times) {
  CommVolumeReport Rep;
  Rep.Kind = Opts.Kind;
  Rep.PayloadBytes =
      Opts.PayloadBytes
          ? *Opts.PayloadBytes
          : (S.Cost.ActivationBytes > 0 ? uint64_t(S.Cost.ActivationBytes) : 1);
  int32_t P = int32_t(S.Ranks.size()), NS = S.Topo.Stages;
  Rep.TransmittedBySource.assign(std::max(P, 0), 0);
  uint32_t L = std::max<uint32_t>(1, Opts.LayersPerStage);
  uint32_t LPB = std::max<uint32_t>(1, Opts.LayersPerBlock);
  auto RankOf = [&](int32_t St) {
    return St >= 0 && St < int32_t(S.Topo.StageToRank.size())
               ? S.Topo.StageToRank[St]
               : -1;
  };
  auto BlockOf = [&](int32_t St) {
    return uint32_t((uint64_t(St + 1) * L - 1) / LPB);
  };

  // Forward and backward computes in execution order.
  std::vector<Event> Events;
  bool UseTimes = Times && int32_t(Times->Times.size()) == P;
  for (int32_t R = 0; R < P; ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    for (uint32_t I = 0; I < Acts.size(); ++I) {
      const ir::Action &A = Acts[I];
      if (A.Kind != ir::ActionKind::F && A.Kind != ir::ActionKind::B &&
          A.Kind != ir::ActionKind::I)
        continue;
      if (A.Stage < 0 || A.Stage >= NS || A.Microbatch < 0)
        continue;
      double T = UseTimes ? Times->Times[R].Start[I] : double(I);
      if (std::isnan(T))
        T = std::numeric_limits<double>::infinity();
      Events.push_back({T, I, R, A});
    }
  }
  llvm::sort(Events, [](const Event &X, const Event &Y) {
    return std::tie(X.Start, X.Rank, X.Index) <
           std::tie(Y.Start, Y.Rank, Y.Index);
  });

  CrossStageCache Cache(Opts.Cache, Rep);
  uint64_t Bytes = Rep.PayloadBytes;
  bool Residual = Opts.Kind == CommVolumeKind::BlockResidualCache;
  for (uint32_t Step = 0; Step < std::max<uint32_t>(1, Opts.Steps); ++Step)
    for (const Event &E : Events) {
      const ir::Action &A = E.A;
      bool Fwd = A.Kind == ir::ActionKind::F;
      Key K{0, 0, 0, uint32_t(A.Microbatch), Step};
      // The stage that consumes the output (the schema's rule).
      int32_t Cs = analysis::consumerStage(S.Topo, A);
      if (Cs < 0 || Cs >= NS)
        continue;
      if (Fwd) {
        K.Src = RankOf(A.Stage);
        K.Dst = RankOf(Cs);
        K.Block = BlockOf(A.Stage);
      } else if (Residual) {
        // The receiving stage asks again for the residual it got forward.
        K.Src = RankOf(Cs);
        K.Dst = RankOf(A.Stage);
        K.Block = BlockOf(Cs);
      } else {
        K.Src = RankOf(A.Stage);
        K.Dst = RankOf(Cs);
        K.Block = BlockOf(Cs);
      }
      if (K.Src == K.Dst || K.Src < 0 || K.Dst < 0)
        continue;
      ++(Fwd ? Rep.ForwardRequests : Rep.BackwardRequests);
      uint64_t Sent = !Residual ? Cache.bypass(K, Bytes)
                      : Fwd     ? Cache.forward(K, Bytes)
                                : Cache.backward(K, Bytes);
      if (K.Src < P)
        Rep.TransmittedBySource[K.Src] += Sent;
    }
  return Rep;
}

} // namespace pps::sim
