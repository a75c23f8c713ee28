//===- SynthPass.h - synth: fill in a `schedule synth(memory: N)` request -===//
//
// Requires: a schedule whose Synth request is set and whose rank programs
//   are empty (what the front end produces for `schedule synth(...)`); a
//   schedule without a request passes through unchanged, so the pass can
//   always run first in the pipeline.
// Guarantees: on success every rank holds a compute-only order of F, I and
//   W (the backward is split) with explicit stages, the schedule's memory
//   limit is the request's (in chunk units), the peak activation memory per
//   rank is within it, and the request is cleared (the schedule now reads
//   as explicit rank lists). Infeasible or unsupported requests report
//   synth-infeasible / invalid-value at the request's location and leave
//   the schedule unchanged.
//
// Request arguments besides `memory`: `exact: 0` turns the exact search off
// (it runs by default when ranks <= 4 and microbatches <= 8).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/passes/PassManager.h"
#include "pps/synth/Algorithms.h"

namespace pps::synth {

/// What the pass does, for callers that also want the result's figures
/// and algorithm (ppsc synth): fills S from its request. False (with a
/// diagnostic) if the request cannot be met; true and nothing done if S
/// has no request. Threads as SynthOptions::Threads.
bool runSynthRequest(ir::Schedule &S, DiagnosticEngine &Diags,
                     Result *Out = nullptr, unsigned Threads = 0);

/// The synth pass ("synth").
std::unique_ptr<passes::Pass> createSynthPass();

} // namespace pps::synth
