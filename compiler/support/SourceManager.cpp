//===- SourceManager.cpp - source buffers and interned locations ----------===//
#include "pps/support/SourceManager.h"

#include "llvm/Support/Errc.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fmt/format.h>

#include <cerrno>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace pps {

SourceManager::SourceManager() {
  // File 0 is the "<unknown>" pseudo file; location 0 is "no location".
  Files.push_back({"<unknown>", "", {0}});
  Locs.push_back({0, 0, 0});
}

FileId SourceManager::addBuffer(std::string Name, std::string Contents) {
  File F{std::move(Name), std::move(Contents), {0}};
  const char *Data = F.Contents.data();
  size_t Size = F.Contents.size();
  for (const char *P = Data, *E = Data + Size;
       (P = static_cast<const char *>(std::memchr(P, '\n', size_t(E - P))));
       ++P)
    F.LineStarts.push_back(uint32_t(P - Data + 1));
  // One id per byte and one for the end, while the ids last.
  if (uint64_t(NextBase) + Size + 1 < OffsetBit) {
    F.Base = NextBase;
    NextBase += uint32_t(Size + 1);
    ByBase.push_back(FileId(Files.size()));
  }
  Files.push_back(std::move(F));
  return Files.size() - 1;
}

/// "16 MiB", "1000 bytes": a limit as people say it.
static std::string sizeText(uint64_t Bytes) {
  if (Bytes >= (1 << 20) && Bytes % (1 << 20) == 0)
    return fmt::format("{} MiB", Bytes >> 20);
  if (Bytes >= (1 << 10) && Bytes % (1 << 10) == 0)
    return fmt::format("{} KiB", Bytes >> 10);
  return fmt::format("{} bytes", Bytes);
}

bool SourceManager::addFile(llvm::StringRef Path, FileId &Id,
                            std::string &Error) {
  namespace fs = llvm::sys::fs;
  bool Stdin = Path == "-";
  int FD = STDIN_FILENO;
  if (!Stdin) {
    if (std::error_code EC = fs::openFileForRead(Path, FD)) {
      Error = EC.message();
      return false;
    }
  }
  auto Close = [&] {
    if (!Stdin)
      ::close(FD);
  };
  fs::file_status St;
  if (std::error_code EC = fs::status(FD, St)) {
    Error = EC.message();
    Close();
    return false;
  }
  if (fs::is_directory(St)) {
    Error = std::make_error_code(std::errc::is_a_directory).message();
    Close();
    return false;
  }
  std::string TooBig =
      fmt::format("larger than the input size limit of {} (--max-input-size)",
                  sizeText(MaxFileSize));
  bool Regular = fs::is_regular_file(St);
  if (Regular && MaxFileSize && St.getSize() > MaxFileSize) {
    Error = TooBig;
    Close();
    return false;
  }
  // Streams (stdin, pipes, devices) have no size: read up to the limit,
  // so one that never ends is refused there instead of filling memory.
  std::string Contents;
  if (Regular)
    Contents.reserve(size_t(St.getSize()));
  char Buf[1 << 16];
  for (;;) {
    ssize_t N = ::read(FD, Buf, sizeof(Buf));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0) {
      Error = std::error_code(errno, std::generic_category()).message();
      Close();
      return false;
    }
    if (N == 0)
      break;
    if (MaxFileSize && Contents.size() + size_t(N) > MaxFileSize) {
      Error = TooBig;
      Close();
      return false;
    }
    Contents.append(Buf, size_t(N));
  }
  Close();
  InputIds.push_back(St.getUniqueID());
  Id = addBuffer(Stdin ? "<stdin>" : Path.str(), std::move(Contents));
  return true;
}

LocId SourceManager::getLoc(FileId File, uint32_t Line, uint32_t Col) {
  // A position within a line of the text (its newline included) is its
  // offset; anything else goes to the table.
  if (File < Files.size() && Files[File].Base != NoBase && Line >= 1 &&
      Col >= 1 && Line <= Files[File].LineStarts.size()) {
    const struct File &F = Files[File];
    uint64_t Begin = F.LineStarts[Line - 1];
    uint64_t End =
        Line < F.LineStarts.size() ? F.LineStarts[Line] - 1 : F.Contents.size();
    if (Begin + Col - 1 <= End)
      return locAtOffset(File, uint32_t(Begin + Col - 1));
  }
  uint64_t Key = (uint64_t(File) << 44) | (uint64_t(Line & 0xFFFFFF) << 20) |
                 (Col & 0xFFFFF);
  auto [It, Inserted] = LocIndex.try_emplace(Key, Locs.size());
  if (Inserted)
    Locs.push_back({File, Line, Col});
  return It->second;
}

LocId SourceManager::getLocAtOffset(FileId File, uint32_t Offset) {
  if (hasOffsetLocs(File) && Offset <= Files[File].Contents.size())
    return locAtOffset(File, Offset);
  // No offset ids for this file: by line and column.
  const auto &Starts = Files[File].LineStarts;
  size_t Line = size_t(std::upper_bound(Starts.begin(), Starts.end(), Offset) -
                       Starts.begin());
  return getLoc(File, uint32_t(Line), Offset - Starts[Line - 1] + 1);
}

bool SourceManager::offsetOf(LocId Id, FileId &File, uint32_t &Offset) const {
  if (!(Id & OffsetBit) || !isValid(Id))
    return false;
  uint32_t X = Id & ~OffsetBit;
  // The last file whose range starts at or before X.
  auto It =
      std::upper_bound(ByBase.begin(), ByBase.end(), X,
                       [&](uint32_t V, FileId F) { return V < Files[F].Base; });
  File = *(It - 1);
  Offset = X - Files[File].Base;
  return true;
}

SourcePos SourceManager::resolve(LocId Id) const {
  FileId File;
  uint32_t Offset;
  if (!offsetOf(Id, File, Offset))
    return Id < Locs.size() ? Locs[Id] : Locs[0];
  const auto &Starts = Files[File].LineStarts;
  size_t Line = size_t(std::upper_bound(Starts.begin(), Starts.end(), Offset) -
                       Starts.begin());
  return {File, uint32_t(Line), Offset - Starts[Line - 1] + 1};
}

llvm::StringRef SourceManager::lineText(LocId Id) const {
  if (!isValid(Id))
    return {};
  SourcePos P = resolve(Id);
  const File &F = Files[P.File];
  if (P.Line == 0 || P.Line > F.LineStarts.size())
    return {};
  uint32_t Begin = F.LineStarts[P.Line - 1];
  uint32_t End = P.Line < F.LineStarts.size() ? F.LineStarts[P.Line] - 1
                                              : F.Contents.size();
  llvm::StringRef Line = llvm::StringRef(F.Contents).slice(Begin, End);
  return Line.rtrim("\r");
}

} // namespace pps
