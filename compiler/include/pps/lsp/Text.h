//===- Text.h - positions, edits, URIs and comment text for the server ----===//
//
// LSP positions count lines from 0 and characters in UTF-16 code units; the
// compiler counts lines and byte columns from 1. These helpers convert
// between the two, apply an editor's incremental edits, turn file:// URIs
// into paths and back, and read the few things the server needs from raw
// text (token extents, the end of a `{ }` block, doc comments).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pps::lsp {

/// An LSP position: 0-based line, UTF-16 code units into the line.
struct Position {
  int64_t Line = 0;
  int64_t Character = 0;
};

struct Range {
  Position Start, End;
};

llvm::json::Value toJSON(const Position &P);
llvm::json::Value toJSON(const Range &R);
bool fromJSON(const llvm::json::Value &V, Position &P, llvm::json::Path Path);
bool fromJSON(const llvm::json::Value &V, Range &R, llvm::json::Path Path);

/// UTF-16 code units of a UTF-8 string (a malformed byte counts as one).
size_t utf16Length(llvm::StringRef S);
/// The byte offset in Line of UTF-16 column Col, clamped to the line.
size_t byteOffsetOfUtf16(llvm::StringRef Line, int64_t Col);

/// S as JSON may carry it: malformed UTF-8 (a file name, a cut signature,
/// echoed text) replaced, since JSON strings must be UTF-8.
std::string utf8(std::string S);

/// Start offsets of the lines of a text.
class LineIndex {
public:
  explicit LineIndex(llvm::StringRef Text);
  /// Byte offset of an LSP position, clamped to the line and the text.
  size_t offset(llvm::StringRef Text, Position P) const;
  /// The LSP position of a byte offset.
  Position position(llvm::StringRef Text, size_t Offset) const;
  /// The text of a 0-based line, without its line ending.
  llvm::StringRef line(llvm::StringRef Text, int64_t Line) const;
  size_t numLines() const { return Starts.size(); }

private:
  std::vector<size_t> Starts;
};

/// Applies one content change of textDocument/didChange to Text.
void applyEdit(std::string &Text, const Range &R, llvm::StringRef NewText);

/// Bytes from Start that the token at Start of Line spans: a word such as
/// `F3@5` or `rank_of`, a whole `send F3@5 -> 2` / `recv ...` /
/// `overlap(...)` action, a string, or one other character. 0 only at the
/// end of the line.
size_t tokenLength(llvm::StringRef Line, size_t Start);

/// The offset just after the `}` that closes the first `{` at or after
/// Offset (comments and strings skipped); Text.size() if it never closes.
size_t blockEnd(llvm::StringRef Text, size_t Offset);

/// The declaration whose name starts at NameOffset, from its keyword
/// (`schedule`, `fn`, `pipeline`) to before its `{`, whitespace collapsed:
/// "schedule zb_h1(m = M)". Begin, if given, receives the keyword's offset.
std::string declarationSignature(llvm::StringRef Text, size_t NameOffset,
                                 size_t *Begin = nullptr);

/// The `//` (or `///`) comment lines directly above 1-based line Line,
/// without the slashes and one following space.
std::string commentAbove(llvm::StringRef Text, unsigned Line);
/// The comment block a file opens with (same form).
std::string headerComment(llvm::StringRef Text);

/// The path of a file:// URI (percent-decoded); empty for other schemes.
std::string uriToPath(llvm::StringRef Uri);
/// The file:// URI of an absolute path.
std::string pathToUri(llvm::StringRef Path);

} // namespace pps::lsp
