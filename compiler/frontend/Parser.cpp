//===- Parser.cpp - ANTLR lexing and parsing with our diagnostics ---------===//
#include "Parser.h"
#include "Transformer.h"

#include "pps/frontend/LiteralList.h"

#include "PpsLexer.h"
#include "PpsParser.h"

#include <fmt/format.h>

namespace pps::frontend {

namespace {

/// A friendly name for a token type in "expected ..." messages.
std::string tokenName(const antlr4::dfa::Vocabulary &Voc, size_t Type) {
  using L = pps::grammar::PpsLexer;
  switch (Type) {
  case antlr4::Token::EOF:
    return "end of file";
  case L::ID:
    return "a name";
  case L::INT:
    return "an integer";
  case L::FLOAT:
    return "a number";
  case L::STRING:
    return "a string";
  case L::COMPUTE_LIT:
    return "an action such as F3";
  case L::COMPUTE_KIND:
    return "F, I, W or B";
  default:
    return Voc.getDisplayName(Type);
  }
}

std::string describeToken(antlr4::Token *T) {
  if (!T || T->getType() == antlr4::Token::EOF)
    return "end of file";
  std::string Text = T->getText();
  if (Text.size() > 30)
    Text = Text.substr(0, 30) + "...";
  return fmt::format("'{}'", Text);
}

/// Turns ANTLR syntax errors into located diagnostics with a hint.
class ErrorListener : public antlr4::BaseErrorListener {
public:
  ErrorListener(SourceManager &SM, DiagnosticEngine &Diags, FileId File)
      : SM(SM), Diags(Diags), File(File) {}

  void syntaxError(antlr4::Recognizer *Rec, antlr4::Token *Offending,
                   size_t Line, size_t Col, const std::string &Msg,
                   std::exception_ptr) override {
    // A second error on the same line is nearly always a cascade of the
    // first; so is anything past 20.
    if (Line == LastLine)
      return;
    LastLine = Line;
    ++Count;
    if (Count > 20)
      return;
    LocId L = SM.getLoc(File, uint32_t(Line), uint32_t(Col + 1));
    auto *Parser = dynamic_cast<antlr4::Parser *>(Rec);
    if (!Parser) {
      Diags.report(DiagKind::SyntaxError, L, "cannot read a token here");
      return;
    }
    antlr4::misc::IntervalSet Expected;
    try {
      Expected = Parser->getExpectedTokens();
    } catch (...) {
    }
    const auto &Voc = Parser->getVocabulary();
    using Lx = pps::grammar::PpsLexer;
    // A missing ';' is the most common slip: point just after the previous
    // token, where the ';' belongs, instead of at the next line.
    antlr4::Token *Prev = nullptr;
    if (Offending && Offending->getTokenIndex() > 0) {
      auto *TS = Parser->getTokenStream();
      for (ssize_t I = ssize_t(Offending->getTokenIndex()) - 1; I >= 0; --I) {
        antlr4::Token *T = TS->get(size_t(I));
        if (T->getChannel() == antlr4::Token::DEFAULT_CHANNEL) {
          Prev = T;
          break;
        }
      }
    }
    // Before a '}' too: the last statement of a block needs its ';'.
    bool BeforeBrace = Offending && Offending->getType() == Lx::RBRACE;
    if (Expected.contains(size_t(Lx::SEMI)) && Prev && Offending &&
        (Offending->getLine() > Prev->getLine() ||
         Offending->getType() == antlr4::Token::EOF || Expected.size() == 1 ||
         BeforeBrace)) {
      LocId After = SM.getLoc(
          File, uint32_t(Prev->getLine()),
          uint32_t(Prev->getCharPositionInLine() + Prev->getText().size() + 1));
      Diags.report(
          DiagKind::SyntaxError, After,
          fmt::format("expected ';' after {}{}", describeToken(Prev),
                      BeforeBrace && Offending->getLine() == Prev->getLine()
                          ? " (every statement ends with ';', the "
                            "last one in a block too)"
                          : ""));
      return;
    }
    std::string Found = describeToken(Offending);
    // Hints for the slips people make most.
    std::string OffText = Offending ? Offending->getText() : "";
    if (OffText == "," && Expected.contains(size_t(Lx::SEMI))) {
      Diags.report(DiagKind::SyntaxError, L,
                   "unexpected ','; actions in a list are separated by spaces");
      return;
    }
    if (OffText == "=" && (Expected.contains(size_t(Lx::LBRACE)) ||
                           Expected.contains(size_t(Lx::EQEQ)))) {
      Diags.report(DiagKind::SyntaxError, L,
                   "unexpected '='; use '==' to compare");
      return;
    }
    if (Expected.contains(size_t(Lx::DOTDOT)) && Expected.size() <= 12) {
      Diags.report(DiagKind::SyntaxError, L,
                   fmt::format("expected '..' in the range, found {} (ranges "
                               "are written a..b)",
                               Found));
      return;
    }
    if (Offending && Offending->getType() == Lx::EQEQ &&
        Expected.contains(size_t(Lx::ASSIGN))) {
      Diags.report(DiagKind::SyntaxError, L,
                   "unexpected '=='; use '=' to assign");
      return;
    }
    if (!Expected.isEmpty() && Expected.size() <= 5) {
      std::vector<std::string> Names;
      for (ssize_t T : Expected.toList())
        Names.push_back(tokenName(Voc, size_t(T)));
      std::string List;
      for (size_t I = 0; I < Names.size(); ++I) {
        if (I)
          List += I + 1 == Names.size() ? " or " : ", ";
        List += Names[I];
      }
      Diags.report(DiagKind::SyntaxError, L,
                   fmt::format("expected {}, found {}", List, Found));
      return;
    }
    (void)Msg;
    Diags.report(DiagKind::SyntaxError, L, fmt::format("unexpected {}", Found));
  }

