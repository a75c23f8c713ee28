//===- TraceHtml.cpp - the interactive HTML timeline ----------------------===//
//
// One self-contained page (no network, no external script or style): the
// schedule's data as JSON, the script and style of compiler/backends/
// timeline (embedded at build time), and, written here so that they read
// without the script, the headline figures, a deadlock's explanation, the
// legend (only what occurs) and the summary tables. The script draws the
// timeline: zoom and pan, computes shaded by chunk or direction, message
// arrows and the critical path on demand, each rank's memory curve, and
// where each rank of a deadlock blocks with the cycle.
//
//===----------------------------------------------------------------------===//
#include "TraceCommon.h"
#include "TraceModel.h"

#include "pps/analysis/Memory.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <vector>

#include "TimelineAssets.inc"

namespace pps::backends {

using detail::fmtBytes;
using detail::fmtShort;
using detail::OutBuf;

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

std::string pct(double X) { return fmt::format("{:.2f}%", 100.0 * X); }

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

/// The page's data (see timeline.js for how it is read).
void writeData(const ir::Schedule &S, const sim::SimResult &R,
               const detail::Shading &Sh, const detail::DeadlockView &DV,
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
    B.put('}');
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
void card(OutBuf &B, llvm::StringRef Value, llvm::StringRef Label) {
  B.put("<div class=\"fig\"><b>").xml(Value).put("</b><span>").xml(Label);
  B.put("</span></div>\n");
}

void row(OutBuf &B, llvm::StringRef Name, llvm::StringRef Value,
         llvm::StringRef Detail = "") {
  B.put("<tr><th>").xml(Name).put("</th><td class=\"n\">").xml(Value);
  B.put("</td><td class=\"d\">").xml(Detail).put("</td></tr>\n");
}

void writeTables(const ir::Schedule &S, const sim::SimResult &R,
                 const sim::CommVolumeReport *Vol, OutBuf &B) {
  B.put("<h2>Summary</h2>\n<div class=\"tables\">\n");
  B.put("<table class=\"sum\" id=\"figures\"><caption>Figures</caption>\n");
  row(B, "makespan", fmtShort(R.Makespan), "end of the last action");
  row(B, "ideal", fmtShort(R.Ideal), "largest per-rank compute time");
  row(B, "bubble", pct(R.BubbleOverMakespan), "(makespan - ideal) / makespan");
  row(B, "", pct(R.BubbleOverIdeal), "(makespan - ideal) / ideal");
  row(B, "mean idle", pct(R.MeanIdleFraction),
      "1 - sum of busy / (ranks x makespan)");
  int32_t PeakRank = 0;
  for (size_t I = 0; I < R.Ranks.size(); ++I)
    if (R.Ranks[I].PeakMemory > R.Ranks[PeakRank].PeakMemory)
      PeakRank = int32_t(I);
  row(B, "peak memory", fmt::format("{}", R.PeakMemory),
      fmt::format("activations, on rank {}{}", PeakRank,
                  S.MemoryLimit ? fmt::format("; limit {}", *S.MemoryLimit)
                                : std::string()));
  row(B, "messages", fmt::format("{}", R.Messages),
      R.Bytes > 0 ? fmtBytes(R.Bytes)
                  : "no sizes given (comm { activation ... })");
  row(B, "comm", ir::commModelName(R.Comm),
      R.UsedDataflow ? "dataflow timing: each cross-rank dependency costs one "
                       "message"
      : R.Blocking   ? "blocking: comm holds the rank"
                     : "async: comm overlaps compute");
  row(B, "actions", fmt::format("{}", S.numActions()));
  B.put("</table>\n");

  B.put("<table class=\"sum\" id=\"per-rank\"><caption>Per rank</caption>\n"
        "<tr><th class=\"n\">rank</th><th class=\"n\">busy</th>"
        "<th class=\"n\">idle</th><th class=\"n\">util</th>"
        "<th class=\"n\">comm</th><th class=\"n\">wait</th>"
        "<th class=\"n\">peak mem</th><th class=\"n\">computes</th>"
        "<th class=\"n\">sends</th><th class=\"n\">recvs</th></tr>\n");
  for (size_t I = 0; I < R.Ranks.size(); ++I) {
    const sim::RankStats &X = R.Ranks[I];
    B.put(X.PeakMemory == R.PeakMemory && R.PeakMemory > 0
              ? "<tr class=\"peak\">"
              : "<tr>");
    auto Cell = [&](const std::string &V) {
      B.put("<td class=\"n\">").xml(V).put("</td>");
    };
    Cell(std::to_string(I));
    Cell(fmtShort(X.ComputeBusy));
    Cell(fmtShort(X.Idle));
    Cell(R.Makespan > 0 ? pct(X.ComputeBusy / R.Makespan) : "-");
    Cell(fmtShort(X.CommBusy));
    Cell(fmtShort(X.CommWait));
    Cell(fmt::format("{}", X.PeakMemory));
    Cell(std::to_string(X.Computes));
    Cell(std::to_string(X.Sends));
    Cell(std::to_string(X.Recvs));
    B.put("</tr>\n");
  }
  B.put("</table>\n");

  if (!R.Channels.empty()) {
    B.put("<table class=\"sum\" id=\"channels\"><caption>Channels</caption>\n"
          "<tr><th>from</th><th>to</th><th class=\"n\">messages</th>"
          "<th class=\"n\">bytes</th></tr>\n");
    for (const sim::ChannelStats &C : R.Channels)
      B.put("<tr><td>rank ")
          .num(C.Src)
          .put("</td><td>rank ")
          .num(C.Dst)
          .put("</td><td class=\"n\">")
          .num(int64_t(C.Messages))
          .put("</td><td class=\"n\">")
          .xml(fmtBytes(C.Bytes))
          .put("</td></tr>\n");
    B.put("</table>\n");
  }
  if (Vol) {
    B.put("<table class=\"sum\" id=\"comm-volume\"><caption>Communication "
          "volume (");
    B.xml(sim::commVolumeKindName(Vol->Kind)).put(")</caption>\n");
    row(B, "payload per transfer", fmtBytes(double(Vol->PayloadBytes)));
    row(B, "requests",
        fmt::format("{} + {}", Vol->ForwardRequests, Vol->BackwardRequests),
        "forward + backward");
    row(B, "bytes requested", fmtBytes(double(Vol->BytesRequested)));
    row(B, "bytes transmitted", fmtBytes(double(Vol->BytesTransmitted)));
    row(B, "cache hits", fmt::format("{}", Vol->Hits),
        fmt::format("{} misses", Vol->Misses));
    row(B, "resends avoided", fmt::format("{}", Vol->ResendsAvoided));
    row(B, "backward reuse hits", fmt::format("{}", Vol->BackwardReuseHits));
    row(B, "invalidated entries", fmt::format("{}", Vol->InvalidatedEntries));
    for (size_t I = 0; I < Vol->TransmittedBySource.size(); ++I)
      row(B, fmt::format("sent by rank {}", I),
          fmtBytes(double(Vol->TransmittedBySource[I])));
    B.put("</table>\n");
  }
  B.put("</div>\n");

  if (R.CriticalPath.empty())
    return;
  size_t N = R.CriticalPath.size();
  unsigned Computes = 0;
  double Work = 0;
  for (const sim::ActionRef &A : R.CriticalPath)
    if (ir::isCompute(S.Ranks[A.Rank].Actions[A.Index].Kind)) {
      ++Computes;
      Work += R.end(A) - R.start(A);
    }
  B.put("<h2>Critical path</h2>\n<p>").num(int64_t(N));
  B.put(" actions, ").num(Computes).put(" of them computes (");
  B.put(fmtShort(Work)).put(" of the makespan's ").put(fmtShort(R.Makespan));
  B.put(" time units are compute on the path). Tick <i>critical path</i> "
        "above to outline it on the timeline.</p>\n<div class=\"path\" "
        "id=\"critical-path\">");
  auto Chip = [&](size_t I) {
    const sim::ActionRef &A = R.CriticalPath[I];
    B.put("<span>").action(S.Ranks[A.Rank].Actions[A.Index], true);
    B.put(" &middot; r").num(A.Rank).put("</span>");
  };
  constexpr size_t Head = 40, Tail = 10;
  for (size_t I = 0; I < N; ++I) {
    if (N > Head + Tail && I == Head) {
      B.put("<span class=\"gap\">&hellip; ").num(int64_t(N - Head - Tail));
      B.put(" more &hellip;</span>");
      I = N - Tail;
    }
    Chip(I);
  }
  B.put("</div>\n");
}

void writeLegend(const ir::Schedule &S, const sim::SimResult &R,
                 const detail::Shading &Sh, const detail::DeadlockView &DV,
                 OutBuf &B) {
  // What was drawn: kinds that ran, overlap pairs, waits, transfers.
  bool Kind[ir::NumActionKinds] = {};
  bool Pair = false, Wait = false, Xfer = false;
  if (R.Times.size() == S.Ranks.size())
    for (size_t Rk = 0; Rk < S.Ranks.size(); ++Rk) {
      const auto &Acts = S.Ranks[Rk].Actions;
      const sim::RankTimeline &T = R.Times[Rk];
      for (size_t I = 0; I < Acts.size(); ++I) {
        const ir::Action &A = Acts[I];
        if (!std::isfinite(T.End[I]) || A.Kind == ir::ActionKind::Idle)
          continue;
        if (ir::isComm(A.Kind)) {
          Wait |= T.TransferStart[I] > T.Start[I];
          Xfer |= T.End[I] > T.TransferStart[I];
          continue;
        }
        Kind[unsigned(A.Kind)] = true;
        Pair |= A.overlapsNext();
      }
    }
  B.put("<div class=\"legend\" id=\"legend\">\n");
  for (unsigned K = 0; K < ir::NumActionKinds; ++K) {
    auto AK = ir::ActionKind(K);
    if (!Kind[K] || ir::isComm(AK))
      continue;
    B.put("<span class=\"item\" data-kind=\"").xml(ir::actionKindName(AK));
    B.put("\">");
    int32_t Shades = ir::isCompute(AK) ? Sh.chunks() : 1;
    for (int32_t C = 0; C < Shades; ++C)
      B.put("<i class=\"sw\" style=\"background:")
          .put(detail::shadeColor(AK, C, Shades))
          .put("\"></i>");
    B.put("<b>")
        .xml(ir::actionKindName(AK))
        .put("</b> ")
        .put(detail::kindWords(AK));
    B.put("</span>\n");
  }
  if (Pair)
    B.put("<span class=\"item\"><i class=\"sw outline\"></i>overlap pair "
          "(top: first, bottom: second)</span>\n");
  if (Xfer)
    B.put("<span class=\"item\"><i class=\"sw\" style=\"background:")
        .put(detail::TransferColor)
        .put("\"></i>message in flight</span>\n");
  if (Wait)
    B.put("<span class=\"item\"><i class=\"sw\" style=\"background:")
        .put(detail::WaitColor)
        .put("\"></i>receive waiting for its send</span>\n");
  if (R.Deadlocked && !DV.Ranks.empty())
    B.put("<span class=\"item\"><i class=\"sw hatch\"></i>blocked "
          "forever</span>\n");
  B.put("<span class=\"item\"><i class=\"sw curve\"></i>activations "
        "held</span>\n");
  if (Sh.chunks() > 1)
    B.put("<span class=\"note\">").xml(Sh.explanation(S)).put("</span>\n");
  B.put("</div>\n");
}

} // namespace

void writeHtml(const ir::Schedule &S, const sim::SimResult &R,
               llvm::raw_ostream &OS, const sim::CommVolumeReport *Vol) {
  OutBuf B(OS);
  detail::Shading Sh(S);
  detail::DeadlockView DV = detail::deadlockView(S, R);
  EntryMap E(S);

  B.put("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, "
        "initial-scale=1\">\n<title>");
  B.xml(S.Name).put(" - pps timeline</title>\n");
  // Script errors are recorded on <html data-js-errors> (what the render
  // tests read, and what a bug report can quote).
  B.put("<script>addEventListener('error',function(e){var h=document."
        "documentElement;h.setAttribute('data-js-errors',(h.getAttribute("
        "'data-js-errors')||'')+e.message+' ('+e.lineno+':'+e.colno+'); ');"
        "});</script>\n<style>\n");
  B.put(TimelineCSS).put("</style></head><body>\n<header><h1>pipeline ");
  B.xml(S.Name).put("</h1>\n<p class=\"sub\">").num(S.Topo.Ranks);
  B.put(" ranks &middot; ").num(S.Topo.Stages).put(" stages");
  if (Sh.chunks() > 1 && !Sh.byDirection())
    B.put(" (").num(Sh.chunks()).put(" chunks per rank, ");
  if (Sh.chunks() > 1 && !Sh.byDirection())
    B.xml(ir::placementName(S.Topo.Place)).put(" placement)");
  if (Sh.byDirection())
    B.put(", two directions");
  B.put(" &middot; ").num(S.Topo.Microbatches).put(" microbatches &middot; ");
  B.num(int64_t(S.numActions())).put(" actions &middot; ");
  B.xml(ir::commModelName(R.Comm));
  B.put(R.UsedDataflow ? ", dataflow timing"
        : R.Blocking   ? ", blocking comm"
                       : ", async comm");
  B.put("</p></header>\n<div class=\"figs\">\n");
  if (R.Deadlocked) {
    card(B, fmtShort(R.Makespan), "time until every rank is stuck");
    card(B, fmt::format("{} of {}", DV.Ranks.size(), S.Ranks.size()),
         "ranks blocked forever");
  } else {
    card(B, fmtShort(R.Makespan), "makespan");
    card(B, pct(R.BubbleOverMakespan), "bubble (of makespan)");
  }
  card(B, fmt::format("{}", R.PeakMemory), "peak activations per rank");
  card(B, fmt::format("{}", R.Messages),
       R.Bytes > 0 ? "messages, " + fmtBytes(R.Bytes) : "messages");
  B.put("</div>\n");
  if (R.Deadlocked) {
    std::string Head = DV.Headline;
    if (!Head.empty())
      Head[0] = char(std::toupper(static_cast<unsigned char>(Head[0])));
    B.put("<div class=\"banner\" id=\"deadlock\"><b>").xml(Head);
    B.put(".</b> The timeline shows what ran, then where each rank blocks "
          "(hatched) and whom it waits for (red arrows).<ul>\n");
    for (const detail::BlockedRank &BR : DV.Ranks) {
      B.put(BR.OnCycle ? "<li class=\"cycle\">" : "<li>");
      B.put("rank ").num(BR.Rank).put(" blocks at <code>").xml(BR.Name);
      B.put("</code> (from time ").put(fmtShort(BR.Time)).put(") ");
      // Why is "waiting for rank 1 to post `recv F1@1 <- 0`": code spans.
      llvm::StringRef W = BR.Why;
      bool Code = false;
      for (char C : W) {
        if (C == '`') {
          B.put(Code ? "</code>" : "<code>");
          Code = !Code;
          continue;
        }
        B.xml(llvm::StringRef(&C, 1));
      }
      if (Code)
        B.put("</code>");
      B.put("</li>\n");
    }
    B.put("</ul></div>\n");
  }
  B.put("<div class=\"toolbar\">"
        "<button id=\"zoom-out\" title=\"zoom out (-)\">&minus;</button>"
        "<button id=\"zoom-in\" title=\"zoom in (+)\">+</button>"
        "<button id=\"zoom-fit\" title=\"show everything (0)\">fit</button>"
        "<label><input type=\"checkbox\" id=\"show-msgs\"> message "
        "arrows</label>"
        "<label><input type=\"checkbox\" id=\"show-crit\"> critical "
        "path</label>"
        "<span id=\"range\"></span>"
        "<span class=\"hint\">wheel or +/&minus;: zoom &middot; drag or "
        "&larr;/&rarr;: pan &middot; double-click: zoom in &middot; 0: fit "
        "&middot; hover: details</span></div>\n");
  B.put("<div id=\"view\"><svg id=\"timeline\" "
        "xmlns=\"http://www.w3.org/2000/svg\" width=\"100%\" "
        "height=\"60\"></svg></div>\n"
        "<noscript><p>The timeline needs JavaScript; the figures below do "
        "not.</p></noscript>\n");
  writeLegend(S, R, Sh, DV, B);
  B.put("<div id=\"tip\"></div>\n");
  writeTables(S, R, Vol, B);
  B.put("<footer>Written by ppsc sim --format=html. Times are in the cost "
        "model's units.</footer>\n");
  B.put("<script type=\"application/json\" id=\"pps-data\">");
  writeData(S, R, Sh, DV, E, B);
  B.put("</script>\n<script>\n").put(TimelineJS);
  B.put("</script>\n</body></html>\n");
}

} // namespace pps::backends
