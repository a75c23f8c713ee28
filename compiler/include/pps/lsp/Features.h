//===- Features.h - hover, definition, completion, outline ----------------===//
//
// The answers to the server's requests, computed from an Analysis (the last
// one the worker finished for the document) and, for completion, the
// document's current text. Each returns the LSP result object (or null).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/lsp/Analysis.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace pps::lsp {

/// One schedule of the standard library, for completion and hover.
struct StdlibSchedule {
  std::string Name;
  std::string Signature; ///< "schedule interleaved_1f1b(v = V)"
  std::vector<std::string> Params;
  std::string Doc; ///< the file's header comment
  std::string Path;
  uint32_t Line = 0, Col = 0;
};

/// The schedules of a stdlib directory, read and checked once per
/// directory (thread-safe).
const std::vector<StdlibSchedule> &stdlibCatalog(const std::string &Dir);
/// The catalog if it is built already, else null; never waits (the server
/// builds it on its worker thread, which alone runs the front end).
const std::vector<StdlibSchedule> *stdlibCatalogIfReady(const std::string &Dir);

/// textDocument/hover: a Hover object or null.
llvm::json::Value hover(const Analysis &A, Position P);

/// textDocument/definition: a Location or null.
llvm::json::Value definition(const Analysis &A, Position P);

/// textDocument/completion: a CompletionList. A may be null (no analysis
/// yet); Text is the document as the editor has it now.
llvm::json::Value completion(const Analysis *A, llvm::StringRef Text,
                             Position P,
                             const std::vector<StdlibSchedule> &Stdlib,
                             bool Snippets);

/// textDocument/documentSymbol: DocumentSymbol[] (pipelines, schedules,
/// fns; a pipeline's lets as children).
llvm::json::Value documentSymbols(const Analysis &A);

} // namespace pps::lsp
