//===- OutputFile.cpp - executor outputs written whole or not at all ------===//
#include "ppsrt/OutputFile.h"

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ppsrt {

static bool writeAll(int FD, const std::string &Data, int &Err) {
  const char *P = Data.data();
  size_t Left = Data.size();
  while (Left > 0) {
    ssize_t N = ::write(FD, P, Left);
    if (N < 0) {
      if (errno == EINTR)
        continue;
      Err = errno;
      return false;
    }
    P += N;
    Left -= size_t(N);
  }
  return true;
}

bool writeFileWhole(const std::string &Path, const std::string &Data,
                    std::string &Error) {
  auto Fail = [&](const char *What, int Err) {
    Error = fmt::format("cannot {} '{}': {}", What, Path, std::strerror(Err));
    return false;
  };
  struct stat St;
  bool Exists = ::stat(Path.c_str(), &St) == 0;
  if (Exists && S_ISDIR(St.st_mode))
    return Fail("write", EISDIR);
  if (Exists && !S_ISREG(St.st_mode)) {
    // A device or a pipe: nothing to replace.
    int FD = ::open(Path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (FD < 0)
      return Fail("open", errno);
    int Err = 0;
    bool Ok = writeAll(FD, Data, Err);
    if (::close(FD) != 0 && Ok) {
      Ok = false;
      Err = errno;
    }
    return Ok || Fail("write", Err);
  }
  // The real target (a link stays a link), and a temporary file beside it.
  std::string Target = Path;
  if (Exists) {
    char Real[PATH_MAX];
    if (::realpath(Path.c_str(), Real))
      Target = Real;
  }
  size_t Slash = Target.rfind('/');
  std::string Dir = Slash == std::string::npos ? "." : Target.substr(0, Slash);
  std::string Base =
      Slash == std::string::npos ? Target : Target.substr(Slash + 1);
  std::string Temp = Dir + "/." + Base + ".tmp-XXXXXX";
  int FD = ::mkstemp(Temp.data());
  if (FD < 0)
    return Fail("open", errno);
  // mkstemp makes the file 0600: give it the target's mode, or what a new
  // file would get.
  mode_t Mode = 0;
  if (Exists) {
    Mode = St.st_mode & 07777;
  } else {
    mode_t Mask = ::umask(0);
    ::umask(Mask);
    Mode = 0666 & ~Mask;
  }
  ::fchmod(FD, Mode);
  int Err = 0;
  bool Ok = writeAll(FD, Data, Err);
  if (::close(FD) != 0 && Ok) {
    Ok = false;
    Err = errno;
  }
  if (Ok && ::rename(Temp.c_str(), Target.c_str()) != 0) {
    Ok = false;
    Err = errno;
  }
  if (!Ok) {
    ::unlink(Temp.c_str());
    return Fail("write", Err);
  }
  return true;
}

} // namespace ppsrt
