//===- PassRegistry.cpp - every pass by its stable name -------------------===//
#include "pps/passes/PassRegistry.h"

#include <algorithm>
#include <cassert>

namespace pps::passes {

void PassRegistry::add(PassInfo Info) {
  assert(!lookup(Info.Name) && "a pass name is registered twice");
  Passes.push_back(std::move(Info));
}

const PassInfo *PassRegistry::lookup(llvm::StringRef Name) const {
  for (const PassInfo &P : Passes)
    if (P.Name == Name)
      return &P;
  return nullptr;
}

llvm::StringRef PassRegistry::suggest(llvm::StringRef Name) const {
  // About one edit in three characters: "deadlck" -> "deadlock",
  // "memroy" -> "memory", but not "x" -> "fsdp".
  unsigned Limit = std::max<unsigned>(1, (unsigned(Name.size()) + 2) / 3);
  llvm::StringRef Best;
  unsigned BestDistance = Limit + 1;
  for (const PassInfo &P : Passes) {
    unsigned D = llvm::StringRef(P.Name).edit_distance(
        Name, /*AllowReplacements=*/true, /*MaxEditDistance=*/Limit);
    if (D < BestDistance) {
      BestDistance = D;
      Best = P.Name;
    }
  }
  return Best;
}

} // namespace pps::passes
