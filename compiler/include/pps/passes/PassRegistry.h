//===- PassRegistry.h - every pass by its stable name ---------------------===//
//
// The passes a pipeline may run, known by name before any of them runs, so
// the driver can reject a misspelt --disable-pass, --print-after or
// --time-passes with a suggestion, and lint can say which checks a
// disabled pass leaves undone. The entries are the passes' own name() and
// description() (pipeline::passRegistry() fills them from the passes'
// create functions); nothing else spells a pass name.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace pps::passes {

/// What is known of a pass without running it.
struct PassInfo {
  /// Stable name used on the command line, e.g. "insert-comms".
  std::string Name;
  /// One line for --help and listings.
  std::string Description;
  /// For a pass that checks the schedule: what stays unchecked when it is
  /// disabled, as "the schedule was not checked for deadlock". Empty for a
  /// pass that only transforms.
  std::string Unchecked;
};

class PassRegistry {
public:
  /// Adds a pass. Names are unique.
  void add(PassInfo Info);
  /// The pass called Name, or null.
  const PassInfo *lookup(llvm::StringRef Name) const;
  /// Every registered pass, in registration (pipeline) order.
  llvm::ArrayRef<PassInfo> passes() const { return Passes; }
  /// The registered name nearest to an unknown Name (a few edits away), or
  /// empty if none is near: the "did you mean" of a misspelling.
  llvm::StringRef suggest(llvm::StringRef Name) const;

private:
  std::vector<PassInfo> Passes;
};

} // namespace pps::passes
