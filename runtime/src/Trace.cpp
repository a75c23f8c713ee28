//===- Trace.cpp - Chrome trace JSON of a measured run --------------------===//
#include "ppsrt/Trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ppsrt {

/// Escapes a string for a JSON string literal.
static std::string jsonEscape(const char *S) {
  std::string Out;
  for (const char *P = S; P && *P; ++P) {
    unsigned char C = static_cast<unsigned char>(*P);
    if (C == '"' || C == '\\')
      Out += fmt::format("\\{}", char(C));
    else if (C < 0x20)
      Out += fmt::format("\\u{:04x}", C);
    else
      Out += char(C);
  }
  return Out;
}

bool writeChromeTrace(const std::string &Path, const ScheduleDesc &S,
                      const std::vector<TraceEvent> &Events,
                      double MicrosPerUnit, std::string &Error) {
  std::FILE *F = std::fopen(Path.c_str(), "w");
  if (!F) {
    Error = fmt::format("cannot open '{}': {}", Path, std::strerror(errno));
    return false;
  }
  // Trace time: one cost unit = 1000 us, as in simulated traces.
  double Scale = MicrosPerUnit > 0 ? 1000.0 / MicrosPerUnit : 1.0;
  fmt::print(F, "{{\"traceEvents\": [\n");
  bool First = true;
  auto Sep = [&] {
    if (!First)
      fmt::print(F, ",\n");
    First = false;
  };
  for (int32_t R = 0; R < S.ranks; ++R) {
    Sep();
    fmt::print(F,
               "{{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": {0}, "
               "\"args\": {{\"name\": \"rank {0}\"}}}},\n"
               "{{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": {0}, "
               "\"tid\": 0, \"args\": {{\"name\": \"compute\"}}}},\n"
               "{{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": {0}, "
               "\"tid\": 1, \"args\": {{\"name\": \"comm\"}}}}",
               R);
  }
  std::vector<const TraceEvent *> Sorted;
  Sorted.reserve(Events.size());
  for (const TraceEvent &E : Events)
    Sorted.push_back(&E);
  std::stable_sort(Sorted.begin(), Sorted.end(),
                   [](const TraceEvent *A, const TraceEvent *B) {
                     if (A->rank != B->rank)
                       return A->rank < B->rank;
                     return A->startMicros < B->startMicros;
                   });
  for (const TraceEvent *E : Sorted) {
    const RankTable &T = S.rankTables[E->rank];
    if (E->action < 0 || E->action >= T.count)
      continue;
    Action A = decodeRow(T.rows + E->action * RowWords);
    double Ts = E->startMicros * Scale;
    double Dur = std::max(0.0, (E->endMicros - E->startMicros) * Scale);
    std::string Name = formatAction(A);
    Sep();
    fmt::print(F,
               "{{\"name\": \"{}\", \"cat\": \"{}\", \"ph\": \"X\", \"pid\": "
               "{}, \"tid\": {}, \"ts\": {:.3f}, \"dur\": {:.3f}, \"args\": "
               "{{\"microbatch\": {}, \"stage\": {}, \"kind\": \"{}\"{}, "
               "\"step\": {}, \"measured_us\": {:.3f}}}}}",
               // The spellings of `ppsc sim` traces (the schema's): the kind's
               // name (F, send_f, ...), the category F/I/W/B/send/recv/control.
               Name, pps::schema::traceCategory(A.kind), E->rank, E->lane, Ts,
               Dur, A.mb, A.stage, pps::schema::kindName(A.kind),
               isComm(A.kind) ? fmt::format(", \"peer\": {}", A.peer) : "",
               E->step, E->endMicros - E->startMicros);
    if (E->flow == 0)
      continue;
    // Flow arrows go from the send to the moment the receive completed.
    Sep();
    fmt::print(
        F,
        "{{\"name\": \"message\", \"cat\": \"flow\", \"ph\": \"{}\", "
        "\"id\": \"{:x}-{}\", \"pid\": {}, \"tid\": 1, \"ts\": {:.3f}{}}}",
        E->flow == 1 ? "s" : "f", E->flowId, E->step, E->rank,
        E->flow == 1 ? Ts : Ts + Dur, E->flow == 2 ? ", \"bp\": \"e\"" : "");
  }
  fmt::print(F,
             "\n], \"displayTimeUnit\": \"ms\", \"otherData\": {{\"pipeline\": "
             "\"{}\", \"source\": \"measured\", \"us_per_unit\": {:.6f}}}}}\n",
             jsonEscape(S.name), MicrosPerUnit);
  bool Ok = std::ferror(F) == 0;
  if (std::fclose(F) != 0 || !Ok) {
    Error = fmt::format("cannot write '{}'", Path);
    return false;
  }
  return true;
}

} // namespace ppsrt
