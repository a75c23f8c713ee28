//===- Identifiers.cpp - names the grammar accepts, from the parser -------===//
//
// Reads the generated lexer's vocabulary and the first-token set of the
// generated parser's `ident` rule once (both are tables ANTLR builds from
// grammar/Pps.g4), and lexes a candidate word with the generated lexer.
//
//===----------------------------------------------------------------------===//
#include "pps/frontend/Identifiers.h"

#include "PpsLexer.h"
#include "PpsParser.h"

#include "llvm/ADT/StringExtras.h"

#include <vector>

namespace pps::frontend {

namespace {

using pps::grammar::PpsLexer;
using pps::grammar::PpsParser;

struct Vocabulary {
  /// Token types the `ident` rule starts with (it is one token long).
  antlr4::misc::IntervalSet IdentTokens;
  std::vector<std::string> Reserved;
};

const Vocabulary &vocabulary() {
  static const Vocabulary V = [] {
    Vocabulary Out;
    antlr4::ANTLRInputStream In("");
    PpsLexer Lexer(&In);
    antlr4::CommonTokenStream Tokens(&Lexer);
    PpsParser Parser(&Tokens);
    const antlr4::atn::ATN &Atn = Parser.getATN();
    Out.IdentTokens =
        Atn.nextTokens(Atn.ruleToStartState[PpsParser::RuleIdent]);
    const antlr4::dfa::Vocabulary &Voc = Lexer.getVocabulary();
    for (size_t T = 1; T <= Voc.getMaxTokenType(); ++T) {
      // Literal names are quoted: 'import', '->'. (getLiteralName returns
      // a temporary: keep it alive while Lit refers to it.)
      std::string LitName = Voc.getLiteralName(T);
      llvm::StringRef Lit = LitName;
      if (Lit.size() < 3 || !Lit.startswith("'") || !Lit.endswith("'"))
        continue;
      llvm::StringRef Word = Lit.drop_front().drop_back();
      if (!llvm::all_of(Word,
                        [](char C) { return llvm::isAlpha(C) || C == '_'; }))
        continue;
      if (!Out.IdentTokens.contains(T))
        Out.Reserved.push_back(Word.str());
    }
    return Out;
  }();
  return V;
}

} // namespace

bool isIdentifier(llvm::StringRef Word) {
  if (Word.empty())
    return false;
  const Vocabulary &V = vocabulary();
  antlr4::ANTLRInputStream In(Word.str());
  PpsLexer Lexer(&In);
  Lexer.removeErrorListeners();
  std::vector<std::unique_ptr<antlr4::Token>> Tokens = Lexer.getAllTokens();
  return Tokens.size() == 1 && Tokens[0]->getText() == Word &&
         V.IdentTokens.contains(Tokens[0]->getType());
}

llvm::ArrayRef<std::string> reservedWords() { return vocabulary().Reserved; }

std::string identifierChars(llvm::StringRef Text) {
  std::string Out;
  Out.reserve(Text.size());
  for (char C : Text)
    Out += llvm::isAlnum(C) || C == '_' ? C : '_';
  if (Out.empty() || llvm::isDigit(Out[0]))
    Out = "p_" + Out;
  return Out;
}

} // namespace pps::frontend
