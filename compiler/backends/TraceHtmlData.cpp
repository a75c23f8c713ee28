//===- TraceHtmlData.cpp - the HTML timeline's data
//------------------------===//
//
// The JSON the page's script draws from (see timeline.js for how it is
// read): kinds and their colours, per rank the actions with their times,
// the memory curve and the comms held back on their stream, the messages,
// and a deadlock's explanation.
//
//===----------------------------------------------------------------------===//
#include "TraceHtmlData.h"

#include "pps/analysis/Memory.h"
#include "pps/backends/Trace.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace pps::backends::detail {

namespace {

/// A number for the page's data: at most six decimals, no trailing zeros,
/// null when not finite (an action that never ran).
void dataNum(OutBuf &B, double V) {
  if (!std::isfinite(V)) {
    B.put("null");
    return;
  }
  std::string S = fmt::format("{:.6f}", V);
  while (S.back() == '0')
    S.pop_back();
  if (S.back() == '.')
    S.pop_back();
  if (S == "-0")
    S = "0";
  B.put(S);
}

/// A JSON string that is also safe inside <script>: '<', '>' and '&' are
/// written as \u escapes.
void dataStr(OutBuf &B, llvm::StringRef S) {
  B.put('"');
  for (char C : S) {
    unsigned char U = static_cast<unsigned char>(C);
    if (C == '"' || C == '\\') {
      B.put('\\').put(C);
    } else if (U < 0x20 || C == '<' || C == '>' || C == '&') {
      B.put(fmt::format("\\u{:04x}", unsigned(U)));
    } else {
      B.put(C);
    }
  }
  B.put('"');
}

/// The text-form template of a kind: {m}, {s}, {p} stand for microbatch,
/// stage and peer.
const char *nameTemplate(ir::ActionKind K) {
  switch (K) {
  case ir::ActionKind::F:
    return "F{m}@{s}";
  case ir::ActionKind::I:
    return "I{m}@{s}";
  case ir::ActionKind::W:
    return "W{m}@{s}";
  case ir::ActionKind::B:
    return "B{m}@{s}";
  case ir::ActionKind::SendF:
    return "send F{m}@{s} -> {p}";
  case ir::ActionKind::SendB:
    return "send B{m}@{s} -> {p}";
  case ir::ActionKind::RecvF:
    return "recv F{m}@{s} <- {p}";
  case ir::ActionKind::RecvB:
    return "recv B{m}@{s} <- {p}";
  case ir::ActionKind::Unshard:
    return "unshard {s}";
  case ir::ActionKind::Reshard:
    return "reshard {s}";
  case ir::ActionKind::ReduceGrad:
    return "reduce_grad {s}";
  case ir::ActionKind::Idle:
    return "idle";
  }
  return "?";
}

const char *kindClass(ir::ActionKind K) {
  if (ir::isCompute(K))
    return "compute";
  if (ir::isComm(K))
    return "comm";
  if (ir::isControl(K))
    return "control";
  return "idle";
}

} // namespace

