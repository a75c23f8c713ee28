//===- TraceCommon.h - shared pieces of the trace backends (private) ------===//
//
// A fixed-size output buffer that formats numbers in place (so the Chrome
// trace writer allocates nothing per event), JSON string escaping, the
// colour of each action kind, and FIFO message ids for flow arrows.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/backends/Trace.h"
#include "pps/support/Figures.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace pps::backends::detail {

/// Writes through a 64 KiB buffer into a raw_ostream.
class OutBuf {
public:
  explicit OutBuf(llvm::raw_ostream &OS) : OS(OS) {}
  ~OutBuf() { flush(); }
  OutBuf(const OutBuf &) = delete;
  OutBuf &operator=(const OutBuf &) = delete;

  void flush() {
    if (N)
      OS.write(Buf, N);
    N = 0;
  }
  OutBuf &put(llvm::StringRef S) {
    if (S.size() > Cap - N) {
      flush();
      if (S.size() > Cap) {
        OS << S;
        return *this;
      }
    }
    std::memcpy(Buf + N, S.data(), S.size());
    N += S.size();
    return *this;
  }
  OutBuf &put(char C) {
    if (N == Cap)
      flush();
    Buf[N++] = C;
    return *this;
  }
  OutBuf &num(int64_t V) {
    reserve(24);
    fmt::format_int F(V);
    std::memcpy(Buf + N, F.data(), F.size());
    N += F.size();
    return *this;
  }
  /// Shortest round-trip form; "null" for NaN/inf (valid JSON).
  OutBuf &dbl(double V) {
    if (!std::isfinite(V))
      return put("null");
    reserve(40);
    char *E = fmt::format_to(Buf + N, FMT_COMPILE("{}"), V);
    N = size_t(E - Buf);
    return *this;
  }
  /// A trace timestamp or duration in microseconds, rounded to the
  /// nanosecond: integer arithmetic instead of shortest-float formatting,
  /// which dominates the trace writer otherwise.
  OutBuf &us(double V) {
    if (!std::isfinite(V) || std::fabs(V) > 9e12)
      return dbl(V);
    int64_t Ns = std::llround(V * 1000.0);
    if (Ns < 0) {
      put('-');
      Ns = -Ns;
    }
    num(Ns / 1000);
    int64_t Frac = Ns % 1000;
    if (Frac == 0)
      return *this;
    char D[4] = {'.', char('0' + Frac / 100), char('0' + Frac / 10 % 10),
                 char('0' + Frac % 10)};
    size_t Len = 4;
    while (D[Len - 1] == '0')
      --Len;
    return put(llvm::StringRef(D, Len));
  }
  /// A coordinate with at most two decimals ("12.5", "98.15", "64").
  OutBuf &px(double V) {
    if (!std::isfinite(V))
      return put('0');
    reserve(40);
    char *B0 = Buf + N;
    char *E = fmt::format_to(B0, FMT_COMPILE("{:.2f}"), V);
    while (E > B0 && E[-1] == '0')
      --E;
    if (E > B0 && E[-1] == '.')
      --E;
    N = size_t(E - Buf);
    return *this;
  }
  /// A JSON string literal.
  OutBuf &jsonStr(llvm::StringRef S) {
    put('"');
    for (char C : S) {
      switch (C) {
      case '"':
        put("\\\"");
        break;
      case '\\':
        put("\\\\");
        break;
      case '\n':
        put("\\n");
        break;
      case '\t':
        put("\\t");
        break;
      default:
        if (static_cast<unsigned char>(C) < 0x20) {
          char Tmp[8];
          int K = std::snprintf(Tmp, sizeof(Tmp), "\\u%04x", C);
          put(llvm::StringRef(Tmp, K));
        } else {
          put(C);
        }
      }
    }
    return put('"');
  }
  /// Text escaped for XML/HTML.
  OutBuf &xml(llvm::StringRef S) {
    for (char C : S) {
      switch (C) {
      case '<':
        put("&lt;");
        break;
      case '>':
        put("&gt;");
        break;
      case '&':
        put("&amp;");
        break;
      case '"':
        put("&quot;");
        break;
      default:
        put(C);
      }
    }
    return *this;
  }
  /// Appends the text-form name of an action without allocating; with Xml,
  /// the arrows are escaped for XML text and attributes.
  OutBuf &action(const ir::Action &A, bool Xml = false);

private:
  void reserve(size_t K) {
    if (Cap - N < K)
      flush();
  }
  static constexpr size_t Cap = 1 << 16;
  llvm::raw_ostream &OS;
  char Buf[Cap];
  size_t N = 0;
};

