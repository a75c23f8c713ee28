//===- gpt_bench.cpp - the libtorch component on the GPT example ----------===//
//
//   build/bench/bench_torch_gpt [--reps=N] [--steps=N] [--size=example|wide]
//                               [--only=split,samples,overhead] [--curve=N]
//
// * split: per stage of the GPT example (first, a middle one, last; four
//   and eight stages), the median time of F, of B, of I and of W for one
//   microbatch, and (I + W) / B (target: at most 1.10, DESIGN.md 7b). Also
//   the naive split, grad(output, input) then grad(output, params) on the
//   retained graph, which re-runs the backward.
// * samples: training samples per second of the pipelined GPT on rank
//   threads (schedules compiled in-process, StageKernels, all ranks on this
//   machine) and of the same training in one process without pipelining
//   (ppsrt::torch::runReference).
// * overhead: per compute action, the time pps adds to libtorch: one rank
//   holding every stage (in the unpipelined run's order) minus
//   the unpipelined run, divided by the actions; with the example's model
//   and a tiny one whose kernels cost almost nothing.
// * --curve=N: the single-process loss curve of N steps (the threshold of
//   the gpt.threads.zb_h1_trains test comes from it).
//
// Not a Google Benchmark program: each figure needs several runs of a
// training setup, and the ratios are what matters. Timings on a loaded
// machine swing; medians over --reps.
//
//===----------------------------------------------------------------------===//
#include "gpt.h"

#include "pps/analysis/Memory.h"
#include "pps/backends/CppEmitter.h"
#include "pps/frontend/Frontend.h"
#include "pps/passes/InsertComms.h"
#include "pps/passes/PassManager.h"
#include "ppsrt/Main.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <set>
#include <thread>

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// CPU time of this thread: the split runs single-threaded, and other
/// processes on a shared machine do not inflate it.
double cpuNow() {
  timespec T;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &T);
  return double(T.tv_sec) + double(T.tv_nsec) * 1e-9;
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V.empty() ? 0 : V[V.size() / 2];
}

/// A compiled schedule laid out as a generated executor's tables.
struct Tables {
  pps::ir::Schedule Sched;
  std::vector<std::vector<int32_t>> Rows;
  std::vector<ppsrt::RankTable> Ranks;
  std::vector<int32_t> StageToRank;
  std::vector<ppsrt::StageCost> Costs;
  std::vector<int64_t> Peaks;
  ppsrt::ScheduleDesc Desc{};
};

std::unique_ptr<Tables> compile(const std::string &Text) {
  using namespace pps;
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  frontend::FrontendOptions FO;
  FO.StdlibDir = PPS_SOURCE_DIR "/stdlib";
  std::optional<ir::Schedule> S =
      frontend::compileBuffer("bench.pps", Text, SM, Diags, FO);
  if (!S || Diags.hasErrors())
    throw std::runtime_error("cannot compile: " + Text);
  passes::PassManager PM;
  PM.add(passes::createInsertCommsPass());
  passes::PassContext Ctx{Diags, {}};
  if (!PM.run(*S, Ctx))
    throw std::runtime_error("cannot insert comms: " + Text);
  auto T = std::make_unique<Tables>();
  T->Sched = std::move(*S);
  const ir::Schedule &Sc = T->Sched;
  // The emitter's encoding and the analysis' peaks: what `ppsc emit` writes.
  for (const ir::RankProgram &RP : Sc.Ranks) {
    std::vector<int32_t> Rows(RP.Actions.size() * ppsrt::RowWords);
    for (size_t I = 0; I < RP.Actions.size(); ++I)
      backends::encodeRow(RP.Actions[I], &Rows[I * ppsrt::RowWords]);
    T->Rows.push_back(std::move(Rows));
  }
  for (auto &R : T->Rows)
    T->Ranks.push_back({R.data(), int64_t(R.size() / ppsrt::RowWords)});
  for (int32_t St = 0; St < Sc.Topo.Stages; ++St) {
    T->StageToRank.push_back(Sc.Topo.rankOf(St));
    T->Costs.push_back({1, 1, 1, 2});
  }
  T->Peaks = analysis::analyzeMemory(Sc).wholePeaks();
  ppsrt::ScheduleDesc &D = T->Desc;
  D.name = "bench";
  D.source = "bench.pps";
  D.ranks = Sc.Topo.Ranks;
  D.stages = Sc.Topo.Stages;
  D.microbatches = Sc.Topo.Microbatches;
  D.stageToRank = T->StageToRank.data();
  D.stageCost = T->Costs.data();
  D.overlapCost = -1;
  D.comm = Sc.Comm;
  D.rankTables = T->Ranks.data();
  D.predictedPeak = T->Peaks.data();
  D.predictedMakespan = -1;
  D.directions = Sc.Topo.Directions;
  return T;
}

