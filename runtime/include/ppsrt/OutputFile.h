//===- OutputFile.h - executor outputs written whole or not at all --------===//
//
// The runtime's one way to write a file (the measured trace): the bytes go
// to a temporary file beside the target, renamed over it only once every
// byte is written, so a full disk or a failed run leaves an existing file
// as it was. A target that is not a regular file (/dev/null, /dev/full, a
// pipe) is written in place; a symbolic link is followed, so it stays a
// link. Errors come back as a message, never as an exception. (ppsc's
// counterpart is pps::OutputFile in compiler/support.)
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace ppsrt {

/// Writes Data to Path as described above. False with Error set ("cannot
/// write 'PATH': No space left on device") on failure.
bool writeFileWhole(const std::string &Path, const std::string &Data,
                    std::string &Error);

} // namespace ppsrt
