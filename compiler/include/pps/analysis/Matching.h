//===- Matching.h - FIFO matching of sends and receives -------------------===//
//
// Pairs every send with its receive the way NCCL and MPI without tags do:
// per (source rank, destination rank) channel, the n-th send from a to b
// with the n-th receive at b from a, in program order. The pair must carry
// the same message (the schema's partner rule, commsMatch); a pair that
// does not is a FIFO mismatch, an operation past the other side's last is
// unmatched. Every comm's peer is checked against the topology too.
//
// The deadlock pass and the simulator use this one matching (the simulator
// reports its findings before it runs when no deadlock pass ran before it);
// reportMatching words every finding once, with the schema's wording of a
// FIFO mismatch that the runtimes use as well.
//
// Requires: nothing (any schedule).
// Guarantees: work linear in the number of actions; pure (no diagnostics,
//   the schedule is read only); reportMatching reports at most one
//   mismatch and one unmatched operation per channel, with counts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include <cstdint>
#include <vector>

namespace pps::analysis {

/// No action (an unmatched comm's partner).
constexpr uint32_t NoAction = ~uint32_t(0);

/// What is wrong with a comm's peer.
enum class PeerProblem : uint8_t {
  None,
  /// The peer is not a rank of the pipeline: the comm is left unmatched.
  NoSuchRank,
  /// The comm names its own rank (it is still matched on the rank's
  /// channel to itself).
  Self,
  /// The partner stage is on another rank than the peer.
  WrongPeer,
};

/// Actions are numbered globally: rank by rank, in program order.
struct ActionIds {
  /// Global id of each rank's first action; size ranks + 1.
  std::vector<uint32_t> Base;

  void build(const ir::Schedule &S);
  uint32_t gid(int32_t Rank, size_t Index) const {
    return Base[size_t(Rank)] + uint32_t(Index);
  }
  int32_t rankOf(uint32_t G) const;
  size_t indexOf(uint32_t G) const { return G - Base[size_t(rankOf(G))]; }
  /// indexOf(G) when G is known to be on Rank (a comm's partner is on its
  /// peer's rank): no search.
  size_t indexOn(int32_t Rank, uint32_t G) const {
    return G - Base[size_t(Rank)];
  }
  uint32_t size() const { return Base.empty() ? 0 : Base.back(); }
};

/// One (source, destination) channel and what is wrong on it.
struct ChannelMatch {
  int32_t Src = 0, Dst = 0;
  uint32_t Sends = 0, Recvs = 0;
  /// The receive of the first mismatched pair, its 0-based position on the
  /// channel, and how many pairs mismatch.
  uint32_t FirstBad = NoAction, BadOrdinal = 0, BadCount = 0;
  /// The first operation nothing matches (not counting comms whose peer is
  /// already wrong), and how many there are.
  uint32_t FirstLoose = NoAction, LooseCount = 0;
};

/// The FIFO matching of a schedule's comms.
struct Matching {
  ActionIds Ids;
  /// Per action: the comm it is matched with, or NoAction.
  std::vector<uint32_t> Partner;
  /// Per action: what is wrong with its peer (comms only).
  std::vector<PeerProblem> Peer;
  /// In the order the channels were first used.
  std::vector<ChannelMatch> Channels;

  uint32_t partnerOf(int32_t Rank, size_t Index) const {
    return Partner[Ids.gid(Rank, Index)];
  }
  /// True if every comm has its partner, carries the same message and names
  /// the right peer.
  bool clean() const;
};

/// Matches S's sends and receives.
Matching matchComms(const ir::Schedule &S);

/// Reports what the matching found: wrong-peer, self-comm, fifo-mismatch,
/// unmatched-send and unmatched-recv errors.
void reportMatching(const ir::Schedule &S, const Matching &M,
                    DiagnosticEngine &D);

} // namespace pps::analysis
