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

#include "pps/frontend/Limits.h"
#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pps::frontend {

struct FrontendOptions {
  /// The -I directories. `import a.b;` looks for a/b.pps next to the
  /// importing file, then here, then in the stdlib directories; `import
  /// std.x;` and a pipeline's schedule name not defined in the file (NAME
  /// -> NAME.pps) look here first, then in the stdlib directories.
  std::vector<std::string> ImportPaths;
  /// The stdlib directory; empty means stdlibSearchPath().
  std::string StdlibDir;
  /// Which pipeline to compile when the file declares several.
  std::string PipelineName;
  /// Overrides of pipeline fields from the command line, applied before the
  /// fields that depend on them are evaluated: "ranks", "stages",
  /// "microbatches", "memory_limit", and schedule arguments by name.
  std::map<std::string, int64_t> Overrides;
  /// Maximum evaluation steps (statements + expressions) per compile.
  uint64_t StepBudget = DefaultStepBudget;
  /// Maximum call depth of fn/schedule calls.
  unsigned RecursionLimit = 256;
  /// Read the lowered layer's plain rank lists with the literal-list reader
  /// (pps/frontend/LiteralList.h) rather than through ANTLR's parse tree:
  /// the same AST meaning, IR, locations and diagnostics at a fraction of
  /// the time and memory. Off only where tests compare the two.
  bool LiteralLists = true;
  /// Run schedule and fn bodies with the tree-walking interpreter instead
  /// of compiling them to register code: the same steps, IR and
  /// diagnostics, several times slower. Off only where tests compare the
  /// two.
  bool TreeWalk = false;
  /// Most actions the schedule may emit (--max-actions).
  uint64_t MaxActions = ir::DefaultMaxActions;
  /// When set, every import must resolve to a file inside this directory
  /// (or the -I and stdlib directories); --import-root.
  std::string ImportRoot;
  /// The command line's changes to the cost and memory models (--costs,
  /// --latency, synth's --cost, --memory-model, ...), applied to the
  /// schedule before a schedule body runs, so that a schedule that reads
  /// its costs (cost_f(s), ...) sees what every pass will see. Callers
  /// apply them after compiling too; applying them twice changes nothing.
  std::function<void(ir::Schedule &)> ModelOverrides;
};

/// A directory searched for the standard library, and why it is searched
/// (shown when a schedule name is not found).
struct StdlibDir {
  std::string Path;
  /// "PPS_STDLIB_PATH", "PPS_STDLIB", "next to /usr/bin/ppsc", ...
  std::string Origin;
};

/// Where the standard library is looked for when FrontendOptions::StdlibDir
/// is empty, in order:
///  * $PPS_STDLIB_PATH, a ':'-separated list of directories; an empty entry
///    (as in "mine:" or "a::b") stands for the default location below;
///  * else $PPS_STDLIB (one directory; the older name, kept as an alias);
///  * else the default: relative to the running program's own file (the
///    build's bin -> share/pps/stdlib: `<prefix>/bin/ppsc` looks in
///    `<prefix>/share/pps/stdlib`, the build tree has the same layout), so
///    an installed tree works wherever it is copied.
/// Nothing is compiled in as an absolute path.
std::vector<StdlibDir> stdlibSearchPath();

/// The first directory of stdlibSearchPath() that exists (else the first).
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
