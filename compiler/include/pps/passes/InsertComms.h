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
// For a schedule that already has comms: adds nothing and checks them with
//   the verify-deps rules (unless verify-deps already did).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/passes/PassManager.h"

namespace pps::passes {

/// The insert-comms pass.
std::unique_ptr<Pass> createInsertCommsPass();

} // namespace pps::passes
