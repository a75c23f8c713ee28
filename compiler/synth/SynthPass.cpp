//===- SynthPass.cpp - synth: fill in a `schedule synth(memory: N)` request
#include "pps/synth/SynthPass.h"

#include "pps/synth/Algorithms.h"

#include <fmt/format.h>

namespace pps::synth {

namespace {

class SynthPass : public passes::Pass {
public:
  llvm::StringRef name() const override { return "synth"; }
  llvm::StringRef description() const override {
    return "Synthesise the rank programs of a `schedule synth(memory: N)` "
           "request";
  }
  void run(ir::Schedule &S, passes::PassContext &Ctx) override;
};

void SynthPass::run(ir::Schedule &S, passes::PassContext &Ctx) {
  runSynthRequest(S, Ctx.Diags);
}

} // namespace

bool runSynthRequest(ir::Schedule &S, DiagnosticEngine &Diags, Result *Out,
                     unsigned Threads) {
  if (!S.Synth)
    return true;
  const ir::SynthRequest &Req = *S.Synth;
  LocId Loc = Req.Loc ? Req.Loc : S.DeclLoc;
  const int64_t Limit = Req.MemoryLimit;
  if (S.numActions() != 0) {
    Diags.report(DiagKind::InvalidValue, Loc,
                 "a synthesised pipeline cannot also list actions");
    return false;
  }
  if (S.Topo.Directions != 1) {
    Diags.report(DiagKind::InvalidValue, Loc,
                 "synth does not support `directions 2`: it assumes every "
                 "microbatch traverses every stage");
    return false;
  }
  SynthOptions Opts;
  Opts.Threads = Threads;
  Objective Goal = Objective::Makespan;
  for (const auto &[Name, Value] : Req.Args) {
    if (Name == "exact") {
      Opts.UseExact = Value != 0;
      continue;
    }
    if (Name == "span") {
      Goal = Value != 0 ? Objective::Span : Objective::Makespan;
      continue;
    }
    Diags.report(DiagKind::InvalidValue, Loc,
                 fmt::format("unknown synth argument '{}' (expected "
                             "memory, exact or span)",
                             Name));
    return false;
  }
  Problem P = Problem::fromSchedule(S, Req.MemoryLimit);
  P.Goal = Goal;
  std::string Bad = P.validate();
  if (!Bad.empty()) {
    Diags.report(DiagKind::InvalidValue, Loc, Bad);
    return false;
  }
  std::string Why;
  std::optional<Result> R = synthesize(P, Opts, &Why);
  if (!R) {
    Diags.report(DiagKind::SynthInfeasible, Loc, Why);
    return false;
  }
  ir::Schedule Filled = toSchedule(P, R->Ord, &S);
  S.resetRanks();
  for (size_t Rk = 0; Rk < Filled.Ranks.size() && Rk < S.Ranks.size(); ++Rk) {
    S.Ranks[Rk].Actions = std::move(Filled.Ranks[Rk].Actions);
    for (ir::Action &A : S.Ranks[Rk].Actions)
      A.Loc = Loc; // diagnostics on synthesised actions point at the request
  }
  S.MemoryLimit = Limit;
  S.Synth.reset();
  if (Out)
    *Out = std::move(*R);
  return true;
}

std::unique_ptr<passes::Pass> createSynthPass() {
  return std::make_unique<SynthPass>();
}

} // namespace pps::synth
