//===- AlignBubbles.cpp - align-bubbles: explicit idle slots --------------===//
//
// The dependency timeline (PassUtil) gives each compute unit its start and
// end; a rank waits before a unit when the unit starts after the rank's
// previous unit ended. The analysis warns when that wait could have been
// filled by the next backward compute in the rank's program; the
// transformation writes the waits as `idle(t)` actions.
//
//===----------------------------------------------------------------------===//
#include "pps/passes/AlignBubbles.h"

#include "PassUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pps::passes {

using namespace ir;
using namespace detail;

namespace {

bool isBackward(ActionKind K) {
  return K == ActionKind::B || K == ActionKind::I || K == ActionKind::W;
}

class AlignBubblesPass : public Pass {
public:
  explicit AlignBubblesPass(AlignBubblesOptions Opts) : Opts(Opts) {}
  llvm::StringRef name() const override { return "align-bubbles"; }
  llvm::StringRef description() const override {
    return "time the compute order; warn about fillable waits; write idle slots";
  }
  void run(Schedule &S, PassContext &Ctx) override;

private:
  void warnReadyWork(const Schedule &S, const UnitIndex &U, const Timeline &TL,
                     DiagnosticEngine &D);
  void insertIdle(Schedule &S, const UnitIndex &U, const Timeline &TL);
  AlignBubblesOptions Opts;
  double Eps = 1e-9;
};

/// Start index of each unit of a rank (actions), in order.
void unitStarts(const std::vector<Action> &Acts, std::vector<uint32_t> &Out) {
  Out.clear();
  for (size_t I = 0; I < Acts.size(); ++I) {
    if (!isCompute(Acts[I].Kind))
      continue;
    Out.push_back(uint32_t(I));
    if (Acts[I].overlapsNext() && I + 1 < Acts.size() && isCompute(Acts[I + 1].Kind))
      ++I;
  }
}

} // namespace

void AlignBubblesPass::warnReadyWork(const Schedule &S, const UnitIndex &U,
                                     const Timeline &TL, DiagnosticEngine &D) {
  const Topology &T = S.Topo;
  double MsgB = S.Cost.messageTime(ActionKind::SendB);
  std::vector<uint32_t> Starts;
  for (size_t R = 0; R < S.Ranks.size(); ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    unitStarts(Acts, Starts);
    uint32_t Base = U.RankBase[R];
    double Free = 0;
    unsigned Count = 0;
    size_t FirstWait = 0, FirstReady = 0;
    double FirstGap = 0;
    for (size_t K = 0; K + 1 < Starts.size(); ++K) {
      uint32_t Unit = Base + uint32_t(K);
      double Gap = TL.Start[Unit] - Free;
      Free = TL.End[Unit];
      if (Gap <= Eps)
        continue;
      // The next unit: all backward, not fed by this one, inputs arrived.
      const Action *V = &Acts[Starts[K + 1]];
      size_t VI = Starts[K + 1];
      unsigned Len =
          V->overlapsNext() && VI + 1 < Acts.size() && isCompute(Acts[VI + 1].Kind) ? 2 : 1;
      bool Ready = unitCost(S, Acts, VI) <= Gap + Eps;
      for (unsigned J = 0; J < Len && Ready; ++J) {
        const Action &X = V[J];
        if (!isBackward(X.Kind) || !inRange(T, X)) {
          Ready = false;
          break;
        }
        uint32_t Id = msIndex(T, X.Microbatch, X.Stage);
        uint32_t P = None;
        double Msg = MsgB;
        if (X.Kind == ActionKind::W)
          P = UnitIndex::unitOf(U.UnitBI[Id]);
        else if (X.Stage + 1 == T.Stages)
          P = UnitIndex::unitOf(U.UnitF[Id]);
        else
          P = UnitIndex::unitOf(producerEntry(T, U, X));
        if (P == None)
          continue;
        if (U.UnitRank[P] == int32_t(R))
          Ready = P < Unit;
        else
          Ready = TL.End[P] >= 0 && TL.End[P] + Msg <= TL.Start[Unit] - Gap + Eps;
      }
      if (!Ready)
        continue;
      if (Count++ == 0) {
        FirstWait = Starts[K];
        FirstReady = Starts[K + 1];
        FirstGap = Gap;
      }
    }
    if (!Count)
      continue;
    std::string More =
        Count > 1 ? fmt::format(" ({} such waits on this rank)", Count) : std::string();
    D.report(DiagKind::IdleWithReadyWork, locOf(S, Acts[FirstWait]),
             fmt::format("rank {} idles {} time units before {} while {}, next in "
                         "its program, is ready and fits in the wait{}",
                         R, FirstGap, describe(S, int32_t(R), FirstWait),
                         describe(S, int32_t(R), FirstReady), More))
        .note(locOf(S, Acts[FirstReady]),
              fmt::format("running {} first fills the bubble without delaying {}",
                          describe(S, int32_t(R), FirstReady),
                          describe(S, int32_t(R), FirstWait)));
  }
}

void AlignBubblesPass::insertIdle(Schedule &S, const UnitIndex &U, const Timeline &TL) {
  std::vector<Action> New;
  for (size_t R = 0; R < S.Ranks.size(); ++R) {
    auto &Acts = S.Ranks[R].Actions;
    New.clear();
    New.reserve(Acts.size() + (U.RankBase[R + 1] - U.RankBase[R]) / 4 + 2);
    uint32_t Unit = U.RankBase[R];
    double Free = 0;
    size_t RecvRun = 0; // where the receives right before this point begin
    for (size_t I = 0; I < Acts.size(); ++I) {
      const Action &A = Acts[I];
      if (A.Kind == ActionKind::Idle)
        continue;
      if (isRecv(A.Kind)) {
        if (New.empty() || !isRecv(New.back().Kind))
          RecvRun = New.size();
        New.push_back(A);
        continue;
      }
      if (isCompute(A.Kind)) {
        double Gap = TL.Start[Unit] - Free;
        if (Gap > Eps) {
          size_t At = New.size() && isRecv(New.back().Kind) ? RecvRun : New.size();
          New.insert(New.begin() + At, Action::idle(float(Gap), A.Loc));
        }
        Free = TL.End[Unit];
        ++Unit;
        New.push_back(A);
        if (A.overlapsNext() && I + 1 < Acts.size() && isCompute(Acts[I + 1].Kind))
          New.push_back(Acts[++I]);
        continue;
      }
      New.push_back(A);
    }
    if (TL.Makespan - Free > Eps)
      New.push_back(Action::idle(float(TL.Makespan - Free)));
    Acts.assign(New.begin(), New.end());
  }
}

void AlignBubblesPass::run(Schedule &S, PassContext &Ctx) {
  const Topology &T = S.Topo;
  if (T.Stages <= 0 || T.Microbatches <= 0 || int32_t(S.Ranks.size()) != T.Ranks ||
      int32_t(T.StageToRank.size()) != T.Stages)
    return;
  UnitIndex U;
  U.build(S);
  Timeline TL;
  if (!computeTimeline(S, U, TL))
    return; // insert-comms or deadlock reports the cycle
  Ctx.Results.Makespan = TL.Makespan;
  Eps = 1e-9 * std::max(1.0, TL.Makespan);
  warnReadyWork(S, U, TL, Ctx.Diags);
  if (Opts.Insert)
    insertIdle(S, U, TL);
}

std::unique_ptr<Pass> createAlignBubblesPass(AlignBubblesOptions Opts) {
  return std::make_unique<AlignBubblesPass>(Opts);
}

} // namespace pps::passes