  unsigned Count = 0;
  size_t LastLine = 0;

private:
  SourceManager &SM;
  DiagnosticEngine &Diags;
  FileId File;
};

bool isOperator(size_t Type) {
  using L = pps::grammar::PpsLexer;
  switch (Type) {
  case L::PLUS:
  case L::MINUS:
  case L::STAR:
  case L::SLASH:
  case L::PERCENT:
  case L::LT:
  case L::LE:
  case L::GT:
  case L::GE:
  case L::EQEQ:
  case L::NE:
  case L::ANDAND:
  case L::OROR:
  case L::BANG:
    return true;
  default:
    return false;
  }
}

/// Reports invalid characters and rejects nesting the recursive-descent
/// parser and the transformer could not take. True if parsing may go on.
bool preScan(const std::vector<antlr4::Token *> &Tokens, llvm::StringRef Orig,
             SourceManager &SM, DiagnosticEngine &Diags, FileId File,
             bool &HadInvalid) {
  using L = pps::grammar::PpsLexer;
  unsigned Depth = 0, Ops = 0, Invalid = 0;
  size_t SkipUntil = 0;
  auto Loc = [&](antlr4::Token *T) {
    return SM.getLoc(File, uint32_t(T->getLine()),
                     uint32_t(T->getCharPositionInLine() + 1));
  };
  for (antlr4::Token *T : Tokens) {
    size_t Type = T->getType();
    if (Type == L::ERROR_CHAR) {
      HadInvalid = true;
      size_t Off = T->getStartIndex();
      if (Off < SkipUntil)
        continue; // the rest of a UTF-8 character already reported
      if (++Invalid > 10)
        continue;
      unsigned char C = Off < Orig.size() ? (unsigned char)Orig[Off] : 0;
      std::string What = C >= 0x20 && C < 0x7f
                             ? fmt::format("'{}'", char(C))
                             : fmt::format("byte 0x{:02x}", unsigned(C));
      // A well-formed multi-byte UTF-8 character is one error, shown whole.
      unsigned Len = C >= 0xf0 && C < 0xf8   ? 4
                     : C >= 0xe0 && C < 0xf0 ? 3
                     : C >= 0xc2 && C < 0xe0 ? 2
                                             : 1;
      bool WellFormed = Len > 1 && Off + Len <= Orig.size();
      for (unsigned K = 1; WellFormed && K < Len; ++K)
        WellFormed = ((unsigned char)Orig[Off + K] & 0xc0) == 0x80;
      if (WellFormed) {
        What = fmt::format("'{}'", Orig.substr(Off, Len).str());
        SkipUntil = Off + Len;
      }
      auto &D = Diags.report(DiagKind::InvalidCharacter, Loc(T),
                             fmt::format("invalid character {}", What));
      if (C == '"')
        D.note(Loc(T), "a string must end on the line it starts");
      if (Invalid == 10)
        D.note(Loc(T), "further invalid characters are not reported");
      continue;
    }
    switch (Type) {
    case L::LPAREN:
    case L::LBRACK:
    case L::LBRACE:
      if (++Depth > MaxNesting) {
        Diags.report(
            DiagKind::NestingTooDeep, Loc(T),
            fmt::format("brackets nested more than {} deep", MaxNesting));
        return false;
      }
      if (Type == L::LBRACE)
        Ops = 0;
      break;
    case L::RPAREN:
    case L::RBRACK:
    case L::RBRACE:
      if (Depth)
        --Depth;
      if (Type == L::RBRACE)
        Ops = 0;
      break;
    case L::SEMI:
      Ops = 0;
      break;
    default:
      if (isOperator(Type) && ++Ops > MaxOperatorsPerStatement) {
        Diags.report(DiagKind::NestingTooDeep, Loc(T),
                     fmt::format("expression with more than {} operators",
                                 MaxOperatorsPerStatement));
        return false;
      }
    }
  }
  return true;
}

bool isIdentChar(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
         (C >= '0' && C <= '9') || C == '_';
}

/// Rejects nesting the parser, transformer and evaluator could not take,
/// before ANTLR sees the text: a scan of the raw bytes (skipping comments
/// and strings) so 10 MB of brackets cost milliseconds, not gigabytes of
/// tokens. True if parsing may go on. With Spans, also reads the literal
/// rank lists (LiteralList.h) it passes over, in text order; a list is
/// taken only if scanning its bytes would not have failed here.
bool rawNestingScan(llvm::StringRef Text, SourceManager &SM,
                    DiagnosticEngine &Diags, FileId File,
                    std::vector<LiteralSpan> *Spans) {
  unsigned Depth = 0, Ops = 0;
  unsigned ElseIfs[MaxNesting + 2] = {0};
  uint32_t Line = 1, Col = 1;
  auto Fail = [&](std::string Msg) {
    Diags.report(DiagKind::NestingTooDeep, SM.getLoc(File, Line, Col),
                 std::move(Msg));
    return false;
  };
  auto IsOp = [](char C) {
    return C == '+' || C == '-' || C == '*' || C == '/' || C == '%' ||
           C == '<' || C == '>' || C == '=' || C == '!' || C == '&' || C == '|';
  };
  for (size_t I = 0, E = Text.size(); I < E; ++I, ++Col) {
    char C = Text[I];
    if (C == '\n') {
      ++Line;
      Col = 0;
      continue;
    }
    if (C == '/' && I + 1 < E && Text[I + 1] == '/') {
      while (I + 1 < E && Text[I + 1] != '\n')
        ++I;
      continue;
    }
    if (C == '/' && I + 1 < E && Text[I + 1] == '*') {
      size_t End = Text.find("*/", I + 2);
      End = End == llvm::StringRef::npos ? E : End + 1;
      for (; I < End; ++I, ++Col)
        if (Text[I] == '\n')
          ++Line, Col = 0;
      continue;
    }
    if (C == '"') {
      for (++I, ++Col; I < E && Text[I] != '"' && Text[I] != '\n'; ++I, ++Col)
        if (Text[I] == '\\')
          ++I, ++Col;
      if (I < E && Text[I] == '\n')
        ++Line, Col = 0;
      continue;
    }
    // A literal rank list: its brackets nest one level below the list and
    // its exponent signs count as operators, which is all its bytes would
    // do to the state here; so take it only if those stay within limits,
    // and continue at its ';'.
    if (Spans && C == 'r' && (I == 0 || !isIdentChar(Text[I - 1]))) {
      LiteralSpan Sp;
      if (readLiteralList(Text, I, File, SM, Sp) &&
          (!Sp.Brackets || Depth + 1 <= MaxNesting) &&
          Ops + Sp.Signs <= MaxOperatorsPerStatement) {
        Ops += Sp.Signs;
        size_t To = Sp.End;
        uint32_t ColTo = Col + uint32_t(To - I);
        for (size_t K = I; K < To; ++K)
          if (Text[K] == '\n') {
            ++Line;
            ColTo = uint32_t(To - K);
          }
        Spans->push_back(std::move(Sp));
        // The loop's increments bring I and Col to the ';'.
        I = To - 1;
        Col = ColTo - 1;
        continue;
      }
    }
    // `if .. else if .. else if ..` nests one level per `else if` in the
    // parse tree without nesting brackets: count chains per depth.
    if (C == 'e' && Text.substr(I).startswith("else") &&
        (I == 0 || !isIdentChar(Text[I - 1]))) {
      size_t J = I + 4;
      while (J < E && (Text[J] == ' ' || Text[J] == '\t' || Text[J] == '\n' ||
                       Text[J] == '\r'))
        ++J;
      if (Text.substr(J).startswith("if") &&
          (J + 2 >= E || !isIdentChar(Text[J + 2])) &&
          ++ElseIfs[Depth] > MaxNesting * 10)
        return Fail(fmt::format("more than {} 'else if' in one chain",
                                MaxNesting * 10));
    }
    switch (C) {
    case '(':
    case '[':
    case '{':
      if (++Depth > MaxNesting)
        return Fail(
            fmt::format("brackets nested more than {} deep", MaxNesting));
      ElseIfs[Depth] = 0;
      if (C == '{')
        Ops = 0;
      continue;
    case ')':
    case ']':
    case '}':
      Depth -= Depth > 0;
      if (C == '}')
        Ops = 0;
      continue;
    case ';':
      Ops = 0;
      ElseIfs[Depth] = 0;
      continue;
    default:
      break;
    }
    if (!IsOp(C))
      continue;
    // One operator per run of operator characters; arrows are not
    // operators (a long rank list of sends is fine).
    size_t J = I;
    while (J + 1 < E && IsOp(Text[J + 1]))
      ++J;
    llvm::StringRef Run = Text.slice(I, J + 1);
    // Every character counts: `!!!!x` nests as deep as its length.
    if (Run != "->" && Run != "<-" &&
        (Ops += unsigned(Run.size())) > MaxOperatorsPerStatement)
      return Fail(fmt::format("expression with more than {} operators",
                              MaxOperatorsPerStatement));
    Col += uint32_t(J - I);
    I = J;
  }
  return true;
}

} // namespace

/// Lexes, parses and transforms Text (the buffer, or the buffer with its
/// literal lists cut out, as Map says), reporting to Diags.
static std::unique_ptr<ast::Module>
parseText(const std::string &Text, const TextMap &Map, FileId File,
          llvm::StringRef Orig, SourceManager &SM, DiagnosticEngine &Diags) {
  try {
    antlr4::ANTLRInputStream Input(Text);
    pps::grammar::PpsLexer Lexer(&Input);
    ErrorListener Listener(SM, Diags, File);
    Lexer.removeErrorListeners();
    Lexer.addErrorListener(&Listener);
    antlr4::CommonTokenStream Tokens(&Lexer);
    Tokens.fill();
    bool HadInvalid = false;
    if (!preScan(Tokens.getTokens(), Orig, SM, Diags, File, HadInvalid))
      return nullptr;

    pps::grammar::PpsParser Parser(&Tokens);
    Parser.removeErrorListeners();
    // Fast path: SLL prediction, bail at the first error; most inputs parse
    // here. Only on failure rerun with full LL and error recovery.
    Parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
        antlr4::atn::PredictionMode::SLL);
    Parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
    pps::grammar::PpsParser::FileContext *Tree = nullptr;
    try {
      Tree = Parser.file();
    } catch (antlr4::ParseCancellationException &) {
      Tree = nullptr;
    }
    if (!Tree) {
      Tokens.seek(0);
      Parser.reset();
      Parser.addErrorListener(&Listener);
      Parser.setErrorHandler(std::make_shared<antlr4::DefaultErrorStrategy>());
      Parser.getInterpreter<antlr4::atn::ParserATNSimulator>()
          ->setPredictionMode(antlr4::atn::PredictionMode::LL);
      Tree = Parser.file();
    }
    if (Listener.Count > 20)
      Diags.report(
          DiagKind::SyntaxError, NoLoc,
          fmt::format("{} more syntax errors not shown", Listener.Count - 20));
    if (Listener.Count || !Tree || HadInvalid)
      return nullptr;
    uint64_t ErrorsBefore = Diags.numErrors();
    Transformer T(SM, Diags, File, Map);
    auto M = T.transformFile(*Tree);
    if (Diags.numErrors() != ErrorsBefore)
      return nullptr;
    return M;
  } catch (std::exception &E) {
    Diags.report(DiagKind::SyntaxError, SM.getLoc(File, 1, 1),
                 fmt::format("the parser gave up: {}", E.what()));
  } catch (...) {
    Diags.report(DiagKind::SyntaxError, SM.getLoc(File, 1, 1),
                 "the parser gave up");
  }
  return nullptr;
}

