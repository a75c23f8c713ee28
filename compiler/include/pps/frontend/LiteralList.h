//===- LiteralList.h - the lowered layer's rank lists, read directly ------===//
//
// A lowered .pps file (the textual IR, `ppsc emit --target=pps`) is nearly
// all `rank N: <actions>;` lists whose actions are spelled with literal
// numbers. The parser (frontend/Parser.cpp) reads those lists with the
// reader below while it scans the text for nesting, hands ANTLR the text
// without them, and the transformer puts each list into its RankStmt as
// LiteralActions (ast::RankStmt::Literal): 20 bytes an action and no parse
// tree, token or expression node for it.
//
// The reader takes a list only if every action in it has one of the plain
// forms below and the whole list is what the grammar's `action*` accepts
// for that text; on anything else (a comment, an expression, `F3 @5`, a
// unit, a W send, a number too long for 32 bits, ...) it leaves the list to
// ANTLR, so the grammar stays the one definition of the language and every
// syntax error is ANTLR's. The forms (WS is [ \t\r\n\f]):
//   compute  [FIWB] DIGITS ('@' DIGITS)?
//   overlap  'overlap' WS? '(' WS? compute WS? ',' WS? compute WS? ')'
//   send     'send' WS compute (WS? '->' WS? DIGITS)?     (not W)
//   recv     'recv' WS compute (WS? '<-' WS? DIGITS)?     (not W)
//   control  ('unshard' | 'reshard' | 'reduce_grad') WS DIGITS
//   idle     'idle' | 'idle' WS? '(' WS? NUMBER WS? ')'   (INT or FLOAT)
// each followed by WS or the list's ';'; DIGITS at most 9 digits.
// tests/unit/frontend/LiteralListTest.cpp checks, on every .pps the tests
// have and on mutations of lowered text, that both ways give the same IR,
// locations and diagnostics.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/frontend/AST.h"
#include "pps/support/SourceManager.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <vector>

namespace pps::frontend {

/// A literal list found in a buffer: the bytes [Begin, End) between `rank
/// N:` and the `;` that ends it, and its actions.
struct LiteralSpan {
  uint32_t Begin = 0, End = 0;
  std::vector<ast::LiteralAction> Actions;
  /// The list holds brackets (`overlap(...)`, `idle(...)`): one level deeper
  /// than the list itself.
  bool Brackets = false;
  /// '+' and '-' signs in exponents (`idle(1e-05)`), which the nesting
  /// limits count as operators.
  unsigned Signs = 0;
};

/// Reads the literal list of the `rank` keyword at Text[Pos] (which must
/// start a token, outside comments and strings). True, with Out filled, if
/// `rank DIGITS :` is followed by one or more actions of the forms above up
/// to a `;`. File must have offset locations (SourceManager::hasOffsetLocs).
bool readLiteralList(llvm::StringRef Text, size_t Pos, FileId File,
                     const SourceManager &SM, LiteralSpan &Out);

/// Where the parts of a literal action are (NoLoc when it has none): the
/// compute reference (for Overlap the first compute, which the entry's Loc
/// does not point at), its microbatch and stage numbers, and the peer or
/// control operand.
struct LiteralParts {
  LocId Compute = NoLoc, Microbatch = NoLoc, Stage = NoLoc, Operand = NoLoc;
};
LiteralParts literalParts(const SourceManager &SM, const ast::LiteralAction &A);

} // namespace pps::frontend
