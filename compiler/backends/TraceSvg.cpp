//===- TraceSvg.cpp - SVG timeline and the HTML page around it ------------===//
//
// One lane per rank: compute boxes coloured by kind with the microbatch
// number inside when it fits, and a thin strip under each lane for the
// rank's communication (grey: a receive waiting for its send, orange: a
// message in flight). A time axis with round tick steps and a legend.
// Sized so that 8 ranks x 32 microbatches stays readable (about 1400 px of
// plot width, at least 2 px per time unit).
//
//===----------------------------------------------------------------------===//
#include "TraceCommon.h"

#include <algorithm>
#include <cmath>

namespace pps::backends {

using detail::OutBuf;

namespace {

struct Layout {
  double T = 1;      // makespan
  double Pu = 10;    // pixels per time unit
  double Left = 64;  // room for rank labels
  double Top = 46;   // title and axis
  double LaneH = 30; // lane pitch
  double BoxH = 20;  // compute box height
  double StripH = 5; // comm strip height
  double Width = 0, Height = 0;
  int32_t Ranks = 0;

  double x(double T) const { return Left + T * Pu; }
  double y(int32_t R) const { return Top + R * LaneH; }
};

Layout layoutFor(const ir::Schedule &S, const sim::SimResult &R) {
  Layout L;
  L.Ranks = int32_t(S.Ranks.size());
  L.T = R.Makespan > 0 ? R.Makespan : 1;
  // About 1400 px of plot, but 14 px per unit (room for two digits in a
  // unit-long box) while that stays under 4000 px.
  L.Pu = std::clamp(std::max(1400.0 / L.T, std::min(14.0, 4000.0 / L.T)), 2.0,
                    48.0);
  L.Width = L.Left + L.T * L.Pu + 24;
  L.Height = L.Top + L.Ranks * L.LaneH + 44;
  return L;
}

/// A tick step of 1, 2 or 5 times a power of ten, at least 60 px apart.
double tickStep(const Layout &L) {
  double Min = 60.0 / L.Pu;
  double P10 = std::pow(10.0, std::floor(std::log10(std::max(Min, 1e-9))));
  for (double M : {1.0, 2.0, 5.0, 10.0})
    if (M * P10 >= Min)
      return M * P10;
  return 10 * P10;
}

void svgBody(const ir::Schedule &S, const sim::SimResult &R, OutBuf &B,
             const Layout &L, bool Hover) {
  B.put("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
      .px(std::ceil(L.Width));
  B.put("\" height=\"").px(std::ceil(L.Height)).put("\" viewBox=\"0 0 ");
  B.px(std::ceil(L.Width)).put(' ').px(std::ceil(L.Height));
  B.put(
      "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n");
  B.put("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
  // Title.
  B.put("<text x=\"")
      .px(L.Left)
      .put("\" y=\"16\" font-size=\"13\" "
           "font-weight=\"bold\">");
  B.xml(S.Name).put(": ").num(S.Topo.Ranks).put(" ranks, ").num(S.Topo.Stages);
  B.put(" stages, ").num(S.Topo.Microbatches).put(" microbatches — makespan ");
  B.put(detail::fmtTime(R.Makespan)).put(", bubble ");
  B.put(fmt::format("{:.1f}%", 100 * R.BubbleOverMakespan));
  B.put(", peak memory ").num(R.PeakMemory);
  if (R.Deadlocked)
    B.put(" — DEADLOCK");
  B.put("</text>\n");
  // Axis: grid lines and labels.
  double Step = tickStep(L);
  double AxisY = L.Top - 8;
  B.put("<g stroke=\"#e3e3e3\" stroke-width=\"1\">\n");
  for (double X = 0; X <= L.T + 1e-9; X += Step) {
    B.put("<line x1=\"").px(L.x(X)).put("\" x2=\"").px(L.x(X));
    B.put("\" y1=\"")
        .px(AxisY)
        .put("\" y2=\"")
        .px(L.y(L.Ranks) - 4)
        .put("\"/>\n");
  }
  B.put("</g>\n<g fill=\"#555\" text-anchor=\"middle\">\n");
  for (double X = 0; X <= L.T + 1e-9; X += Step) {
    B.put("<text x=\"").px(L.x(X)).put("\" y=\"").px(AxisY - 3).put("\">");
    B.put(detail::fmtTime(X)).put("</text>\n");
  }
  B.put("</g>\n");
  // Lanes.
  if (R.Times.size() != S.Ranks.size()) {
    B.put("</svg>\n");
    return;
  }
  for (int32_t Rk = 0; Rk < L.Ranks; ++Rk) {
    double Y = L.y(Rk);
    B.put("<text x=\"6\" y=\"")
        .px(Y + L.BoxH * 0.7)
        .put("\" fill=\"#333\">rank ");
    B.num(Rk).put("</text>\n");
    B.put("<rect x=\"").px(L.Left).put("\" y=\"").px(Y).put("\" width=\"");
    B.px(L.T * L.Pu).put("\" height=\"").px(L.BoxH + L.StripH + 1);
    B.put("\" fill=\"#f7f7f7\"/>\n");
    const auto &Acts = S.Ranks[Rk].Actions;
    const sim::RankTimeline &Tl = R.Times[Rk];
    // Comm strip first, then compute boxes.
    for (size_t I = 0; I < Acts.size(); ++I) {
      const ir::Action &A = Acts[I];
      if (!ir::isComm(A.Kind) || !std::isfinite(Tl.End[I]))
        continue;
      double SY = Y + L.BoxH + 1;
      if (Tl.TransferStart[I] > Tl.Start[I]) {
        B.put("<rect x=\"").px(L.x(Tl.Start[I])).put("\" y=\"").px(SY);
        B.put("\" width=\"").px((Tl.TransferStart[I] - Tl.Start[I]) * L.Pu);
        B.put("\" height=\"")
            .px(L.StripH)
            .put("\" fill=\"")
            .put(detail::WaitColor);
        B.put("\"");
        if (Hover) {
          B.put(" data-n=\"wait ").action(A, true).put("\" data-r=\"").num(Rk);
          B.put("\" data-s=\"").dbl(Tl.Start[I]).put("\" data-e=\"");
          B.dbl(Tl.TransferStart[I]).put("\"");
        }
        B.put("><title>waiting: ").action(A, true).put("</title></rect>\n");
      }
      if (Tl.End[I] > Tl.TransferStart[I]) {
        B.put("<rect x=\"").px(L.x(Tl.TransferStart[I])).put("\" y=\"").px(SY);
        B.put("\" width=\"").px((Tl.End[I] - Tl.TransferStart[I]) * L.Pu);
        B.put("\" height=\"").px(L.StripH).put("\" fill=\"");
        B.put(detail::TransferColor).put("\" fill-opacity=\"0.8\"");
        if (Hover) {
          B.put(" data-n=\"").action(A, true).put("\" data-r=\"").num(Rk);
          B.put("\" data-s=\"").dbl(Tl.TransferStart[I]).put("\" data-e=\"");
          B.dbl(Tl.End[I]).put("\"");
        }
        B.put("><title>").action(A, true).put("</title></rect>\n");
      }
    }
    for (size_t I = 0; I < Acts.size(); ++I) {
      const ir::Action &A = Acts[I];
      if (!ir::isCompute(A.Kind) && !ir::isControl(A.Kind))
        continue;
      if (!std::isfinite(Tl.End[I]))
        continue;
      bool Pair = A.overlapsNext() && I + 1 < Acts.size() &&
                  ir::isCompute(Acts[I + 1].Kind);
      double X0 = L.x(Tl.Start[I]), W = (Tl.End[I] - Tl.Start[I]) * L.Pu;
      if (ir::isControl(A.Kind))
        W = std::max(W, 2.0);
      const char *Fill =
          Pair ? detail::OverlapColor : detail::kindColor(A.Kind);
      B.put("<rect x=\"").px(X0).put("\" y=\"").px(Y).put("\" width=\"");
      B.px(W).put("\" height=\"").px(L.BoxH).put("\" fill=\"").put(Fill);
      B.put("\" stroke=\"#ffffff\" stroke-width=\"0.6\"");
      if (Hover) {
        B.put(" data-n=\"").action(A, true);
        if (Pair)
          B.put(" + ").action(Acts[I + 1], true);
        B.put("\" data-r=\"").num(Rk).put("\" data-s=\"").dbl(Tl.Start[I]);
        B.put("\" data-e=\"").dbl(Tl.End[I]).put("\"");
      }
      B.put("><title>").action(A, true);
      if (Pair)
        B.put(" + ").action(Acts[I + 1], true);
      B.put(" on rank ").num(Rk).put(": ").put(detail::fmtTime(Tl.Start[I]));
      B.put(" to ").put(detail::fmtTime(Tl.End[I])).put("</title></rect>\n");
      // The microbatch number when it fits (10 px font: about 6 px a digit).
      if (ir::isCompute(A.Kind) && A.Microbatch >= 0) {
        int Digits = A.Microbatch < 10     ? 1
                     : A.Microbatch < 100  ? 2
                     : A.Microbatch < 1000 ? 3
                                           : 4;
        if (Pair)
          Digits = 2 * Digits + 1;
        if (W >= Digits * 6.0 + 1) {
          B.put("<text x=\"")
              .px(X0 + W / 2)
              .put("\" y=\"")
              .px(Y + L.BoxH * 0.72);
          B.put("\" text-anchor=\"middle\" font-size=\"10\" fill=\"");
          B.put(A.Kind == ir::ActionKind::W || A.Kind == ir::ActionKind::I
                    ? "#222"
                    : "#fff");
          B.put("\" pointer-events=\"none\">").num(A.Microbatch);
          if (Pair)
            B.put('/').num(Acts[I + 1].Microbatch);
          B.put("</text>\n");
        }
      }
      if (Pair)
        ++I; // the pair is drawn once
    }
  }
  // Legend.
  double LY = L.y(L.Ranks) + 14;
  double LX = L.Left;
  auto Item = [&](const char *Color, const char *Text) {
    B.put("<rect x=\"")
        .px(LX)
        .put("\" y=\"")
        .px(LY)
        .put("\" width=\"14\" "
             "height=\"12\" fill=\"");
    B.put(Color).put("\"/><text x=\"").px(LX + 18).put("\" y=\"").px(LY + 10);
    B.put("\">").put(Text).put("</text>\n");
    LX += 26 + 6.5 * std::strlen(Text);
  };
  Item(detail::kindColor(ir::ActionKind::F), "F forward");
  Item(detail::kindColor(ir::ActionKind::B), "B backward");
  Item(detail::kindColor(ir::ActionKind::I), "I input grad");
  Item(detail::kindColor(ir::ActionKind::W), "W weight grad");
  Item(detail::OverlapColor, "overlap pair");
  Item(detail::TransferColor, "message in flight");
  Item(detail::WaitColor, "waiting for a message");
  B.put("</svg>\n");
}

} // namespace

void writeSvg(const ir::Schedule &S, const sim::SimResult &R,
              llvm::raw_ostream &OS) {
  OutBuf B(OS);
  B.put("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  svgBody(S, R, B, layoutFor(S, R), /*Hover=*/false);
}

void writeHtml(const ir::Schedule &S, const sim::SimResult &R,
               llvm::raw_ostream &OS, const sim::CommVolumeReport *Vol) {
  {
    OutBuf B(OS);
    B.put("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<title>");
    B.xml(S.Name).put(
        " - pps timeline</title>\n<style>\n"
        "body{font-family:'DejaVu "
        "Sans',Arial,sans-serif;margin:16px;color:#222}\n"
        "#wrap{overflow-x:auto;border:1px solid #ddd}\n"
        "#tip{position:fixed;display:none;background:#222;color:#fff;"
        "padding:6px 9px;border-radius:4px;font-size:12px;pointer-events:none;"
        "white-space:pre}\n"
        "[data-n]:hover{stroke:#000;stroke-width:1.5}\n"
        "pre{font-size:12px;background:#fafafa;padding:8px;border:1px solid "
        "#eee}\n"
        "</style></head><body>\n<div id=\"wrap\">\n");
    Layout L = layoutFor(S, R);
    svgBody(S, R, B, L, /*Hover=*/true);
    B.put("</div>\n<div id=\"tip\"></div>\n<pre>");
  }
  // The summary table, escaped.
  {
    std::string Sum;
    llvm::raw_string_ostream SOS(Sum);
    writeSummary(S, R, SOS, Vol);
    SOS.flush();
    OutBuf B(OS);
    B.xml(Sum);
    B.put(
        "</pre>\n<script>\n"
        "const tip=document.getElementById('tip');\n"
        "document.querySelector('svg').addEventListener('mousemove',e=>{\n"
        "  const t=e.target.closest('[data-n]');\n"
        "  if(!t){tip.style.display='none';return;}\n"
        "  const s=+t.dataset.s,en=+t.dataset.e;\n"
        "  tip.textContent=t.dataset.n+'\\nrank '+t.dataset.r+'\\nstart '+s+"
        "'\\nend '+en+'\\nduration '+(en-s).toFixed(3).replace(/\\.?0+$/,'');\n"
        "  tip.style.display='block';\n"
        "  "
        "tip.style.left=(e.clientX+12)+'px';tip.style.top=(e.clientY+12)+'px';"
        "\n"
        "});\n"
        "document.querySelector('svg').addEventListener('mouseleave',()=>"
        "{tip.style.display='none';});\n"
        "</script>\n</body></html>\n");
  }
}

} // namespace pps::backends
