//===- JsonEmitter.h - the IR as JSON for other tools ---------------------===//
#pragma once

#include "pps/ir/Schedule.h"

#include "llvm/Support/raw_ostream.h"

namespace pps::backends {

/// Writes topology, cost model, options and every rank's actions as JSON.
void emitJson(const ir::Schedule &S, llvm::raw_ostream &OS);

} // namespace pps::backends
