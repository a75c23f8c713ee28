//===- TraceData.cpp - per-action CSV and the figures as JSON -------------===//
#include "TraceCommon.h"

#include <cmath>

namespace pps::backends {

using detail::OutBuf;

void writeActionCsv(const ir::Schedule &S, const sim::SimResult &R,
                    llvm::raw_ostream &OS) {
  OutBuf B(OS);
  B.put("rank,index,name,kind,microbatch,stage,peer,start,transfer_start,end,"
        "duration\n");
  if (R.Times.size() != S.Ranks.size())
    return;
  for (size_t Rk = 0; Rk < S.Ranks.size(); ++Rk) {
    const auto &Acts = S.Ranks[Rk].Actions;
    const sim::RankTimeline &T = R.Times[Rk];
    for (size_t I = 0; I < Acts.size(); ++I) {
      const ir::Action &A = Acts[I];
      B.num(int64_t(Rk)).put(',').num(int64_t(I)).put(',').action(A).put(',');
      B.put(ir::actionKindName(A.Kind)).put(',');
      if (A.Microbatch >= 0)
        B.num(A.Microbatch);
      B.put(',');
      if (A.Stage >= 0)
        B.num(A.Stage);
      B.put(',');
      if (ir::isComm(A.Kind))
        B.num(A.Peer);
      B.put(',');
      auto Num = [&](double V) {
        if (std::isfinite(V))
          B.dbl(V);
      };
      Num(T.Start[I]);
      B.put(',');
      Num(T.TransferStart[I]);
      B.put(',');
      Num(T.End[I]);
      B.put(',');
      Num(T.End[I] - T.Start[I]);
      B.put('\n');
    }
  }
}

void writeFiguresJson(const ir::Schedule &S, const sim::SimResult &R,
                      llvm::raw_ostream &OS, const sim::CommVolumeReport *Vol,
                      const sim::CommVolumeOptions *VolOpts) {
  OutBuf B(OS);
  B.put("{\n  \"pipeline\": ").jsonStr(S.Name);
  B.put(",\n  \"ranks\": ").num(S.Topo.Ranks);
  B.put(",\n  \"stages\": ").num(S.Topo.Stages);
  B.put(",\n  \"microbatches\": ").num(S.Topo.Microbatches);
  B.put(",\n  \"actions\": ").num(int64_t(S.numActions()));
  B.put(",\n  \"comm_model\": ").jsonStr(ir::commModelName(R.Comm));
  B.put(",\n  \"comm_stream\": {\"scope\": ")
      .jsonStr(ir::streamScopeName(R.Stream.Scope));
  B.put(", \"eager_threshold_bytes\": ");
  if (R.Stream.EagerThreshold >= 0)
    B.dbl(R.Stream.EagerThreshold);
  else
    B.put("null");
  B.put('}');
  B.put(",\n  \"blocking\": ").put(R.Blocking ? "true" : "false");
  B.put(",\n  \"dataflow\": ").put(R.UsedDataflow ? "true" : "false");
  B.put(",\n  \"deadlocked\": ").put(R.Deadlocked ? "true" : "false");
  B.put(",\n  \"makespan\": ").dbl(R.Makespan);
  B.put(",\n  \"ideal\": ").dbl(R.Ideal);
  B.put(",\n  \"bubble_over_makespan\": ").dbl(R.BubbleOverMakespan);
  B.put(",\n  \"bubble_over_ideal\": ").dbl(R.BubbleOverIdeal);
  B.put(",\n  \"mean_idle_fraction\": ").dbl(R.MeanIdleFraction);
  B.put(",\n  \"span\": ").dbl(R.Span);
  if (std::isfinite(R.MakespanWithoutStreams))
    B.put(",\n  \"makespan_without_streams\": ").dbl(R.MakespanWithoutStreams);
  B.put(",\n  \"peak_memory\": ").dbl(R.PeakMemory);
  if (!R.Memory.isChunks()) {
    // The memory model the peaks count in (the chunk model is implied).
    // (export.schema.json's memory_model: the block's amounts, per stage
    // when they differ, and the unit when it is bytes).
    auto Amounts = [&](const schema::MemoryModel &M) {
      B.put("{\"F\": ").dbl(M.Forward);
      B.put(", \"I\": ").dbl(M.inputAmount());
      B.put(", \"W\": ").dbl(M.weightAmount());
    };
    B.put(",\n  \"memory_model\": ");
    Amounts(R.Memory.Default);
    if (R.Memory.Bytes)
      B.put(", \"unit\": \"bytes\"");
    if (!R.Memory.Stages.empty()) {
      B.put(", \"stages\": [");
      for (size_t St = 0; St < R.Memory.Stages.size(); ++St) {
        B.put(St ? ", " : "");
        Amounts(R.Memory.Stages[St]);
        B.put('}');
      }
      B.put(']');
    }
    B.put('}');
  }
  if (S.MemoryLimit)
    B.put(",\n  \"memory_limit\": ").num(*S.MemoryLimit);
  B.put(",\n  \"messages\": ").num(int64_t(R.Messages));
  B.put(",\n  \"bytes\": ").dbl(R.Bytes);
  B.put(",\n  \"per_rank\": [");
  for (size_t I = 0; I < R.Ranks.size(); ++I) {
    const sim::RankStats &X = R.Ranks[I];
    B.put(I ? ",\n    " : "\n    ");
    B.put("{\"rank\": ").num(int64_t(I));
    B.put(", \"busy\": ").dbl(X.ComputeBusy);
    B.put(", \"idle\": ").dbl(X.Idle);
    B.put(", \"comm\": ").dbl(X.CommBusy);
    B.put(", \"comm_wait\": ").dbl(X.CommWait);
    if (std::isfinite(R.MakespanWithoutStreams))
      B.put(", \"stream_held\": ")
          .dbl(X.StreamHeld)
          .put(", \"stream_bubble\": ")
          .dbl(X.StreamBubble);
    B.put(", \"end\": ").dbl(X.End);
    B.put(", \"span\": ").dbl(X.Span);
    B.put(", \"peak_memory\": ").dbl(X.PeakMemory);
    B.put(", \"peak_memory_at\": ").num(X.PeakMemoryAt);
    B.put(", \"computes\": ").num(int64_t(X.Computes));
    B.put(", \"sends\": ").num(int64_t(X.Sends));
    B.put(", \"recvs\": ").num(int64_t(X.Recvs));
    if (I < R.StuckAt.size() && R.Deadlocked)
      B.put(", \"stuck_at\": ").num(R.StuckAt[I]);
    B.put('}');
  }
  B.put("\n  ],\n  \"channels\": [");
  for (size_t I = 0; I < R.Channels.size(); ++I) {
    const sim::ChannelStats &C = R.Channels[I];
    B.put(I ? ",\n    " : "\n    ");
    B.put("{\"src\": ").num(C.Src).put(", \"dst\": ").num(C.Dst);
    B.put(", \"messages\": ").num(int64_t(C.Messages));
    B.put(", \"bytes\": ").dbl(C.Bytes).put('}');
  }
  B.put(R.Channels.empty() ? "],\n" : "\n  ],\n");
  B.put("  \"critical_path\": [");
  for (size_t I = 0; I < R.CriticalPath.size(); ++I) {
    const sim::ActionRef &A = R.CriticalPath[I];
    B.put(I ? ",\n    " : "\n    ");
    B.put("{\"rank\": ").num(A.Rank).put(", \"index\": ").num(A.Index);
    B.put(", \"name\": \"").action(S.Ranks[A.Rank].Actions[A.Index]).put('"');
    if (A.Rank < int32_t(R.Times.size()))
      B.put(", \"start\": ").dbl(R.start(A)).put(", \"end\": ").dbl(R.end(A));
    B.put('}');
  }
  B.put(R.CriticalPath.empty() ? "]" : "\n  ]");
  if (Vol) {
    B.put(",\n  \"comm_volume\": {\n    \"kind\": ");
    B.jsonStr(sim::commVolumeKindName(Vol->Kind));
    if (VolOpts) {
      const sim::CacheConfig &C = VolOpts->Cache;
      B.put(",\n    \"cache\": {\"enabled\": ")
          .put(C.Enabled ? "true" : "false");
      B.put(", \"policy\": ").jsonStr(sim::cachePolicyName(C.Policy));
      B.put(", \"reuse_across_backward\": ")
          .put(C.ReuseAcrossBackward ? "true" : "false");
      B.put(", \"max_inflight_microbatches\": ").num(C.MaxInflightMicrobatches);
      B.put(", \"eviction\": ").jsonStr(sim::cacheEvictionName(C.Eviction));
      B.put("},\n    \"steps\": ").num(VolOpts->Steps);
    }
    B.put(",\n    \"payload_bytes\": ").num(int64_t(Vol->PayloadBytes));
    B.put(",\n    \"forward_requests\": ").num(int64_t(Vol->ForwardRequests));
    B.put(",\n    \"backward_requests\": ").num(int64_t(Vol->BackwardRequests));
    B.put(",\n    \"bytes_requested\": ").num(int64_t(Vol->BytesRequested));
    B.put(",\n    \"bytes_transmitted\": ").num(int64_t(Vol->BytesTransmitted));
    B.put(",\n    \"hits\": ").num(int64_t(Vol->Hits));
    B.put(",\n    \"misses\": ").num(int64_t(Vol->Misses));
    B.put(",\n    \"resends_avoided\": ").num(int64_t(Vol->ResendsAvoided));
    B.put(",\n    \"backward_reuse_hits\": ")
        .num(int64_t(Vol->BackwardReuseHits));
    B.put(",\n    \"invalidated_entries\": ")
        .num(int64_t(Vol->InvalidatedEntries));
    B.put(",\n    \"transmitted_by_source\": [");
    for (size_t I = 0; I < Vol->TransmittedBySource.size(); ++I) {
      if (I)
        B.put(", ");
      B.num(int64_t(Vol->TransmittedBySource[I]));
    }
    B.put("]\n  }");
  }
  B.put("\n}\n");
}

} // namespace pps::backends
