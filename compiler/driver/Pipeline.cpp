//===- Pipeline.cpp - the compiler's pass pipeline, in order --------------===//
#include "pps/driver/Pipeline.h"

#include "pps/backends/PpsPrinter.h"
#include "pps/pipeline/PassPipeline.h"

#include <fmt/format.h>

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
static cl::opt<bool> TimePasses("time-passes",
                                cl::desc("Time each pass and print a report"),
                                cl::sub(all()), cl::cat(opts::Category));
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

void printSchedule(const ir::Schedule &S, raw_ostream &OS) {
  backends::printPps(S, OS);
}

/// Applies --fsdp[=K] to the schedule. False on a malformed K.
static bool applyFsdpOption(ir::Schedule &S) {
  if (!Fsdp.getNumOccurrences())
    return true;
  S.Fsdp.Enabled = true;
  if (Fsdp.empty())
    return true;
  int K;
  if (StringRef(Fsdp).getAsInteger(10, K) || K < 0) {
    errs() << fmt::format(
        "ppsc: error: --fsdp expects a number of stages >= 0, "
        "got '{}'\n",
        Fsdp.getValue());
    return false;
  }
  S.Fsdp.Prefetch = K;
  return true;
}

bool runPipeline(Session &Sess, ir::Schedule &S, PipelineGoal Goal,
                 passes::AnalysisResults &Results) {
  if (!applyFsdpOption(S))
    return false;
  passes::PassManagerOptions PMO;
  PMO.PrintAfter.assign(PrintAfter.begin(), PrintAfter.end());
  PMO.DisabledPasses.assign(DisablePass.begin(), DisablePass.end());
  PMO.TimePasses = TimePasses;
  PMO.Printer = printSchedule;
  passes::PassManager PM(std::move(PMO));
  pipeline::PipelineConfig Config;
  Config.Until = Goal == PipelineGoal::Check ? pipeline::Goal::Check
                                             : pipeline::Goal::Lower;
  Config.AlignBubbles = AlignBubbles;
  pipeline::addPasses(PM, S, Config);

  passes::PassContext Ctx{Sess.Diags, {}};
  bool Ok = PM.run(S, Ctx);
  Results = std::move(Ctx.Results);
  return Ok;
}

} // namespace pps::driver
