//===- OutputFile.cpp - outputs written whole or not at all ---------------===//
#include "pps/support/OutputFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Errc.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace pps {

std::optional<llvm::sys::fs::UniqueID> fileIdentity(int FD) {
  llvm::sys::fs::file_status St;
  if (llvm::sys::fs::status(FD, St))
    return std::nullopt;
  return St.getUniqueID();
}

OutputFile::OutputFile(std::string Path, int FD, bool OwnsFD,
                       std::optional<llvm::sys::fs::TempFile> Temp,
                       std::string Target)
    : raw_ostream(/*unbuffered=*/false), Path(std::move(Path)),
      Target(std::move(Target)), FD(FD), OwnsFD(OwnsFD), Temp(std::move(Temp)) {
  SetBufferSize(1 << 16);
}

static bool isInput(const llvm::sys::fs::file_status &St,
                    llvm::ArrayRef<llvm::sys::fs::UniqueID> Inputs) {
  return llvm::is_contained(Inputs, St.getUniqueID());
}

std::unique_ptr<OutputFile>
OutputFile::create(llvm::StringRef Path, std::string &Error,
                   llvm::ArrayRef<llvm::sys::fs::UniqueID> Inputs) {
  namespace fs = llvm::sys::fs;
  auto Refuse = [&](llvm::StringRef Shown) {
    Error = fmt::format("refusing to write '{}': it is an input of this "
                        "command, which the output would replace",
                        Shown.str());
    return nullptr;
  };
  if (Path == "-") {
    // Whatever llvm::outs() holds goes first, so the order is kept.
    llvm::outs().flush();
    fs::file_status St;
    // `ppsc emit in.pps >> in.pps` appends to the input while reading it.
    if (!fs::status(STDOUT_FILENO, St) && fs::is_regular_file(St) &&
        isInput(St, Inputs))
      return Refuse("<stdout>");
    return std::unique_ptr<OutputFile>(new OutputFile(
        Path.str(), STDOUT_FILENO, /*OwnsFD=*/false, std::nullopt, ""));
  }

  fs::file_status St;
  std::error_code StatEC = fs::status(Path, St); // follows symlinks
  bool Exists = !StatEC && fs::exists(St);
  if (Exists && isInput(St, Inputs))
    return Refuse(Path);
  if (Exists && fs::is_directory(St)) {
    Error =
        fmt::format("cannot open '{}' for writing: {}", Path.str(),
                    std::make_error_code(std::errc::is_a_directory).message());
    return nullptr;
  }
  if (Exists && !fs::is_regular_file(St)) {
    // A device, pipe or socket: nothing to replace, write in place.
    int FD = -1;
    if (std::error_code EC =
            fs::openFileForWrite(Path, FD, fs::CD_OpenAlways, fs::OF_None)) {
      Error = fmt::format("cannot open '{}' for writing: {}", Path.str(),
                          EC.message());
      return nullptr;
    }
    return std::unique_ptr<OutputFile>(new OutputFile(
        Path.str(), FD, /*OwnsFD=*/true, std::nullopt, Path.str()));
  }

  // A regular file, or none yet: a temporary file beside the target (a
  // symbolic link's target, so the link stays a link), renamed on commit.
  llvm::SmallString<256> Target(Path);
  if (Exists) {
    llvm::SmallString<256> Real;
    if (!fs::real_path(Path, Real))
      Target = Real;
  }
  llvm::SmallString<256> Model(Target);
  llvm::StringRef Name = llvm::sys::path::filename(Target);
  llvm::sys::path::remove_filename(Model);
  llvm::sys::path::append(Model, "." + Name + ".tmp-%%%%%%%%");
  llvm::Expected<fs::TempFile> T =
      fs::TempFile::create(Model, fs::all_read | fs::all_write, fs::OF_None);
  if (!T) {
    Error = fmt::format("cannot open '{}' for writing: {}", Path.str(),
                        llvm::toString(T.takeError()));
    return nullptr;
  }
  // An existing target keeps its permissions.
  if (Exists)
    ::fchmod(T->FD, mode_t(St.permissions()));
  int FD = T->FD;
  return std::unique_ptr<OutputFile>(new OutputFile(
      Path.str(), FD, /*OwnsFD=*/false, std::move(*T), Target.str().str()));
}

void OutputFile::write_impl(const char *Ptr, size_t Size) {
  Pos += Size;
  if (WriteError)
    return;
  while (Size > 0) {
    ssize_t N = ::write(FD, Ptr, Size);
    if (N < 0) {
      if (errno == EINTR || errno == EAGAIN)
        continue;
      WriteError = std::error_code(errno, std::generic_category());
      return;
    }
    Ptr += N;
    Size -= size_t(N);
  }
}

bool OutputFile::commit(std::string &Error) {
  flush();
  Committed = true;
  std::string Shown = Path == "-" ? "standard output" : "'" + Path + "'";
  if (!WriteError && OwnsFD && ::close(FD) != 0)
    WriteError = std::error_code(errno, std::generic_category());
  if (OwnsFD)
    FD = -1;
  if (WriteError) {
    Error = fmt::format("cannot write {}: {}", Shown, WriteError.message());
    if (Temp)
      llvm::consumeError(Temp->discard());
    return false;
  }
  if (!Temp)
    return true;
  if (llvm::Error E = Temp->keep(Target)) {
    Error =
        fmt::format("cannot write {}: {}", Shown, llvm::toString(std::move(E)));
    llvm::consumeError(Temp->discard());
    return false;
  }
  return true;
}

OutputFile::~OutputFile() {
  // raw_ostream requires an empty buffer. Written in place, what was
  // written so far goes out; a temporary file is removed.
  flush();
  if (Committed)
    return;
  if (Temp)
    llvm::consumeError(Temp->discard());
  if (OwnsFD && FD >= 0)
    ::close(FD);
}

} // namespace pps