int64_t computeActions(const ppsrt::ScheduleDesc &D) {
  int64_t N = 0;
  for (int32_t R = 0; R < D.ranks; ++R)
    for (int64_t I = 0; I < D.rankTables[R].count; ++I)
      N += ppsrt::isCompute(
          ppsrt::decodeRow(D.rankTables[R].rows + I * ppsrt::RowWords).kind);
  return N;
}

gpt::Options sizeOptions(const std::string &Size) {
  gpt::Options O;
  if (Size == "wide") {
    O.dim = 128;
    O.heads = 4;
    O.context = 64;
    O.rows = 8;
  } else if (Size == "tiny") {
    O.dim = 8;
    O.heads = 1;
    O.context = 4;
    O.rows = 1;
    O.blocks = 4;
  }
  return O;
}

/// Times F, B, I, W of one stage.
void splitRow(const gpt::Options &O, const gpt::Text &T, int32_t Stage,
              int32_t Stages, int Reps) {
  using ppsrt::torch::StageGraph;
  torch::manual_seed(1);
  gpt::GptStage M(O, T.vocab(), Stage, Stages);
  std::vector<torch::Tensor> P = M->parameters();
  bool Last = Stage == Stages - 1;
  torch::Tensor Tokens = torch::randint(0, T.vocab(), {O.rows, O.context});
  torch::Tensor Act = torch::randn({O.rows, O.context, O.dim});
  torch::Tensor GradOut = torch::randn({O.rows, O.context, O.dim});
  // The stage's graph root: its output, or the loss on the last stage.
  auto fwd = [&](torch::Tensor &Leaf) {
    torch::Tensor In = Stage == 0 ? Tokens : Act.clone().requires_grad_(true);
    Leaf = Stage == 0 ? torch::Tensor() : In;
    torch::Tensor Out = M->forward(In);
    if (Last)
      Out = torch::nn::functional::cross_entropy(Out.view({-1, T.vocab()}),
                                                 Tokens.view({-1}));
    return Out;
  };
  auto seed = [&](const torch::Tensor &Out) {
    return Last ? torch::ones_like(Out) : GradOut;
  };
  auto zero = [&] {
    for (auto &X : P)
      X.mutable_grad() = torch::Tensor();
  };
  std::vector<double> F, B, I, W, NI, NW;
  auto full = [&](bool Keep) {
    torch::Tensor Leaf;
    double T0 = cpuNow();
    torch::Tensor Out = fwd(Leaf);
    double T1 = cpuNow();
    StageGraph G(Out, Leaf, P);
    double T2 = cpuNow();
    G.backward(seed(Out));
    double T3 = cpuNow();
    if (Keep) {
      F.push_back(T1 - T0);
      B.push_back(T3 - T2);
    }
    zero();
  };
  auto split = [&](bool Keep) {
    torch::Tensor Leaf;
    torch::Tensor Out = fwd(Leaf);
    StageGraph G(Out, Leaf, P);
    double T2 = cpuNow();
    G.backwardInput(seed(Out));
    double T3 = cpuNow();
    G.backwardWeight();
    double T4 = cpuNow();
    if (Keep) {
      I.push_back(T3 - T2);
      W.push_back(T4 - T3);
    }
    zero();
  };
  // The naive split: two autograd calls on a retained graph.
  auto naive = [&](bool Keep) {
    torch::Tensor Leaf;
    torch::Tensor Out = fwd(Leaf);
    double T2 = cpuNow();
    if (Leaf.defined())
      torch::autograd::grad({Out}, {Leaf}, {seed(Out)}, true);
    double T3 = cpuNow();
    torch::autograd::grad({Out}, P, {seed(Out)}, false, false, true);
    double T4 = cpuNow();
    if (Keep) {
      NI.push_back(T3 - T2);
      NW.push_back(T4 - T3);
    }
    zero();
  };
  for (int R = 0; R < Reps + 2; ++R) {
    // Rotate the order so that no variant always runs first.
    bool Keep = R >= 2;
    switch (R % 3) {
    case 0:
      full(Keep), split(Keep), naive(Keep);
      break;
    case 1:
      split(Keep), naive(Keep), full(Keep);
      break;
    default:
      naive(Keep), full(Keep), split(Keep);
    }
  }
  double MB = median(B), MI = median(I), MW = median(W);
  fmt::print("{:>6} {:>5}/{:<2} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} "
             "{:>7.3f} {:>10.3f}\n",
             Stage == 0 ? "first"
             : Last     ? "last"
                        : "middle",
             Stage, Stages, median(F) * 1e3, MB * 1e3, MI * 1e3, MW * 1e3,
             (MI + MW) * 1e3, (MI + MW) / MB, (median(NI) + median(NW)) / MB);
}

