//===- JsonEmitter.h - the schedule as JSON for runtimes and tools --------===//
//
// The JSON export (`ppsc emit --target=json`, pps.Schedule.to_json): its
// schema is docs/export.schema.json, described in docs/interop.md. It
// carries the schema version, whether the schedule was verified, the
// topology, the routes with the ranks that read data and compute losses,
// the weight-sharing groups, the cost model and options, and every rank's
// actions as exportActions gives them (a reduce_grad per stage, as in
// PyTorch's compute+comms CSV).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/backends/Export.h"
#include "pps/ir/Schedule.h"

#include "llvm/Support/raw_ostream.h"

namespace pps::backends {

/// Writes S as the JSON export, saying Status.
void emitJson(const ir::Schedule &S, llvm::raw_ostream &OS,
              const ExportStatus &Status);

} // namespace pps::backends
