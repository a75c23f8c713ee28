//===- Frontend.h - text to IR: parse, transform, sema, evaluate ----------===//
//
// The front end's one entry point. Reads a .pps file (and its imports),
// parses it with the ANTLR4 grammar, transforms the parse tree into the AST,
// checks it, evaluates the selected pipeline's schedule and returns the IR.
// All problems go to the diagnostics engine with locations; on error the
// result is empty. Never throws, never hangs (step budget, recursion limit,
// nesting limit).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include "llvm/ADT/StringRef.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pps::frontend {

struct FrontendOptions {
  /// Directories searched for `import a.b;` (a/b.pps); the stdlib is last.
  std::vector<std::string> ImportPaths;
  /// Where `import std.x;` and implicit schedule lookups look; empty means
  /// defaultStdlibDir().
  std::string StdlibDir;
  /// Which pipeline to compile when the file declares several.
  std::string PipelineName;
  /// Overrides of pipeline fields from the command line, applied before the
  /// fields that depend on them are evaluated: "ranks", "stages",
  /// "microbatches", "memory_limit", and schedule arguments by name.
  std::map<std::string, int64_t> Overrides;
  /// Maximum evaluation steps (statements + expressions) per compile.
  uint64_t StepBudget = 200'000'000;
  /// Maximum call depth of fn/schedule calls.
  unsigned RecursionLimit = 256;
};

/// The stdlib directory compiled into the binary (overridden by $PPS_STDLIB).
std::string defaultStdlibDir();

/// Compiles the file at Path ("-" is stdin) to IR.
std::optional<ir::Schedule> compileFile(llvm::StringRef Path, SourceManager &SM,
                                        DiagnosticEngine &Diags,
                                        const FrontendOptions &Opts);

/// Compiles an in-memory buffer (tests, benchmarks).
std::optional<ir::Schedule>
compileBuffer(llvm::StringRef Name, llvm::StringRef Text, SourceManager &SM,
              DiagnosticEngine &Diags, const FrontendOptions &Opts);

} // namespace pps::frontend
