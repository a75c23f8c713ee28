//===- SimCommand.cpp - ppsc sim: simulate a schedule, draw its timeline --===//
//
// Loads the schedule, runs the pass pipeline to its Check goal (comms
// inserted, dependencies and deadlock checked), simulates it under the cost
// model and writes the requested outputs: by default a terminal Gantt chart
// and the summary table; --format takes a comma-separated list of gantt,
// summary, chrome, svg, html, json, csv. Gantt chart and summary are text
// and go together; each of the others is a document of its own, so asking
// for several writes one file per document: -o NAME gives NAME.svg,
// NAME.html, ... (and NAME.txt for the text); without -o several documents
// are refused, as they cannot share stdout. --comm-volume adds the
// communication-volume report to summary, json and html. A schedule that
// deadlocks is still simulated up to where each rank blocks and its outputs
// are written (exit 1).
// Exit codes: 0 ok, 1 diagnostics (including a deadlock), 2 usage errors.
//
//===----------------------------------------------------------------------===//
#include "pps/backends/Trace.h"
#include "pps/driver/Pipeline.h"
#include "pps/frontend/Limits.h"
#include "pps/sim/CommVolume.h"
#include "pps/sim/Simulator.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Process.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace pps::driver {

using namespace llvm;

static cl::SubCommand
    SimCmd("sim",
           "Simulate a schedule: Gantt chart, bubble, memory, bytes moved, "
           "Chrome trace, SVG/HTML timeline");

// The shared positional (opts::Input) reaches only the subcommands that
// are registered before it at static-initialisation time (LLVM copies
// named options, not positional ones, into a later subcommand), so sim
// declares its own and hands the value on.
static cl::opt<std::string> SimInput(cl::Positional,
                                     cl::desc("<input .pps|.csv|->"),
                                     cl::sub(SimCmd), cl::cat(opts::Category));

static cl::opt<std::string> Format(
    "format",
    cl::desc("Outputs, comma-separated: gantt, summary, chrome, svg, html, "
             "json, csv (default gantt,summary)"),
    cl::value_desc("list"), cl::init("gantt,summary"), cl::sub(SimCmd),
    cl::cat(opts::Category));
static cl::opt<bool>
    BlockingComm("blocking-comm",
                 cl::desc("Comm occupies the rank (default: async, comm "
                          "overlaps compute)"),
                 cl::sub(SimCmd), cl::cat(opts::Category));
static cl::opt<bool> AsyncComm("async-comm",
                               cl::desc("Comm overlaps compute (overrides a "
                                        "schedule that says blocking)"),
                               cl::sub(SimCmd), cl::cat(opts::Category));
static cl::opt<std::string>
    Timing("timing",
           cl::desc("Cross-rank waits from: auto (comm actions if any, else "
                    "dataflow), comms, dataflow"),
           cl::value_desc("auto|comms|dataflow"), cl::init("auto"),
           cl::sub(SimCmd), cl::cat(opts::Category));
static cl::opt<unsigned> Width(
    "width", cl::desc("Gantt chart columns (default: terminal width, or 100)"),
    cl::value_desc("N"), cl::init(0), cl::sub(SimCmd), cl::cat(opts::Category));
static cl::opt<std::string>
    TimelineColor("timeline-color",
                  cl::desc("Colour the Gantt chart: auto (when stdout is a "
                           "terminal), always, never"),
                  cl::value_desc("when"), cl::init("auto"), cl::sub(SimCmd),
                  cl::cat(opts::Category));
// The communication-volume report.
static cl::opt<std::string>
    CommVolume("comm-volume",
               cl::desc("Add the comm-volume report: activation-tensor or "
                        "block-residual-cache"),
               cl::value_desc("kind"), cl::sub(SimCmd),
               cl::cat(opts::Category));
static cl::opt<bool> Cache("cache", cl::desc("Enable the cross-stage cache"),
                           cl::sub(SimCmd), cl::cat(opts::Category));
static cl::opt<std::string> CachePolicyOpt("cache-policy",
                                           cl::desc("Cache policy"),
                                           cl::value_desc("disabled|fifo|lru"),
                                           cl::init("fifo"), cl::sub(SimCmd),
                                           cl::cat(opts::Category));
static cl::opt<bool> CacheReuse(
    "cache-reuse-backward",
    cl::desc("Let the backward reuse cached residuals (default true)"),
    cl::init(true), cl::sub(SimCmd), cl::cat(opts::Category));
