//===- PassUtil.h - helpers shared by the passes (private)
//-----------------===//
//
// Private to compiler/passes: action spelling for messages, locations with
// the builder fallback, the flat (microbatch, stage) index, the compute
// "unit" view of a schedule (a compute, or an overlap pair, is one unit) and
// the dependency timeline that insert-comms and align-bubbles share, and the
// shortest-cycle search over a rank wait-for graph.
//
// Everything here is linear in the number of actions and uses flat arrays
// indexed by (microbatch, stage) or by unit; nothing allocates per action.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/analysis/Deadlock.h"
#include "pps/analysis/Dependencies.h"
#include "pps/analysis/Describe.h"
#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Compiler.h"

#include <algorithm>

#include <cstdint>
#include <string>
#include <vector>

namespace pps::passes::detail {

constexpr uint32_t None = ~uint32_t(0);

/// Where to point a diagnostic about an action, and how to name it: the
/// analysis layer's (pps/analysis/Describe.h).
using analysis::describe;
using analysis::locOf;

/// The compute a comm serves lives on stage A.Stage; the partner stage (the
/// other end of the message; the schema's rule) and the matching comm kind.
inline int32_t partnerStage(const ir::Action &A) {
  return schema::partnerStage(A.Kind, A.Stage);
}

/// True if the compute/comm/control fields are inside the topology.
inline bool inRange(const ir::Topology &T, const ir::Action &A) {
  if (A.Kind == ir::ActionKind::Idle)
    return true;
  if (A.Stage < 0 || A.Stage >= T.Stages)
    return false;
  if (ir::isControl(A.Kind))
    return true;
  return A.Microbatch >= 0 && A.Microbatch < T.Microbatches &&
         T.hasStage(A.Microbatch, A.Stage);
}

/// "1st", "2nd", "3rd", "4th", ...
using schema::ordinal;

/// Entries of None per (microbatch, stage) cell, Stride slots a cell, for
/// the cells a schedule uses. Dense (stage-major: a rank walks its stages'
/// microbatches in order, so its accesses, and those to the neighbouring
/// stages it talks to, are sequential) when stages x microbatches is within
/// a small multiple of the actions; otherwise a hash of the cells that
/// occur, so that memory and work follow the actions present and not the
/// sizes declared (a one-line file may declare 65536 ranks and 16M
/// microbatches).
class CellTable {
public:
  void init(const ir::Topology &T, unsigned Stride, size_t Actions) {
    this->Stride = Stride;
    NM = uint64_t(std::max(T.Microbatches, 0));
    uint64_t Cells = NM * uint64_t(std::max(T.Stages, 0));
    Dense = Cells <= std::max<uint64_t>(4 * uint64_t(Actions), 1 << 20);
    Rows.clear();
    Index.clear();
    if (Dense)
      Rows.assign(size_t(Cells) * Stride, None);
  }
  bool dense() const { return Dense; }
  /// The entry at (slot, m, s), or None. (m, s) must be in range.
  uint32_t get(unsigned Slot, int32_t Mb, int32_t St) const {
    uint64_t K = key(Mb, St);
    if (LLVM_LIKELY(Dense))
      return Rows[size_t(K) * Stride + Slot];
    auto It = Index.find(K);
    return It == Index.end() ? None : Rows[size_t(It->second) * Stride + Slot];
  }
  /// The entry at (slot, m, s), made on first use.
  uint32_t &at(unsigned Slot, int32_t Mb, int32_t St) {
    uint64_t K = key(Mb, St);
    if (LLVM_LIKELY(Dense))
      return Rows[size_t(K) * Stride + Slot];
    auto [It, New] = Index.try_emplace(K, uint32_t(Rows.size() / Stride));
    if (New)
      Rows.resize(Rows.size() + Stride, None);
    return Rows[size_t(It->second) * Stride + Slot];
  }
  /// Calls F(row) for each cell with an entry (in no particular order).
  template <typename Fn> void forEachRow(Fn F) const {
    for (size_t I = 0; I < Rows.size(); I += Stride) {
      bool Any = false;
      for (unsigned K = 0; K < Stride; ++K)
        Any |= Rows[I + K] != None;
      if (Any)
        F(&Rows[I]);
    }
  }

private:
  uint64_t key(int32_t Mb, int32_t St) const {
    return uint64_t(St) * NM + uint64_t(Mb);
  }
  unsigned Stride = 1;
  uint64_t NM = 0;
  bool Dense = true;
  std::vector<uint32_t> Rows;
  llvm::DenseMap<uint64_t, uint32_t> Index;
};

/// Length of the unit starting at Acts[I] (a compute): 2 for an overlap
/// pair, else 1.
inline unsigned unitLength(llvm::ArrayRef<ir::Action> Acts, size_t I) {
  return Acts[I].overlapsNext() && I + 1 < Acts.size() &&
                 ir::isCompute(Acts[I + 1].Kind)
             ? 2
             : 1;
}

/// Calls F(Index, Member, Unit) for each member (0, or 1 for the second of
/// an overlap pair) of each compute unit of a rank's program Acts, in
/// program order; its first unit is FirstUnit (UnitIndex::RankBase).
template <class Fn>
void forEachUnitMember(llvm::ArrayRef<ir::Action> Acts, uint32_t FirstUnit,
                       Fn &&F) {
  uint32_t Unit = FirstUnit;
  for (size_t I = 0, N = Acts.size(); I < N;) {
    if (!ir::isCompute(Acts[I].Kind)) {
      ++I;
      continue;
    }
    unsigned Len = unitLength(Acts, I);
    for (unsigned J = 0; J < Len; ++J)
      F(I + J, J, Unit);
    I += Len;
    ++Unit;
  }
}

/// The compute units of a schedule: each compute action, or each overlap
/// pair, is one unit; units are numbered rank by rank in program order.
/// Unit-of lookups are by (m, s): unitF for F, unitBI for B or I (the
/// backward whose output gradient flows to stage s-1); the value is
/// unit * 2 + member (0 first, 1 second of an overlap pair), or None.
/// Only the first occurrence of a duplicated compute is registered, and
/// out-of-range computes are skipped, so the lookups are always safe.
struct UnitIndex {
  std::vector<uint32_t> RankBase; // first unit of each rank; size Ranks + 1
  std::vector<int32_t> UnitRank;  // rank of each unit
  CellTable Cells;                ///< slot 0: F, slot 1: B or I
  /// True if some F or B/I appears twice (only the first is registered).
  bool HasDuplicates = false;
  uint32_t numUnits() const { return RankBase.back(); }
  /// The entry of F(m, s) / B-or-I(m, s), or None; (m, s) in range.
  uint32_t unitF(int32_t Mb, int32_t St) const { return Cells.get(0, Mb, St); }
  uint32_t unitBI(int32_t Mb, int32_t St) const { return Cells.get(1, Mb, St); }

