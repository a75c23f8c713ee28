//===- SynthCommand.cpp - ppsc synth: a schedule under a memory limit -----===//
//
//   ppsc synth --ranks P --microbatches M --placement loop|v [--stages S]
//              --cost F=1,B=1,W=1 [--stage-cost 3:F=2,B=2] [--comm-latency C]
//              --memory-limit N [--no-exact] [-o out.pps]
//   ppsc synth FILE.pps        (a pipeline with `schedule synth(memory: N)`)
//   ... --costs=PROFILE        (the costs of a profile,
//   pps/frontend/CostsFile.h)
//
// Synthesises the fastest schedule the algorithms find within N activations
// per rank (chunk units under V placement), lowers it with the pass
// pipeline (comms inserted, dependencies, deadlock and memory checked) and
// prints it in the lowered .pps form, preceded by its figures as `//`
// comments so the output still parses. The figures are the simulator's,
// cross-checked against the synthesiser's own evaluator.
//
// In --cost, B is the zero-bubble papers' B: the input-gradient backward,
// I in pps; I= is accepted too. The printed cost block says I, W and the
// full backward B = I + W.
//
// Exit codes: 0 ok, 1 diagnostics (infeasible, lint findings), 2 usage.
//
//===----------------------------------------------------------------------===//
#include "pps/backends/PpsPrinter.h"
#include "pps/driver/Pipeline.h"
#include "pps/frontend/Limits.h"
#include "pps/frontend/MemoryModel.h"
#include "pps/sim/Simulator.h"
#include "pps/support/Figures.h"
#include "pps/synth/Algorithms.h"
#include "pps/synth/SynthPass.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cmath>

