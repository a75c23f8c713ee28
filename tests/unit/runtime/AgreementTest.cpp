//===- AgreementTest.cpp - every consumer of a rule gives the same answer -===//
//
// One definition of each rule (the action schema and the analysis layer)
// means lint, the simulator, synthesis, the C++ emitter and the runtime
// must agree on every schedule. This test runs them all on every stdlib
// schedule (several sizes), every example, every lit input that compiles
// and a few synthesised schedules, and checks:
//
//  * peak memory per rank, in the schedule's memory model (the chunk model,
//    and models where I frees a fraction of F's amount): the memory pass
//    (lint), the simulator's figures, synthesis' evaluator, the peaks the
//    emitter writes into the executor (read back from the generated C++),
//    and the peaks the executor measures on the threads transport with the
//    built-in workload (live activations and memory in the model's units);
//  * makespan: the simulator's, written by the emitter, and the executor
//    timing's per comm model, written by the emitter and read by the
//    runtime (ScheduleDesc::executorMakespan); synthesis' evaluator against
//    the simulator's dataflow mode where both model the same thing;
//  * matching: a schedule the deadlock analysis proves free under a comm
//    model runs to the end in the simulator and in the runtime under that
//    model (no FIFO mismatch, no hang); a FIFO mismatch is worded the same
//    by lint, the simulator and the runtime.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include "pps/analysis/Deadlock.h"
#include "pps/analysis/Matching.h"
#include "pps/analysis/Memory.h"
#include "pps/backends/CppEmitter.h"
#include "pps/import/TorchCsv.h"
#include "pps/passes/Memory.h"
#include "pps/pipeline/PassPipeline.h"
#include "pps/synth/Algorithms.h"
#include "ppsrt/Kernels.h"
#include "ppsrt/Main.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <regex>

using namespace pps;
namespace fs = std::filesystem;

