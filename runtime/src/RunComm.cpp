//===- RunComm.cpp - a run's comm model and stream rule -------------------===//
//
// --comm, --stream and --eager-threshold change the schedule's comm model
// and stream rule as ppsc's --comm-model, --stream and --eager-threshold
// change a schedule (compiler/driver/CommOptions.cpp): `nccl` is rendezvous
// with the schema's NcclStream, the other two set one part of the rule.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/Main.h"

#include "ppsrt/ByteCount.h"

#include <fmt/format.h>

namespace ppsrt {

using pps::schema::StreamScope;

/// "65536", "64K", "1M", "1G" (powers of 1024; ppsc's spellings), or
/// "none" (-1).
static bool thresholdBytes(const std::string &Text, double &Out) {
  if (Text == "none") {
    Out = -1;
    return true;
  }
  uint64_t N;
  if (!pps::schema::parseByteCount(Text, uint64_t(1) << 40, N))
    return false;
  Out = double(N);
  return true;
}

bool parseCommOption(const std::string &Name, const std::string &Value,
                     RunOptions &O, std::string &Error) {
  if (Name == "--comm") {
    if (Value == "nccl") {
      O.comm = CommModel::Rendezvous;
      O.preset = pps::schema::NcclStream;
    } else if (Value == "rendezvous") {
      O.comm = CommModel::Rendezvous;
    } else if (Value == "eager") {
      O.comm = CommModel::Eager;
    } else if (Value == "batched") {
      O.comm = CommModel::Batched;
    } else {
      Error = fmt::format("unknown comm model '{}' (expected rendezvous, "
                          "eager, batched or nccl)",
                          Value);
      return false;
    }
    O.commSet = true;
    return true;
  }
  if (Name == "--stream") {
    for (unsigned K = 0; K < pps::schema::NumStreamScopes; ++K)
      if (Value == pps::schema::nameOf(StreamScope(K)))
        O.scope = StreamScope(K);
    if (!O.scope) {
      Error = fmt::format("unknown stream rule '{}' (expected none, peer or "
                          "rank)",
                          Value);
      return false;
    }
    return true;
  }
  // --eager-threshold
  double Bytes = 0;
  if (!thresholdBytes(Value, Bytes)) {
    Error = fmt::format("bad value '{}' for --eager-threshold (expected a "
                        "number of bytes, with an optional K, M or G suffix, "
                        "or 'none')",
                        Value);
    return false;
  }
  O.eagerThreshold = Bytes;
  return true;
}

RunComm runCommFor(const ScheduleDesc &S, const RunOptions &O) {
  RunComm C;
  C.model = O.commSet ? O.comm : S.comm;
  C.stream = O.preset ? *O.preset : S.stream;
  if (O.scope)
    C.stream.Scope = *O.scope;
  if (O.eagerThreshold)
    C.stream.EagerThreshold = *O.eagerThreshold;
  return C;
}

std::string describeComm(const RunComm &C) {
  if (C.model == CommModel::Rendezvous && C.stream == pps::schema::NcclStream)
    return "nccl";
  std::string D = commModelName(C.model);
  if (C.stream.inOrder())
    D += fmt::format(", one stream per {}",
                     C.stream.Scope == StreamScope::Rank ? "rank" : "peer");
  if (C.stream.EagerThreshold >= 0 && C.model != CommModel::Eager)
    D +=
        fmt::format(", sends of up to {} bytes eager", C.stream.EagerThreshold);
  return D;
}

double executorPrediction(const ScheduleDesc &S, const RunComm &C,
                          bool BlockingRecv) {
  if (C.stream.inOrder()) {
    if (!S.streamMakespan || BlockingRecv)
      return -1;
    if (C.model == S.comm && C.stream == S.stream)
      return S.streamMakespan[0];
    if (C.model == CommModel::Rendezvous && C.stream == pps::schema::NcclStream)
      return S.streamMakespan[1];
    return -1;
  }
  // Without a stream rule: the executor timing, computed with the
  // schedule's eager threshold.
  if (C.stream.EagerThreshold != S.stream.EagerThreshold)
    return -1;
  return executorMakespan(S, C.model, BlockingRecv);
}

} // namespace ppsrt
