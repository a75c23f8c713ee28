//===- TorchCsv.h - write PyTorch pipelining's schedule CSV ---------------===//
//
// The emitter for the CSV PyTorch's torch.distributed.pipelining runtime
// loads (`_PipelineScheduleRuntime._load_csv`); the format and the importer
// are described in pps/import/TorchCsv.h, the action spellings in
// pps/import/TorchNames.h.
//
// Export writes the CSV PyTorch loads, for any schedule:
//  * compute only (default): F/I/W/B and overlap pairs; an `idle(t)` is
//    round(t) empty cells (at least one); comm and control actions are
//    dropped, because PyTorch's compute-only loader rejects them and its
//    lowering adds its own;
//  * with comms: every action except idles (PyTorch's compute+comms loader
//    rejects empty cells); a stage without any `reduce_grad` gets one after
//    its last backward (B or W), as PyTorch's own lowering does, so that
//    gradients are reduced and scaled at the end of the step.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"

#include "llvm/Support/raw_ostream.h"

namespace pps::backends {

struct TorchExportOptions {
  /// Write PyTorch's compute+comms flavour (load it with
  /// `_load_csv(path, format="compute_comms")`).
  bool WithComms = false;
};

/// Writes S as PyTorch's schedule CSV. Requires S.Topo.Directions == 1:
/// PyTorch sends every microbatch through every stage (`ppsc emit
/// --target=torch` reports an error for a bidirectional schedule).
void emitTorchCsv(const ir::Schedule &S, llvm::raw_ostream &OS,
                  const TorchExportOptions &Opts = {});

} // namespace pps::backends
