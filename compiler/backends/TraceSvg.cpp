//===- TraceSvg.cpp - the static SVG timeline -----------------------------===//
//
// One lane per rank: compute boxes coloured by kind and shaded by chunk (or
// by direction under DualPipe's two directions) with the microbatch number
// inside when it fits, and a thin strip under each lane for the rank's
// communication (grey: a receive waiting for its send, orange: a message in
// flight). A time axis with round tick steps and a legend of what occurs.
// For a deadlocked run, each rank's lane ends in a hatched mark where it
// blocks, labelled with the action and whom it waits for. Sized so that 8
// ranks x 32 microbatches stays readable (about 1400 px of plot width, at
// least 2 px per time unit up to 100,000 px). The interactive page is
// TraceHtml.cpp.
//
//===----------------------------------------------------------------------===//
#include "TraceCommon.h"
#include "TraceModel.h"

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

Layout layoutFor(const ir::Schedule &S, const sim::SimResult &R, double End) {
  Layout L;
  L.Ranks = int32_t(S.Ranks.size());
  L.T = End > 0 ? End : (R.Makespan > 0 ? R.Makespan : 1);
  // About 1400 px of plot, but 14 px per unit (room for two digits in a
  // unit-long box) while that stays under 4000 px, and at least 2 px per
  // unit while the plot stays under MaxPlot px. The cap keeps the picture
  // (and its tick marks, one per 60 px) bounded by the actions drawn, not
  // by the makespan: a 241-byte file whose latency makes the makespan 1e10
  // units wrote tens of gigabytes of grid lines.
  constexpr double MaxPlot = 100000;
  L.Pu = std::clamp(std::max(1400.0 / L.T, std::min(14.0, 4000.0 / L.T)), 2.0,
                    48.0);
  L.Pu = std::min(L.Pu, MaxPlot / L.T);
  L.Width = L.Left + L.T * L.Pu + 24;
  L.Height = L.Top + L.Ranks * L.LaneH + 64;
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

void rect(OutBuf &B, double X, double Y, double W, double H,
          llvm::StringRef Fill) {
  B.put("<rect x=\"").px(X).put("\" y=\"").px(Y).put("\" width=\"").px(W);
  B.put("\" height=\"").px(H).put("\" fill=\"").put(Fill).put('"');
}

void svgBody(const ir::Schedule &S, const sim::SimResult &R, OutBuf &B) {
  detail::Shading Sh(S);
  detail::DeadlockView DV = detail::deadlockView(S, R);
  double End = R.Makespan;
  for (const detail::BlockedRank &BR : DV.Ranks)
    End = std::max(End, BR.Time);
  if (R.Deadlocked)
    End = std::max(End * 1.3, End + 2.0); // room for the blocked marks
  Layout L = layoutFor(S, R, End);
  B.put("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
      .px(std::ceil(L.Width));
  B.put("\" height=\"").px(std::ceil(L.Height)).put("\" viewBox=\"0 0 ");
  B.px(std::ceil(L.Width)).put(' ').px(std::ceil(L.Height));
  B.put(
      "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n");
  B.put("<defs><pattern id=\"hatch\" width=\"7\" height=\"7\" "
        "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
        "<rect width=\"7\" height=\"7\" fill=\"#fff4f4\"/><line x1=\"0\" "
        "y1=\"0\" x2=\"0\" y2=\"7\" stroke=\"#f0a8a8\" stroke-width=\"3\"/>"
        "</pattern></defs>\n");
  B.put("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
  // Title.
  B.put("<text x=\"")
      .px(L.Left)
      .put("\" y=\"16\" font-size=\"13\" "
           "font-weight=\"bold\">");
  B.xml(S.Name).put(": ").num(S.Topo.Ranks).put(" ranks, ").num(S.Topo.Stages);
  B.put(" stages, ").num(S.Topo.Microbatches).put(" microbatches — ");
  if (R.Deadlocked) {
    B.put("DEADLOCK: ").xml(DV.Headline);
  } else {
    B.put("makespan ").put(detail::fmtShort(R.Makespan)).put(", bubble ");
    B.put(fmt::format("{:.1f}%", 100 * R.BubbleOverMakespan));
    B.put(", peak memory ").dbl(R.PeakMemory);
  }
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
    B.put(detail::fmtShort(X)).put("</text>\n");
  }
  B.put("</g>\n");
  // Lanes.
  if (R.Times.size() != S.Ranks.size()) {
    B.put("</svg>\n");
    return;
  }
  bool Kind[ir::NumActionKinds] = {};
  bool Pair = false, Wait = false, Xfer = false, Held = false;
  std::vector<uint8_t> OnCycle(S.Ranks.size(), 0);
  for (int32_t Rk : DV.Cycle)
    OnCycle[Rk] = 1;
  for (int32_t Rk = 0; Rk < L.Ranks; ++Rk) {
    double Y = L.y(Rk);
    B.put("<text x=\"6\" y=\"")
        .px(Y + L.BoxH * 0.7)
        .put(OnCycle[Rk] ? "\" fill=\"#c62828\" font-weight=\"bold\">rank "
                         : "\" fill=\"#333\">rank ");
    B.num(Rk).put("</text>\n");
    rect(B, L.Left, Y, L.T * L.Pu, L.BoxH + L.StripH + 1, "#f7f7f7");
    B.put("/>\n");
    const auto &Acts = S.Ranks[Rk].Actions;
    const sim::RankTimeline &Tl = R.Times[Rk];
    // Comm strip first, then compute boxes.
    for (size_t I = 0; I < Acts.size(); ++I) {
      const ir::Action &A = Acts[I];
      if (!ir::isComm(A.Kind) || !std::isfinite(Tl.End[I]))
        continue;
      double SY = Y + L.BoxH + 1;
      if (Tl.TransferStart[I] > Tl.Start[I]) {
        Wait = true;
        rect(B, L.x(Tl.Start[I]), SY,
             (Tl.TransferStart[I] - Tl.Start[I]) * L.Pu, L.StripH,
             detail::WaitColor);
        B.put("><title>waiting: ").action(A, true).put(" on rank ").num(Rk);
        B.put(", ").put(detail::fmtShort(Tl.Start[I])).put(" to ");
        B.put(detail::fmtShort(Tl.TransferStart[I])).put("</title></rect>\n");
      }
      if (Tl.End[I] > Tl.TransferStart[I]) {
        Xfer = true;
        rect(B, L.x(Tl.TransferStart[I]), SY,
             (Tl.End[I] - Tl.TransferStart[I]) * L.Pu, L.StripH,
             detail::TransferColor);
        B.put(" fill-opacity=\"0.8\"><title>").action(A, true);
        B.put(" on rank ").num(Rk).put(", ");
        B.put(detail::fmtShort(Tl.TransferStart[I])).put(" to ");
        B.put(detail::fmtShort(Tl.End[I])).put("</title></rect>\n");
      }
    }
    // Comms held back on their stream behind an earlier one (the stream
    // rule), over the lower half of the strip.
    for (size_t I = 0; I < Tl.Held.size(); ++I) {
      if (!(Tl.Held[I] > 0) || Tl.HeldBy[I] == ~uint64_t(0) ||
          !std::isfinite(Tl.Start[I]))
        continue;
      Held = true;
      const ir::Action &By =
          S.Ranks[Tl.HeldBy[I] >> 32].Actions[uint32_t(Tl.HeldBy[I])];
      rect(B, L.x(Tl.Start[I] - Tl.Held[I]), Y + L.BoxH + 1 + L.StripH / 2,
           Tl.Held[I] * L.Pu, L.StripH / 2, detail::HeldColor);
      B.put("><title>held back on its stream: ").action(Acts[I], true);
      B.put(" on rank ").num(Rk).put(", by ").action(By, true);
      B.put(" for ").put(detail::fmtShort(Tl.Held[I])).put("</title></rect>\n");
    }
    for (size_t I = 0; I < Acts.size(); ++I) {
      const ir::Action &A = Acts[I];
      if (!ir::isCompute(A.Kind) && !ir::isControl(A.Kind))
        continue;
      if (!std::isfinite(Tl.End[I]))
        continue;
      bool IsPair = A.overlapsNext() && I + 1 < Acts.size() &&
                    ir::isCompute(Acts[I + 1].Kind);
      Kind[unsigned(A.Kind)] = true;
      double X0 = L.x(Tl.Start[I]), W = (Tl.End[I] - Tl.Start[I]) * L.Pu;
      if (ir::isControl(A.Kind))
        W = std::max(W, 2.0);
      // An overlap pair: the first compute in the top half, the second in
      // the bottom half, a red outline around both.
      int Parts = IsPair ? 2 : 1;
      for (int Part = 0; Part < Parts; ++Part) {
        const ir::Action &X = Acts[I + size_t(Part)];
        Kind[unsigned(X.Kind)] = true;
        int32_t Shades = ir::isCompute(X.Kind) ? Sh.chunks() : 1;
        std::string Fill = detail::shadeColor(
            X.Kind, ir::isCompute(X.Kind) ? Sh.of(X) : 0, Shades);
        double H = L.BoxH / Parts, PY = Y + Part * H;
        rect(B, X0, PY, W, H, Fill);
        B.put(" stroke=\"#ffffff\" stroke-width=\"0.6\"><title>");
        B.action(X, true);
        if (IsPair)
          B.put(Part ? " (second of an overlap pair)"
                     : " (first of an overlap pair)");
        B.put(" on rank ").num(Rk);
        if (ir::isCompute(X.Kind) && Sh.chunks() > 1)
          B.put(", ").put(Sh.name(Sh.of(X)));
        B.put(": ").put(detail::fmtShort(Tl.Start[I])).put(" to ");
        B.put(detail::fmtShort(Tl.End[I])).put("</title></rect>\n");
        // The microbatch number when it fits (about 6 px a digit).
        if (!ir::isCompute(X.Kind) || X.Microbatch < 0)
          continue;
        std::string Num = std::to_string(X.Microbatch);
        double Font = IsPair ? 9 : 10;
        if (W < Num.size() * Font * 0.62 + 3)
          continue;
        B.put("<text x=\"").px(X0 + W / 2).put("\" y=\"");
        B.px(PY + H / 2 + Font * 0.36);
        B.put("\" text-anchor=\"middle\" font-size=\"").px(Font);
        B.put("\" fill=\"").put(detail::inkOn(Fill));
        B.put("\" pointer-events=\"none\">").put(Num).put("</text>\n");
      }
      if (IsPair) {
        Pair = true;
        B.put("<rect x=\"").px(X0).put("\" y=\"").px(Y).put("\" width=\"");
        B.px(W).put("\" height=\"").px(L.BoxH);
        B.put("\" fill=\"none\" stroke=\"").put(detail::OverlapColor);
        B.put("\" stroke-width=\"1.4\"/>\n");
        ++I; // the pair is drawn once
      }
    }
  }
  // Where each rank of a deadlock blocks.
  for (const detail::BlockedRank &BR : DV.Ranks) {
    double X0 = L.x(BR.Time), Y = L.y(BR.Rank);
    rect(B, X0, Y, std::max(L.x(L.T) - X0, 0.0), L.BoxH + L.StripH + 1,
         "url(#hatch)");
    B.put(" stroke=\"#c62828\" stroke-width=\"").put(BR.OnCycle ? "2" : "1");
    B.put("\"><title>rank ").num(BR.Rank).put(" blocks at ").xml(BR.Name);
    B.put(' ').xml(BR.Why).put("</title></rect>\n");
    B.put("<text x=\"").px(X0 + 5).put("\" y=\"").px(Y + L.BoxH * 0.7);
    B.put("\" fill=\"#c62828\">blocked at ").xml(BR.Name);
    if (BR.WaitsFor >= 0)
      B.put(" → waits for rank ").num(BR.WaitsFor);
    else
      B.put(" → never matched");
    B.put("</text>\n");
  }
  // Legend: only what occurs.
  double LY = L.y(L.Ranks) + 14;
  double LX = L.Left;
  auto Item = [&](llvm::ArrayRef<std::string> Colors, const std::string &Text,
                  bool Outline = false) {
    for (const std::string &C : Colors) {
      B.put("<rect x=\"").px(LX).put("\" y=\"").px(LY);
      B.put("\" width=\"14\" height=\"12\" fill=\"");
      if (Outline)
        B.put("none\" stroke=\"").put(C).put("\" stroke-width=\"2");
      else
        B.put(C);
      B.put("\"/>\n");
      LX += 16;
    }
    B.put("<text x=\"").px(LX + 2).put("\" y=\"").px(LY + 10);
    B.put("\">").xml(Text).put("</text>\n");
    LX += 14 + 6.5 * double(Text.size());
  };
  for (unsigned K = 0; K < ir::NumActionKinds; ++K) {
    auto AK = ir::ActionKind(K);
    if (!Kind[K])
      continue;
    int32_t Shades = ir::isCompute(AK) ? Sh.chunks() : 1;
    std::vector<std::string> Colors;
    Colors.reserve(size_t(Shades));
    for (int32_t C = 0; C < Shades; ++C)
      Colors.push_back(detail::shadeColor(AK, C, Shades));
    Item(Colors, ir::actionKindName(AK).str() + " " + detail::kindWords(AK));
  }
  if (Pair)
    Item({detail::OverlapColor}, "overlap pair", /*Outline=*/true);
  if (Xfer)
    Item({detail::TransferColor}, "message in flight");
  if (Wait)
    Item({detail::WaitColor}, "waiting for a message");
  if (Held)
    Item({detail::HeldColor}, "held back on its comm stream");
  if (!DV.Ranks.empty())
    Item({"url(#hatch)"}, "blocked");
  if (Sh.chunks() > 1) {
    B.put("<text x=\"").px(L.Left).put("\" y=\"").px(LY + 28);
    B.put("\" fill=\"#555\">").xml(Sh.explanation(S)).put("</text>\n");
  }
  B.put("</svg>\n");
}

} // namespace

void writeSvg(const ir::Schedule &S, const sim::SimResult &R,
              llvm::raw_ostream &OS) {
  OutBuf B(OS);
  B.put("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  svgBody(S, R, B);
}

} // namespace pps::backends