  void build(const ir::Schedule &S);
  /// The unit holding a registered compute (None if absent).
  static uint32_t unitOf(uint32_t Entry) {
    return Entry == None ? None : Entry >> 1;
  }
};

/// The producer of a compute's cross-stage input in the lookups, or None:
/// F(m,s) <- F(m,s-1); B/I(m,s) <- B/I(m,s+1) (the schema's rule, through
/// pps/analysis/Dependencies.h). Same-stage producers, such as the last
/// stage's F for its B, and W's I, are never cross-rank.
uint32_t producerEntry(const ir::Topology &T, const UnitIndex &U,
                       const ir::Action &A);
/// The consumer of a compute's cross-stage output (F(m,s) -> F(m,s+1),
/// B/I(m,s) -> B/I(m,s-1)), or None.
uint32_t consumerEntry(const ir::Topology &T, const UnitIndex &U,
                       const ir::Action &A);

/// Start and end time of every unit from the compute order alone: a unit
/// starts when its rank is free and every cross-rank input has arrived
/// (producer end + message time). Seq is the order in which the units were
/// resolved, a linear extension of the dependency DAG, so (Start, Seq) is a
/// total order consistent with every dependency and every rank's program
/// order.
struct Timeline {
  std::vector<double> Start, End;
  std::vector<uint32_t> Seq;
  /// Empty if every unit could be timed; otherwise, for each rank that got
  /// stuck, the unit it is stuck at and the producer unit it waits for.
  struct Stuck {
    int32_t Rank;
    uint32_t Unit, WaitsFor;
  };
  std::vector<Stuck> Blocked;
  double Makespan = 0;
  /// Per unit member (unit * 2 + member): the unit on another rank that
  /// produces its cross-stage input, and the consumer on another rank of its
  /// output as an entry (unit * 2 + member); None if there is none (or the
  /// compute is a duplicate). Filled for every unit, before any is timed.
  std::vector<uint32_t> CrossProd, CrossCons;

  /// Key order: true if unit A comes before unit B.
  bool before(uint32_t A, uint32_t B) const {
    return Start[A] < Start[B] || (Start[A] == Start[B] && Seq[A] < Seq[B]);
  }
};

/// Cost of one unit (an overlap pair costs the model's overlap time, or the
/// sum of its two computes). Never negative.
double unitCost(const ir::Schedule &S, const std::vector<ir::Action> &Acts,
                size_t I);

/// Computes the timeline. Returns false if some ranks are stuck (a cycle in
/// the compute order across ranks); Timeline::Blocked says where.
bool computeTimeline(const ir::Schedule &S, const UnitIndex &U, Timeline &T);

/// The shortest cycle of waiting ranks (the analysis layer's, shared with
/// the deadlock check).
using analysis::shortestCycle;

} // namespace pps::passes::detail
