//===- CommPlacement.h - where insert-comms puts each pair (private) ------===//
//
// Private to compiler/passes. The placements of insert-comms
// (pps/passes/InsertComms.h) other than the plain consumer merge, which
// stays in InsertComms.cpp:
//
//  * placeByKeys: every rank's program is its actions in order with the
//    pairs merged in by a key in one global order. A pair keyed "late" sits
//    at its consumer's start (the consumer merge's key); one keyed "early"
//    right after its producer (key: the producer's end, then its
//    resolution order). Both keys lie strictly between the producer's and
//    the consumer's, so every mix of them leaves all programs restrictions
//    of one global order in which each pair is one event: no comm model,
//    stream rule or eager threshold can deadlock it (docs/passes.md).
//  * placeOptimized: chooses per pair between the two keys with the timing
//    engine, under the schedule's comm model and stream rule.
//  * placeLikePyTorch: PyTorch's _add_send_recv.
//
// All take a schedule without comms and the dependency timeline of its
// compute order, and fill the programs in place.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "PassUtil.h"

namespace pps::passes::detail {

/// A point in the global order of events: a unit U has key (Start[U], 1,
/// Seq[U], 2, 0); the pair feeding member J of consumer C from producer P
/// has, placed late, (Start[C], 0, Seq[C], J, 0) when P started strictly
/// earlier (so the send precedes whatever the producer's rank starts at
/// the same moment as C), else (Start[C], 1, Seq[C], J, 0), just below C;
/// placed early, (End[P], 1, Seq[P], 3, Seq[C] * 2 + J), just above P.
/// Either way key(P) < key(pair) < key(C), and keys are all distinct.
struct PairKey {
  double Time;
  uint32_t Phase, Seq, Sub, Tie;

  static PairKey unit(const Timeline &TL, uint32_t U) {
    return {TL.Start[U], 1, TL.Seq[U], 2, 0};
  }
  static PairKey late(const Timeline &TL, uint32_t P, uint32_t C, uint32_t J) {
    return {TL.Start[C], TL.Start[P] < TL.Start[C] ? 0u : 1u, TL.Seq[C], J, 0};
  }
  /// After the producer's own key (same Seq, Sub 3 > 2; or a later time),
  /// before the consumer's (its start is at least the producer's end, and a
  /// tie is broken by Seq: the producer was resolved first).
  static PairKey early(const Timeline &TL, uint32_t P, uint32_t C, uint32_t J) {
    return {TL.End[P], 1, TL.Seq[P], 3, TL.Seq[C] * 2 + J};
  }
  bool before(const PairKey &O) const {
    if (Time != O.Time)
      return Time < O.Time;
    if (Phase != O.Phase)
      return Phase < O.Phase;
    if (Seq != O.Seq)
      return Seq < O.Seq;
    if (Sub != O.Sub)
      return Sub < O.Sub;
    return Tie < O.Tie;
  }
};

/// The pairs of a placement: per consumer entry (unit * 2 + member, the
/// timeline's indexing), where its receive and its producer's send ended
/// up (packed rank << 32 | index; ~0 for an entry without a pair).
struct PairSites {
  std::vector<uint64_t> Send, Recv;
};

/// Places every pair by its key: Early[entry] = 1 puts the pair of that
/// consumer entry right after its producer, 0 at its consumer. Returns the
/// number of actions added; fills Sites when given.
uint64_t placeByKeys(ir::Schedule &S, const UnitIndex &U, const Timeline &TL,
                     const std::vector<uint8_t> &Early,
                     PairSites *Sites = nullptr);

/// The makespan under S's comm model and stream rule of the placement
/// optimize chooses, starting from the all-late one (Late, already placed:
/// S itself when given); leaves the chosen programs in S. Never slower than
/// Late. Returns that makespan.
double placeOptimized(ir::Schedule &S, const UnitIndex &U, const Timeline &TL);

/// PyTorch's _add_send_recv on S's compute order. False (with a deadlock
/// error naming where the ranks stop) if its lockstep rounds stop making
/// progress, as PyTorch's own assertion would.
bool placeLikePyTorch(ir::Schedule &S, const UnitIndex &U,
                      DiagnosticEngine &Diags, uint64_t &Inserted);

/// The makespan of S under its comm model and stream rule (async timing
/// unless the schedule says blocking); +inf if it does not finish.
double makespanUnderModel(const ir::Schedule &S);

} // namespace pps::passes::detail
