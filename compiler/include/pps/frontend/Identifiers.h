//===- Identifiers.h - which words the grammar accepts as names -----------===//
//
// The one answer to "can this word name a pipeline?", derived from the
// generated parser itself rather than from a hand-kept keyword list: the
// reserved words are the lexer vocabulary's literal words that the
// grammar's `ident` rule does not accept, and a word is an identifier when
// the generated lexer reads it as one token that `ident` accepts (so `for`,
// `F3` and `12` are not, while the soft keywords `ranks` or `stage` are).
// Printers and importers that write names into .pps text use it, so adding
// a keyword to grammar/Pps.g4 needs no other edit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace pps::frontend {

/// True if Word, on its own, is a name the grammar accepts (`ident`).
bool isIdentifier(llvm::StringRef Word);

/// The reserved words of the language (`import`, `for`, `send`, ...), in
/// the order the grammar declares them.
llvm::ArrayRef<std::string> reservedWords();

/// Text made into identifier characters: every character other than a
/// letter, digit or '_' becomes '_', and "p_" goes in front of an empty
/// result or one that starts with a digit. The result may still be a
/// reserved word or an action such as F3 (check with isIdentifier).
std::string identifierChars(llvm::StringRef Text);

} // namespace pps::frontend
