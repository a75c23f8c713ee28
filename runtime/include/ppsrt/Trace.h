//===- Trace.h - the measured run trace, in Chrome trace format -----------===//
//
// Each rank records its real timeline: one complete event per compute
// (tid 0) and per send/receive (tid 1), flow events from each send to its
// receive. The file has the layout of `ppsc sim --trace` (docs/architecture.md
// "Trace format"): pid = rank, names in the text form (`F3@5`,
// `send F3@5 -> 2`), args with microbatch, stage, kind. Timestamps are in
// trace time units (one cost-model unit = 1000 us) so a measured trace lines
// up with the predicted one; the wall-clock microseconds are in args.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/Schedule.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ppsrt {

/// One recorded interval of a rank.
struct TraceEvent {
  int64_t action = -1; ///< index into the rank's table
  int32_t rank = 0;
  int32_t step = 0;
  int32_t lane = 0; ///< 0 compute, 1 communication
  int32_t flow = 0; ///< 0 none, 1 flow start (send), 2 flow end (receive)
  uint64_t flowId = 0;
  double startMicros = 0; ///< since the common start of the run
  double endMicros = 0;
};

/// Flow id of the Seq-th message on channel From -> To.
inline uint64_t flowId(int32_t From, int32_t To, int32_t Ranks, uint64_t Seq) {
  return (uint64_t(uint32_t(From) * uint32_t(Ranks) + uint32_t(To)) << 40) |
         (Seq & ((uint64_t(1) << 40) - 1));
}

/// Writes the events of all ranks as Chrome trace JSON. MicrosPerUnit is
/// the wall-clock length of one cost-model unit (timestamps are divided by
/// it and multiplied by 1000). Returns false with Error set on I/O failure.
bool writeChromeTrace(const std::string &Path, const ScheduleDesc &S,
                      const std::vector<TraceEvent> &Events,
                      double MicrosPerUnit, std::string &Error);

} // namespace ppsrt
