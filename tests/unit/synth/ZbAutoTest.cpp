//===- ZbAutoTest.cpp - stdlib zb_auto is the zero-bubble heuristic -------===//
//
// The zero-bubble paper's heuristic lives twice: stdlib/zb_auto.pps (what
// users run) and compiler/synth/ZbGreedy.cpp (synth's portfolio and the
// tests' baseline). They must give the same order for every combination of
// the paper's flags, under unequal per-stage costs, latency, and both the
// chunk and the zero-bubble memory models; and the published figures.
//
//===----------------------------------------------------------------------===//
#include "pps/frontend/Frontend.h"
#include "pps/synth/Algorithms.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

using namespace pps;
using namespace pps::synth;

namespace {

/// zb_auto's order for P's topology and costs (the memory model Model, mem
/// activations), or empty with the error in Why.
std::optional<Order> compiledZbAuto(const Problem &P, const char *Model,
                                    int64_t Mem, int Variant,
                                    std::string *Why = nullptr) {
  std::string Cost;
  for (int32_t S = 0; S < P.Stages; ++S)
    Cost += fmt::format(" F[stage {0}] = {1}; I[stage {0}] = {2}; W[stage "
                        "{0}] = {3};",
                        S, P.Cost[S].F, P.Cost[S].I, P.Cost[S].W);
  std::string Text = fmt::format(
      "pipeline z {{ ranks {}; microbatches {}; cost {{{} }} comm {{ latency "
      "{}; }} {} schedule zb_auto(mem: {}, variant: {}); }}\n",
      P.Ranks, P.Microbatches, Cost, P.Latency, Model, Mem, Variant);
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  frontend::FrontendOptions FO;
  FO.StdlibDir = PPS_SOURCE_DIR "/stdlib";
  std::optional<ir::Schedule> S =
      frontend::compileBuffer("z.pps", Text, SM, Diags, FO);
  if (!S || Diags.hasErrors()) {
    if (Why && !Diags.diagnostics().empty())
      *Why = Diags.diagnostics().front().Message;
    return std::nullopt;
  }
  return fromIr(*S);
}

TEST(ZbAuto, SameOrdersAsTheCRendering) {
  std::mt19937 Rng(16);
  struct ModelCase {
    const char *Text;
    schema::MemoryModel Model;
  };
  const ModelCase Models[] = {{"", schema::MemoryModel::chunks()},
                              {"memory { F = 2; I = -1; W = -1; }", {2.0, 1.0}},
                              {"memory { F = 1; I = -0.75; }", {1.0, 0.75}}};
  int Compared = 0, Failed = 0;
  for (int Case = 0; Case < 40; ++Case) {
    int32_t Ranks = std::uniform_int_distribution<int>(1, 6)(Rng);
    int32_t M = std::uniform_int_distribution<int>(1, 3 * Ranks)(Rng);
    double Lat = Case % 3 == 0 ? 0.25 * (Case % 5) : 0.0;
    Problem P = Problem::make(Ranks, M, ir::Placement::Loop, {1, 1, 1}, 1, Lat);
    for (JobCost &C : P.Cost)
      C = {0.25 * std::uniform_int_distribution<int>(1, 12)(Rng),
           0.25 * std::uniform_int_distribution<int>(1, 12)(Rng),
           0.25 * std::uniform_int_distribution<int>(1, 12)(Rng)};
    const ModelCase &MC = Models[size_t(Case) % std::size(Models)];
    int64_t Mem = std::uniform_int_distribution<int>(1, 2 * Ranks)(Rng);
    // mem counts activations; the problem's limit is in the model's units.
    ASSERT_TRUE(P.setMemory(MC.Model, int64_t(Mem * MC.Model.Forward)));
    for (int V = 0; V < 8; ++V) {
      SCOPED_TRACE(fmt::format("case {}: P={} M={} latency {} mem {} {} "
                               "variant {}",
                               Case, Ranks, M, Lat, Mem, MC.Text, V));
      std::optional<Order> Want =
          zeroBubbleOrder(P, V / 4 == 0, V / 2 % 2 == 0, V % 2 == 0);
      std::string Why;
      std::optional<Order> Got = compiledZbAuto(P, MC.Text, Mem, V, &Why);
      ASSERT_EQ(Got.has_value(), Want.has_value()) << Why;
      if (!Want) {
        EXPECT_NE(Why.find("cannot fit"), std::string::npos) << Why;
        ++Failed;
        continue;
      }
      ++Compared;
      for (int32_t R = 0; R < Ranks; ++R)
        EXPECT_TRUE(Got->Ranks[size_t(R)] == Want->Ranks[size_t(R)])
            << "rank " << R;
    }
  }
  fmt::print("zb_auto vs ZbGreedy: {} orders compared, {} infeasible in "
             "both\n",
             Compared, Failed);
  EXPECT_GT(Compared, 200);
}

TEST(ZbAuto, PublishedFigures) {
  // ZB-2p at P = 4, M = 8, F/I/W = 5/6/4: span 126 (the zero-bubble code's
  // automatic schedule at 2p); zb_h2's unit slots give 129 there.
  Problem P = Problem::make(4, 8, ir::Placement::Loop, {5, 6, 4}, 8);
  std::optional<Order> O = compiledZbAuto(P, "", 8, -1);
  ASSERT_TRUE(O);
  Evaluation E = evaluate(P, *O);
  ASSERT_TRUE(E.Valid);
  EXPECT_DOUBLE_EQ(E.MaxSpan, 126);
  EXPECT_LE(E.MaxPeakMemory, 8);
  // The paper's code at (P, M, F, B, W) = (4, 12, 5, 6, 4), memory in half
  // activations: spans 193 and 183 at max_mem 10 and 14.
  for (auto [Mem, Span] : {std::pair{5, 193.0}, std::pair{7, 183.0}}) {
    Problem Q = Problem::make(4, 12, ir::Placement::Loop, {5, 6, 4}, 1);
    ASSERT_TRUE(Q.setMemory({2.0, 1.0}, int64_t(2) * Mem));
    std::optional<Order> Z =
        compiledZbAuto(Q, "memory { F = 2; I = -1; W = -1; }", Mem, -1);
    ASSERT_TRUE(Z);
    Evaluation EZ = evaluate(Q, *Z);
    ASSERT_TRUE(EZ.Valid);
    EXPECT_DOUBLE_EQ(EZ.MaxSpan, Span) << "mem " << Mem;
    EXPECT_LE(EZ.MaxPeakMemory, int64_t(2) * Mem);
  }
}

} // namespace
