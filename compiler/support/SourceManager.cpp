//===- SourceManager.cpp - source buffers and interned locations ----------===//
#include "pps/support/SourceManager.h"

#include "llvm/Support/Errc.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

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

/// Reads a regular file straight into a string: one copy of the text in
/// memory, not a mapped buffer and a copy of it. False if it is not a
/// regular file or cannot be read whole.
static bool readRegularFile(llvm::StringRef Path, std::string &Out,
                            std::error_code &EC) {
  llvm::sys::fs::file_status St;
  if ((EC = llvm::sys::fs::status(Path, St)) ||
      St.type() != llvm::sys::fs::file_type::regular_file)
    return false;
  llvm::Expected<llvm::sys::fs::file_t> F =
      llvm::sys::fs::openNativeFileForRead(Path);
  if (!F) {
    EC = llvm::errorToErrorCode(F.takeError());
    return true;
  }
  Out.resize(size_t(St.getSize()));
  size_t Done = 0;
  while (Done < Out.size()) {
    llvm::Expected<size_t> N = llvm::sys::fs::readNativeFile(
        *F, llvm::MutableArrayRef<char>(&Out[Done], Out.size() - Done));
    if (!N) {
      EC = llvm::errorToErrorCode(N.takeError());
      break;
    }
    if (*N == 0)
      break;
    Done += *N;
  }
  llvm::sys::fs::closeFile(*F);
  Out.resize(Done); // the file shrank while being read
  return true;
}

bool SourceManager::addFile(llvm::StringRef Path, FileId &Id,
                            std::string &Error) {
  std::string Text;
  std::error_code EC;
  if (Path != "-" && readRegularFile(Path, Text, EC)) {
    if (EC) {
      Error = EC.message();
      return false;
    }
    Id = addBuffer(Path.str(), std::move(Text));
    return true;
  }
  auto BufOrErr = llvm::MemoryBuffer::getFileOrSTDIN(Path, /*IsText=*/true);
  if (!BufOrErr) {
    Error = BufOrErr.getError().message();
    return false;
  }
  Id = addBuffer(Path == "-" ? "<stdin>" : Path.str(),
                 (*BufOrErr)->getBuffer().str());
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
