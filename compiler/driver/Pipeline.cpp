//===- Pipeline.cpp - the compiler's pass pipeline, in order --------------===//
#include "pps/driver/Pipeline.h"

#include "pps/backends/PpsPrinter.h"

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

void printSchedule(const ir::Schedule &S, raw_ostream &OS) {
  backends::printPps(S, OS);
}

bool runPipeline(Session &Sess, ir::Schedule &S, PipelineGoal Goal,
                 passes::AnalysisResults &Results) {
  passes::PassManagerOptions PMO;
  PMO.PrintAfter.assign(PrintAfter.begin(), PrintAfter.end());
  PMO.DisabledPasses.assign(DisablePass.begin(), DisablePass.end());
  PMO.TimePasses = TimePasses;
  PMO.Printer = printSchedule;
  passes::PassManager PM(std::move(PMO));

  // The passes, in order (see docs/passes.md for why this order).
  (void)Goal;

  passes::PassContext Ctx{Sess.Diags, {}};
  bool Ok = PM.run(S, Ctx);
  Results = std::move(Ctx.Results);
  return Ok;
}

} // namespace pps::driver
