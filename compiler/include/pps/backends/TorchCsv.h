//===- TorchCsv.h - write PyTorch pipelining's schedule CSV ---------------===//
//
// The emitter for the CSV PyTorch's torch.distributed.pipelining runtime
// loads (`_PipelineScheduleRuntime._load_csv`); the format and the importer
// are described in pps/import/TorchCsv.h, the action spellings in
// pps/import/TorchNames.h, the export schema in docs/interop.md.
//
// Export writes the CSV PyTorch loads, for any schedule checkTorchExport
// accepts:
//  * compute only (default): F/I/W/B and overlap pairs; an `idle(t)` is
//    round(t) empty cells (at least one); comm and control actions are
//    dropped, because PyTorch's compute-only loader rejects them and its
//    lowering adds its own;
//  * with comms: every action except idles (PyTorch's compute+comms loader
//    rejects empty cells), with a reduce_grad for every stage that has none
//    (backends::exportActions, as the JSON export carries them);
//  * an overlap pair is written `(F;B)OVERLAP_F_B`, the forward first
//    whatever the pair's order in the schedule (its two actions are
//    independent: verify-deps checks it). PyTorch's own producer
//    (ScheduleDualPipeV) builds its pairs that way, and an overlap runner
//    (torchtitan's DualPipeV overlap_callback) runs sub-action 0 as a
//    forward and sub-action 1 as a full backward, concurrently;
//  * a schedule exported without its proof starts with a line `# pps:
//    UNVERIFIED ...`, which both of PyTorch's loaders reject (it is not an
//    action), so it cannot be run by accident.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/backends/Export.h"
#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

namespace pps::backends {

struct TorchExportOptions {
  /// Write PyTorch's compute+comms flavour (load it with
  /// `_load_csv(path, format="compute_comms")`).
  bool WithComms = false;
  /// Whether the schedule was proved; an unverified one gets the marker
  /// line.
  ExportStatus Status{/*Verified=*/true};
};

/// Reports (torch-export, located) what PyTorch's CSV cannot express as
/// the schedule means it: `directions 2` (PyTorch sends every microbatch
/// through every stage) and an overlap pair that is not one forward and one
/// full backward (PyTorch's OVERLAP_F_B runs its first action as a forward
/// and its second as a full backward). False if it reported anything.
bool checkTorchExport(const ir::Schedule &S, DiagnosticEngine &Diags);

/// Writes S as PyTorch's schedule CSV. Requires checkTorchExport(S) to
/// have passed.
void emitTorchCsv(const ir::Schedule &S, llvm::raw_ostream &OS,
                  const TorchExportOptions &Opts = {});

} // namespace pps::backends
