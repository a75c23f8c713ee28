//===- Parser.h - one source buffer -> AST module (private) ---------------===//
//
// Requires: a buffer registered in the SourceManager.
// Guarantees: lexes with ANTLR (invalid characters reported, never thrown),
// rejects inputs nested deeper than the parser and transformer can take
// (nesting-too-deep), parses with SLL prediction and falls back to full LL
// only when SLL fails, reports syntax errors through the DiagnosticEngine
// (ANTLR's console listeners are removed) and transforms an error-free parse
// tree into an ast::Module. Returns null if the file had any error.
// Plain rank lists (the lowered layer's) are read without ANTLR, with the
// same result (pps/frontend/LiteralList.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/frontend/AST.h"
#include "pps/support/Diagnostics.h"

#include <memory>

namespace pps::frontend {

/// Deepest bracket nesting accepted.
constexpr unsigned MaxNesting = 200;
/// Most operators accepted in one statement (bounds the expression depth).
constexpr unsigned MaxOperatorsPerStatement = 2000;

/// With LiteralLists, the plain rank lists of the lowered layer are read
/// by the literal-list reader (pps/frontend/LiteralList.h) and ANTLR reads
/// the rest; without, ANTLR reads everything (the reference the tests
/// compare with).
std::unique_ptr<ast::Module> parseModule(FileId File, SourceManager &SM,
                                         DiagnosticEngine &Diags,
                                         bool LiteralLists = true);

} // namespace pps::frontend
