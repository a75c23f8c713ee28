//===- Pipeline.cpp - the compiler's pass pipeline, in order --------------===//
#include "pps/driver/Pipeline.h"

#include "pps/driver/Heap.h"

#include "pps/backends/PpsPrinter.h"
#include "pps/pipeline/CommOptions.h"
#include "pps/pipeline/PassPipeline.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <fmt/format.h>

#include <optional>

using namespace llvm;

namespace pps::driver {

static cl::SubCommand &all() { return *cl::AllSubCommands; }

static cl::list<std::string>
    PrintAfter("print-after",
               cl::desc("Print the IR after the named pass (or all)"),
               cl::value_desc("pass"), cl::CommaSeparated, cl::sub(all()),
               cl::cat(opts::Category));
static cl::list<std::string> DisablePass("disable-pass",
                                         cl::desc("Skip the named pass"),
                                         cl::value_desc("pass"),
                                         cl::CommaSeparated, cl::sub(all()),
                                         cl::cat(opts::Category));
static cl::opt<std::string> TimePasses(
    "time-passes",
    cl::desc("Time each pass (or the named ones) and print a report"),
    cl::value_desc("pass,..."), cl::ValueOptional, cl::sub(all()),
    cl::cat(opts::Category));
static cl::opt<bool> AlignBubbles(
    "align-bubbles",
    cl::desc("Write explicit idle(t) slots so rank timelines line up"),
    cl::sub(all()), cl::cat(opts::Category));
static cl::opt<std::string>
    Fsdp("fsdp",
         cl::desc("Insert FSDP unshard/reshard/reduce_grad, prefetching K "
                  "stages ahead (default: the schedule's, else 1)"),
         cl::value_desc("K"), cl::ValueOptional, cl::sub(all()),
         cl::cat(opts::Category));

static cl::opt<std::string> CommPlacementOpt(
    "comm-placement",
    cl::desc("Where insert-comms puts each send/recv pair: consumer (the "
             "receive right before its consumer), producer (the send right "
             "after its producer), optimize (per pair, whichever the timing "
             "under the comm model finds faster; the default under a stream "
             "rule), pytorch (what PyTorch's _add_send_recv does; not "
             "deadlock-free by construction)"),
    cl::value_desc("consumer|producer|optimize|pytorch"), cl::sub(all()),
    cl::cat(opts::Category));

void printSchedule(const ir::Schedule &S, raw_ostream &OS) {
  backends::printPps(S, OS);
}

/// The value of --fsdp=K, if well formed.
static std::optional<int> fsdpPrefetch() {
  int K;
  if (StringRef(Fsdp).getAsInteger(10, K) || K < 0)
    return std::nullopt;
  return K;
}

/// The names in --time-passes=a,b (empty for plain --time-passes).
static SmallVector<StringRef, 4> timedPasses() {
  SmallVector<StringRef, 4> Names;
  StringRef(TimePasses).split(Names, ',', -1, /*KeepEmpty=*/false);
  for (StringRef &N : Names)
    N = N.trim();
  return Names;
}

bool checkPipelineOptions(DiagnosticEngine &Diags) {
  const passes::PassRegistry &Registry = pipeline::passRegistry();
  bool Ok = true;
  auto CheckName = [&](StringRef Name, bool AllowAll) {
    if ((AllowAll && Name == "all") || Registry.lookup(Name))
      return;
    Ok = false;
    std::string Msg = fmt::format("unknown pass '{}'", Name.str());
    StringRef Near = Registry.suggest(Name);
    if (!Near.empty()) {
      Msg += fmt::format("; did you mean '{}'?", Near.str());
    } else {
      std::string Names;
      for (const passes::PassInfo &P : Registry.passes())
        Names += (Names.empty() ? "" : ", ") + P.Name;
      Msg += fmt::format("; the passes are {}", Names);
    }
    Diags.report(DiagKind::UnknownPass, NoLoc, std::move(Msg));
  };
  for (const std::string &N : PrintAfter)
    CheckName(N, /*AllowAll=*/true);
  for (const std::string &N : DisablePass)
    CheckName(N, /*AllowAll=*/false);
  for (StringRef N : timedPasses())
    CheckName(N, /*AllowAll=*/false);
  if (!CommPlacementOpt.empty()) {
    std::optional<passes::CommPlacement> Placement;
    std::string Why = pipeline::parseCommPlacement(
        CommPlacementOpt, "--comm-placement", Placement);
    if (!Why.empty()) {
      Ok = false;
      Diags.report(DiagKind::Usage, NoLoc, std::move(Why));
    }
  }
  if (Fsdp.getNumOccurrences() && !Fsdp.empty() && !fsdpPrefetch()) {
    Ok = false;
    Diags.report(DiagKind::Usage, NoLoc,
                 fmt::format("--fsdp expects a number of stages >= 0, got '{}'",
                             Fsdp.getValue()));
  }
  return Ok;
}

bool isPassDisabled(StringRef Pass) {
  return llvm::is_contained(DisablePass, Pass);
}

std::string skippedProof(const passes::AnalysisResults &Results) {
  // The checks of the proof, in pipeline order (align-bubbles only warns).
  for (const char *Pass : {"verify-deps", "insert-comms", "deadlock", "memory"})
    if (isPassDisabled(Pass))
      return fmt::format("the {0} check was disabled (--disable-pass={0})",
                         Pass);
  if (!pipeline::proved(Results))
    return "the proof did not complete";
  return "";
}

void noteSkippedChecks(DiagnosticEngine &Diags) {
  for (const passes::PassInfo &P : pipeline::passRegistry().passes())
    if (!P.Unchecked.empty() && isPassDisabled(P.Name))
      Diags.report(DiagKind::CheckSkipped, NoLoc,
                   fmt::format("the {0} check was disabled "
                               "(--disable-pass={0}); {1}",
                               P.Name, P.Unchecked));
}

/// Applies --fsdp[=K] to the schedule (checked by checkPipelineOptions).
static void applyFsdpOption(ir::Schedule &S) {
  if (!Fsdp.getNumOccurrences())
    return;
  S.Fsdp.Enabled = true;
  if (std::optional<int> K = fsdpPrefetch())
    S.Fsdp.Prefetch = *K;
}

void noteReordered(Session &Sess, const ir::Schedule &S,
                   const passes::AnalysisResults &Results) {
  if (!Results.Reordered)
    return;
  auto [Before, After] = *Results.Reordered;
  std::string Msg = pipeline::reorderedText(S, Before, After);
  Sess.Diags.report(DiagKind::CommsReordered, S.DeclLoc, std::move(Msg));
}

bool runPipeline(Session &Sess, ir::Schedule &S, PipelineGoal Goal,
                 passes::AnalysisResults &Results, bool ReorderComms) {
  applyFsdpOption(S);
  passes::PassManagerOptions PMO;
  PMO.PrintAfter.assign(PrintAfter.begin(), PrintAfter.end());
  PMO.DisabledPasses.assign(DisablePass.begin(), DisablePass.end());
  PMO.TimePasses = TimePasses.getNumOccurrences() > 0;
  for (StringRef N : timedPasses())
    PMO.TimedPasses.push_back(N.str());
  PMO.Printer = printSchedule;
  passes::PassManager PM(std::move(PMO));
  pipeline::PipelineConfig Config;
  Config.Until = Goal == PipelineGoal::Check ? pipeline::Goal::Check
                                             : pipeline::Goal::Lower;
  Config.AlignBubbles = AlignBubbles;
  if (!CommPlacementOpt.empty())
    Config.Comms.Placement = passes::commPlacementNamed(CommPlacementOpt);
  Config.Comms.ReorderComms = ReorderComms;
  pipeline::addPasses(PM, S, Config);

  passes::PassContext Ctx{Sess.Diags, {}};
  Ctx.MaxActions = opts::MaxActions;
  adviseHugePagesForPasses();
  bool Ok = PM.run(S, Ctx);
  Results = std::move(Ctx.Results);
  return Ok;
}

} // namespace pps::driver
