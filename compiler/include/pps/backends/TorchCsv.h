//===- TorchCsv.h - PyTorch pipelining's schedule CSV: import and export --===//
//
// PyTorch's torch.distributed.pipelining runtime (`_PipelineScheduleRuntime.
// _load_csv`, torchtitan's `pipeline_parallel_schedule_csv`) reads a schedule
// as CSV: one row per rank, one action per cell, each action written as
// stage + type + microbatch (`0F0`, `2I1`, `2W0`, `1B3`, `1SEND_F0`,
// `3RECV_B2`), control actions without a microbatch (`2UNSHARD`,
// `2RESHARD`, `3REDUCE_GRAD`), an overlapped pair as `(0F7;7B3)OVERLAP_F_B`,
// and an empty cell as an idle slot. It comes in two flavours: compute only
// (the runtime inserts the comms) and compute plus comms.
//
// Import requires a buffer registered in the SourceManager, so every
// diagnostic and every imported action points at its cell. It guarantees:
//  * a cell that is not one whole action is a located csv-syntax error
//    (PyTorch's own regex accepts `2BW0` as `2B`; we do not);
//  * ranks = rows; stages = max stage + 1 and microbatches = max microbatch
//    + 1 unless given; the stage -> rank map is where each stage's actions
//    are (a stage on two ranks is a stage-placement error) and is labelled
//    loop, v or explicit;
//  * comm peers come from that map (PyTorch's cells carry none);
//  * empty cells are dropped: they are slots of PyTorch's lockstep view
//    (`_format_pipeline_order`), not time, and its runtime skips them. With
//    KeepIdle a run of k empty cells is one `idle(k)` instead (for display
//    and byte-exact round trips); empty cells at the end of a row are
//    padding and always dropped;
//  * a file neither of PyTorch's loaders accepts as is (empty cells next to
//    comm cells, control cells without comm cells) gets a csv-flavour
//    warning.
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
#include "pps/support/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace pps::backends {

/// Sizes and placement the CSV cannot say, or that override what it says.
struct TorchImportOptions {
  /// Ranks (at least the number of rows; extra ranks get no actions).
  std::optional<int32_t> Ranks;
  /// Stages (more than the highest stage index in the file).
  std::optional<int32_t> Stages;
  /// Microbatches (more than the highest microbatch index in the file).
  std::optional<int32_t> Microbatches;
  /// Loop or V: the map the actions must agree with, and that places
  /// stages which have no action. Unset: inferred from the actions.
  std::optional<ir::Placement> Place;
  /// The pipeline's name; empty = derived from the file name.
  std::string Name;
  /// Keep empty cells as `idle(k)` actions instead of dropping them.
  bool KeepIdle = false;
};

/// Imports the CSV held in buffer File of SM. Empty (with diagnostics) on
/// error.
std::optional<ir::Schedule> importTorchCsv(FileId File, SourceManager &SM,
                                           DiagnosticEngine &Diags,
                                           const TorchImportOptions &Opts);

/// Reads Path ("-" is stdin) into SM and imports it.
std::optional<ir::Schedule> importTorchCsvFile(llvm::StringRef Path,
                                               SourceManager &SM,
                                               DiagnosticEngine &Diags,
                                               const TorchImportOptions &Opts);

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

/// One action in PyTorch's spelling: "2F0", "1SEND_F3", "0UNSHARD"; empty
/// for idle. Overlap pairs are written by emitTorchCsv.
std::string torchActionName(const ir::Action &A);

/// A pipeline name (a .pps identifier) derived from a file path.
std::string pipelineNameFromPath(llvm::StringRef Path);

} // namespace pps::backends
