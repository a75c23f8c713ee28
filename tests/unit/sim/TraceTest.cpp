//===- TraceTest.cpp - the trace backends on small simulated schedules ----===//
#include "SimTestUtil.h"

#include "pps/backends/Trace.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

using namespace pps;

namespace {

struct SimRun {
  ir::Schedule S;
  sim::SimResult R;
};

SimRun oneF1B(double Latency) {
  SimRun X{simtest::oneF1B(4, 8), {}};
  X.S.Cost.Latency = Latency;
  simtest::insertComms(X.S);
  X.R = sim::simulate(X.S);
  return X;
}

template <typename Fn> std::string capture(Fn F) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  F(OS);
  OS.flush();
  return Out;
}

} // namespace

TEST(Trace, ActionNames) {
  using ir::Action;
  using ir::ActionKind;
  EXPECT_EQ(backends::actionName(Action::compute(ActionKind::F, 3, 5)), "F3@5");
  EXPECT_EQ(backends::actionName(Action::comm(ActionKind::SendF, 3, 5, 2)),
            "send F3@5 -> 2");
  EXPECT_EQ(backends::actionName(Action::comm(ActionKind::RecvB, 3, 6, 1)),
            "recv B3@6 <- 1");
  EXPECT_EQ(backends::actionName(Action::control(ActionKind::Unshard, 5)),
            "unshard 5");
  EXPECT_EQ(backends::actionName(Action::idle(2)), "idle");
}

TEST(Trace, ChromeTraceIsValidJsonWithFlowPairs) {
  SimRun X = oneF1B(0.5);
  std::string Out = capture(
      [&](llvm::raw_ostream &OS) { backends::writeChromeTrace(X.S, X.R, OS); });
  auto J = llvm::json::parse(Out);
  ASSERT_TRUE(bool(J)) << llvm::toString(J.takeError());
  const llvm::json::Array *Ev = J->getAsObject()->getArray("traceEvents");
  ASSERT_TRUE(Ev);
  size_t Computes = 0, Starts = 0, Finishes = 0;
  std::map<int64_t, int> Flow;
  // Per (pid, tid): slices must nest (here: not overlap at all).
  std::map<std::pair<int64_t, int64_t>, double> LastEnd;
  for (const llvm::json::Value &V : *Ev) {
    const llvm::json::Object *O = V.getAsObject();
    llvm::StringRef Ph = *O->getString("ph");
    if (Ph == "X") {
      int64_t Pid = *O->getInteger("pid"), Tid = *O->getInteger("tid");
      double Ts = *O->getNumber("ts"), Dur = *O->getNumber("dur");
      EXPECT_GE(Dur, 0);
      if (Tid == 0)
        ++Computes;
      auto &End = LastEnd[{Pid, Tid}];
      if (Tid != 0) { // comm lanes are assigned so slices never overlap
        EXPECT_LE(End, Ts + 1e-6) << Pid << "/" << Tid;
      }
      End = std::max(End, Ts + Dur);
      const llvm::json::Object *Args = O->getObject("args");
      ASSERT_TRUE(Args);
      EXPECT_TRUE(Args->getInteger("microbatch"));
      EXPECT_TRUE(Args->getInteger("stage"));
    } else if (Ph == "s") {
      ++Starts;
      Flow[*O->getInteger("id")] += 1;
    } else if (Ph == "f") {
      ++Finishes;
      Flow[*O->getInteger("id")] += 10;
    }
  }
  EXPECT_EQ(Computes, 64u);
  EXPECT_EQ(Starts, 48u);
  EXPECT_EQ(Finishes, 48u);
  for (const auto &[Id, N] : Flow)
    EXPECT_EQ(N, 11) << "flow " << Id << " lacks a start or a finish";
}

TEST(Trace, GanttOneColumnPerUnitAndScaled) {
  SimRun X{simtest::oneF1B(2, 2), {}};
  X.R = sim::simulate(X.S);
  ASSERT_DOUBLE_EQ(X.R.Makespan, 9);
  std::string G = capture([&](llvm::raw_ostream &OS) {
    backends::writeGantt(X.S, X.R, OS, {40, false});
  });
  EXPECT_NE(G.find("rank 0 Ff  BB bb\n"), std::string::npos) << G;
  EXPECT_NE(G.find("rank 1  FBBfbb\n"), std::string::npos)
      << G; // no trailing blanks
  EXPECT_NE(G.find("1 column = 1 time unit;"), std::string::npos);
  SimRun Y = oneF1B(0);
  std::string S = capture([&](llvm::raw_ostream &OS) {
    backends::writeGantt(Y.S, Y.R, OS, {11, false});
  });
  EXPECT_NE(S.find("1 column = 3 time units"), std::string::npos) << S;
  // Colour only when asked.
  EXPECT_EQ(G.find("\x1b["), std::string::npos);
  std::string C = capture([&](llvm::raw_ostream &OS) {
    backends::writeGantt(X.S, X.R, OS, {40, true});
  });
  EXPECT_NE(C.find("\x1b[97;44m"), std::string::npos);
}

