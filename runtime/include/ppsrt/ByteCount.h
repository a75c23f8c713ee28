//===- ByteCount.h - a number of bytes as options write it ----------------===//
//
// Header-only and dependency-free: ppsc's options (--eager-threshold,
// --max-input-size) and the executors' --eager-threshold read byte counts
// with this one function, so both accept exactly the same spellings.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string_view>

namespace pps::schema {

/// "65536", "64K" (or "64k"), "16M", "1G": K, M and G are powers of 1024.
/// Sets Out and returns true if Text is one, at most Max; false otherwise
/// (empty, another character, or past Max).
inline bool parseByteCount(std::string_view Text, uint64_t Max, uint64_t &Out) {
  uint64_t Unit = 1;
  if (!Text.empty()) {
    char Last = Text.back();
    if (Last == 'K' || Last == 'k')
      Unit = uint64_t(1) << 10;
    else if (Last == 'M')
      Unit = uint64_t(1) << 20;
    else if (Last == 'G')
      Unit = uint64_t(1) << 30;
    if (Unit != 1)
      Text.remove_suffix(1);
  }
  if (Text.empty())
    return false;
  uint64_t Limit = Max / Unit, N = 0;
  for (char C : Text) {
    if (C < '0' || C > '9')
      return false;
    uint64_t D = uint64_t(C - '0');
    if (D > Limit || N > (Limit - D) / 10)
      return false;
    N = N * 10 + D;
  }
  Out = N * Unit;
  return true;
}

} // namespace pps::schema
