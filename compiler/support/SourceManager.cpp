//===- SourceManager.cpp - source buffers and interned locations ----------===//
#include "pps/support/SourceManager.h"

#include "llvm/Support/MemoryBuffer.h"

namespace pps {

SourceManager::SourceManager() {
  // File 0 is the "<unknown>" pseudo file; location 0 is "no location".
  Files.push_back({"<unknown>", "", {0}});
  Locs.push_back({0, 0, 0});
}

FileId SourceManager::addBuffer(std::string Name, std::string Contents) {
  File F{std::move(Name), std::move(Contents), {0}};
  for (uint32_t I = 0, E = F.Contents.size(); I < E; ++I)
    if (F.Contents[I] == '\n')
      F.LineStarts.push_back(I + 1);
  Files.push_back(std::move(F));
  return Files.size() - 1;
}

bool SourceManager::addFile(llvm::StringRef Path, FileId &Id,
                            std::string &Error) {
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
  uint64_t Key = (uint64_t(File) << 44) | (uint64_t(Line & 0xFFFFFF) << 20) |
                 (Col & 0xFFFFF);
  auto [It, Inserted] = LocIndex.try_emplace(Key, Locs.size());
  if (Inserted)
    Locs.push_back({File, Line, Col});
  return It->second;
}

llvm::StringRef SourceManager::lineText(LocId Id) const {
  if (!isValid(Id))
    return {};
  SourcePos P = Locs[Id];
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