static cl::opt<unsigned>
    CacheInflight("cache-max-inflight",
                  cl::desc("Microbatches the cache holds at once (default 1)"),
                  cl::value_desc("N"), cl::init(1), cl::sub(SimCmd),
                  cl::cat(opts::Category));
static cl::opt<std::string>
    CacheEviction("cache-eviction",
                  cl::desc("Clear the cache at each step boundary or never"),
                  cl::value_desc("step-boundary|none"),
                  cl::init("step-boundary"), cl::sub(SimCmd),
                  cl::cat(opts::Category));
static cl::opt<uint64_t> PayloadBytes(
    "payload-bytes",
    cl::desc("Bytes per transfer (default: the schedule's activation size)"),
    cl::value_desc("N"), cl::init(0), cl::sub(SimCmd), cl::cat(opts::Category));
static cl::opt<unsigned>
    LayersPerStage("layers-per-stage", cl::desc("Layers per stage (default 1)"),
                   cl::value_desc("N"), cl::init(1), cl::sub(SimCmd),
                   cl::cat(opts::Category));
static cl::opt<unsigned>
    LayersPerBlock("layers-per-block", cl::desc("Layers per block (default 1)"),
                   cl::value_desc("N"), cl::init(1), cl::sub(SimCmd),
                   cl::cat(opts::Category));
static cl::opt<unsigned>
    Steps("steps", cl::desc("Training steps for the comm-volume report"),
          cl::value_desc("N"), cl::init(1), cl::sub(SimCmd),
          cl::cat(opts::Category));

namespace {

enum OutKind : unsigned {
  OutGantt = 1,
  OutSummary = 2,
  OutChrome = 4,
  OutSvg = 8,
  OutHtml = 16,
  OutJson = 32,
  OutCsv = 64,
};

/// The files --format asks for: the text (gantt and summary together) and
/// each document, in the order they are written, with the extension each
/// gets when there are several.
struct OutFile {
  unsigned Kinds;
  const char *Name;
  const char *Ext;
};
constexpr OutFile OutFiles[] = {
    {OutGantt | OutSummary, "text", ".txt"},
    {OutChrome, "chrome", ".trace.json"},
    {OutSvg, "svg", ".svg"},
    {OutHtml, "html", ".html"},
    {OutJson, "json", ".json"},
    {OutCsv, "csv", ".csv"},
};

/// NAME without an extension one of the files would get (so -o t.html
/// with svg,html writes t.svg and t.html).
std::string outputBase(StringRef Name) {
  for (const OutFile &F : OutFiles)
    if (Name.size() > strlen(F.Ext) && Name.endswith(F.Ext))
      return Name.drop_back(strlen(F.Ext)).str();
  return Name.str();
}

/// True if every error is the deadlock pass's: the lowered schedule is
/// sound and its run can still be drawn up to where each rank blocks.
bool onlyDeadlockErrors(const DiagnosticEngine &D) {
  for (const Diagnostic &X : D.diagnostics())
    if (X.Sev == Severity::Error && X.Kind != DiagKind::Deadlock &&
        X.Kind != DiagKind::UnmatchedSend &&
        X.Kind != DiagKind::UnmatchedRecv && X.Kind != DiagKind::FifoMismatch)
      return false;
  return true;
}

} // namespace

