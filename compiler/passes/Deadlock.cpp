//===- Deadlock.cpp - deadlock: matching and happens-before cycle check ---===//
//
// The pass is the analysis layer's matching (pps/analysis/Matching.h) and
// happens-before check (pps/analysis/Deadlock.h), reported, with the result
// kept for later stages.
//
//===----------------------------------------------------------------------===//
#include "pps/passes/Deadlock.h"

#include "pps/analysis/Deadlock.h"
#include "pps/analysis/Matching.h"

namespace pps::passes {

namespace {

class DeadlockPass : public AnalysisPass {
public:
  explicit DeadlockPass(DeadlockOptions Opts) : Opts(Opts) {}
  llvm::StringRef name() const override { return "deadlock"; }
  llvm::StringRef description() const override {
    return "match sends and receives and prove the schedule free of deadlock";
  }
  void analyze(const ir::Schedule &S, PassContext &Ctx) override {
    analysis::Matching M = analysis::matchComms(S);
    analysis::reportMatching(S, M, Ctx.Diags);
    analysis::DeadlockResult R =
        analysis::checkDeadlock(S, M, Opts.Model.value_or(S.Comm));
    analysis::reportDeadlock(S, M, R, Ctx.Diags);
    Ctx.Results.DeadlockFree = R.Free;
    Ctx.Results.Deadlock = std::move(R);
  }
  bool runsAfterErrors() const override { return true; }

private:
  DeadlockOptions Opts;
};

} // namespace

std::unique_ptr<Pass> createDeadlockPass(DeadlockOptions Opts) {
  return std::make_unique<DeadlockPass>(Opts);
}

} // namespace pps::passes
