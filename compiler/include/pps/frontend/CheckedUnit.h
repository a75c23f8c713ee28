//===- CheckedUnit.h - a checked AST kept for tools -----------------------===//
//
// compileBuffer throws its AST away once the IR is built. Tools that answer
// questions about the source (the language server: hover, go to definition,
// completion, outline) need the checked modules themselves, with Sema's
// resolutions, and may want to evaluate each pipeline of a file on its own.
// This is that split of compileBuffer: load and check, then evaluate.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/frontend/AST.h"
#include "pps/frontend/Frontend.h"

#include <memory>
#include <optional>
#include <vector>

namespace pps::frontend {

/// A buffer and every module it imports (explicitly or as an implicit
/// stdlib schedule), parsed and checked. The AST refers to locations of
/// the SourceManager it was loaded with, which must outlive it.
struct CheckedUnit {
  /// Every module loaded, the main one first.
  std::vector<std::unique_ptr<ast::Module>> Modules;
  /// The main buffer's module; null if it did not parse.
  ast::Module *Main = nullptr;
  /// The main buffer's FileId in the SourceManager.
  FileId MainFile = 0;
};

/// Parses Text (named Name, which relative imports are resolved against),
/// loads its imports and runs Sema over every module, reporting to Diags.
/// Evaluates nothing: a file without a pipeline is not an error here.
CheckedUnit checkBuffer(llvm::StringRef Name, llvm::StringRef Text,
                        SourceManager &SM, DiagnosticEngine &Diags,
                        const FrontendOptions &Opts);

/// Evaluates one pipeline of a unit that checked without errors, as
/// compileBuffer would (overrides from Opts, step budget, recursion limit).
/// Empty, with diagnostics, on error.
std::optional<ir::Schedule> evaluateChecked(ast::PipelineDecl &Pl,
                                            DiagnosticEngine &Diags,
                                            const FrontendOptions &Opts);

} // namespace pps::frontend
