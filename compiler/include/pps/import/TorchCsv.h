//===- TorchCsv.h - read PyTorch pipelining's schedule CSV ----------------===//
//
// PyTorch's torch.distributed.pipelining runtime (`_PipelineScheduleRuntime.
// _load_csv`, torchtitan's `pipeline_parallel_schedule_csv`) reads a schedule
// as CSV: one row per rank, one action per cell, each action written as
// stage + type + microbatch (`0F0`, `2I1`, `2W0`, `1B3`, `1SEND_F0`,
// `3RECV_B2`), control actions without a microbatch (`2UNSHARD`,
// `2RESHARD`, `3REDUCE_GRAD`), an overlapped pair as `(0F7;7B3)OVERLAP_F_B`,
// and an empty cell as an idle slot. It comes in two flavours: compute only
// (the runtime inserts the comms) and compute plus comms. This is the front
// end for that form, beside the .pps front end; the emitter is
// pps/backends/TorchCsv.h and the spellings both use are in TorchNames.h.
//
// Import requires a buffer registered in the SourceManager, so every
// diagnostic and every imported action points at its cell. It guarantees:
//  * a cell that is not one whole action is a located csv-syntax error
//    (PyTorch's own regex accepts `2BW0` as `2B`; we do not);
//  * ranks = rows; stages = max stage + 1 and microbatches = max microbatch
//    + 1 unless given; the stage -> rank map is where each stage's actions
//    are (a stage on two ranks is a stage-placement error) and is labelled
//    loop, v or explicit;
//  * sizes stay within the front end's limits (pps/frontend/Limits.h);
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
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace pps::import {

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

/// A pipeline name (a .pps identifier) derived from a file path.
std::string pipelineNameFromPath(llvm::StringRef Path);

} // namespace pps::import
