//===- DifferentialTest.cpp - synth vs every feasible stdlib schedule -----===//
//
// Randomised differential test: 300 random problems (P <= 16 ranks, more
// often small ones, M microbatches, per-stage F/I/W costs, message latency,
// memory limit; loop placement with one or two stages per rank, and V
// placement). For each, every stdlib schedule that compiles for the topology is
// timed by the synthesiser's own evaluator under the same costs and latency (a
// B counts as I then W, which can only make the stdlib schedule faster);
// synth's result must be valid (runnable: no rank waits forever), within
// the memory limit, and no slower than any stdlib schedule whose peak fits
// the limit. A sample of the results is also lowered and linted
// (deadlock, dependencies, memory). Deterministic (fixed seed).
//
//===----------------------------------------------------------------------===//
#include "SynthTestUtil.h"

#include "pps/frontend/Frontend.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <tuple>

using namespace pps;
using namespace pps::synth;

namespace {

enum class Topo { Loop, Interleaved, V };

struct StdOrder {
  std::string Name;
  Order Ord;
};

/// The compute orders of the stdlib schedules that compile for the
/// topology (orders do not depend on costs, so they are compiled once).
const std::vector<StdOrder> &stdlibOrders(Topo T, int32_t P, int32_t M) {
  static std::map<std::tuple<int, int, int>, std::vector<StdOrder>> Cache;
  auto Key = std::make_tuple(int(T), P, M);
  auto It = Cache.find(Key);
  if (It != Cache.end())
    return It->second;
  std::vector<StdOrder> &Out = Cache[Key];
  std::vector<const char *> Names;
  std::string Stages;
  switch (T) {
  case Topo::Loop:
    Names = {"gpipe", "one_f_one_b", "zb_h1", "zb_h2"};
    break;
  case Topo::Interleaved:
    Names = {"interleaved_1f1b", "looped_bfs"};
    Stages = "stages 2 * P placement loop;";
    break;
  case Topo::V:
    Names = {"v_half", "v_min", "zb_v"};
    Stages = "stages 2 * P placement v;";
    break;
  }
  for (const char *Name : Names) {
    std::string Text =
        fmt::format("pipeline t {{\n  ranks {}; {} microbatches {};\n"
                    "  schedule {}();\n}}\n",
                    P, Stages, M, Name);
    SourceManager SM;
    DiagnosticEngine Diags(SM);
    frontend::FrontendOptions FO;
    FO.ImportPaths.push_back(PPS_SOURCE_DIR "/stdlib");
    std::optional<ir::Schedule> S =
        frontend::compileBuffer("t.pps", Text, SM, Diags, FO);
    if (S)
      Out.push_back({Name, fromIr(*S)});
  }
  return Out;
}

/// A cost drawn from {0.25, 0.5, ..., 3}: uneven, but with ties possible.
double drawCost(std::mt19937 &Rng) {
  return 0.25 * std::uniform_int_distribution<int>(1, 12)(Rng);
}

} // namespace