void benchSplit(const gpt::Options &O, const gpt::Text &T, int Reps) {
  fmt::print("\n== backward split per stage (CPU ms per microbatch, median of "
             "{}; {} x {} tokens, width {}) ==\n",
             Reps, O.rows, O.context, O.dim);
  fmt::print("{:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7} {:>10}\n",
             "stage", "s/S", "F", "B", "I", "W", "I+W", "(I+W)/B", "naive/B");
  for (int32_t Stages : {4, 8})
    for (int32_t Stage : {0, Stages / 2, Stages - 1})
      splitRow(O, T, Stage, Stages, Reps);
}

/// Seconds of Steps training steps of S under runThreads.
double pipelined(const ppsrt::ScheduleDesc &D, const gpt::Options &O,
                 const gpt::Text &T, int Steps) {
  ppsrt::torch::Config C = gpt::gptConfig(O, T, D.stages);
  C.intraOpThreads = 1;
  ppsrt::torch::StageKernels K(D, C);
  ppsrt::RunOptions RO;
  RO.steps = Steps;
  RO.quiet = true;
  RO.watchdogSeconds = 120;
  ppsrt::RunResult R = ppsrt::runThreads(D, K, RO);
  if (R.exitCode != ppsrt::ExitOk)
    throw std::runtime_error(R.error);
  return R.makespanMicros * 1e-6;
}

double single(const ppsrt::ScheduleDesc &D, const gpt::Options &O,
              const gpt::Text &T, int Steps) {
  ppsrt::torch::Config C = gpt::gptConfig(O, T, D.stages);
  double Secs = 0;
  std::thread Th([&] {
    at::set_num_threads(1);
    Secs = ppsrt::torch::runReference(C, D, Steps).seconds;
  });
  Th.join();
  return Secs;
}

void benchSamples(const gpt::Options &O, const gpt::Text &T, int Steps,
                  int Reps) {
  fmt::print("\n== samples per second ({} steps of 8 microbatches x {} "
             "sequences; median of {}) ==\n",
             Steps, O.rows, Reps);
  fmt::print("{:<44} {:>10} {:>12}\n", "run", "s/step", "samples/s");
  struct Row {
    const char *Name;
    std::string Pps;
  };
  std::vector<Row> Rows = {
      {"1f1b, 2 ranks", "pipeline b { ranks 2; microbatches 8; schedule "
                        "one_f_one_b(); }"},
      {"zb_h1, 2 ranks", "pipeline b { ranks 2; microbatches 8; schedule "
                         "zb_h1(); }"},
      {"1f1b, 4 ranks", "pipeline b { ranks 4; microbatches 8; schedule "
                        "one_f_one_b(); }"},
      {"zb_h1, 4 ranks", "pipeline b { ranks 4; microbatches 8; schedule "
                         "zb_h1(); }"},
  };
  double Samples = double(Steps) * 8 * double(O.rows);
  auto Ref = compile(Rows[0].Pps);
  std::vector<double> One;
  One.reserve(size_t(Reps));
  for (int R = 0; R < Reps; ++R)
    One.push_back(single(Ref->Desc, O, T, Steps));
  double S1 = median(One);
  fmt::print("{:<44} {:>10.4f} {:>12.1f}\n",
             "one process, unpipelined (runReference)", S1 / Steps,
             Samples / S1);
  for (const Row &Rw : Rows) {
    auto Tab = compile(Rw.Pps);
    std::vector<double> Ts;
    Ts.reserve(size_t(Reps));
    for (int R = 0; R < Reps; ++R)
      Ts.push_back(pipelined(Tab->Desc, O, T, Steps));
    double Sp = median(Ts);
    fmt::print("{:<44} {:>10.4f} {:>12.1f}  ({:.2f}x one process)\n",
               fmt::format("pipelined on threads: {}", Rw.Name), Sp / Steps,
               Samples / Sp, S1 / Sp);
  }
}

/// CPU seconds of the whole process (all threads).
double processCpu() {
  timespec T;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &T);
  return double(T.tv_sec) + double(T.tv_nsec) * 1e-9;
}

