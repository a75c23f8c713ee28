//===- OutputFile.h - outputs written whole or not at all -----------------===//
//
// Every file ppsc writes goes through OutputFile: the bytes go to a
// temporary file in the target's directory, and commit() renames it over
// the target only when everything was written. A command that fails, is
// interrupted or runs out of disk leaves an existing target untouched (an
// interrupt removes the temporary file too, as clang does). A target that
// is not a regular file (a terminal, a pipe, /dev/null, /dev/full) is
// written in place, as is standard output ("-"); a write error there is
// still reported by commit() instead of aborting the program.
//
// OutputFile also refuses a target that is one of the inputs, by file
// identity (device and inode), so `-o in.pps`, `-o ././in.pps` and a
// symbolic link to in.pps are all caught whatever the spelling.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>

namespace pps {

class OutputFile : public llvm::raw_ostream {
public:
  /// Opens Path for writing ("-" is standard output). Refuses a target
  /// that is the same file as one of Inputs. Null with Error set (a
  /// sentence without the path) on failure.
  static std::unique_ptr<OutputFile>
  create(llvm::StringRef Path, std::string &Error,
         llvm::ArrayRef<llvm::sys::fs::UniqueID> Inputs = {});

  /// Flushes, checks that every byte was written and moves the temporary
  /// file into place. False with Error set on failure; the target is then
  /// untouched (or, written in place, holds what was written before the
  /// failure).
  bool commit(std::string &Error);

  /// Without commit(): removes the temporary file, leaving the target as
  /// it was.
  ~OutputFile() override;

  /// The path as given ("-" for standard output).
  llvm::StringRef path() const { return Path; }
  /// True when the bytes go to a temporary file renamed on commit().
  bool isAtomic() const { return Temp.has_value(); }

private:
  OutputFile(std::string Path, int FD, bool OwnsFD,
             std::optional<llvm::sys::fs::TempFile> Temp, std::string Target);
  void write_impl(const char *Ptr, size_t Size) override;
  uint64_t current_pos() const override { return Pos; }

  std::string Path;   ///< as given
  std::string Target; ///< what the temporary file is renamed to
  int FD;
  bool OwnsFD;
  std::optional<llvm::sys::fs::TempFile> Temp;
  std::error_code WriteError;
  uint64_t Pos = 0;
  bool Committed = false;
};

/// The identity (device, inode) of an open file descriptor, for
/// OutputFile::create's Inputs.
std::optional<llvm::sys::fs::UniqueID> fileIdentity(int FD);

} // namespace pps