static int runSim() {
  Session S;
  auto usage = [&S](std::string Msg) { return S.usage(std::move(Msg)); };
  if (opts::Input.empty() && !SimInput.empty())
    opts::Input.setValue(SimInput.getValue());
  if (opts::Input.empty())
    return usage("no input file (use - for stdin)");

  // Options first: a usage error needs no compilation.
  unsigned Outs = 0;
  SmallVector<StringRef, 4> Parts;
  StringRef(Format).split(Parts, ',', -1, false);
  for (StringRef P : Parts) {
    unsigned K = StringSwitch<unsigned>(P.trim())
                     .Case("gantt", OutGantt)
                     .Case("summary", OutSummary)
                     .Cases("chrome", "trace", OutChrome)
                     .Case("svg", OutSvg)
                     .Case("html", OutHtml)
                     .Case("json", OutJson)
                     .Case("csv", OutCsv)
                     .Default(0);
    if (!K)
      return usage(fmt::format("unknown --format '{}' (expected gantt, "
                               "summary, chrome, svg, html, json or csv)",
                               P.str()));
    Outs |= K;
  }
  if (!Outs)
    return usage("--format names no output");
  SmallVector<const OutFile *, 4> Files;
  for (const OutFile &F : OutFiles)
    if (Outs & F.Kinds)
      Files.push_back(&F);
  bool ToStdout = opts::Output.empty() || opts::Output == "-";
  if (Files.size() > 1 && ToStdout) {
    std::string Names, Example;
    for (const OutFile *F : Files) {
      Names += fmt::format("{}{}", Names.empty() ? "" : ", ", F->Name);
      Example += fmt::format("{}t{}", Example.empty() ? "" : ", ", F->Ext);
    }
    return usage(fmt::format("--format={} asks for {} files ({}), which "
                             "cannot share stdout; give -o NAME to write "
                             "NAME.ext for each (-o t: {}), or one format at "
                             "a time",
                             Format.getValue(), Files.size(), Names, Example));
  }

  sim::SimOptions SO;
  CommOverrides Comm;
  if (!S.commOptions(Comm))
    return S.finish(ExitUsage);
  if (BlockingComm && AsyncComm)
    return usage("--blocking-comm and --async-comm contradict each other");
  if (BlockingComm)
    SO.BlockingComm = true;
  if (AsyncComm)
    SO.BlockingComm = false;
  if (Timing == "comms")
    SO.Dataflow = sim::DataflowMode::Comms;
  else if (Timing == "dataflow")
    SO.Dataflow = sim::DataflowMode::Dataflow;
  else if (Timing != "auto")
    return usage(fmt::format("--timing must be auto, comms or dataflow, got "
                             "'{}'",
                             Timing.getValue()));
  if (Width.getNumOccurrences() && Width < 10)
    return usage("--width must be at least 10");
  if (TimelineColor != "auto" && TimelineColor != "always" &&
      TimelineColor != "never")
    return usage("--timeline-color must be auto, always or never");

  std::optional<sim::CommVolumeOptions> VO;
  bool CacheFlags =
      Cache.getNumOccurrences() || CachePolicyOpt.getNumOccurrences() ||
      CacheInflight.getNumOccurrences() || CacheEviction.getNumOccurrences() ||
      CacheReuse.getNumOccurrences() || Steps.getNumOccurrences();
  if (!CommVolume.empty() || CacheFlags) {
    VO.emplace();
    if (!CommVolume.empty()) {
      auto K = sim::parseCommVolumeKind(CommVolume);
      if (!K)
        return usage(fmt::format("--comm-volume must be activation-tensor or "
                                 "block-residual-cache, got '{}'",
                                 CommVolume.getValue()));
      VO->Kind = *K;
    } else {
      // Cache options only make sense with residuals.
      VO->Kind = sim::CommVolumeKind::BlockResidualCache;
    }
    auto Pol = sim::parseCachePolicy(CachePolicyOpt);
    if (!Pol)
      return usage(fmt::format("--cache-policy must be disabled, fifo or lru, "
                               "got '{}'",
                               CachePolicyOpt.getValue()));
    auto Ev = sim::parseCacheEviction(CacheEviction);
    if (!Ev)
      return usage(fmt::format("--cache-eviction must be step-boundary or "
                               "none, got '{}'",
                               CacheEviction.getValue()));
    if (CacheInflight < 1)
      return usage("--cache-max-inflight must be at least 1");
    if (Steps < 1 || LayersPerStage < 1 || LayersPerBlock < 1)
      return usage("--steps, --layers-per-stage and --layers-per-block must "
                   "be at least 1");
    VO->Cache.Enabled = Cache;
    VO->Cache.Policy = *Pol;
    VO->Cache.ReuseAcrossBackward = CacheReuse;
    VO->Cache.MaxInflightMicrobatches = CacheInflight;
    VO->Cache.Eviction = *Ev;
    if (PayloadBytes.getNumOccurrences())
      VO->PayloadBytes = PayloadBytes;
    VO->LayersPerStage = LayersPerStage;
    VO->LayersPerBlock = LayersPerBlock;
    VO->Steps = Steps;
  }

  S.ModelOverrides = [&SO](ir::Schedule &X) {
    sim::applyScheduleOverrides(X, SO);
  };
  std::optional<ir::Schedule> Sched = S.load();
  if (!Sched) {
    S.flushDiagnostics();
    return ExitDiagnostics;
  }
  // Options that change a cost or the comm model change the schedule itself,
  // before any pass (insert-comms orders messages by the pairs' simulated
  // times): the same value written in the file gives the same result.
  sim::applyScheduleOverrides(*Sched, SO);
  if (!S.applyCommOptions(Comm, *Sched))
    return S.finish(ExitUsage);
  passes::AnalysisResults Results;
  bool Checked = runPipeline(S, *Sched, PipelineGoal::Check, Results);
  // A deadlock is what people most want to see: simulate up to where each
  // rank blocks (the diagnostics explain the cycle; the exit code stays 1).
  bool Deadlocked = !Checked && Results.Deadlock && !Results.Deadlock->Free &&
                    onlyDeadlockErrors(S.Diags);
  if (!Checked && !Deadlocked) {
    S.flushDiagnostics();
    return ExitDiagnostics;
  }

  // The deadlock pass ran: the simulator reuses its result.
  SO.Deadlock = Results.Deadlock ? &*Results.Deadlock : nullptr;
  sim::SimResult R = sim::simulate(*Sched, SO, &S.Diags);
  std::optional<sim::CommVolumeReport> Vol;
  if (VO)
    Vol = sim::computeCommVolume(*Sched, *VO, &R);

  backends::GanttOptions GO;
  GO.Width = Width;
  if (!GO.Width && ToStdout && sys::Process::StandardOutIsDisplayed()) {
    unsigned Cols = sys::Process::StandardOutColumns();
    unsigned Label =
        unsigned(fmt::format("rank {} ", Sched->Topo.Ranks).size());
    if (Cols > Label + 10)
      GO.Width = Cols - Label - 1;
  }
  GO.Color =
      TimelineColor == "always" ||
      (TimelineColor == "auto" && ToStdout &&
       sys::Process::StandardOutIsDisplayed() && !std::getenv("NO_COLOR"));

  const sim::CommVolumeReport *VolP = Vol ? &*Vol : nullptr;
  const sim::CommVolumeOptions *VOP = VO ? &*VO : nullptr;
  std::string Base = Files.size() > 1 ? outputBase(opts::Output) : "";
  std::vector<std::string> Written;
  for (const OutFile *F : Files) {
    std::string Path = Files.size() > 1 ? Base + F->Ext : opts::Output;
    std::unique_ptr<OutputFile> OS = S.openOutput(Path);
    if (!OS) {
      S.flushDiagnostics();
      return ExitDiagnostics;
    }
    unsigned K = Outs & F->Kinds;
    if (K & OutGantt)
      backends::writeGantt(*Sched, R, *OS, GO);
    if (K & OutSummary) {
      if (K & OutGantt)
        *OS << "\n";
      backends::writeSummary(*Sched, R, *OS, VolP, VOP);
    }
    if (K & OutChrome)
      backends::writeChromeTrace(*Sched, R, *OS);
    if (K & OutSvg)
      backends::writeSvg(*Sched, R, *OS);
    if (K & OutHtml)
      backends::writeHtml(*Sched, R, *OS, VolP);
    if (K & OutJson)
      backends::writeFiguresJson(*Sched, R, *OS, VolP, VOP);
    if (K & OutCsv)
      backends::writeActionCsv(*Sched, R, *OS);
    // A deadlock the lint found is drawn up to where each rank blocks and
    // written; a simulation that failed on its own (a deadlock with the
    // deadlock pass disabled, say) does not replace an existing file with
    // a partial timeline. Files are written whole or not at all.
    bool Partial = !Deadlocked && (R.Deadlocked || S.Diags.hasErrors());
    if (Partial && OS->isAtomic())
      continue;
    if (!S.commitOutput(*OS)) {
      S.flushDiagnostics();
      return ExitDiagnostics;
    }
    Written.push_back(Path);
  }
  bool Failed = R.Deadlocked || S.Diags.hasErrors();
  S.flushDiagnostics();
  if (Files.size() > 1 && opts::DiagnosticsFormat == "text")
    errs() << fmt::format("{}: wrote {}\n", toolName(),
                          llvm::join(Written, ", "));
  return Failed ? ExitDiagnostics : ExitOk;
}

static CommandRegistration Reg(SimCmd, runSim);

} // namespace pps::driver
