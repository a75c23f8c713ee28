//===- Pipeline.cpp - the compiler's pass pipeline, in order --------------===//
#include "pps/driver/Pipeline.h"

#include "pps/backends/PpsPrinter.h"
#include "pps/passes/AlignBubbles.h"
#include "pps/passes/Deadlock.h"
#include "pps/passes/Fsdp.h"
#include "pps/passes/InsertComms.h"
#include "pps/passes/Memory.h"
#include "pps/passes/VerifyDeps.h"
#include "pps/synth/SynthPass.h"

#include <fmt/format.h>

using namespace llvm;

namespace pps::driver {

static cl::SubCommand &all() { return *cl::AllSubCommands; }

static cl::list<std::string>
    PrintAfter("print-after", cl::desc("Print the IR after the named pass (or all)"),
               cl::value_desc("pass"), cl::CommaSeparated, cl::sub(all()),
               cl::cat(opts::Category));
static cl::list<std::string>
    DisablePass("disable-pass", cl::desc("Skip the named pass"),
                cl::value_desc("pass"), cl::CommaSeparated, cl::sub(all()),
                cl::cat(opts::Category));
static cl::opt<bool> TimePasses("time-passes",
                                cl::desc("Time each pass and print a report"),
                                cl::sub(all()), cl::cat(opts::Category));
static cl::opt<bool>
    AlignBubbles("align-bubbles",
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
    errs() << fmt::format("ppsc: error: --fsdp expects a number of stages >= 0, "
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
  bool Check = Goal == PipelineGoal::Check;

  // The passes, in order (see docs/passes.md for why this order).
  // A `schedule synth(...)` request becomes explicit rank lists first.
  if (S.Synth)
    PM.add(synth::createSynthPass());
  // Verification first: insert-comms trusts a complete, ordered compute set.
  PM.add(passes::createVerifyDepsPass());
  // Comms next (or a check of the user's), so later passes see what runs.
  PM.add(passes::createInsertCommsPass());
  // The independent proof: matching and the happens-before graph.
  if (Check)
    PM.add(passes::createDeadlockPass());
  // Timing after comms: idle slots go ahead of the receives that feed a
  // compute. Under Check it always analyses (idle-ready-work); it rewrites
  // only when asked.
  if (Check || AlignBubbles)
    PM.add(passes::createAlignBubblesPass({/*Insert=*/AlignBubbles}));
  if (Check)
    PM.add(passes::createMemoryPass());
  // FSDP last: its controls wrap the final compute order and move no comm.
  if (S.Fsdp.Enabled)
    PM.add(passes::createFsdpPass());

  passes::PassContext Ctx{Sess.Diags, {}};
  bool Ok = PM.run(S, Ctx);
  Results = std::move(Ctx.Results);
  return Ok;
}

} // namespace pps::driver