/// The grammar is ASCII. Masking every other byte keeps ANTLR's UTF-8
/// decoder from throwing on garbage and makes its columns byte columns,
/// which is what the caret printer counts.
static void appendMasked(std::string &Out, llvm::StringRef In) {
  size_t At = Out.size();
  Out.append(In.begin(), In.end());
  for (size_t I = At; I < Out.size(); ++I)
    if ((unsigned char)Out[I] >= 0x80 || Out[I] == '\0')
      Out[I] = '\x7f';
}

std::unique_ptr<ast::Module> parseModule(FileId File, SourceManager &SM,
                                         DiagnosticEngine &Diags,
                                         bool LiteralLists) {
  llvm::StringRef Orig = SM.contents(File);
  std::vector<LiteralSpan> Spans;
  bool Read = LiteralLists && SM.hasOffsetLocs(File);
  if (!rawNestingScan(Orig, SM, Diags, File, Read ? &Spans : nullptr))
    return nullptr;

  if (!Spans.empty()) {
    // ANTLR reads the text without the literal lists; the transformer puts
    // them back. A file that ANTLR, preScan or the transformer finds fault
    // with is read again whole below, so its diagnostics are exactly the
    // grammar's (a list cut out here never holds an error: it matched
    // `action*` exactly, so the rest parses iff the whole does).
    std::string Text;
    TextMap Map;
    Text.reserve(Orig.size() / 16);
    uint32_t From = 0;
    for (LiteralSpan &Sp : Spans) {
      Map.Segments.push_back({uint32_t(Text.size()), From});
      appendMasked(Text, Orig.slice(From, Sp.Begin));
      From = Sp.End;
    }
    Map.Segments.push_back({uint32_t(Text.size()), From});
    appendMasked(Text, Orig.substr(From));
    Map.Spans = &Spans;
    DiagnosticEngine Scratch(SM);
    std::unique_ptr<ast::Module> M =
        parseText(Text, Map, File, Orig, SM, Scratch);
    if (M && Scratch.diagnostics().empty() && !Scratch.hasErrors())
      return M;
  }
  std::string Masked;
  appendMasked(Masked, Orig);
  TextMap Whole;
  Whole.Segments.push_back({0, 0});
  return parseText(Masked, Whole, File, Orig, SM, Diags);
}

} // namespace pps::frontend
