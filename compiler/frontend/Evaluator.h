//===- Evaluator.h - a checked pipeline -> ir::Schedule (private) ---------===//
//
// Requires: a PipelineDecl (and every fn it reaches) resolved by Sema.
// Guarantees: evaluates the pipeline's items in order (command-line
// overrides applied), runs its schedule with frame slots only (no name
// lookup, no heap allocation per step), appends every action straight to
// the rank vectors with its location, range-checks every rank, stage,
// microbatch and peer, and stops with a located error on overflow,
// division by zero, a failed assert, an exhausted step budget or a call
// chain deeper than the recursion limit (with a note at the pipeline's
// schedule call). Returns nothing if an error was reported.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/frontend/AST.h"
#include "pps/frontend/Frontend.h"
#include "pps/support/Diagnostics.h"

#include <optional>
#include <set>
#include <string>

namespace pps::frontend {

/// Evaluates Pl. Names of overrides it consumed are added to UsedOverrides.
std::optional<ir::Schedule>
evaluatePipeline(ast::PipelineDecl &Pl, DiagnosticEngine &Diags,
                 const FrontendOptions &Opts,
                 std::set<std::string> &UsedOverrides);

} // namespace pps::frontend