namespace pps::driver {

using namespace llvm;

static cl::SubCommand
    SynthCmd("synth",
             "Synthesise the fastest schedule found within a memory limit");

// See SimCommand.cpp: a later subcommand needs its own positional.
static cl::opt<std::string> SynthInput(cl::Positional,
                                       cl::desc("[<input .pps>]"),
                                       cl::sub(SynthCmd),
                                       cl::cat(opts::Category));
static cl::opt<std::string> PlacementOpt("placement",
                                         cl::desc("Stage placement: loop "
                                                  "(one stage per rank) or v "
                                                  "(two, V-shaped)"),
                                         cl::value_desc("loop|v"),
                                         cl::init("loop"), cl::sub(SynthCmd),
                                         cl::cat(opts::Category));
static cl::opt<std::string>
    CostOpt("cost",
            cl::desc("Costs of every stage: F=..,B=..,W=.. (B is the "
                     "input-gradient backward, also spelt I)"),
            cl::value_desc("F=1,B=1,W=1"), cl::init(""), cl::sub(SynthCmd),
            cl::cat(opts::Category));
static cl::list<std::string>
    StageCostOpt("stage-cost",
                 cl::desc("Costs of one stage: S:F=..,B=..,W=.. (repeatable)"),
                 cl::value_desc("S:F=..,B=..,W=.."), cl::sub(SynthCmd),
                 cl::cat(opts::Category));
static cl::opt<double> LatencyOpt("comm-latency",
                                  cl::desc("Time of one message between ranks"),
                                  cl::value_desc("C"), cl::init(0.0),
                                  cl::sub(SynthCmd), cl::cat(opts::Category));
static cl::opt<std::string> MemoryOpt(
    "memory-limit",
    cl::desc("Peak activation memory per rank: N in the memory model's units "
             "(activations; chunks under V placement), or a size such as "
             "2GiB when the model counts bytes (a profile's)"),
    cl::value_desc("N|SIZE"), cl::init(""), cl::sub(SynthCmd),
    cl::cat(opts::Category));

/// --memory-limit, parsed: the limit and whether it is in bytes (0 if not
/// given). Empty string on success.
static std::string memoryLimitOpt(int64_t &Limit, bool &Bytes) {
  Limit = 0;
  Bytes = false;
  if (!MemoryOpt.getNumOccurrences())
    return {};
  std::string Err = frontend::parseMemoryLimit(MemoryOpt, Limit, Bytes);
  return Err.empty() ? Err : "--memory-limit: " + Err;
}
static cl::opt<std::string> MemoryModelOpt(
    "memory-model",
    cl::desc("The activation memory model: what F allocates and I (and W) "
             "free per microbatch and stage, in the limit's units, as "
             "`memory { F = ..; I = ..; W = ..; }` writes it (default "
             "F=1,I=0,W=-1; the zero-bubble papers' F=2,I=-1,W=-1 counts "
             "half activations)"),
    cl::value_desc("F=2,I=-1,W=-1"), cl::init(""), cl::sub(SynthCmd),
    cl::cat(opts::Category));
static cl::opt<std::string> ObjectiveOpt(
    "objective",
    cl::desc("What to minimise: makespan (default) or span (the largest "
             "per-rank first start to last end, as the zero-bubble papers "
             "report)"),
    cl::value_desc("makespan|span"), cl::init("makespan"), cl::sub(SynthCmd),
    cl::cat(opts::Category));
static cl::opt<unsigned> ThreadsOpt(
    "threads",
    cl::desc("Threads the search may use (default 0: one per core, at most "
             "4); the schedule found is the same for any number"),
    cl::value_desc("N"), cl::init(0), cl::sub(SynthCmd),
    cl::cat(opts::Category));
static cl::opt<bool> NoExact("no-exact",
                             cl::desc("Do not run the exact search (it runs "
                                      "when ranks <= 4, microbatches <= 8)"),
                             cl::sub(SynthCmd), cl::cat(opts::Category));

/// Parses "F=1,B=2,W=1" into C (keys F, B/I, W). Empty on success.
static std::string parseCosts(StringRef Text, synth::JobCost &C) {
  SmallVector<StringRef, 4> Parts;
  Text.split(Parts, ',', -1, /*KeepEmpty=*/false);
  if (Parts.empty())
    return fmt::format("expected costs like F=1,B=1,W=1, got '{}'", Text.str());
  for (StringRef Part : Parts) {
    auto [Key, Value] = Part.split('=');
    Key = Key.trim();
    double V;
    if (Value.trim().getAsDouble(V) || !std::isfinite(V) || V < 0)
      return fmt::format("cost '{}' needs a number >= 0", Part.str());
    if (V > frontend::MaxTime)
      return fmt::format("cost '{}' must be at most {:.10g} time units",
                         Part.str(), frontend::MaxTime);
    if (Key.equals_insensitive("F"))
      C.F = V;
    else if (Key.equals_insensitive("B") || Key.equals_insensitive("I"))
      C.I = V;
    else if (Key.equals_insensitive("W"))
      C.W = V;
    else
      return fmt::format("unknown cost '{}' (expected F, B (or I), W)",
                         Key.str());
  }
  if (!(C.F > 0) || !(C.I > 0))
    return "F and B costs must be positive";
  return {};
}

/// The problem given on the command line, with the costs of Costs (--costs)
/// under the cost flags. Empty string on success.
static std::string problemFromFlags(synth::Problem &P,
                                    const frontend::CostsFile *Costs) {
  if (opts::Ranks <= 0)
    return "--ranks P is required (P >= 1) when no input file is given";
  if (opts::Microbatches <= 0)
    return "--microbatches M is required (M >= 1) when no input file is given";
  int64_t Limit;
  bool LimitBytes;
  if (std::string Err = memoryLimitOpt(Limit, LimitBytes); !Err.empty())
    return Err;
  if (Limit <= 0)
    return "--memory-limit N is required (N >= 1)";
  if (LimitBytes)
    return "--memory-limit: a limit in bytes needs a memory model in bytes, "
           "which a profile gives: ppsc synth PROFILE.pps --memory-limit " +
           MemoryOpt.getValue();
  ir::Placement Pl;
  if (PlacementOpt == "loop")
    Pl = ir::Placement::Loop;
  else if (PlacementOpt == "v")
    Pl = ir::Placement::V;
  else
    return fmt::format("--placement must be loop or v, got '{}'",
                       PlacementOpt.getValue());
  if (opts::Ranks > 1024 || opts::Microbatches > 100000)
    return "--ranks and --microbatches are too large";
  synth::JobCost C;
  if (!CostOpt.empty()) {
    std::string Err = parseCosts(CostOpt, C);
    if (!Err.empty())
      return "--cost: " + Err;
  }
  if (!(LatencyOpt >= 0) || !std::isfinite(LatencyOpt) ||
      LatencyOpt > frontend::MaxTime)
    return fmt::format("--comm-latency must be a time from 0 to {:.10g}",
                       frontend::MaxTime);
  if (opts::Stages > 100000)
    return "--stages is too large";
  // --stages S: several stages per rank (interleaved loop, or a deeper V).
  P = synth::Problem::make(opts::Ranks, opts::Microbatches, Pl, C, Limit,
                           LatencyOpt, std::max(0, opts::Stages.getValue()));
  if (!MemoryModelOpt.empty()) {
    schema::MemoryModel Model;
    std::string Err = frontend::parseMemoryModel(MemoryModelOpt, Model);
    if (!Err.empty())
      return "--memory-model: " + Err;
    P.setMemory(Model, Limit);
  }
  if (Costs && Costs->Stages == P.Stages) {
    // The file's costs, then --cost over them (keys not given keep the
    // file's), as for a pipeline read from a file.
    for (int32_t St = 0; St < P.Stages; ++St) {
      const ir::CostModel &CM = Costs->Cost;
      P.Cost[St] = {CM.computeCost(ir::ActionKind::F, St),
                    CM.computeCost(ir::ActionKind::I, St),
                    CM.computeCost(ir::ActionKind::W, St)};
      if (!CostOpt.empty()) {
        std::string Err = parseCosts(CostOpt, P.Cost[St]);
        if (!Err.empty())
          return "--cost: " + Err;
      }
    }
    if (!LatencyOpt.getNumOccurrences())
      P.Latency = Costs->Cost.messageTime(ir::ActionKind::SendF);
  }
  for (const std::string &SC : StageCostOpt) {
    auto [StageText, Costs] = StringRef(SC).split(':');
    int32_t Stage;
    if (StageText.trim().getAsInteger(10, Stage) || Stage < 0 ||
        Stage >= P.Stages)
      return fmt::format("--stage-cost '{}': the stage must be 0..{}", SC,
                         P.Stages - 1);
    synth::JobCost SCost = P.Cost[Stage];
    std::string Err = parseCosts(Costs, SCost);
    if (!Err.empty())
      return fmt::format("--stage-cost '{}': {}", SC, Err);
    P.Cost[Stage] = SCost;
  }
  return P.validate();
}

/// The cost flags applied to a schedule read from a file, before anything
/// reads its costs (every pass and synthesis see them, as if written in the
/// file): --cost on every stage, --stage-cost on one, --comm-latency. Keys
/// not given keep the file's values. Empty string on success.
static std::string costFlagsToSchedule(ir::Schedule &S) {
  ir::CostModel &CM = S.Cost;
  auto Apply = [](ir::StageCost &SC, StringRef Text) -> std::string {
    synth::JobCost C{SC.F, SC.I, SC.W};
    std::string Err = parseCosts(Text, C);
    if (!Err.empty())
      return Err;
    SC.F = C.F;
    SC.I = C.I;
    SC.W = C.W;
    SC.B = C.I + C.W;
    return {};
  };
  if (!CostOpt.empty()) {
    std::string Err = Apply(CM.Default, CostOpt);
    for (ir::StageCost &SC : CM.PerStage)
      if (Err.empty())
        Err = Apply(SC, CostOpt);
    if (!Err.empty())
      return "--cost: " + Err;
  }
  for (const std::string &SC : StageCostOpt) {
    auto [StageText, Costs] = StringRef(SC).split(':');
    int32_t Stage;
    if (StageText.trim().getAsInteger(10, Stage) || Stage < 0 ||
        Stage >= S.Topo.Stages)
      return fmt::format("--stage-cost '{}': the stage must be 0..{}", SC,
                         S.Topo.Stages - 1);
    if (CM.PerStage.empty())
      CM.PerStage.assign(size_t(S.Topo.Stages), CM.Default);
    std::string Err = Apply(CM.PerStage[size_t(Stage)], Costs);
    if (!Err.empty())
      return fmt::format("--stage-cost '{}': {}", SC, Err);
  }
  if (LatencyOpt.getNumOccurrences()) {
    if (!(LatencyOpt >= 0) || !std::isfinite(LatencyOpt))
      return "--comm-latency must be >= 0";
    CM.Latency = LatencyOpt;
  }
  return {};
}

/// A figure as people read it (pps/support/Figures.h).
static std::string num(double V) { return figureText(V); }

/// The figures, as `//` comment lines.
static void printFigures(raw_ostream &OS, const synth::Problem &P,
                         const synth::Result &R, const sim::SimResult &Sim,
                         double Seconds) {
  OS << fmt::format("// synthesised by ppsc synth ({}) in {:.3f} s\n",
                    R.Algorithm, Seconds);
  OS << fmt::format("// {} placement: {} ranks, {} stages, {} microbatches, "
                    "comm latency {}\n",
                    ir::placementName(P.Place), P.Ranks, P.Stages,
                    P.Microbatches, num(P.Latency));
  const ir::MemorySpec Model = P.memoryModel();
  if (Model.isChunks())
    OS << fmt::format(
        "// memory limit {} per rank, in units of one stage's activations for "
        "one microbatch{}\n",
        num(P.memoryUnits(P.MemoryLimit)),
        P.Place == ir::Placement::V ? " (one chunk: V places two per rank)"
                                    : "");
  else if (Model.Bytes)
    OS << fmt::format("// memory limit {} ({} bytes) of activations per rank, "
                      "memory model in bytes{}\n",
                      ir::memoryAmountText(Model, P.memoryUnits(P.MemoryLimit)),
                      num(P.memoryUnits(P.MemoryLimit)),
                      Model.Stages.empty() ? "" : " per stage");
  else
    OS << fmt::format("// memory limit {} per rank, memory model {}\n",
                      num(P.memoryUnits(P.MemoryLimit)),
                      Model.Stages.empty()
                          ? frontend::memoryModelText(Model.Default)
                          : std::string("per stage"));
  OS << fmt::format("// makespan {}  bubble rate {:.4f}  max rank span {}\n",
                    num(Sim.Makespan), Sim.MeanIdleFraction,
                    num(R.Eval.MaxSpan));
  if (std::fabs(Sim.Makespan - R.Eval.Makespan) > 1e-6)
    OS << fmt::format("// (synthesis timed it at {} with dataflow timing; the "
                      "simulator's comm model differs)\n",
                      num(R.Eval.Makespan));
  // Columns as wide as the widest exact figure (at least 9).
  std::vector<std::array<std::string, 3>> Rows;
  size_t W = 9;
  for (int32_t Rk = 0; Rk < P.Ranks; ++Rk) {
    Rows.push_back({num(R.Eval.Span[Rk]), num(R.Eval.Bubble[Rk]),
                    num(Sim.Ranks[Rk].Idle)});
    for (const std::string &X : Rows.back())
      W = std::max(W, X.size());
  }
  OS << fmt::format("// {:<5} {:<{}} {:<{}} {:<{}} peak-memory\n", "rank",
                    "span", W, "bubble", W, "idle", W);
  for (int32_t Rk = 0; Rk < P.Ranks; ++Rk)
    OS << fmt::format(
        "// {:<5} {:<{}} {:<{}} {:<{}} {}\n", Rk, Rows[Rk][0], W, Rows[Rk][1],
        W, Rows[Rk][2], W,
        Model.Bytes ? ir::memoryAmountText(Model, Sim.Ranks[Rk].PeakMemory)
                    : fmt::format("{}", Sim.Ranks[Rk].PeakMemory));
}

static int runSynth() {
  if (opts::Input.empty() && !SynthInput.empty())
    opts::Input.setValue(SynthInput.getValue());
  Session S;
  synth::Problem P;
  ir::Schedule Sched;
  std::optional<synth::Result> Res;
  auto T0 = std::chrono::steady_clock::now();
  synth::SynthOptions SO;
  SO.UseExact = !NoExact;
  if (ThreadsOpt > 64)
    return S.usage(fmt::format("--threads must be at most 64, got {}",
                               ThreadsOpt.getValue()));
  SO.Threads = ThreadsOpt;
  if (ObjectiveOpt != "makespan" && ObjectiveOpt != "span")
    return S.usage(fmt::format("--objective must be makespan or span, got '{}'",
                               ObjectiveOpt.getValue()));
  const bool SpanGoal = ObjectiveOpt == "span";

  if (opts::Input.empty()) {
    std::optional<frontend::CostsFile> Costs;
    if (!S.loadCostsFile(Costs))
      return S.finish(ExitDiagnostics);
    // --costs must give the stages the flags ask for (checked before the
    // flags' own errors would be: the file is what was measured).
    if (Costs) {
      synth::Problem Shape;
      if (problemFromFlags(Shape, nullptr).empty() &&
          !frontend::checkCostsStages(
              *Costs, Shape.Stages,
              fmt::format("the problem on the command line ({} ranks, {} "
                          "placement)",
                          Shape.Ranks, ir::placementName(Shape.Place)),
              NoLoc, S.Diags))
        return S.finish(ExitDiagnostics);
    }
    std::string Err = problemFromFlags(P, Costs ? &*Costs : nullptr);
    if (!Err.empty())
      return S.usage(Err);
    if (SpanGoal)
      P.Goal = synth::Objective::Span;
    std::string Why;
    Res = synth::synthesize(P, SO, &Why);
    if (!Res) {
      // No source to point at: the command line is the request.
      S.Diags.report(DiagKind::SynthInfeasible, NoLoc, Why);
      return S.finish(ExitDiagnostics);
    }
    Sched = synth::toSchedule(P, Res->Ord);
  } else {
    std::optional<ir::Schedule> Loaded = S.load();
    if (!Loaded) {
      S.flushDiagnostics();
      return ExitDiagnostics;
    }
    Sched = std::move(*Loaded);
    if (!Sched.Synth) {
      S.Diags.report(DiagKind::InvalidValue, Sched.DeclLoc,
                     fmt::format("pipeline '{}' does not ask for synthesis; "
                                 "write `schedule synth(memory: N);`",
                                 Sched.Name));
      S.flushDiagnostics();
      return ExitDiagnostics;
    }
    std::string CostErr = costFlagsToSchedule(Sched);
    if (!CostErr.empty())
      return S.usage(CostErr);
    if (!MemoryModelOpt.empty()) {
      // As if written in the file's memory block: every pass counts by it.
      schema::MemoryModel Model;
      std::string Err = frontend::parseMemoryModel(MemoryModelOpt, Model);
      if (!Err.empty())
        return S.usage("--memory-model: " + Err);
      Sched.Memory = Model;
    }
    int64_t Limit;
    bool LimitBytes;
    if (std::string Err = memoryLimitOpt(Limit, LimitBytes); !Err.empty())
      return S.usage(Err);
    if (Limit > 0 && LimitBytes != Sched.Memory.Bytes)
      return S.usage(
          LimitBytes
              ? fmt::format("--memory-limit {}: pipeline '{}' counts memory "
                            "in units, not bytes (its memory block gives no "
                            "sizes)",
                            MemoryOpt.getValue(), Sched.Name)
              : fmt::format("--memory-limit {}: pipeline '{}' counts memory "
                            "in bytes: give a size, such as {}GiB",
                            MemoryOpt.getValue(), Sched.Name,
                            MemoryOpt.getValue()));
    if (Limit > 0)
      Sched.Synth->MemoryLimit = Limit;
    // Flags as request arguments (sorted by name, replacing the file's).
    auto SetArg = [&](StringRef Name, int64_t V) {
      auto &Args = Sched.Synth->Args;
      for (auto &A : Args)
        if (A.first == Name) {
          A.second = V;
          return;
        }
      Args.push_back({Name.str(), V});
      llvm::sort(Args);
    };
    if (NoExact)
      SetArg("exact", 0);
    if (ObjectiveOpt.getNumOccurrences())
      SetArg("span", SpanGoal ? 1 : 0);
    P = synth::Problem::fromSchedule(Sched, Sched.Synth->MemoryLimit);
    for (const auto &A : Sched.Synth->Args)
      if (A.first == "span" && A.second)
        P.Goal = synth::Objective::Span;
    // What the synth pass does, keeping the result's figures.
    synth::Result R;
    if (!synth::runSynthRequest(Sched, S.Diags, &R, SO.Threads)) {
      S.flushDiagnostics();
      return ExitDiagnostics;
    }
    Res = std::move(R);
  }
  double Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
          .count();

  // Lower and lint: comms, dependencies, deadlock, idle, memory.
  passes::AnalysisResults Results;
  bool Ok = runPipeline(S, Sched, PipelineGoal::Check, Results);
  if (!Ok || S.Diags.numErrors() || S.Diags.numWarnings()) {
    S.Diags.report(DiagKind::InternalError, NoLoc,
                   "the synthesised schedule does not lint clean (a bug in "
                   "synth; please report it)");
    return S.finish(ExitDiagnostics);
  }
  sim::SimOptions SimOpts;
  SimOpts.KeepTimes = false;
  SimOpts.CriticalPath = false;
  SimOpts.Deadlock = Results.Deadlock ? &*Results.Deadlock : nullptr;
  sim::SimResult Sim = sim::simulate(Sched, SimOpts, &S.Diags);
  if (Sim.Deadlocked) {
    S.Diags.report(DiagKind::InternalError, NoLoc,
                   "the simulator finds the synthesised schedule stuck (a bug "
                   "in synth; please report it)");
    return S.finish(ExitDiagnostics);
  }
  // Synthesis times computes with their inputs' latency (the simulator's
  // dataflow mode). Under async comm that is what the lowered schedule does;
  // blocking comm or unequal gradient messages can differ, which is said.
  bool SameModel =
      Sched.Cost.AsyncComm && Sched.Cost.messageTime(ir::ActionKind::SendB) ==
                                  Sched.Cost.messageTime(ir::ActionKind::SendF);
  bool Agree = std::fabs(Sim.Makespan - Res->Eval.Makespan) <=
               1e-6 * std::max(1.0, Sim.Makespan);
  if (SameModel && !Agree) {
    S.Diags.report(DiagKind::InternalError, NoLoc,
                   fmt::format("the simulator times the schedule at {} but "
                               "synthesis expected {} (a bug in synth; please "
                               "report it)",
                               num(Sim.Makespan), num(Res->Eval.Makespan)));
    return S.finish(ExitDiagnostics);
  }
  std::unique_ptr<OutputFile> OS = S.openOutput();
  if (!OS) {
    S.flushDiagnostics();
    return ExitDiagnostics;
  }
  printFigures(*OS, P, *Res, Sim, Seconds);
  backends::printPps(Sched, *OS);
  bool Written = S.commitOutput(*OS);
  S.flushDiagnostics();
  return Written ? ExitOk : ExitDiagnostics;
}

static CommandRegistration Reg(SynthCmd, runSynth);

} // namespace pps::driver