TEST(Trace, SvgEscapesAndHtmlHover) {
  SimRun X = oneF1B(0.5);
  std::string Svg =
      capture([&](llvm::raw_ostream &OS) { backends::writeSvg(X.S, X.R, OS); });
  EXPECT_EQ(Svg.find("<- "), std::string::npos); // arrows escaped
  EXPECT_NE(Svg.find("&lt;- "), std::string::npos);
  EXPECT_NE(Svg.find("</svg>"), std::string::npos);
  // Times in tooltips are rounded; the legend lists only what occurs
  // (1F1B has no I, W or overlap pairs).
  EXPECT_NE(Svg.find("<title>F0@0 on rank 0: 0 to 1</title>"),
            std::string::npos);
  EXPECT_EQ(Svg.find("input grad"), std::string::npos);
  EXPECT_EQ(Svg.find("overlap pair"), std::string::npos);
  EXPECT_NE(Svg.find("F forward"), std::string::npos);
  std::string Html = capture(
      [&](llvm::raw_ostream &OS) { backends::writeHtml(X.S, X.R, OS); });
  // One self-contained page: the data, the script and the style inline,
  // nothing fetched.
  EXPECT_NE(Html.find("<script type=\"application/json\" id=\"pps-data\">"),
            std::string::npos);
  EXPECT_NE(Html.find("addEventListener('wheel'"), std::string::npos);
  EXPECT_EQ(Html.find("src=\""), std::string::npos);
  EXPECT_EQ(Html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(Html.find("@import"), std::string::npos);
  // The summary is a table, and the legend names F and B only.
  EXPECT_NE(Html.find("<th>makespan</th><td class=\"n\">41</td>"),
            std::string::npos);
  EXPECT_NE(Html.find("data-kind=\"F\""), std::string::npos);
  EXPECT_NE(Html.find("data-kind=\"B\""), std::string::npos);
  EXPECT_EQ(Html.find("data-kind=\"W\""), std::string::npos);
}

TEST(Trace, ChunkShading) {
  // Interleaved on 2 ranks x 2 chunks (loop placement): the two chunks of a
  // rank get two shades of each kind, and the legend says what they mean.
  ir::ScheduleBuilder B(2, 4, 1);
  B.rank(0).F(0, 0).F(0, 2).B(0, 2).B(0, 0);
  B.rank(1).F(0, 1).F(0, 3).B(0, 3).B(0, 1);
  ir::Schedule S = B.build();
  sim::SimResult R = sim::simulate(S);
  std::string Svg =
      capture([&](llvm::raw_ostream &OS) { backends::writeSvg(S, R, OS); });
  auto Fill = [&](llvm::StringRef Title) {
    size_t T = Svg.find(Title);
    EXPECT_NE(T, std::string::npos) << Title.str();
    size_t F = Svg.rfind("fill=\"", T);
    return Svg.substr(F + 6, 7);
  };
  EXPECT_NE(Fill("<title>F0@0 on rank 0, chunk 0"),
            Fill("<title>F0@2 on rank 0, chunk 1"));
  EXPECT_EQ(Fill("<title>F0@0 on rank 0, chunk 0"),
            Fill("<title>F0@1 on rank 1, chunk 0"));
  EXPECT_NE(Svg.find("dark: chunk 0"), std::string::npos);
}

TEST(Trace, CsvAndFiguresJson) {
  SimRun X = oneF1B(0.5);
  std::string Csv = capture(
      [&](llvm::raw_ostream &OS) { backends::writeActionCsv(X.S, X.R, OS); });
  EXPECT_EQ(size_t(std::count(Csv.begin(), Csv.end(), '\n')),
            X.S.numActions() + 1);
  sim::CommVolumeOptions VO;
  sim::CommVolumeReport V = sim::computeCommVolume(X.S, VO, &X.R);
  std::string Js = capture([&](llvm::raw_ostream &OS) {
    backends::writeFiguresJson(X.S, X.R, OS, &V, &VO);
  });
  auto J = llvm::json::parse(Js);
  ASSERT_TRUE(bool(J)) << llvm::toString(J.takeError());
  const llvm::json::Object *O = J->getAsObject();
  EXPECT_EQ(*O->getNumber("makespan"), 41);
  EXPECT_EQ(*O->getNumber("bubble_over_ideal"), 17.0 / 24);
  EXPECT_EQ(O->getArray("per_rank")->size(), 4u);
  EXPECT_EQ(*O->getObject("comm_volume")->getInteger("forward_requests"), 24);
}

TEST(Trace, DeadlockedResultStillWrites) {
  ir::ScheduleBuilder B(2, 2, 1);
  B.rank(0)
      .F(0)
      .comm(ir::ActionKind::RecvB, 0, 0, 1)
      .comm(ir::ActionKind::SendF, 0, 0, 1)
      .B(0);
  B.rank(1)
      .comm(ir::ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .B(0)
      .comm(ir::ActionKind::SendB, 0, 1, 0);
  ir::Schedule S = B.build();
  sim::SimResult R = sim::simulate(S);
  ASSERT_TRUE(R.Deadlocked);
  std::string Out = capture([&](llvm::raw_ostream &OS) {
    backends::writeChromeTrace(S, R, OS);
    backends::writeSummary(S, R, OS);
    backends::writeActionCsv(S, R, OS);
    backends::writeGantt(S, R, OS);
  });
  EXPECT_NE(Out.find("DEADLOCK"), std::string::npos);
  EXPECT_NE(Out.find("1,2,B0@1,B,0,1,,,,,\n"), std::string::npos) << Out;
  // The pictures show where each rank blocks and the cycle.
  std::string Svg =
      capture([&](llvm::raw_ostream &OS) { backends::writeSvg(S, R, OS); });
  EXPECT_NE(Svg.find("blocked at recv B0@0 &lt;- 1 → waits for rank 1"),
            std::string::npos)
      << Svg;
  EXPECT_NE(Svg.find("ranks 0 and 1 wait on each other"), std::string::npos);
  std::string Html =
      capture([&](llvm::raw_ostream &OS) { backends::writeHtml(S, R, OS); });
  EXPECT_NE(Html.find("\"cycle\":[0,1]"), std::string::npos);
  EXPECT_NE(Html.find("<li class=\"cycle\">rank 0 blocks at <code>recv "
                      "B0@0 &lt;- 1</code>"),
            std::string::npos);
}
