//===- Text.cpp - positions, edits, URIs and comment text for the server --===//
#include "pps/lsp/Text.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <algorithm>

namespace pps::lsp {

llvm::json::Value toJSON(const Position &P) {
  return llvm::json::Object{{"line", P.Line}, {"character", P.Character}};
}

llvm::json::Value toJSON(const Range &R) {
  return llvm::json::Object{{"start", toJSON(R.Start)}, {"end", toJSON(R.End)}};
}

bool fromJSON(const llvm::json::Value &V, Position &P, llvm::json::Path Path) {
  llvm::json::ObjectMapper O(V, Path);
  if (!O || !O.map("line", P.Line) || !O.map("character", P.Character))
    return false;
  if (P.Line < 0 || P.Character < 0) {
    Path.report("negative position");
    return false;
  }
  return true;
}

bool fromJSON(const llvm::json::Value &V, Range &R, llvm::json::Path Path) {
  llvm::json::ObjectMapper O(V, Path);
  return O && O.map("start", R.Start) && O.map("end", R.End);
}

/// Bytes and UTF-16 units of the UTF-8 sequence at S[I]. A malformed or
/// truncated sequence counts as one byte, one unit.
static std::pair<size_t, size_t> step(llvm::StringRef S, size_t I) {
  unsigned char C = S[I];
  size_t Len = C < 0x80   ? 1
               : C < 0xC0 ? 0
               : C < 0xE0 ? 2
               : C < 0xF0 ? 3
               : C < 0xF8 ? 4
                          : 0;
  if (Len == 0 || I + Len > S.size())
    return {1, 1};
  for (size_t K = 1; K < Len; ++K)
    if ((static_cast<unsigned char>(S[I + K]) & 0xC0) != 0x80)
      return {1, 1};
  return {Len, Len == 4 ? 2 : 1};
}

std::string utf8(std::string S) {
  if (llvm::json::isUTF8(S))
    return S;
  return llvm::json::fixUTF8(S);
}

size_t utf16Length(llvm::StringRef S) {
  size_t Units = 0;
  for (size_t I = 0; I < S.size();) {
    auto [Bytes, U] = step(S, I);
    I += Bytes;
    Units += U;
  }
  return Units;
}

size_t byteOffsetOfUtf16(llvm::StringRef Line, int64_t Col) {
  size_t I = 0;
  int64_t Units = 0;
  while (I < Line.size() && Units < Col) {
    auto [Bytes, U] = step(Line, I);
    I += Bytes;
    Units += int64_t(U);
  }
  return I;
}

LineIndex::LineIndex(llvm::StringRef Text) {
  Starts.push_back(0);
  for (size_t I = 0; I < Text.size(); ++I)
    if (Text[I] == '\n')
      Starts.push_back(I + 1);
}

llvm::StringRef LineIndex::line(llvm::StringRef Text, int64_t Line) const {
  if (Line < 0 || size_t(Line) >= Starts.size())
    return {};
  size_t B = Starts[Line];
  size_t E =
      size_t(Line) + 1 < Starts.size() ? Starts[Line + 1] - 1 : Text.size();
  llvm::StringRef L = Text.slice(B, E);
  return L.endswith("\r") ? L.drop_back() : L;
}

size_t LineIndex::offset(llvm::StringRef Text, Position P) const {
  if (size_t(P.Line) >= Starts.size())
    return Text.size();
  return Starts[P.Line] + byteOffsetOfUtf16(line(Text, P.Line), P.Character);
}

Position LineIndex::position(llvm::StringRef Text, size_t Offset) const {
  Offset = std::min(Offset, Text.size());
  auto It = std::upper_bound(Starts.begin(), Starts.end(), Offset);
  size_t Line = size_t(It - Starts.begin()) - 1;
  llvm::StringRef Before = Text.slice(Starts[Line], Offset);
  return {int64_t(Line), int64_t(utf16Length(Before))};
}

void applyEdit(std::string &Text, const Range &R, llvm::StringRef NewText) {
  LineIndex Index(Text);
  size_t B = Index.offset(Text, R.Start), E = Index.offset(Text, R.End);
  if (E < B)
    std::swap(B, E);
  Text.replace(B, E - B, NewText.data(), NewText.size());
}

static bool isWordChar(char C) {
  return llvm::isAlnum(C) || C == '_' || C == '@';
}

/// The end of a `( ... )` group opening at I (or I if there is none).
static size_t parenGroupEnd(llvm::StringRef Line, size_t I) {
  if (I >= Line.size() || Line[I] != '(')
    return I;
  int Depth = 0;
  for (size_t K = I; K < Line.size(); ++K) {
    if (Line[K] == '(')
      ++Depth;
    else if (Line[K] == ')' && --Depth == 0)
      return K + 1;
  }
  return Line.size();
}

/// The end of a compute reference (`F3@5`, `F(i)@s`, `F3@(s+1)`) at I.
static size_t computeRefEnd(llvm::StringRef Line, size_t I) {
  size_t K = I;
  while (K < Line.size() && isWordChar(Line[K]))
    ++K;
  K = parenGroupEnd(Line, K);
  if (K < Line.size() && Line[K] == '@') {
    ++K;
    while (K < Line.size() && isWordChar(Line[K]))
      ++K;
    K = parenGroupEnd(Line, K);
  }
  return K;
}

size_t tokenLength(llvm::StringRef Line, size_t Start) {
  if (Start >= Line.size())
    return 0;
  char C = Line[Start];
  if (C == '"') {
    for (size_t K = Start + 1; K < Line.size(); ++K) {
      if (Line[K] == '\\')
        ++K;
      else if (Line[K] == '"')
        return K + 1 - Start;
    }
    return Line.size() - Start;
  }
  if (!isWordChar(C))
    return 1;
  size_t End = Start;
  while (End < Line.size() && isWordChar(Line[End]))
    ++End;
  llvm::StringRef Word = Line.slice(Start, End);
  if (Word == "send" || Word == "recv") {
    size_t K = End;
    while (K < Line.size() && Line[K] == ' ')
      ++K;
    K = computeRefEnd(Line, K);
    size_t Ref = K;
    while (K < Line.size() && Line[K] == ' ')
      ++K;
    llvm::StringRef Rest = Line.substr(K);
    if (Rest.startswith("->") || Rest.startswith("<-")) {
      K += 2;
      while (K < Line.size() && Line[K] == ' ')
        ++K;
      size_t P = K;
      while (P < Line.size() && isWordChar(Line[P]))
        ++P;
      P = parenGroupEnd(Line, P);
      return (P > K ? P : Ref) - Start;
    }
    return Ref - Start;
  }
  if (Word == "overlap" || Word == "idle")
    return parenGroupEnd(Line, End) - Start;
  // F(i)@s: a compute kind followed by its microbatch and stage.
  if (Word.size() == 1 && llvm::StringRef("FIWB").contains(Word[0]) &&
      End < Line.size() && Line[End] == '(')
    return computeRefEnd(Line, Start) - Start;
  return End - Start;
}

size_t blockEnd(llvm::StringRef Text, size_t Offset) {
  int Depth = 0;
  for (size_t I = Offset; I < Text.size(); ++I) {
    char C = Text[I];
    if (C == '/' && I + 1 < Text.size() && Text[I + 1] == '/') {
      I = Text.find('\n', I);
      if (I == llvm::StringRef::npos)
        return Text.size();
    } else if (C == '/' && I + 1 < Text.size() && Text[I + 1] == '*') {
      I = Text.find("*/", I + 2);
      if (I == llvm::StringRef::npos)
        return Text.size();
      ++I;
    } else if (C == '"') {
      for (++I; I < Text.size() && Text[I] != '"' && Text[I] != '\n'; ++I)
        if (Text[I] == '\\')
          ++I;
    } else if (C == '{') {
      ++Depth;
    } else if (C == '}' && Depth > 0 && --Depth == 0) {
      return I + 1;
    }
  }
  return Text.size();
}

std::string declarationSignature(llvm::StringRef Text, size_t NameOffset,
                                 size_t *Begin) {
  NameOffset = std::min(NameOffset, Text.size());
  size_t I = NameOffset;
  while (I > 0 && llvm::isSpace(Text[I - 1]))
    --I;
  size_t E = I;
  while (I > 0 && (llvm::isAlpha(Text[I - 1]) || Text[I - 1] == '_'))
    --I;
  llvm::StringRef Word = Text.slice(I, E);
  size_t Start =
      Word == "schedule" || Word == "fn" || Word == "pipeline" ? I : NameOffset;
  if (Begin)
    *Begin = Start;
  size_t Stop = std::min(Text.find_first_of("{;", NameOffset), Text.size());
  // A runaway parameter list is cut, not copied whole.
  Stop = std::min(Stop, NameOffset + 400);
  std::string Out;
  for (char C : Text.slice(Start, Stop).trim()) {
    bool Space = llvm::isSpace(C);
    if (Space && (Out.empty() || Out.back() == ' '))
      continue;
    Out.push_back(Space ? ' ' : C);
  }
  return Out;
}

/// The text of a `//` comment line without the slashes and one space, or
/// nothing if the line is not a comment.
static bool commentText(llvm::StringRef Line, std::string &Out) {
  llvm::StringRef L = Line.trim();
  if (!L.startswith("//"))
    return false;
  L = L.drop_while([](char C) { return C == '/'; });
  if (L.startswith(" "))
    L = L.drop_front();
  Out = L.rtrim().str();
  return true;
}

std::string commentAbove(llvm::StringRef Text, unsigned Line) {
  LineIndex Index(Text);
  std::vector<std::string> Lines;
  for (int64_t L = int64_t(Line) - 2; L >= 0; --L) {
    std::string C;
    if (!commentText(Index.line(Text, L), C))
      break;
    Lines.push_back(std::move(C));
  }
  std::string Out;
  for (auto It = Lines.rbegin(); It != Lines.rend(); ++It)
    Out += *It + "\n";
  return Out;
}

std::string headerComment(llvm::StringRef Text) {
  LineIndex Index(Text);
  std::string Out;
  for (size_t L = 0; L < Index.numLines(); ++L) {
    std::string C;
    if (!commentText(Index.line(Text, L), C))
      break;
    Out += C + "\n";
  }
  return Out;
}

std::string uriToPath(llvm::StringRef Uri) {
  if (!Uri.consume_front("file://"))
    return {};
  // file://host/path: only the local host is a path here.
  if (!Uri.startswith("/")) {
    size_t Slash = Uri.find('/');
    llvm::StringRef Host = Uri.take_front(Slash);
    if (Host != "localhost" || Slash == llvm::StringRef::npos)
      return {};
    Uri = Uri.drop_front(Slash);
  }
  std::string Out;
  for (size_t I = 0; I < Uri.size(); ++I) {
    if (Uri[I] == '%' && I + 2 < Uri.size() && llvm::isHexDigit(Uri[I + 1]) &&
        llvm::isHexDigit(Uri[I + 2])) {
      Out.push_back(char(llvm::hexFromNibbles(Uri[I + 1], Uri[I + 2])));
      I += 2;
    } else {
      Out.push_back(Uri[I]);
    }
  }
  return Out;
}

std::string pathToUri(llvm::StringRef Path) {
  std::string Out = "file://";
  for (char C : Path) {
    if (llvm::isAlnum(C) || llvm::StringRef("-._~/").contains(C))
      Out.push_back(C);
    else
      Out += fmt::format("%{:02X}", unsigned(static_cast<unsigned char>(C)));
  }
  return Out;
}

} // namespace pps::lsp
