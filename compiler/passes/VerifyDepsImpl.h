//===- VerifyDepsImpl.h - the verify-deps rules, shared (private) ---------===//
//
// insert-comms checks user-written comms with the same rules as verify-deps
// when it runs without verify-deps before it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

namespace pps::passes::detail {

/// Runs every verify-deps check; true if no error was reported.
bool verifyDeps(const ir::Schedule &S, DiagnosticEngine &Diags);

} // namespace pps::passes::detail
