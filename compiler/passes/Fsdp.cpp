//===- Fsdp.cpp - fsdp: unshard/reshard/reduce_grad insertion
//--------------===//
//
// Per rank: a backward sweep gives each compute the position of the next
// compute of the same stage; a forward sweep keeps, per stage the rank
// holds, the position of its next compute, so the window (the next K + 1
// distinct stages) is read off a list of at most V entries before each
// compute unit. Linear in the actions for a fixed number of stages per rank.
//
//===----------------------------------------------------------------------===//
#include "pps/passes/Fsdp.h"

#include "PassUtil.h"

#include <algorithm>

namespace pps::passes {

using namespace ir;
using namespace detail;

namespace {

class FsdpPass : public Pass {
public:
  llvm::StringRef name() const override { return "fsdp"; }
  llvm::StringRef description() const override {
    return "insert FSDP unshard/reshard with a prefetch window, and "
           "reduce_grad";
  }
  void run(Schedule &S, PassContext &Ctx) override;
  /// Adds only control actions.
  bool preservesComputeOrder() const override { return true; }

private:
  void runRank(Schedule &S, int32_t R, unsigned Window);
  std::vector<int32_t> SlotOf; // stage -> slot on the current rank, or -1
};

} // namespace

void FsdpPass::runRank(Schedule &S, int32_t R, unsigned Window) {
  auto &Acts = S.Ranks[R].Actions;
  const Topology &T = S.Topo;
  // The stages this rank computes, as slots.
  llvm::SmallVector<int32_t, 8> Stages;
  std::vector<uint32_t> CompAt; // compute number -> action index
  for (size_t I = 0; I < Acts.size(); ++I) {
    const Action &A = Acts[I];
    if (!isCompute(A.Kind) || A.Stage < 0 || A.Stage >= T.Stages)
      continue;
    if (SlotOf[A.Stage] < 0) {
      SlotOf[A.Stage] = int32_t(Stages.size());
      Stages.push_back(A.Stage);
    }
    CompAt.push_back(uint32_t(I));
  }
  size_t NC = CompAt.size(), NS = Stages.size();
  if (NC == 0)
    return;
  const uint32_t Never = None;
  std::vector<uint32_t> NextOcc(NC);
  std::vector<uint32_t> NextPos(NS, Never), LastBwd(NS, Never);
  for (size_t C = NC; C-- > 0;) {
    const Action &A = Acts[CompAt[C]];
    int32_t Slot = SlotOf[A.Stage];
    NextOcc[C] = NextPos[Slot];
    NextPos[Slot] = uint32_t(C);
    if ((A.Kind == ActionKind::B || A.Kind == ActionKind::W) &&
        LastBwd[Slot] == Never)
      LastBwd[Slot] = CompAt[C];
  }

  std::vector<Action> New;
  New.reserve(Acts.size() + 4 * NC / std::max<size_t>(1, NS) + 4 * NS);
  llvm::SmallVector<int32_t, 8> Active, Want, Block;
  llvm::SmallVector<std::pair<uint32_t, int32_t>, 8> Order;
  size_t C = 0;
  for (size_t I = 0; I < Acts.size(); ++I) {
    const Action &A = Acts[I];
    if (!isCompute(A.Kind) || A.Stage < 0 || A.Stage >= T.Stages) {
      New.push_back(A);
      continue;
    }
    unsigned Len = A.overlapsNext() && I + 1 < Acts.size() &&
                           isCompute(Acts[I + 1].Kind) &&
                           Acts[I + 1].Stage >= 0 &&
                           Acts[I + 1].Stage < T.Stages
                       ? 2
                       : 1;
    // The window: the next distinct stages by next use (this unit's first).
    Order.clear();
    for (size_t K = 0; K < NS; ++K)
      if (NextPos[K] != Never)
        Order.push_back({NextPos[K], int32_t(K)});
    std::sort(Order.begin(), Order.end());
    unsigned Take = std::max<unsigned>(Window, Len);
    Want.clear();
    for (size_t K = 0; K < Order.size() && Want.size() < Take; ++K)
      Want.push_back(Order[K].second);
    Block.clear();
    for (int32_t Slot : Active)
      if (std::find(Want.begin(), Want.end(), Slot) == Want.end())
        Block.push_back(-1 - Slot); // reshard
    for (int32_t Slot : Want)
      if (std::find(Active.begin(), Active.end(), Slot) == Active.end())
        Block.push_back(Slot); // unshard
    if (!Block.empty()) {
      // Ahead of the receives that feed this unit, so the gather overlaps.
      size_t At = New.size();
      while (At > 0 && isRecv(New[At - 1].Kind))
        --At;
      llvm::SmallVector<Action, 8> Ins;
      for (int32_t B : Block)
        Ins.push_back(
            B < 0 ? Action::control(ActionKind::Reshard, Stages[-1 - B], A.Loc)
                  : Action::control(ActionKind::Unshard, Stages[B], A.Loc));
      New.insert(New.begin() + At, Ins.begin(), Ins.end());
      Active = Want;
    }
    for (unsigned J = 0; J < Len; ++J) {
      const Action &X = Acts[I + J];
      New.push_back(X);
      NextPos[SlotOf[X.Stage]] = NextOcc[C + J];
    }
    for (unsigned J = 0; J < Len; ++J) {
      const Action &X = Acts[I + J];
      int32_t Slot = SlotOf[X.Stage];
      if (LastBwd[Slot] == I + J)
        New.push_back(Action::control(ActionKind::ReduceGrad, X.Stage, X.Loc));
    }
    C += Len;
    I += Len - 1;
  }
  for (int32_t Slot : Active)
    New.push_back(Action::control(ActionKind::Reshard, Stages[Slot]));
  for (int32_t St : Stages)
    SlotOf[St] = -1;
  Acts = std::move(New);
}

void FsdpPass::run(Schedule &S, PassContext &Ctx) {
  if (!S.Fsdp.Enabled)
    return;
  for (const RankProgram &R : S.Ranks)
    for (const Action &A : R.Actions)
      if (isControl(A.Kind))
        return; // already annotated (a round trip, or written by hand)
  SlotOf.assign(std::max(S.Topo.Stages, 0), -1);
  unsigned Window = unsigned(std::max(S.Fsdp.Prefetch, 0)) + 1;
  for (size_t R = 0; R < S.Ranks.size(); ++R)
    runRank(S, int32_t(R), Window);
}

std::unique_ptr<Pass> createFsdpPass() { return std::make_unique<FsdpPass>(); }

} // namespace pps::passes
