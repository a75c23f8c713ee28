//===- SourceManager.h - source buffers and interned locations ------------===//
//
// Owns every source buffer the compiler reads and gives source locations
// 32-bit ids, so that AST nodes and IR actions carry a location in one
// machine word. Location id 0 means "no location" (e.g. built by the C++ API).
//
// A position inside a buffer is its byte offset: each buffer owns a range
// of ids (OffsetBit | base + offset), so a location costs nothing to make
// and nothing to store, however many actions a file holds (as clang's
// SourceLocation). Positions outside every buffer's text (a line or column
// past the end) are interned in a table instead; so is everything once the
// buffers together pass 2 GiB.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pps {

using FileId = uint32_t;
using LocId = uint32_t;
constexpr LocId NoLoc = 0;

/// A resolved source position: 1-based line and column.
struct SourcePos {
  FileId File = 0;
  uint32_t Line = 0;
  uint32_t Col = 0;
  bool operator==(const SourcePos &O) const {
    return File == O.File && Line == O.Line && Col == O.Col;
  }
};

/// DenseMap traits for packed (file, line, col) keys. The default uint64_t
/// hash (key * 37) collides badly on packed fields, making getLoc linear.
struct PackedLocKeyInfo {
  static uint64_t getEmptyKey() { return ~uint64_t(0); }
  static uint64_t getTombstoneKey() { return ~uint64_t(0) - 1; }
  static unsigned getHashValue(uint64_t K) {
    K ^= K >> 33;
    K *= 0xff51afd7ed558ccdULL;
    K ^= K >> 33;
    K *= 0xc4ceb9fe1a85ec53ULL;
    K ^= K >> 33;
    return unsigned(K);
  }
  static bool isEqual(uint64_t A, uint64_t B) { return A == B; }
};

/// The largest input file read by default, in bytes (16 MiB: the lowered
/// text of about a million actions). The parse tree of a file costs some
/// 130 bytes of memory per byte of text, so this keeps a file's front end
/// well under 3 GB; --max-input-size raises it.
constexpr uint64_t DefaultMaxInputBytes = uint64_t(16) << 20;

class SourceManager {
public:
  SourceManager();

  /// Adds a buffer under a display name; returns its id.
  FileId addBuffer(std::string Name, std::string Contents);
  /// Reads a file ("-" is stdin). Returns false and sets Error on failure:
  /// a directory, a regular file larger than maxFileSize(), or a stream
  /// (stdin, a pipe, /dev/zero) that goes on past it, which is refused once
  /// that many bytes have been read.
  bool addFile(llvm::StringRef Path, FileId &Id, std::string &Error);

  /// The most bytes addFile reads from one file (0 = no limit).
  void setMaxFileSize(uint64_t Bytes) { MaxFileSize = Bytes; }
  uint64_t maxFileSize() const { return MaxFileSize; }
  /// The identities of the files addFile read (stdin's too, when it is a
  /// file): what an output must not overwrite.
  llvm::ArrayRef<llvm::sys::fs::UniqueID> inputIdentities() const {
    return InputIds;
  }

  llvm::StringRef fileName(FileId Id) const { return Files[Id].Name; }
  llvm::StringRef contents(FileId Id) const { return Files[Id].Contents; }
  unsigned numFiles() const { return Files.size(); }

  /// The id of a position; the same position always gets the same id.
  LocId getLoc(FileId File, uint32_t Line, uint32_t Col);
  /// The id of the byte at Offset in File (Offset == size: the end).
  LocId getLocAtOffset(FileId File, uint32_t Offset);
  /// True if File's positions are offset ids: then locAtOffset needs no
  /// table and ids of one file differ by their offsets.
  bool hasOffsetLocs(FileId File) const {
    return File < Files.size() && Files[File].Base != NoBase;
  }
  /// getLocAtOffset for a file with offset ids (hasOffsetLocs).
  LocId locAtOffset(FileId File, uint32_t Offset) const {
    return OffsetBit | (Files[File].Base + Offset);
  }
  /// The file and byte offset of an offset id; false for other ids.
  bool offsetOf(LocId Id, FileId &File, uint32_t &Offset) const;
  /// Line and column of a location.
  SourcePos resolve(LocId Id) const;
  bool isValid(LocId Id) const {
    if (Id & OffsetBit)
      return (Id & ~OffsetBit) < NextBase;
    return Id != NoLoc && Id < Locs.size();
  }

  /// The text of the line holding a location, without the newline.
  llvm::StringRef lineText(LocId Id) const;

private:
  static constexpr uint32_t OffsetBit = 0x80000000u;
  static constexpr uint32_t NoBase = ~0u;
  struct File {
    std::string Name;
    std::string Contents;
    std::vector<uint32_t> LineStarts;
    uint32_t Base = NoBase; ///< first offset id (without OffsetBit), or none
  };
  std::vector<File> Files;
  /// Files with offset ids, in Base order (for resolving an id).
  std::vector<FileId> ByBase;
  uint32_t NextBase = 0;
  std::vector<SourcePos> Locs; ///< interned positions
  std::vector<llvm::sys::fs::UniqueID> InputIds;
  uint64_t MaxFileSize = DefaultMaxInputBytes;
  llvm::DenseMap<uint64_t, LocId, PackedLocKeyInfo>
      LocIndex; // packed (file,line,col) -> id
};

} // namespace pps
