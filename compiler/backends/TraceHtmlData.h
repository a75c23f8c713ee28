//===- TraceHtmlData.h - the HTML timeline's data (private) ---------------===//
//
// Private to compiler/backends: the JSON the page's script draws from
// (timeline.js reads it), written by TraceHtmlData.cpp for TraceHtml.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "TraceCommon.h"
#include "TraceModel.h"

#include <cstdint>
#include <vector>

namespace pps::backends::detail {

/// Which entry of a rank's data each action is (idle slots are left out).
struct EntryMap {
  std::vector<std::vector<int32_t>> Of;
  explicit EntryMap(const ir::Schedule &S) : Of(S.Ranks.size()) {
    for (size_t Rk = 0; Rk < S.Ranks.size(); ++Rk) {
      int32_t N = 0;
      for (const ir::Action &A : S.Ranks[Rk].Actions)
        Of[Rk].push_back(A.Kind == ir::ActionKind::Idle ? -1 : N++);
    }
  }
};

/// The page's data: kinds, lanes (actions with their times, memory
/// curves, comms held back on their stream), messages, the deadlock's
/// explanation.
void writeTimelineData(const ir::Schedule &S, const sim::SimResult &R,
                       const Shading &Sh, const DeadlockView &DV,
                       const EntryMap &E, OutBuf &B);

} // namespace pps::backends::detail
