//===- Dependencies.h - the producer rule on the IR -----------------------===//
//
// What each compute waits for and which comm carries it, on an IR schedule:
// the schema's producer rule (ppsrt/Schema.h: F(m,s) needs F(m,s-1);
// I/B(m,s) needs I/B(m,s+1), or F(m,s) on the microbatch's last stage;
// W(m,s) needs I(m,s); routes per Topology::Directions) applied to IR
// actions. verify-deps, insert-comms (through the passes' unit index),
// the timing engine's dataflow mode, the comm-volume report and synthesis
// ask these, and the runtime asks the schema directly, so the rule has one
// home.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"

namespace pps::analysis {

/// The producer of compute A: what it needs, on which stage, and whether
/// that stage is a neighbour (whose output may come from another rank).
inline schema::Producer producerOf(const ir::Topology &T, const ir::Action &A) {
  return schema::producerOf(A.Kind, A.Microbatch, A.Stage, T.route());
}

/// The stage that consumes compute A's cross-stage output, or -1.
inline int32_t consumerStage(const ir::Topology &T, const ir::Action &A) {
  return schema::consumerStage(A.Kind, A.Microbatch, A.Stage, T.route());
}

/// The receive that carries A's cross-stage input (RECV_F for F, RECV_B
/// for B/I), or ActionKind::Idle if A needs none.
inline ir::ActionKind inputRecvKind(const ir::Topology &T,
                                    const ir::Action &A) {
  return schema::inputRecvKind(A.Kind, A.Microbatch, A.Stage, T.route());
}

/// The send that carries A's cross-stage output (SEND_F for F, SEND_B for
/// B/I), or ActionKind::Idle if nothing on a neighbouring stage consumes it.
inline ir::ActionKind outputSendKind(const ir::Topology &T,
                                     const ir::Action &A) {
  return schema::outputSendKind(A.Kind, A.Microbatch, A.Stage, T.route());
}

} // namespace pps::analysis
