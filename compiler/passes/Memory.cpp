//===- Memory.cpp - memory: activation memory per rank --------------------===//
//
// One walk per rank in program order, a counter per rank: +1 at F(m,s),
// -1 at B(m,s) or W(m,s) (the backward that frees the activation). No
// per-action state.
//
//===----------------------------------------------------------------------===//
#include "pps/passes/Memory.h"

#include "PassUtil.h"

#include <fmt/format.h>

namespace pps::passes {

using namespace ir;
using namespace detail;

namespace {

class MemoryPass : public Pass {
public:
  llvm::StringRef name() const override { return "memory"; }
  llvm::StringRef description() const override {
    return "activation memory per rank; check the memory limit";
  }
  void run(Schedule &S, PassContext &Ctx) override {
    auto &Peak = Ctx.Results.PeakMemory;
    Peak.assign(S.Ranks.size(), 0);
    for (size_t R = 0; R < S.Ranks.size(); ++R) {
      const auto &Acts = S.Ranks[R].Actions;
      int64_t Live = 0, Max = 0;
      size_t Over = SIZE_MAX;
      int64_t AtOver = 0;
      for (size_t I = 0; I < Acts.size(); ++I) {
        ActionKind K = Acts[I].Kind;
        if (K == ActionKind::F) {
          if (++Live > Max) {
            Max = Live;
            if (S.MemoryLimit && Max > *S.MemoryLimit && Over == SIZE_MAX) {
              Over = I;
              AtOver = Max;
            }
          }
        } else if (K == ActionKind::B || K == ActionKind::W) {
          --Live;
        }
      }
      Peak[R] = Max;
      if (Over == SIZE_MAX)
        continue;
      Ctx.Diags
          .report(DiagKind::MemoryLimit, locOf(S, Acts[Over]),
                  fmt::format(
                      "rank {} holds {} activations after {}, above the "
                      "memory limit of {}",
                      R, AtOver, describe(S, int32_t(R), Over), *S.MemoryLimit))
          .note(S.DeclLoc,
                fmt::format("rank {} peaks at {} activations", R, Max));
    }
  }
};

} // namespace

std::unique_ptr<Pass> createMemoryPass() {
  return std::make_unique<MemoryPass>();
}

} // namespace pps::passes