void benchOverhead(const gpt::Options &O, const gpt::Text &T, int Steps,
                   int Reps, const char *What) {
  // The unpipelined run's own order: each microbatch forward through every
  // stage, then backward through every stage.
  auto Tab = compile(
      "pipeline b { ranks 1; stages 4; microbatches 8; schedule seq(); }\n"
      "schedule seq() { rank 0 { for m in 0..M {\n"
      "  for s in 0..S { F(m)@s; }\n"
      "  for s in S - 1..-1 step -1 { B(m)@s; } } } }\n");
  int64_t Actions = computeActions(Tab->Desc) * Steps;
  // CPU time of Steps + 1 steps minus that of 1 step: what the steps cost,
  // without building the model, on a machine other processes share.
  auto cpuOf = [&](auto Run) {
    double T0 = processCpu();
    Run(Steps + 1);
    double T1 = processCpu();
    Run(1);
    double T2 = processCpu();
    return (T1 - T0) - (T2 - T1);
  };
  std::vector<double> P, S;
  for (int R = 0; R < Reps; ++R) {
    P.push_back(cpuOf([&](int N) { pipelined(Tab->Desc, O, T, N); }));
    S.push_back(cpuOf([&](int N) { single(Tab->Desc, O, T, N); }));
  }
  double MP = median(P), MS = median(S);
  fmt::print("{:<10} {:>12.3f} {:>12.3f} {:>10} {:>14.2f}\n", What,
             MS / Steps * 1e3, MP / Steps * 1e3, Actions / Steps,
             (MP - MS) / double(Actions) * 1e6);
}

} // namespace

static int run(int Argc, char **Argv) {
  int Reps = 9, Steps = 4, Curve = 0;
  std::string Size = "example";
  std::set<std::string> Only = {"split", "samples", "overhead"};
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    auto val = [&](const char *P) {
      return A.rfind(P, 0) == 0 ? A.substr(std::strlen(P)) : std::string();
    };
    if (!val("--reps=").empty())
      Reps = std::stoi(val("--reps="));
    else if (!val("--steps=").empty())
      Steps = std::stoi(val("--steps="));
    else if (!val("--size=").empty())
      Size = val("--size=");
    else if (!val("--curve=").empty())
      Curve = std::stoi(val("--curve="));
    else if (!val("--only=").empty()) {
      Only.clear();
      std::string L = val("--only=");
      for (size_t P = 0; P != std::string::npos;) {
        size_t Q = L.find(',', P);
        Only.insert(L.substr(P, Q == std::string::npos ? Q : Q - P));
        P = Q == std::string::npos ? Q : Q + 1;
      }
    } else {
      fmt::print(stderr,
                 "usage: {} [--reps=N] [--steps=N] [--size=example|wide] "
                 "[--only=split,samples,overhead] [--curve=N]\n",
                 Argv[0]);
      return 2;
    }
  }
  gpt::Options O = sizeOptions(Size);
  gpt::Text T = gpt::loadText(O.text, O.context);
  at::set_num_threads(1);
  if (Curve > 0) {
    auto Tab = compile("pipeline b { ranks 4; microbatches 8; schedule "
                       "zb_h1(); }");
    ppsrt::torch::Reference R =
        ppsrt::torch::runReference(gpt::gptConfig(O, T, 4), Tab->Desc, Curve);
    double Tail = 0;
    for (int S = 0; S < Curve; ++S) {
      double L = R.stageLoss[size_t(S)][3] / 8.0;
      if (S % 10 == 0 || S == Curve - 1)
        fmt::print("step {} loss {:.4f}\n", S, L);
      if (S >= Curve - 10)
        Tail += L / std::min(10, Curve);
    }
    fmt::print("single process: mean loss of the last 10 of {} steps {:.4f} "
               "({:.3f} s per step)\n",
               Curve, Tail, R.seconds / Curve);
    return 0;
  }
  fmt::print("GPT example: {} blocks of width {}, {} heads, context {}, {} "
             "symbols; intra-op threads 1\n",
             O.blocks, O.dim, O.heads, O.context, T.vocab());
  if (Only.count("split"))
    benchSplit(O, T, Reps);
  if (Only.count("samples"))
    benchSamples(O, T, Steps, std::max(1, Reps / 3));
  if (Only.count("overhead")) {
    fmt::print("\n== pps overhead per compute action (one rank, 4 stages, "
               "same order as one process; median of {}) ==\n",
               std::max(1, Reps / 3));
    fmt::print("{:<10} {:>12} {:>12} {:>10} {:>14}\n", "model", "CPU ms/step",
               "with pps", "actions", "us/action");
    benchOverhead(O, T, Steps, std::max(1, Reps / 3), Size.c_str());
    benchOverhead(sizeOptions("tiny"), T, Steps, std::max(1, Reps / 3), "tiny");
  }
  return 0;
}

int main(int Argc, char **Argv) {
  try {
    return run(Argc, Argv);
  } catch (const std::exception &E) {
    fmt::print(stderr, "error: {}\n", E.what());
    return 1;
  }
}
