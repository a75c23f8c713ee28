//===- CheckCommand.cpp - ppsc check: parse, check, build the IR ----------===//
#include "pps/driver/Command.h"

#include <fmt/format.h>

namespace pps::driver {

static llvm::cl::SubCommand
    CheckCmd("check",
             "Parse and check a schedule and build its IR; report diagnostics");

static int runCheck() {
  Session S;
  if (opts::Input.empty())
    return S.usage("no input file (use - for stdin)");
  std::optional<ir::Schedule> Sched = S.load();
  S.flushDiagnostics();
  if (!Sched)
    return ExitDiagnostics;
  if (opts::DiagnosticsFormat == "text")
    llvm::errs() << fmt::format(
        "{}: ok: pipeline '{}', {} ranks, {} stages, {} microbatches, {} "
        "actions\n",
        opts::Input.getValue(), Sched->Name, Sched->Topo.Ranks,
        Sched->Topo.Stages, Sched->Topo.Microbatches, Sched->numActions());
  return ExitOk;
}

static CommandRegistration Reg(CheckCmd, runCheck);

} // namespace pps::driver
