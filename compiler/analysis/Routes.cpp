//===- Routes.cpp - routes, data and loss ranks, weight-sharing groups ----===//
#include "pps/analysis/Routes.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

namespace pps::analysis {

bool ModelLayout::sharesWeights() const {
  return llvm::any_of(Groups, [](const auto &G) { return G.size() > 1; });
}

const Route &ModelLayout::routeOf(int32_t Mb) const {
  for (const Route &R : Routes)
    if (Mb >= R.FirstMicrobatch && Mb < R.FirstMicrobatch + R.Microbatches)
      return R;
  assert(false && "a microbatch outside the topology has no route");
  return Routes.front();
}

/// Appends V to a sorted list unless it is there.
static void insertSorted(llvm::SmallVectorImpl<int32_t> &L, int32_t V) {
  auto It = llvm::lower_bound(L, V);
  if (It == L.end() || *It != V)
    L.insert(It, V);
}

ModelLayout modelLayout(const ir::Topology &T) {
  ModelLayout L;
  schema::Route Rule = T.route();
  // The schema's route rule changes only where a direction starts: one
  // route per direction, each a contiguous run of microbatches.
  int32_t D = T.Directions > 0 ? T.Directions : 1;
  for (int32_t K = 0; K < D && T.Microbatches > 0; ++K) {
    int64_t Begin = int64_t(T.Microbatches) * K / D;
    int64_t End = int64_t(T.Microbatches) * (K + 1) / D;
    if (Begin == End)
      continue;
    Route R;
    R.FirstMicrobatch = int32_t(Begin);
    R.Microbatches = int32_t(End - Begin);
    R.FirstStage = Rule.firstStage(R.FirstMicrobatch);
    R.LastStage = Rule.lastStage(R.FirstMicrobatch);
    bool Placed = int32_t(T.StageToRank.size()) == T.Stages &&
                  R.FirstStage >= 0 && R.LastStage < T.Stages;
    R.DataRank = Placed ? T.rankOf(R.FirstStage) : -1;
    R.LossRank = Placed ? T.rankOf(R.LastStage) : -1;
    if (R.DataRank >= 0)
      insertSorted(L.DataRanks, R.DataRank);
    if (R.LossRank >= 0)
      insertSorted(L.LossRanks, R.LossRank);
    L.Routes.push_back(R);
  }
  // Layer k is the k-th stage of every route; a stage no route traverses
  // (none with the route rules above) is a layer of its own.
  L.GroupOf.assign(size_t(std::max(T.Stages, 0)), -1);
  int32_t Layers = 0;
  for (const Route &R : L.Routes)
    for (int32_t St = R.FirstStage; St <= R.LastStage; ++St)
      if (St >= 0 && St < T.Stages && L.GroupOf[size_t(St)] < 0) {
        L.GroupOf[size_t(St)] = St - R.FirstStage;
        Layers = std::max(Layers, St - R.FirstStage + 1);
      }
  for (int32_t &G : L.GroupOf)
    if (G < 0)
      G = Layers++;
  L.Groups.resize(size_t(Layers));
  for (int32_t St = 0; St < T.Stages; ++St)
    L.Groups[size_t(L.GroupOf[size_t(St)])].push_back(St);
  return L;
}

} // namespace pps::analysis