/// FIFO message numbering: the n-th send on (src, dst) and the n-th receive
/// on (src, dst) get the same id.
class MessageIds {
public:
  uint64_t next(int32_t Src, int32_t Dst, bool IsSend) {
    uint64_t K = (uint64_t(uint32_t(Src)) << 32) | uint32_t(Dst);
    auto It = Chans.find(K);
    if (It == Chans.end())
      It = Chans.insert({K, Chan{uint32_t(Chans.size()), 0, 0}}).first;
    Chan &C = It->second;
    uint32_t Seq = IsSend ? C.Sends++ : C.Recvs++;
    return (uint64_t(C.Id) << 32) | Seq;
  }

private:
  struct Chan {
    uint32_t Id, Sends, Recvs;
  };
  llvm::DenseMap<uint64_t, Chan> Chans;
};

/// Fill colour of a compute kind (SVG/HTML), and for comm/wait strips.
inline const char *kindColor(ir::ActionKind K) {
  switch (K) {
  case ir::ActionKind::F:
    return "#4e79a7";
  case ir::ActionKind::B:
    return "#59a14f";
  case ir::ActionKind::I:
    return "#76b7b2";
  case ir::ActionKind::W:
    return "#edc948";
  case ir::ActionKind::Unshard:
  case ir::ActionKind::Reshard:
  case ir::ActionKind::ReduceGrad:
    return "#b07aa1";
  default:
    return "#bab0ac";
  }
}
constexpr const char *OverlapColor = "#e15759";
constexpr const char *TransferColor = "#f28e2b";
constexpr const char *WaitColor = "#d4d4d4";
/// A comm held back on its stream behind an earlier one (the stream rule).
constexpr const char *HeldColor = "#d62728";

/// Human text for one of the figures (pps/support/Figures.h).
inline std::string fmtTime(double T) { return figureText(T); }

/// A time for pictures and hover text: at most three decimals, no trailing
/// zeros (28.929595 -> "28.93", 12.5 -> "12.5", 33 -> "33").
inline std::string fmtShort(double T) {
  if (!std::isfinite(T))
    return "-";
  std::string S = fmt::format("{:.3f}", T);
  while (S.back() == '0')
    S.pop_back();
  if (S.back() == '.')
    S.pop_back();
  return S == "-0" ? "0" : S;
}

/// An amount of memory of R's model: a count as before ("2", "1.5"), or
/// bytes with a binary unit ("192 MiB") when the model counts bytes.
inline std::string memText(const ir::MemorySpec &M, double V) {
  return M.Bytes ? ir::memoryAmountText(M, V) : fmt::format("{}", V);
}
/// What the memory amounts are of: "activations" or "of activations".
inline const char *memNoun(const ir::MemorySpec &M) {
  return M.Bytes ? "of activations" : "activations";
}

/// Bytes with a binary unit: "64 MiB".
inline std::string fmtBytes(double B) {
  const char *Units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int U = 0;
  while (B >= 1024 && U < 5) {
    B /= 1024;
    ++U;
  }
  if (U == 0 || B == std::floor(B))
    return fmt::format("{} {}", int64_t(B), Units[U]);
  return fmt::format("{:.2f} {}", B, Units[U]);
}

} // namespace pps::backends::detail
