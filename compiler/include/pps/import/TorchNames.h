//===- TorchNames.h - the action vocabulary of PyTorch's schedule CSV -----===//
//
// One place for how PyTorch's pipelining CSV spells actions, read by the
// importer (compiler/import) and written by the emitter
// (compiler/backends/TorchCsv): the kind names come from
// ir::actionKindTorchName, and everything here is derived from it, so a
// kind added to the IR is read and written without another table.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace pps::import {

/// The kind PyTorch spells Name ("F", "SEND_F", "REDUCE_GRAD"); case
/// sensitive, as PyTorch's loader is. Idle has no name.
std::optional<ir::ActionKind> torchKindFromName(llvm::StringRef Name);

/// Every kind's name, for messages: "F, I, W, B, SEND_F, ...".
llvm::StringRef torchKindList();

/// One action in PyTorch's spelling: "2F0", "1SEND_F3", "0UNSHARD"; empty
/// for idle. Overlap pairs are written by the emitter.
std::string torchActionName(const ir::Action &A);

} // namespace pps::import