/// The page's data (see timeline.js for how it is read).
void writeTimelineData(const ir::Schedule &S, const sim::SimResult &R,
                       const Shading &Sh, const DeadlockView &DV,
                       const EntryMap &E, OutBuf &B) {
  int32_t P = int32_t(S.Ranks.size());
  bool Timed = R.Times.size() == S.Ranks.size();
  double End = R.Makespan;
  for (const detail::BlockedRank &BR : DV.Ranks)
    End = std::max(End, BR.Time);
  if (R.Deadlocked)
    End = std::max(End * 1.3, End + 2.0); // room for the blocked marks
  if (!(End > 0))
    End = 1;
  B.put("{\"name\":");
  dataStr(B, S.Name);
  B.put(",\"ranks\":").num(S.Topo.Ranks).put(",\"stages\":").num(S.Topo.Stages);
  B.put(",\"microbatches\":").num(S.Topo.Microbatches);
  B.put(",\"makespan\":");
  dataNum(B, R.Makespan);
  B.put(",\"end\":");
  dataNum(B, End);
  B.put(",\"deadlocked\":").put(R.Deadlocked ? "true" : "false");
  B.put(",\"memoryLimit\":");
  if (S.MemoryLimit)
    B.num(*S.MemoryLimit);
  else
    B.put("null");
  B.put(",\"colors\":{\"wait\":\"").put(detail::WaitColor);
  B.put("\",\"held\":\"").put(detail::HeldColor);
  B.put("\",\"transfer\":\"").put(detail::TransferColor);
  B.put("\",\"msgF\":\"#2f6aa8\",\"msgB\":\"#37842f\"}");
  if (Sh.chunks() > 1) {
    B.put(",\"shading\":{\"names\":[");
    for (int32_t C = 0; C < Sh.chunks(); ++C) {
      if (C)
        B.put(',');
      dataStr(B, Sh.name(C));
    }
    B.put("]}");
  } else {
    B.put(",\"shading\":null");
  }
  // Kinds, indexed by the IR's kind number.
  B.put(",\"kinds\":[");
  for (unsigned K = 0; K < ir::NumActionKinds; ++K) {
    auto Kind = ir::ActionKind(K);
    if (K)
      B.put(',');
    B.put("{\"n\":");
    dataStr(B, ir::isComm(Kind) ? (ir::isSend(Kind) ? "send" : "recv")
                                : ir::actionKindName(Kind));
    B.put(",\"cls\":\"").put(kindClass(Kind)).put("\",\"dir\":\"");
    B.put(Kind == ir::ActionKind::SendF || Kind == ir::ActionKind::RecvF ? "F"
                                                                         : "B");
    B.put("\",\"t\":");
    dataStr(B, nameTemplate(Kind));
    B.put(",\"c\":[");
    int32_t Shades = ir::isCompute(Kind) ? Sh.chunks() : 1;
    for (int32_t C = 0; C < Sh.chunks(); ++C) {
      if (C)
        B.put(',');
      B.put('"').put(detail::shadeColor(Kind, std::min(C, Shades - 1), Shades));
      B.put('"');
    }
    B.put("],\"ink\":[");
    for (int32_t C = 0; C < Sh.chunks(); ++C) {
      if (C)
        B.put(',');
      B.put('"')
          .put(detail::inkOn(
              detail::shadeColor(Kind, std::min(C, Shades - 1), Shades)))
          .put('"');
    }
    B.put("]}");
  }
  B.put("],\n\"lanes\":[");
  // Memory as a step curve in time: an allocation when F starts, a release
  // when the freeing backward ends.
  analysis::MemoryOptions MO;
  MO.KeepCurve = true;
  analysis::MemoryProfile Mem = analysis::analyzeMemory(S, MO);
  llvm::DenseSet<uint64_t> Critical;
  for (const sim::ActionRef &A : R.CriticalPath)
    Critical.insert((uint64_t(uint32_t(A.Rank)) << 32) | uint32_t(A.Index));
  for (int32_t Rk = 0; Rk < P; ++Rk) {
    const auto &Acts = S.Ranks[Rk].Actions;
    B.put(Rk ? ",\n{\"a\":[" : "\n{\"a\":[");
    bool First = true;
    double LastEnd = 0;
    for (size_t I = 0; I < Acts.size(); ++I) {
      const ir::Action &A = Acts[I];
      if (A.Kind == ir::ActionKind::Idle)
        continue;
      if (!First)
        B.put(',');
      First = false;
      double St = Timed ? R.Times[Rk].Start[I] : NAN;
      double Xs = Timed ? R.Times[Rk].TransferStart[I] : NAN;
      double En = Timed ? R.Times[Rk].End[I] : NAN;
      if (std::isfinite(En))
        LastEnd = std::max(LastEnd, En);
      unsigned Flags = 0;
      if (ir::isCompute(A.Kind)) {
        if (A.overlapsNext() && I + 1 < Acts.size() &&
            ir::isCompute(Acts[I + 1].Kind))
          Flags |= 1;
        if (I > 0 && Acts[I - 1].overlapsNext() &&
            ir::isCompute(Acts[I - 1].Kind))
          Flags |= 2;
      }
      if (Critical.count((uint64_t(uint32_t(Rk)) << 32) | uint32_t(I)))
        Flags |= 4;
      B.num(int64_t(A.Kind)).put(',').num(A.Microbatch).put(',');
      B.num(A.Stage).put(',').num(A.Peer).put(',');
      dataNum(B, St);
      B.put(',');
      dataNum(B, Xs);
      B.put(',');
      dataNum(B, En);
      B.put(',').num(ir::isCompute(A.Kind) ? Sh.of(A) : 0);
      B.put(',').num(Flags);
    }
    B.put("],\"mem\":[");
    std::vector<std::pair<double, double>> Steps;
    if (Timed && size_t(Rk) < Mem.Ranks.size()) {
      double Prev = 0;
      for (const auto &[Idx, After] : Mem.Ranks[Rk].Curve) {
        double T = After > Prev ? R.Times[Rk].Start[Idx] : R.Times[Rk].End[Idx];
        Prev = After;
        if (std::isfinite(T))
          Steps.push_back({T, After});
      }
      std::stable_sort(
          Steps.begin(), Steps.end(),
          [](const auto &X, const auto &Y) { return X.first < Y.first; });
    }
    for (size_t K = 0; K < Steps.size(); ++K) {
      if (K)
        B.put(',');
      dataNum(B, Steps[K].first);
      B.put(',');
      dataNum(B, Steps[K].second);
    }
    B.put("],\"stages\":");
    llvm::SmallVector<int32_t, 4> Held;
    if (S.Topo.StageToRank.size() == size_t(S.Topo.Stages))
      Held = S.Topo.stagesOf(Rk);
    std::string Stages;
    for (size_t K = 0; K < Held.size() && K < 4; ++K)
      Stages += fmt::format("{}{}", K ? ", " : "", Held[K]);
    if (Held.size() > 4)
      Stages += fmt::format(" +{}", Held.size() - 4);
    dataStr(B, Held.empty()       ? ""
               : Held.size() == 1 ? "stage " + Stages
                                  : "stages " + Stages);
    B.put(",\"peak\":");
    double Peak = 0;
    for (const auto &St : Steps)
      Peak = std::max(Peak, St.second);
    dataNum(B, size_t(Rk) < R.Ranks.size() && !R.Deadlocked
                   ? double(R.Ranks[Rk].PeakMemory)
                   : Peak);
    B.put(",\"end\":");
    dataNum(B, LastEnd);
    // Comms held back on their stream: [index, how long, what held them].
    B.put(",\"held\":[");
    if (Timed && !R.Times[Rk].Held.empty()) {
      const sim::RankTimeline &T = R.Times[Rk];
      bool FirstHeld = true;
      for (size_t I = 0; I < Acts.size(); ++I) {
        int32_t Shown = E.Of[Rk][I];
        if (Shown < 0 || !(T.Held[I] > 0) || T.HeldBy[I] == ~uint64_t(0))
          continue;
        const ir::Action &By =
            S.Ranks[T.HeldBy[I] >> 32].Actions[uint32_t(T.HeldBy[I])];
        B.put(FirstHeld ? "[" : ",[").num(int64_t(Shown)).put(',');
        dataNum(B, T.Held[I]);
        B.put(',');
        dataStr(B, actionName(By));
        B.put(']');
        FirstHeld = false;
      }
    }
    B.put("]}");
  }
  B.put("],\n\"msgs\":[");
  // The n-th send from a to b is matched with the n-th receive at b from a.
  std::map<std::pair<int32_t, int32_t>,
           std::pair<std::vector<std::pair<int32_t, int32_t>>,
                     std::vector<std::pair<int32_t, int32_t>>>>
      Chans;
  for (int32_t Rk = 0; Rk < P; ++Rk) {
    const auto &Acts = S.Ranks[Rk].Actions;
    for (size_t I = 0; I < Acts.size(); ++I) {
      const ir::Action &A = Acts[I];
      if (!ir::isComm(A.Kind) || A.Peer < 0 || A.Peer >= P || A.Peer == Rk)
        continue;
      int32_t En = E.Of[Rk][I];
      if (ir::isSend(A.Kind))
        Chans[{Rk, A.Peer}].first.push_back({Rk, En});
      else
        Chans[{A.Peer, Rk}].second.push_back({Rk, En});
    }
  }
  bool FirstMsg = true;
  for (const auto &[Key, Ends] : Chans) {
    size_t N = std::min(Ends.first.size(), Ends.second.size());
    for (size_t K = 0; K < N; ++K) {
      if (!FirstMsg)
        B.put(',');
      FirstMsg = false;
      B.num(Ends.first[K].first).put(',').num(Ends.first[K].second).put(',');
      B.num(Ends.second[K].first).put(',').num(Ends.second[K].second);
    }
  }
  B.put("],\n\"crit\":[");
  bool FirstCrit = true;
  for (const sim::ActionRef &A : R.CriticalPath) {
    if (A.Rank < 0 || A.Rank >= P)
      continue;
    int32_t En = E.Of[A.Rank][A.Index];
    if (En < 0)
      continue;
    if (!FirstCrit)
      B.put(',');
    FirstCrit = false;
    B.num(A.Rank).put(',').num(En);
  }
  B.put("],\n\"blocked\":");
  if (!R.Deadlocked) {
    B.put("null,\"cycle\":null}");
    return;
  }
  B.put('[');
  for (size_t K = 0; K < DV.Ranks.size(); ++K) {
    const detail::BlockedRank &BR = DV.Ranks[K];
    if (K)
      B.put(',');
    B.put("{\"rank\":").num(BR.Rank).put(",\"entry\":");
    B.num(E.Of[BR.Rank][BR.Index]).put(",\"t\":");
    dataNum(B, BR.Time);
    B.put(",\"waitsFor\":").num(BR.WaitsFor);
    B.put(",\"cycle\":").put(BR.OnCycle ? "true" : "false");
    B.put(",\"name\":");
    dataStr(B, BR.Name);
    B.put(",\"why\":");
    dataStr(B, BR.Why);
    B.put('}');
  }
  B.put("],\"cycle\":[");
  for (size_t K = 0; K < DV.Cycle.size(); ++K) {
    if (K)
      B.put(',');
    B.num(DV.Cycle[K]);
  }
  B.put("]}");
}

/// A "key figure" card.

} // namespace pps::backends::detail