TEST(SynthDifferential, NeverWorseThanAFeasibleStdlibSchedule) {
  std::mt19937 Rng(20240523);
  const double Latencies[] = {0, 0, 0.05, 0.1, 0.1, 0.2, 0.3, 0.5, 1.0};
  int Cases = 0, Compared = 0, Wins = 0, Linted = 0;
  double Seconds[3] = {0, 0, 0};
  for (int Case = 0; Case < 300; ++Case) {
    int Pick = std::uniform_int_distribution<int>(0, 19)(Rng);
    Topo T = Pick < 14 ? Topo::Loop : Pick < 17 ? Topo::Interleaved : Topo::V;
    // P up to 16, small ones more often (the large ones cost most: the
    // swap polish evaluates up to 20000 orders), M from P/2 to 2P.
    double U = std::uniform_real_distribution<double>(0, 1)(Rng);
    int32_t Ranks = 2 + int32_t(15 * U * U);
    if (T != Topo::Loop)
      Ranks = std::min(Ranks, 4); // two stages per rank: keep it quick
    int32_t M = std::uniform_int_distribution<int>(std::max(1, Ranks / 2),
                                                   2 * Ranks)(Rng);
    if (T == Topo::Interleaved)
      M = Ranks * std::max(1, M / Ranks); // interleaved needs M % P == 0
    ir::Placement Pl = T == Topo::V ? ir::Placement::V : ir::Placement::Loop;
    int32_t Stages = T == Topo::Loop ? Ranks : 2 * Ranks;
    double Latency = Latencies[std::uniform_int_distribution<int>(
        0, std::size(Latencies) - 1)(Rng)];
    Problem Pr = Problem::make(Ranks, M, Pl, {1, 1, 1}, 1, Latency, Stages);
    bool Uniform = std::uniform_int_distribution<int>(0, 2)(Rng) == 0;
    JobCost Base{drawCost(Rng), drawCost(Rng), drawCost(Rng)};
    for (JobCost &C : Pr.Cost)
      C = Uniform ? Base : JobCost{drawCost(Rng), drawCost(Rng), drawCost(Rng)};
    int64_t Min = minimumMemory(Pr);
    Pr.MemoryLimit = std::uniform_int_distribution<int64_t>(
        Min, std::max<int64_t>(Min, int64_t(2) * Stages / Ranks * Ranks))(Rng);
    SCOPED_TRACE(fmt::format("case {}: {} ranks, {} stages, {} microbatches, "
                             "latency {}, memory {}",
                             Case, Ranks, Stages, M, Latency, Pr.MemoryLimit));
    ASSERT_EQ(Pr.validate(), "");
    SynthOptions SO;
    SO.UseExact = false; // the heuristics must do it on their own
    auto T0 = std::chrono::steady_clock::now();
    std::optional<Result> R = synthesize(Pr, SO);
    Seconds[int(T)] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
            .count();
    ASSERT_TRUE(R);
    ++Cases;
    Evaluation E = evaluate(Pr, R->Ord);
    ASSERT_TRUE(E.Valid) << E.Error;
    EXPECT_LE(E.MaxPeakMemory, Pr.MemoryLimit);
    EXPECT_EQ(E.Makespan, R->Eval.Makespan);
    for (const StdOrder &S : stdlibOrders(T, Ranks, M)) {
      Evaluation SE = evaluate(Pr, S.Ord);
      if (!SE.Valid || SE.MaxPeakMemory > Pr.MemoryLimit)
        continue;
      ++Compared;
      EXPECT_LE(E.Makespan, SE.Makespan + 1e-9)
          << S.Name << " (peak " << SE.MaxPeakMemory << ") beats synth's "
          << R->Algorithm;
      if (E.Makespan < SE.Makespan - 1e-9)
        ++Wins;
    }
    // Lowering and linting costs more than synthesis: a sample.
    if (Case % 10 == 0) {
      ir::Schedule S = toSchedule(Pr, R->Ord);
      EXPECT_EQ(test::lowerAndLint(S), "");
      ++Linted;
    }
  }
  fmt::print("{} cases, {} stdlib comparisons ({} strictly better), {} "
             "linted\n",
             Cases, Compared, Wins, Linted);
  fmt::print("synth time: loop {:.2f} s, interleaved {:.2f} s, V {:.2f} s\n",
             Seconds[0], Seconds[1], Seconds[2]);
  EXPECT_GT(Compared, 300);
}

TEST(SynthDifferential, TemplatesAreTheStdlibOrders) {
  // Templates.cpp renders the stdlib's loop schedules in C++; they must be
  // the orders the .pps files compile to (default parameters).
  for (auto [T, Ranks, M] : {std::tuple{Topo::Loop, 4, 8},
                             {Topo::Loop, 5, 3},
                             {Topo::Loop, 6, 17},
                             {Topo::Interleaved, 4, 8},
                             {Topo::Interleaved, 3, 7},
                             {Topo::Interleaved, 4, 12},
                             {Topo::V, 4, 8},
                             {Topo::V, 3, 2},
                             {Topo::V, 5, 11}}) {
    SCOPED_TRACE(fmt::format("{} ranks, {} microbatches", Ranks, M));
    int32_t Stages = T == Topo::Loop ? Ranks : 2 * Ranks;
    Problem Pr = Problem::make(
        Ranks, M, T == Topo::V ? ir::Placement::V : ir::Placement::Loop,
        {1, 1, 1}, int64_t(2) * Stages * M, 0.1, Stages);
    std::vector<Result> Tpl = stdlibTemplates(Pr, PPS_SOURCE_DIR "/stdlib");
    const std::vector<StdOrder> &Std = stdlibOrders(T, Ranks, M);
    EXPECT_EQ(Std.size(), T == Topo::Loop ? 4u : T == Topo::V ? 3u : 2u);
    for (const StdOrder &S : Std) {
      std::string Name = "stdlib " + S.Name;
      if (S.Name == "zb_h2")
        Name += fmt::format("(mem: {})", std::min(2 * Ranks - 1, M));
      auto It = std::find_if(Tpl.begin(), Tpl.end(), [&](const Result &R) {
        return R.Algorithm == Name;
      });
      ASSERT_NE(It, Tpl.end()) << Name;
      ASSERT_EQ(It->Ord.Ranks.size(), S.Ord.Ranks.size());
      for (size_t R = 0; R < S.Ord.Ranks.size(); ++R)
        EXPECT_TRUE(It->Ord.Ranks[R] == S.Ord.Ranks[R])
            << Name << " differs on rank " << R;
    }
  }
}
