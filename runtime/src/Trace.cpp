//===- Trace.cpp - Chrome trace JSON of a measured run --------------------===//
#include "ppsrt/Trace.h"
#include "ppsrt/OutputFile.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

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
  // Formatted in memory, then written whole (writeFileWhole): a full
  // disk is an error message, and an existing file is kept.
  std::string Text;
  auto F = std::back_inserter(Text);
  // Trace time: one cost unit = 1000 us, as in simulated traces.
  double Scale = MicrosPerUnit > 0 ? 1000.0 / MicrosPerUnit : 1.0;
  fmt::format_to(F, "{{\"traceEvents\": [\n");
  bool First = true;
  auto Sep = [&] {
    if (!First)
      fmt::format_to(F, ",\n");
    First = false;
  };
  for (int32_t R = 0; R < S.ranks; ++R) {
    Sep();
    fmt::format_to(F,
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
    fmt::format_to(
        F,
        "{{\"name\": \"{}\", \"cat\": \"{}\", \"ph\": \"X\", \"pid\": "
        "{}, \"tid\": {}, \"ts\": {:.3f}, \"dur\": {:.3f}, \"args\": "
        "{{\"microbatch\": {}, \"stage\": {}, \"kind\": \"{}\"{}, "
        "\"step\": {}, \"measured_us\": {:.3f}}}}}",
        // The spellings of `ppsc sim` traces (the schema's): the kind's
        // name (F, send_f, ...), the category F/I/W/B/send/recv/control.
        Name, pps::schema::traceCategory(A.kind), E->rank, E->lane, Ts, Dur,
        A.mb, A.stage, pps::schema::kindName(A.kind),
        isComm(A.kind) ? fmt::format(", \"peer\": {}", A.peer) : "", E->step,
        E->endMicros - E->startMicros);
    if (E->flow == 0)
      continue;
    // Flow arrows go from the send to the moment the receive completed.
    Sep();
    fmt::format_to(
        F,
        "{{\"name\": \"message\", \"cat\": \"flow\", \"ph\": \"{}\", "
        "\"id\": \"{:x}-{}\", \"pid\": {}, \"tid\": 1, \"ts\": {:.3f}{}}}",
        E->flow == 1 ? "s" : "f", E->flowId, E->step, E->rank,
        E->flow == 1 ? Ts : Ts + Dur, E->flow == 2 ? ", \"bp\": \"e\"" : "");
  }
  fmt::format_to(
      F,
      "\n], \"displayTimeUnit\": \"ms\", \"otherData\": {{\"pipeline\": "
      "\"{}\", \"source\": \"measured\", \"us_per_unit\": {:.6f}}}}}\n",
      jsonEscape(S.name), MicrosPerUnit);
  return writeFileWhole(Path, Text, Error);
}

} // namespace ppsrt
