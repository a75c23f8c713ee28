//===- Printable.cpp - text from the input, made safe to print ------------===//
#include "pps/support/Printable.h"

#include <fmt/format.h>

namespace pps {

namespace {

/// One step through Text: the code point at I (or the byte, when the bytes
/// at I are not UTF-8) and how many bytes it takes.
struct Step {
  uint32_t CodePoint;
  unsigned Len;
  bool Valid; ///< false: a byte that starts no UTF-8 sequence
};

Step decode(llvm::StringRef Text, size_t I) {
  auto B = [&](size_t K) { return static_cast<unsigned char>(Text[K]); };
  unsigned char C = B(I);
  if (C < 0x80)
    return {C, 1, true};
  unsigned Len = C >= 0xF0 && C <= 0xF4   ? 4
                 : C >= 0xE0 && C <= 0xEF ? 3
                 : C >= 0xC2 && C <= 0xDF ? 2
                                          : 0;
  if (Len == 0 || I + Len > Text.size())
    return {C, 1, false};
  uint32_t CP = C & (0x7F >> Len);
  for (unsigned K = 1; K < Len; ++K) {
    if ((B(I + K) & 0xC0) != 0x80)
      return {C, 1, false};
    CP = (CP << 6) | (B(I + K) & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
  if ((Len == 3 && CP < 0x800) || (Len == 4 && CP < 0x10000) ||
      (CP >= 0xD800 && CP <= 0xDFFF) || CP > 0x10FFFF)
    return {C, 1, false};
  return {CP, Len, true};
}

/// Code points a terminal acts on or that reorder what is shown: the C1
/// controls, the bidirectional marks, embeddings, overrides and isolates
/// ("Trojan Source", CVE-2021-42574), and the Unicode line separators.
bool isUnicodeControl(uint32_t CP) {
  return (CP >= 0x80 && CP <= 0x9F) || CP == 0x061C || CP == 0x200E ||
         CP == 0x200F || (CP >= 0x202A && CP <= 0x202E) ||
         (CP >= 0x2066 && CP <= 0x2069) || CP == 0x2028 || CP == 0x2029;
}

/// What printable() writes for one step; empty means "the bytes as they
/// are".
std::string escapeOf(const Step &S, bool KeepTab) {
  if (!S.Valid)
    return fmt::format("\\x{:02x}", S.CodePoint);
  if (S.CodePoint < 0x20 || S.CodePoint == 0x7F) {
    if (S.CodePoint == '\t' && KeepTab)
      return {};
    return fmt::format("\\x{:02x}", S.CodePoint);
  }
  if (isUnicodeControl(S.CodePoint))
    return fmt::format("<U+{:04X}>", S.CodePoint);
  return {};
}

} // namespace

std::string printable(llvm::StringRef Text, bool KeepTab) {
  if (isPrintable(Text, KeepTab))
    return Text.str();
  std::string Out;
  Out.reserve(Text.size() + 16);
  for (size_t I = 0; I < Text.size();) {
    Step S = decode(Text, I);
    std::string E = escapeOf(S, KeepTab);
    if (E.empty())
      Out.append(Text.data() + I, S.Len);
    else
      Out += E;
    I += S.Len;
  }
  return Out;
}

bool isPrintable(llvm::StringRef Text, bool KeepTab) {
  for (size_t I = 0; I < Text.size();) {
    unsigned char C = static_cast<unsigned char>(Text[I]);
    if (C >= 0x20 && C < 0x7F) {
      ++I;
      continue;
    }
    Step S = decode(Text, I);
    if (!escapeOf(S, KeepTab).empty())
      return false;
    I += S.Len;
  }
  return true;
}

std::string caretIndent(llvm::StringRef Line, size_t Column) {
  std::string Out;
  size_t Point = 1;
  for (size_t I = 0; I < Line.size() && Point < Column; ++Point) {
    Step S = decode(Line, I);
    if (S.Valid && S.CodePoint == '\t') {
      Out += '\t';
    } else {
      std::string E = escapeOf(S, /*KeepTab=*/true);
      Out.append(E.empty() ? 1 : E.size(), ' ');
    }
    I += S.Len;
  }
  return Out;
}

} // namespace pps
