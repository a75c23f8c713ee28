//===- CheckCommand.cpp - ppsc check: parse, check, build the IR ----------===//
//
// The front end only: syntax, names, types, evaluation and topology. It
// does not verify the schedule (completeness, dependencies, comms,
// deadlock, memory: that is `ppsc lint`), and its success line says so
// rather than a plain "ok". It writes no file, so -o is refused.
//
//===----------------------------------------------------------------------===//
#include "pps/driver/Command.h"
#include "pps/support/Printable.h"

#include <fmt/format.h>

namespace pps::driver {

static llvm::cl::SubCommand
    CheckCmd("check", "Parse and check a schedule and build its IR (the "
                      "front end; ppsc lint also verifies it)");

static int runCheck() {
  Session S;
  if (opts::Input.empty())
    return S.usage("no input file (use - for stdin)");
  if (opts::Output.getNumOccurrences())
    return S.usage("ppsc check writes no file, so -o has nothing to write "
                   "(diagnostics go to stderr, or stdout with "
                   "--diagnostics-format=json)");
  std::optional<ir::Schedule> Sched = S.load();
  S.flushDiagnostics();
  if (!Sched)
    return ExitDiagnostics;
  if (opts::DiagnosticsFormat == "text")
    llvm::errs() << fmt::format(
        "{}: checked: pipeline '{}', {} ranks, {} stages, {} microbatches, "
        "{} actions; not linted (ppsc lint verifies completeness, "
        "dependencies, comms, deadlock and memory)\n",
        printable(opts::Input.getValue()), Sched->Name, Sched->Topo.Ranks,
        Sched->Topo.Stages, Sched->Topo.Microbatches, Sched->numActions());
  return ExitOk;
}

static CommandRegistration Reg(CheckCmd, runCheck);

} // namespace pps::driver
