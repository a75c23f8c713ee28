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
#include "TraceHtmlData.h"
#include "TraceModel.h"
#include "pps/backends/Trace.h"

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
using detail::memNoun;
using detail::memText;
using detail::OutBuf;

namespace {

std::string pct(double X) { return fmt::format("{:.2f}%", 100.0 * X); }

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
  row(B, "peak memory", memText(R.Memory, R.PeakMemory),
      fmt::format("{}, on rank {}{}", memNoun(R.Memory), PeakRank,
                  S.MemoryLimit
                      ? fmt::format("; limit {}",
                                    memText(R.Memory, double(*S.MemoryLimit)))
                      : std::string()));
  row(B, "messages", fmt::format("{}", R.Messages),
      R.Bytes > 0 ? fmtBytes(R.Bytes)
                  : "no sizes given (comm { activation ... })");
  if (std::isfinite(R.MakespanWithoutStreams))
    row(B, "stream rule", "+" + fmtShort(R.Makespan - R.MakespanWithoutStreams),
        fmt::format("makespan it adds ({} without it)",
                    fmtShort(R.MakespanWithoutStreams)));
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
    Cell(memText(R.Memory, X.PeakMemory));
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
  bool Pair = false, Wait = false, Xfer = false, Held = false;
  if (R.Times.size() == S.Ranks.size())
    for (size_t Rk = 0; Rk < S.Ranks.size(); ++Rk) {
      const auto &Acts = S.Ranks[Rk].Actions;
      const sim::RankTimeline &T = R.Times[Rk];
      for (size_t I = 0; I < Acts.size(); ++I) {
        const ir::Action &A = Acts[I];
        if (!std::isfinite(T.End[I]) || A.Kind == ir::ActionKind::Idle)
          continue;
        if (ir::isComm(A.Kind)) {
          Held |= !T.Held.empty() && T.Held[I] > 0;
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
  if (Held)
    B.put("<span class=\"item\"><i class=\"sw\" style=\"background:")
        .put(detail::HeldColor)
        .put("\"></i>comm held back on its stream</span>\n");
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
  detail::EntryMap E(S);

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
  B.xml(R.Stream.inOrder() || R.Stream.EagerThreshold >= 0
            ? ir::commDescription(R.Comm, R.Stream)
            : ir::commModelName(R.Comm).str());
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
  card(B, memText(R.Memory, R.PeakMemory),
       R.Memory.Bytes ? "peak activation bytes per rank"
                      : "peak activations per rank");
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
  detail::writeTimelineData(S, R, Sh, DV, E, B);
  B.put("</script>\n<script>\n").put(TimelineJS);
  B.put("</script>\n</body></html>\n");
}

} // namespace pps::backends
