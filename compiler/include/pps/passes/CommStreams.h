//===- CommStreams.h - comm-streams: what the stream rule costs -----------===//
//
// Under a stream rule (ir::CommStream: `comm { model nccl; }`, `stream
// rank;`), a receive posted before its data can arrive holds back every
// operation behind it on its stream: the head-of-line blocking of NCCL's
// in-order streams (PyTorch #165664, #188833). The pass times the schedule
// under the rule (the timing engine, pps/analysis/Timing.h) and turns each
// receive that held another operation back into an `early-recv` warning that
// says what it delayed, by how much, and what moving it to its consumer
// would change:
//   `recv F0@8 <- 7`, posted 5 actions before `F0@8`, holds back
//   `send F1@0 -> 1` by 3 (makespan +2 against the receive moved to its
//   consumer)
// A receive that holds nothing back costs nothing and is not reported, so
// the warning fires only where its cost is positive under the chosen model.
//
// Requires: a deadlock-free schedule with comms (the deadlock pass proved
//   it: AnalysisResults::DeadlockFree); does nothing otherwise, and nothing
//   without a stream rule or with blocking comm.
// Guarantees: only warnings; the schedule is read only. Work: one timing
//   run, plus one per receive whose makespan effect is measured (at most
//   MaxTimedEarlyRecvs, the receives that hold back the most), each linear
//   in the number of actions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/passes/PassManager.h"

namespace pps::passes {

/// The receives whose makespan effect comm-streams measures (each costs a
/// timing run); the others report the delay they cause alone.
constexpr unsigned MaxTimedEarlyRecvs = 8;

/// The comm-streams pass.
std::unique_ptr<Pass> createCommStreamsPass();

} // namespace pps::passes