namespace {

/// What a run of the whole pipeline found.
struct Checked {
  bool Clean = false; // no error, deadlock-free under its own model
  std::vector<double> LintPeaks;
  std::string FirstFifoMismatch; // the lint's message, if any
};

/// Counts of what was compared, printed by each test so a silent skip
/// shows.
struct Tally {
  unsigned Schedules = 0, Clean = 0, RuntimeRuns = 0, StreamRuns = 0,
           SynthCompared = 0, SynthTimed = 0;
  ~Tally() {
    if (Schedules)
      fmt::print("agreement: {} schedules, {} lint clean, {} runtime runs "
                 "({} more under stream rules), synthesis' evaluator on {} "
                 "({} timed)\n",
                 Schedules, Clean, RuntimeRuns, StreamRuns, SynthCompared,
                 SynthTimed);
  }
};
Tally Count;

const ir::CommModel Models[] = {ir::CommModel::Rendezvous, ir::CommModel::Eager,
                                ir::CommModel::Batched};

/// The numbers in the initializer of `Name[...] = {...};` in generated C++.
std::vector<double> emittedArray(const std::string &Cpp,
                                 const std::string &Name) {
  std::vector<double> Out;
  size_t At = Cpp.find(Name + "[");
  if (At == std::string::npos)
    return Out;
  size_t Open = Cpp.find('{', At), Close = Cpp.find('}', Open);
  std::string Body = Cpp.substr(Open + 1, Close - Open - 1);
  std::regex Num("-?[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?");
  for (auto It = std::sregex_iterator(Body.begin(), Body.end(), Num);
       It != std::sregex_iterator(); ++It)
    Out.push_back(std::stod(It->str()));
  return Out;
}

/// The simulated makespan the emitter writes into kSchedule.
double emittedSimMakespan(const std::string &Cpp) {
  std::smatch M;
  std::regex Line("\\n\\s*(-?[0-9.e+]+), // simulated makespan");
  if (!std::regex_search(Cpp, M, Line))
    return -2;
  return std::stod(M[1].str());
}

Checked runPipeline(ir::Schedule &S, SourceManager &SM) {
  Checked C;
  DiagnosticEngine D(SM);
  passes::PassManager PM;
  pipeline::addPasses(PM, S, {pipeline::Goal::Check, false});
  passes::PassContext Ctx{D, {}};
  bool Ok = PM.run(S, Ctx);
  C.Clean = Ok && !D.hasErrors() && Ctx.Results.DeadlockFree;
  C.LintPeaks = Ctx.Results.PeakMemory;
  for (const Diagnostic &X : D.diagnostics())
    if (X.Kind == DiagKind::FifoMismatch && C.FirstFifoMismatch.empty())
      C.FirstFifoMismatch = X.Message;
  if (C.LintPeaks.empty()) {
    // The pipeline stopped before the memory pass: run it on its own, as
    // `ppsc lint --disable-pass=...` would reach it.
    DiagnosticEngine D2(SM);
    passes::PassContext Ctx2{D2, {}};
    passes::createMemoryPass()->run(S, Ctx2);
    C.LintPeaks = Ctx2.Results.PeakMemory;
  }
  return C;
}

/// Synthesis' evaluator on the schedule's compute order, when it applies.
/// Two peak lists equal up to rounding (fractional amounts summed in other
/// orders or units).
void expectSamePeaks(const std::vector<double> &Got,
                     const std::vector<double> &Want, const std::string &What) {
  ASSERT_EQ(Got.size(), Want.size()) << What;
  for (size_t R = 0; R < Got.size(); ++R)
    EXPECT_NEAR(Got[R], Want[R], 1e-9) << What << ", rank " << R;
}

void checkSynthEvaluator(const std::string &Name, const ir::Schedule &S,
                         const std::vector<double> &Peaks) {
  if (S.Topo.Directions != 1)
    return; // synthesis refuses bidirectional routes
  synth::Problem P = synth::Problem::fromSchedule(S, int64_t(1) << 30);
  if (!P.validate().empty())
    return;
  synth::Evaluation E = synth::evaluate(P, synth::fromIr(S));
  if (!E.Valid)
    return; // not a complete compute order (lint reported why)
  ++Count.SynthCompared;
  // Synthesis counts whole ticks of the model; in its units they are the
  // analysis' amounts.
  std::vector<double> InUnits;
  for (int64_t T : E.PeakMemory)
    InUnits.push_back(P.memoryUnits(T));
  expectSamePeaks(InUnits, Peaks,
                  Name + ": synthesis' evaluator counts memory differently");
  // Timing: synthesis splits every backward into I then W and times
  // computes one after the other with one message time per cross-rank
  // edge: the simulator's dataflow mode when the schedule has no B, no
  // overlap pairs and one message time for both directions.
  bool Comparable = S.Cost.messageTime(ir::ActionKind::SendF) ==
                    S.Cost.messageTime(ir::ActionKind::SendB);
  for (const ir::RankProgram &RP : S.Ranks)
    for (const ir::Action &A : RP.Actions)
      Comparable &= A.Kind != ir::ActionKind::B && !A.overlapsNext();
  if (!Comparable)
    return;
  ++Count.SynthTimed;
  sim::SimOptions SO;
  SO.Dataflow = sim::DataflowMode::Dataflow;
  SO.CriticalPath = false;
  SO.KeepTimes = false;
  EXPECT_NEAR(E.Makespan, sim::simulate(S, SO).Makespan, 1e-9)
      << Name << ": synthesis' evaluator times the order differently";
}

/// Every consumer of the rules on one compiled schedule.
void checkAgreement(const std::string &Name, ir::Schedule S, bool AllModels) {
  ++Count.Schedules;
  SourceManager SM;
  Checked C = runPipeline(S, SM);
  SCOPED_TRACE(Name);

  // Peak memory: the analysis under the schedule's model, lint's memory
  // pass, the simulator, the emitter's tables; live activations (the chunk
  // model's count) too, which the executor also measures.
  std::vector<double> Peaks;
  for (const analysis::RankMemory &RM : analysis::analyzeMemory(S).Ranks)
    Peaks.push_back(RM.Peak);
  analysis::MemoryOptions Chunks;
  Chunks.Model = analysis::MemoryModel::chunks();
  std::vector<int64_t> Live = analysis::analyzeMemory(S, Chunks).wholePeaks();
  EXPECT_EQ(C.LintPeaks, Peaks) << "lint's peak per rank";
  sim::SimOptions Lean;
  Lean.CriticalPath = false;
  Lean.KeepTimes = false;
  sim::SimResult Sim = sim::simulate(S, Lean);
  std::vector<double> SimPeaks;
  for (const sim::RankStats &R : Sim.Ranks)
    SimPeaks.push_back(R.PeakMemory);
  EXPECT_EQ(SimPeaks, Peaks) << "the simulator's peak per rank";
  std::string Cpp;
  llvm::raw_string_ostream OS(Cpp);
  backends::emitCpp(S, {Name, true}, OS);
  OS.flush();
  std::vector<double> EmittedPeaks = emittedArray(Cpp, "kPredictedPeak");
  EXPECT_EQ(std::vector<int64_t>(EmittedPeaks.begin(), EmittedPeaks.end()),
            Live)
      << "the executor's predicted live activations";
  if (!S.Memory.isChunks())
    expectSamePeaks(emittedArray(Cpp, "kPredictedMemory"), Peaks,
                    "the executor's predicted memory");
  else
    EXPECT_EQ(Cpp.find("kPredictedMemory"), std::string::npos);
  checkSynthEvaluator(Name, S, Peaks);

  if (!C.Clean)
    return;
  ++Count.Clean;

  // Makespan: what the emitter writes is the engine's.
  EXPECT_DOUBLE_EQ(emittedSimMakespan(Cpp),
                   Sim.Deadlocked ? -1.0 : Sim.Makespan);
  std::vector<double> Emitted = emittedArray(Cpp, "kExecutorMakespan");
  ASSERT_EQ(Emitted.size(), 2 * schema::NumCommModels);
  // ... and under a stream rule, ppsc sim's timing of it: for the
  // schedule's own rule and for the nccl preset.
  std::vector<double> EmStreams = emittedArray(Cpp, "kStreamMakespan");
  ASSERT_EQ(EmStreams.size(), 2u);
  auto StreamTime = [&](ir::CommModel Model, ir::CommStream St) {
    sim::SimOptions SO = Lean;
    SO.CommModel = Model;
    SO.Stream = St;
    SO.BlockingComm = false;
    SO.Dataflow = sim::DataflowMode::Comms;
    sim::SimResult X = sim::simulate(S, SO);
    return X.Deadlocked ? -1.0 : X.Makespan;
  };
  EXPECT_DOUBLE_EQ(EmStreams[0],
                   S.Stream.inOrder() ? StreamTime(S.Comm, S.Stream) : -1.0);
  EXPECT_DOUBLE_EQ(EmStreams[1],
                   StreamTime(ir::CommModel::Rendezvous, schema::NcclStream));
  auto T = rttest::layOut(S);
  EXPECT_DOUBLE_EQ(
      ppsrt::executorPrediction(
          T->Desc,
          ppsrt::RunComm{ir::CommModel::Rendezvous, schema::NcclStream}, false),
      EmStreams[1])
      << "the runtime's prediction under the nccl preset";
  analysis::Matching M = analysis::matchComms(S);
  EXPECT_TRUE(M.clean()) << "lint passed but the matching is not clean";
  for (ir::CommModel Model : Models) {
    // The executor and its timing without a stream rule (--stream=none):
    // no in-order streams, the schedule's eager threshold: checked under
    // the same.
    const ir::CommStream NoStreams{ir::StreamScope::None,
                                   S.Stream.EagerThreshold};
    bool Free = analysis::checkDeadlock(S, M, Model, NoStreams).Free;
    for (bool BlockingRecv : {false, true}) {
      sim::SimOptions SO = Lean;
      SO.CommModel = Model;
      SO.Dataflow = sim::DataflowMode::Comms;
      SO.ExecutorTiming = true;
      SO.ExecutorBlockingRecv = BlockingRecv;
      sim::SimResult X = sim::simulate(S, SO);
      double Want = X.Deadlocked ? -1.0 : X.Makespan;
      size_t Idx = unsigned(Model) * 2 + (BlockingRecv ? 1 : 0);
      EXPECT_DOUBLE_EQ(Emitted[Idx], Want)
          << "emitted executor timing, " << ir::commModelName(Model).str();
      EXPECT_DOUBLE_EQ(ppsrt::executorMakespan(T->Desc, Model, BlockingRecv),
                       Want)
          << "the runtime's prediction, " << ir::commModelName(Model).str();
      // Blocking receives wait in program order: the deadlock analysis'
      // model, so it finishes exactly when the analysis says so.
      if (BlockingRecv) {
        EXPECT_EQ(!X.Deadlocked, Free) << "simulator vs deadlock analysis, "
                                       << ir::commModelName(Model).str();
      }
    }
    // The async simulator finishes whatever the analysis proves free.
    sim::SimOptions SO = Lean;
    SO.CommModel = Model;
    SO.Stream = NoStreams;
    if (Free) {
      EXPECT_FALSE(sim::simulate(S, SO).Deadlocked)
          << ir::commModelName(Model).str();
    }

    // Under the stream rule (docs/simulation.md, "Streams") the deadlock
    // analysis and the timing engine run the same in-order streams: one
    // finishes exactly when the other proves it free; and the runtime's
    // streams (ppsrt::CommStreams) run it to the end.
    std::vector<ir::CommStream> FreeStreams;
    for (ir::CommStream St :
         {ir::CommStream{ir::StreamScope::Rank, schema::NcclEagerThreshold},
          ir::CommStream{ir::StreamScope::Rank, -1},
          ir::CommStream{ir::StreamScope::Peer, -1}}) {
      if (!ir::commConfigProblem(Model, St).empty())
        continue;
      bool StreamFree = analysis::checkDeadlock(S, M, Model, St).Free;
      sim::SimOptions SS = Lean;
      SS.CommModel = Model;
      SS.Stream = St;
      EXPECT_EQ(!sim::simulate(S, SS).Deadlocked, StreamFree)
          << "simulator vs deadlock analysis under the "
          << ir::commDescription(Model, St);
      if (StreamFree)
        FreeStreams.push_back(St);
    }

    // The runtime: matching (no FIFO mismatch, no hang) and peaks.
    if (!Free || (!AllModels && Model != S.Comm))
      continue;
    ++Count.RuntimeRuns;
    ppsrt::BusyWaitKernels K;
    ppsrt::RunOptions O;
    O.timeScale = 0; // the built-in workload at no cost: this is not timing
    O.watchdogSeconds = 20;
    O.comm = Model;
    O.commSet = true;
    O.quiet = true;
    // Without a stream rule, as the deadlock analysis above was asked.
    O.preset = NoStreams;
    auto Run = [&](const std::string &Under) {
      ppsrt::RunResult R = ppsrt::runThreads(T->Desc, K, O);
      EXPECT_EQ(R.exitCode, ppsrt::ExitOk) << Under << ": " << R.error;
      EXPECT_EQ(R.peakActivations, Live)
          << "measured live activations per rank, " << Under;
      expectSamePeaks(R.peakMemory, Peaks,
                      "measured peak memory per rank, " + Under);
    };
    Run(ir::commModelName(Model).str());
    for (const ir::CommStream &St : FreeStreams) {
      ++Count.StreamRuns;
      O.preset = St;
      Run(ir::commDescription(Model, St));
    }
  }
}

/// Compiles a .pps file (first pipeline) or imports a PyTorch CSV; nullopt
/// if it does not compile.
std::optional<ir::Schedule> load(const fs::path &Path,
                                 const std::map<std::string, int64_t> &Ovr) {
  SourceManager SM;
  DiagnosticEngine D(SM);
  std::optional<ir::Schedule> S;
  if (Path.extension() == ".csv") {
    S = import::importTorchCsvFile(Path.string(), SM, D, {});
  } else {
    frontend::FrontendOptions FO;
    FO.StdlibDir = PPS_SOURCE_DIR "/stdlib";
    FO.ImportPaths.push_back(Path.parent_path().string());
    FO.Overrides = Ovr;
    S = frontend::compileFile(Path.string(), SM, D, FO);
  }
  if (!S || D.hasErrors())
    return std::nullopt;
  // Keep the runtime runs small: the lit inputs include hostile sizes.
  if (S->numActions() > 200000 || S->Topo.Ranks > 64)
    return std::nullopt;
  return S;
}

TEST(Agreement, StdlibSchedulesAtSeveralSizes) {
  struct Spec {
    const char *Name, *Stages, *Placement;
    int Directions;
  };
  const Spec Specs[] = {
      {"gpipe", "P", "loop", 1},
      {"one_f_one_b", "P", "loop", 1},
      {"interleaved_1f1b", "2 * P", "loop", 1},
      {"interleaved_1f1b_overlap", "2 * P", "loop", 1},
      {"looped_bfs", "2 * P", "loop", 1},
      {"zb_h1", "P", "loop", 1},
      {"zb_h2", "P", "loop", 1},
      {"zb_v", "2 * P", "v", 1},
      {"v_half", "2 * P", "v", 1},
      {"v_min", "2 * P", "v", 1},
      {"dualpipe_v", "2 * P", "v", 1},
      {"dualpipe", "2 * P", "v", 2},
  };
  const char *Costs[] = {
      "cost { F = 1; I = 1; W = 1; B = 2; }",
      "cost { F = 1.5; I = 1; W = 0.5; B = 1.5; overlap = 2; } comm { "
      "latency 0.1; bandwidth 1 GB/s; activation 1 MiB; }"};
  for (const Spec &Sp : Specs)
    for (auto [P, M] : {std::pair{2, 4}, std::pair{4, 8}, std::pair{4, 12}})
      for (const char *Cost : Costs) {
        std::string Text = fmt::format(
            "pipeline p {{ ranks {}; stages {} placement {}; {}microbatches "
            "{}; {} schedule {}(); }}",
            P, Sp.Stages, Sp.Placement,
            Sp.Directions == 2 ? "directions 2; " : "", M, Cost, Sp.Name);
        SourceManager SM;
        DiagnosticEngine D(SM);
        frontend::FrontendOptions FO;
        FO.StdlibDir = PPS_SOURCE_DIR "/stdlib";
        auto S = frontend::compileBuffer("stdlib.pps", Text, SM, D, FO);
        ASSERT_TRUE(S && !D.hasErrors()) << Text;
        checkAgreement(fmt::format("{} P={} M={}", Sp.Name, P, M),
                       std::move(*S), /*AllModels=*/true);
      }
}

TEST(Agreement, ExamplesAndLitInputs) {
  std::vector<fs::path> Files;
  for (const char *Dir : {"examples", "tests/lit", "tests/exec"})
    for (const auto &E :
         fs::recursive_directory_iterator(fs::path(PPS_SOURCE_DIR) / Dir))
      if (E.is_regular_file() &&
          (E.path().extension() == ".pps" || E.path().extension() == ".csv"))
        Files.push_back(E.path());
  std::sort(Files.begin(), Files.end());
  unsigned Compiled = 0;
  for (const fs::path &F : Files) {
    std::optional<ir::Schedule> S = load(F, {});
    if (!S)
      continue;
    ++Compiled;
    checkAgreement(fs::relative(F, PPS_SOURCE_DIR).string(), std::move(*S),
                   /*AllModels=*/false);
  }
  // Most inputs compile (the rest are front-end failure tests).
  EXPECT_GT(Compiled, 60u);
}

TEST(Agreement, SynthesisedSchedules) {
  for (auto [P, M, Pl, Limit] : {std::tuple{2, 4, ir::Placement::Loop, 2},
                                 std::tuple{4, 8, ir::Placement::Loop, 4},
                                 std::tuple{4, 8, ir::Placement::V, 6}}) {
    synth::Problem Pr =
        synth::Problem::make(P, M, Pl, {1.0, 1.0, 1.0}, Limit, 0.25);
    std::optional<synth::Result> R = synth::synthesize(Pr, {});
    ASSERT_TRUE(R) << P << "x" << M;
    ir::Schedule S = synth::toSchedule(Pr, R->Ord);
    EXPECT_EQ(double(R->Eval.MaxPeakMemory),
              analysis::analyzeMemory(S).maxPeak());
    checkAgreement(fmt::format("synth P={} M={}", P, M), std::move(S),
                   /*AllModels=*/true);
  }
}

TEST(Agreement, FractionalMemoryModel) {
  // Memory models where I frees part of F's amount (the zero-bubble
  // papers' half and half, and uneven ones): every counter of memory must
  // follow the schedule's model, fractions included.
  const char *Models[] = {"memory { F = 1; I = -0.5; W = -0.5; }",
                          "memory { F = 3; I = -1; limit 100; }",
                          "memory { F = 0.75; W = -0.5; }"};
  struct Spec {
    const char *Name, *Stages, *Placement;
  };
  const Spec Specs[] = {
      {"one_f_one_b", "P", "loop"}, {"zb_h1", "P", "loop"},
      {"zb_h2", "P", "loop"},       {"interleaved_1f1b", "2 * P", "loop"},
      {"zb_v", "2 * P", "v"},       {"v_half", "2 * P", "v"},
      {"dualpipe_v", "2 * P", "v"}};
  unsigned Fractional = 0;
  for (const char *Model : Models)
    for (const Spec &Sp : Specs)
      for (auto [P, M] : {std::pair{2, 4}, std::pair{4, 8}}) {
        std::string Text = fmt::format(
            "pipeline p {{ ranks {}; stages {} placement {}; microbatches {}; "
            "cost {{ F = 1; I = 1; W = 1; B = 2; }} {} schedule {}(); }}",
            P, Sp.Stages, Sp.Placement, M, Model, Sp.Name);
        SourceManager SM;
        DiagnosticEngine D(SM);
        frontend::FrontendOptions FO;
        FO.StdlibDir = PPS_SOURCE_DIR "/stdlib";
        auto S = frontend::compileBuffer("stdlib.pps", Text, SM, D, FO);
        ASSERT_TRUE(S && !D.hasErrors()) << Text;
        ASSERT_FALSE(S->Memory.isChunks()) << Text;
        for (const analysis::RankMemory &RM : analysis::analyzeMemory(*S).Ranks)
          Fractional += RM.Peak != std::floor(RM.Peak);
        checkAgreement(fmt::format("{} P={} M={} {}", Sp.Name, P, M, Model),
                       std::move(*S), /*AllModels=*/true);
      }
  // The fractions are really there to disagree about.
  EXPECT_GT(Fractional, 20u);

  // A synthesised schedule under the zero-bubble code's own units (F = 2
  // half activations, I and W free one each) at a limit it binds.
  synth::Problem Pr =
      synth::Problem::make(4, 12, ir::Placement::Loop, {5, 6, 4}, 10);
  ASSERT_TRUE(Pr.setMemory({2.0, 1.0}, 10));
  std::optional<synth::Result> R = synth::synthesize(Pr, {});
  ASSERT_TRUE(R);
  ir::Schedule S = synth::toSchedule(Pr, R->Ord);
  EXPECT_EQ(S.Memory, (schema::MemoryModel{2.0, 1.0}));
  EXPECT_EQ(S.MemoryLimit, 10);
  EXPECT_LE(analysis::analyzeMemory(S).maxPeak(), 10.0);
  checkAgreement("synth zero-bubble memory", std::move(S), /*AllModels=*/true);
}

TEST(Agreement, OneWordingOfAFifoMismatch) {
  // Rank 0 sends F0 first, rank 1 receives (and consumes) F1 first: the
  // first pair on channel 0 -> 1 carries the wrong message.
  SourceManager SM;
  DiagnosticEngine D(SM);
  frontend::FrontendOptions FO;
  FO.StdlibDir = PPS_SOURCE_DIR "/stdlib";
  std::optional<ir::Schedule> Sched =
      frontend::compileBuffer("fifo.pps", R"(pipeline fifo {
  ranks 2; stages 2; microbatches 2; comm { model eager; }
  rank 0: F0 F1 send F0@0 -> 1 send F1@0 -> 1 recv B1@0 <- 1 B1 recv B0@0 <- 1 B0;
  rank 1: recv F1@1 <- 0 recv F0@1 <- 0 F1 B1 send B1@1 -> 0 F0 B0 send B0@1 -> 0;
})",
                              SM, D, FO);
  ASSERT_TRUE(Sched && !D.hasErrors());
  Checked C = runPipeline(*Sched, SM);
  ASSERT_FALSE(C.FirstFifoMismatch.empty());
  // The simulator, with no deadlock pass before it, words it the same.
  DiagnosticEngine D2(SM);
  sim::simulate(*Sched, {}, &D2);
  std::string FromSim;
  for (const Diagnostic &X : D2.diagnostics())
    if (X.Kind == DiagKind::FifoMismatch)
      FromSim = X.Message;
  EXPECT_EQ(FromSim, C.FirstFifoMismatch);
  // The runtime finds it when the message arrives, in the same words.
  auto T = rttest::layOut(*Sched);
  ppsrt::BusyWaitKernels K;
  ppsrt::RunOptions O;
  O.timeScale = 0;
  O.watchdogSeconds = 20;
  O.quiet = true;
  ppsrt::RunResult R = ppsrt::runThreads(T->Desc, K, O);
  EXPECT_EQ(R.exitCode, ppsrt::ExitError);
  EXPECT_NE(R.error.find(C.FirstFifoMismatch), std::string::npos)
      << R.error << "\nvs lint: " << C.FirstFifoMismatch;
  EXPECT_NE(R.error.find("[fifo-mismatch]"), std::string::npos);
}

} // namespace
