//===- Routes.h - routes, data and loss ranks, weight-sharing groups ------===//
//
// What a runtime needs to know about the model a schedule trains, beyond
// the actions themselves, derived once from the topology so that every
// export (JSON, the C++ executor's ScheduleDesc, the Python module) says
// the same:
//
//  * the routes: which microbatches traverse which stages (every stage
//    unless `directions 2`, where microbatches [0, M/2) traverse [0, S/2)
//    and the others [S/2, S), as DualPipe's two directions do);
//  * where data enters (the rank of each route's first stage, which reads
//    the microbatch's input) and where losses are computed (the rank of
//    each route's last stage);
//  * the weight-sharing groups: the k-th stage of every route holds layer k
//    of the model, so stages at the same position on different routes hold
//    copies of the same weights. A runtime must initialise the copies
//    alike and sum their gradients over the group before the optimizer
//    steps (DualPipe: stage k and stage S/2 + k; without that the two
//    directions train two different models and the result diverges from
//    the unpipelined model).
//
// Work and memory are linear in the number of stages.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace pps::analysis {

/// One route through the stages.
struct Route {
  /// The microbatches [FirstMicrobatch, FirstMicrobatch + Microbatches).
  int32_t FirstMicrobatch = 0;
  int32_t Microbatches = 0;
  /// The stages [FirstStage, LastStage] they traverse, in that order.
  int32_t FirstStage = 0;
  int32_t LastStage = 0;
  /// The rank of FirstStage (reads each microbatch's input) and of
  /// LastStage (computes each microbatch's loss).
  int32_t DataRank = -1;
  int32_t LossRank = -1;
};

/// The routes, data and loss ranks and weight-sharing groups of a topology.
struct ModelLayout {
  llvm::SmallVector<Route, 2> Routes;
  /// Per stage, its weight group: the layer of the model whose weights it
  /// holds (its position on its route).
  llvm::SmallVector<int32_t, 16> GroupOf;
  /// Per group (layer), its stages, ascending. Every stage is in exactly
  /// one group; a group of more than one stage shares weights.
  std::vector<llvm::SmallVector<int32_t, 2>> Groups;
  /// The ranks that read microbatch inputs and that compute losses,
  /// ascending, each once.
  llvm::SmallVector<int32_t, 4> DataRanks;
  llvm::SmallVector<int32_t, 4> LossRanks;

  /// True if some group has more than one stage.
  bool sharesWeights() const;
  /// The route microbatch Mb takes (Mb must be a microbatch of the
  /// topology).
  const Route &routeOf(int32_t Mb) const;
};

/// The layout of T. Requires: T's stage -> rank map filled in (as the front
/// end and the importers leave it).
ModelLayout modelLayout(const ir::Topology &T);

} // namespace pps::analysis
