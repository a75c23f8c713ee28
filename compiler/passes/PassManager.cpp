//===- PassManager.cpp - named passes over the IR -------------------------===//
#include "pps/passes/PassManager.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace pps::passes {

bool checkActionLimit(const ir::Schedule &S, uint64_t Added,
                      llvm::StringRef What, PassContext &Ctx) {
  uint64_t Have = S.numActions();
  if (Have + Added <= Ctx.MaxActions)
    return true;
  std::string Msg =
      Added ? fmt::format("adding {} {} would make {} actions, more than the "
                          "limit of {}",
                          Added, What.str(), Have + Added, Ctx.MaxActions)
            : fmt::format("after {} the schedule has {} actions, more than "
                          "the limit of {}",
                          What.str(), Have, Ctx.MaxActions);
  Ctx.Diags.report(DiagKind::LimitExceeded, S.DeclLoc, std::move(Msg))
      .note(S.DeclLoc,
            "each action costs about 65 bytes in lint and sim; raise the "
            "limit with --max-actions=N");
  return false;
}

bool PassManager::isDisabled(llvm::StringRef Name) const {
  return std::find(Opts.DisabledPasses.begin(), Opts.DisabledPasses.end(),
                   Name) != Opts.DisabledPasses.end();
}

bool PassManager::shouldPrintAfter(llvm::StringRef Name) const {
  for (const std::string &P : Opts.PrintAfter)
    if (P == Name || P == "all")
      return true;
  return false;
}

std::vector<llvm::StringRef> PassManager::names() const {
  std::vector<llvm::StringRef> Out;
  for (const auto &P : Passes)
    Out.push_back(P->name());
  return Out;
}

bool PassManager::run(ir::Schedule &S, PassContext &Ctx) {
  llvm::raw_ostream &Dump = Opts.DumpStream ? *Opts.DumpStream : llvm::errs();
  struct Timing {
    llvm::StringRef Name;
    double Ms;
  };
  std::vector<Timing> Times;
  bool Ok = true;
  // Facts about the compute order hold for this schedule only.
  Ctx.Results.ComputeMakespan.reset();
  for (const auto &P : Passes) {
    if (isDisabled(P->name()) || (!Ok && !P->runsAfterErrors()))
      continue;
    uint64_t ErrorsBefore = Ctx.Diags.numErrors();
    auto Start = std::chrono::steady_clock::now();
    P->run(S, Ctx);
    auto End = std::chrono::steady_clock::now();
    Times.push_back(
        {P->name(),
         std::chrono::duration<double, std::milli>(End - Start).count()});
    if (shouldPrintAfter(P->name()) && Opts.Printer) {
      Dump << "// -----// IR after " << P->name() << " //----- //\n";
      Opts.Printer(S, Dump);
    }
    if (!P->preservesComputeOrder())
      Ctx.Results.ComputeMakespan.reset();
    if (Ctx.Diags.numErrors() > ErrorsBefore)
      Ok = false;
    // Passes that add actions check before allocating; this catches any
    // that did not, before the next pass works on the result.
    if (Ok && !checkActionLimit(S, 0, P->name(), Ctx))
      Ok = false;
  }
  if (Opts.TimePasses) {
    double Total = 0;
    for (const Timing &T : Times)
      Total += T.Ms;
    Dump << "===-------------------------------------------===\n"
         << "                  pass execution timing report\n"
         << "===-------------------------------------------===\n"
         << fmt::format("  total: {:.3f} ms, {} actions\n", Total,
                        S.numActions());
    for (const Timing &T : Times)
      if (Opts.TimedPasses.empty() ||
          llvm::is_contained(Opts.TimedPasses, T.Name))
        Dump << fmt::format("  {:>10.3f} ms  {:5.1f}%  {}\n", T.Ms,
                            Total > 0 ? 100.0 * T.Ms / Total : 0.0,
                            T.Name.str());
  }
  return Ok;
}

} // namespace pps::passes
