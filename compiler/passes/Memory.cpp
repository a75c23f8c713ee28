//===- Memory.cpp - memory: activation memory per rank --------------------===//
//
// The pass runs the memory analysis (pps/analysis/Memory.h, the one rule)
// and turns a rank above the limit into a diagnostic.
//
//===----------------------------------------------------------------------===//
#include "pps/passes/Memory.h"

#include "PassUtil.h"
#include "pps/analysis/Memory.h"

#include <fmt/format.h>

namespace pps::passes {

using namespace ir;
using namespace detail;

namespace {

class MemoryPass : public AnalysisPass {
public:
  llvm::StringRef name() const override { return "memory"; }
  llvm::StringRef description() const override {
    return "activation memory per rank; check the memory limit";
  }
  void analyze(const Schedule &S, PassContext &Ctx) override {
    analysis::MemoryOptions Opts;
    if (S.MemoryLimit)
      Opts.Limit = double(*S.MemoryLimit);
    analysis::MemoryProfile M = analysis::analyzeMemory(S, Opts);
    Ctx.Results.PeakMemory.clear();
    for (const analysis::RankMemory &RM : M.Ranks)
      Ctx.Results.PeakMemory.push_back(RM.Peak);
    for (size_t R = 0; R < S.Ranks.size(); ++R) {
      const analysis::RankMemory &RM = M.Ranks[R];
      if (RM.OverAt < 0)
        continue;
      const Action &A = S.Ranks[R].Actions[size_t(RM.OverAt)];
      // In bytes: "1.50 GiB of activations"; in units: "3 activations".
      auto Held = [&](double V) {
        return ir::memoryAmountText(S.Memory, V) +
               (S.Memory.Bytes ? " of activations" : " activations");
      };
      Ctx.Diags
          .report(DiagKind::MemoryLimit, locOf(S, A),
                  fmt::format(
                      "rank {} holds {} after {}, above the memory "
                      "limit of {}",
                      R, Held(RM.OverLevel),
                      describe(S, int32_t(R), size_t(RM.OverAt)),
                      ir::memoryAmountText(S.Memory, double(*S.MemoryLimit))))
          .note(S.DeclLoc,
                fmt::format("rank {} peaks at {}", R, Held(RM.Peak)));
    }
  }
};

} // namespace

std::unique_ptr<Pass> createMemoryPass() {
  return std::make_unique<MemoryPass>();
}

} // namespace pps::passes
