//===- InsertComms.h - insert-comms: send/recv insertion ------------------===//
//
// Requires: verify-deps reported no error (every compute present once, on
//   its stage's rank, in dependency order per rank). On other input it never
//   crashes, but the result is only as good as the input.
// Guarantees, for a schedule without comms: every cross-rank dependency
//   F(m,s-1) -> F(m,s) and B/I(m,s+1) -> B/I(m,s) gets a SEND on the
//   producer's rank and the matching RECV on the consumer's rank; adjacent
//   stages on one rank get none; the recv sits directly before its consumer
//   (before the overlap pair holding it); and all ranks' programs are
//   restrictions of one global order of events in which each send/recv pair
//   is one event, so the result cannot deadlock under rendezvous, eager or
//   batched matching (docs/passes.md has the argument; the deadlock pass
//   checks it independently). If the compute order itself has a cycle
//   across ranks, reports a deadlock and leaves the schedule unchanged.
// Where each pair goes (InsertCommsOptions::Placement):
//   * consumer: the recv directly before its consumer, the send at the
//     consumer's start time on the producer's rank (the above);
//   * producer: the send directly after its producer, the recv at the
//     producer's end time on the consumer's rank;
//   * optimize: per pair the one of the two that the timing engine, under
//     the schedule's comm model and stream rule, finds faster, starting from
//     consumer and keeping a change only if the makespan drops (so never
//     slower than consumer); every candidate is a restriction of one global
//     order, so the proof holds for each (docs/passes.md);
//   * pytorch: what PyTorch's _add_send_recv does (torch.distributed.
//     pipelining): ranks in lockstep rounds, each appending its next
//     compute once its input's receive is in its list, then the send, and
//     the receive onto the consumer's rank at once. Not deadlock-free by
//     construction (the deadlock pass says); there to lint what PyTorch
//     would run.
// The default is optimize under a stream rule with async comm (where the
// placement changes the time: docs/simulation.md "Streams"), consumer
// otherwise.
// For a schedule that already has comms: adds nothing and checks them with
//   the verify-deps rules (unless verify-deps already did); with
//   ReorderComms (`emit --reorder-comms`, `lint --fix`), once they check,
//   replaces them by the optimized placement if that is faster under the
//   schedule's model (AnalysisResults::Reordered says by how much).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/passes/PassManager.h"

#include <optional>

namespace pps::passes {

enum class CommPlacement : uint8_t { Consumer, Producer, Optimize, PyTorch };

/// "consumer", "producer", "optimize", "pytorch".
llvm::StringRef commPlacementName(CommPlacement P);
/// The placement named Name, if any.
std::optional<CommPlacement> commPlacementNamed(llvm::StringRef Name);

struct InsertCommsOptions {
  /// Unset: optimize under a stream rule with async comm, else consumer.
  std::optional<CommPlacement> Placement;
  /// Replace a schedule's own comms by the optimized placement when faster.
  bool ReorderComms = false;
};

/// The insert-comms pass.
std::unique_ptr<Pass> createInsertCommsPass(InsertCommsOptions Opts = {});

} // namespace pps::passes
