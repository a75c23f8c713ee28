//===- Figures.h - how figures (times, makespans) are written for people --===//
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>

namespace pps {

/// Human text for one of the figures, exact enough to compare with a paper:
/// 12 significant digits, no trailing zeros (33 -> "33", 12.5 -> "12.5",
/// 1236.541 -> "1236.541"); the rounding noise of sums of latencies
/// (61.199999999999996) prints as 61.2, and a difference that is only such
/// noise (below 1e-9) as 0; "-" for what is not a number. Machine-readable
/// outputs (JSON, CSV) carry the shortest exact representation instead.
inline std::string figureText(double T) {
  if (!std::isfinite(T))
    return "-";
  if (std::fabs(T) < 1e-9)
    return "0";
  if (T == std::floor(T) && std::fabs(T) < 1e15)
    return fmt::format("{}", int64_t(T));
  return fmt::format("{:.12g}", T);
}

} // namespace pps
