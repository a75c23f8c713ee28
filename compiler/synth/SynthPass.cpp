//===- SynthPass.cpp - synth: fill in a `schedule synth(memory: N)` request -===//
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
  if (!S.Synth)
    return;
  const ir::SynthRequest &Req = *S.Synth;
  LocId Loc = Req.Loc ? Req.Loc : S.DeclLoc;
  if (S.numActions() != 0) {
    Ctx.Diags.report(DiagKind::InvalidValue, Loc,
                     "a synthesised pipeline cannot also list actions");
    return;
  }
  SynthOptions Opts;
  for (const auto &[Name, Value] : Req.Args) {
    if (Name == "exact") {
      Opts.UseExact = Value != 0;
      continue;
    }
    Ctx.Diags.report(DiagKind::InvalidValue, Loc,
                     fmt::format("unknown synth argument '{}' (expected "
                                 "memory or exact)",
                                 Name));
    return;
  }
  Problem P = Problem::fromSchedule(S, Req.MemoryLimit);
  std::string Bad = P.validate();
  if (!Bad.empty()) {
    Ctx.Diags.report(DiagKind::InvalidValue, Loc, Bad);
    return;
  }
  std::string Why;
  std::optional<Result> R = synthesize(P, Opts, &Why);
  if (!R) {
    Ctx.Diags.report(DiagKind::SynthInfeasible, Loc, Why);
    return;
  }
  ir::Schedule Out = toSchedule(P, R->Ord, &S);
  S.resetRanks();
  for (size_t Rk = 0; Rk < Out.Ranks.size() && Rk < S.Ranks.size(); ++Rk) {
    S.Ranks[Rk].Actions = std::move(Out.Ranks[Rk].Actions);
    for (ir::Action &A : S.Ranks[Rk].Actions)
      A.Loc = Loc; // diagnostics on synthesised actions point at the request
  }
  S.MemoryLimit = Req.MemoryLimit;
  S.Synth.reset();
}

} // namespace

std::unique_ptr<passes::Pass> createSynthPass() {
  return std::make_unique<SynthPass>();
}

} // namespace pps::synth
