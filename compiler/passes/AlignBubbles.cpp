//===- AlignBubbles.cpp - align-bubbles: explicit idle slots --------------===//
//
// The dependency timeline (PassUtil) gives each compute unit its start and
// end; a rank waits before a unit when the unit starts after the rank's
// previous unit ended. The transformation writes these waits as `idle(t)`
// actions. The analysis checks the idle slots already there: an explicit idle
// slot longer than the wait the dependencies impose holds the rank back
// while its next work is ready: that is the idle-ready-work warning.
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

class AlignBubblesPass : public Pass {
public:
  explicit AlignBubblesPass(AlignBubblesOptions Opts) : Opts(Opts) {}
  llvm::StringRef name() const override { return "align-bubbles"; }
  llvm::StringRef description() const override {
    return "time the compute order; warn about fillable waits; write idle "
           "slots";
  }
  void run(Schedule &S, PassContext &Ctx) override;
  /// Adds and removes only idle slots.
  bool preservesComputeOrder() const override { return true; }

private:
  void warnReadyWork(const Schedule &S, const UnitIndex &U, const Timeline &TL,
                     DiagnosticEngine &D);
  void insertIdle(Schedule &S, const UnitIndex &U, const Timeline &TL);
  AlignBubblesOptions Opts;
  double Eps = 1e-9;
};

} // namespace

void AlignBubblesPass::warnReadyWork(const Schedule &S, const UnitIndex &U,
                                     const Timeline &TL, DiagnosticEngine &D) {
  for (size_t R = 0; R < S.Ranks.size(); ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    uint32_t Unit = U.RankBase[R];
    double Free = 0, Idle = 0;
    size_t FirstIdle = SIZE_MAX;
    unsigned Count = 0;
    size_t WIdle = 0, WUnit = 0;
    double WIdleTime = 0, WGap = 0;
    for (size_t I = 0; I < Acts.size(); ++I) {
      const Action &A = Acts[I];
      if (A.Kind == ActionKind::Idle) {
        if (FirstIdle == SIZE_MAX)
          FirstIdle = I;
        Idle += std::max(0.0f, A.idleTime());
        continue;
      }
      if (!isCompute(A.Kind))
        continue;
      double Gap = TL.Start[Unit] - Free;
      if (FirstIdle != SIZE_MAX && Idle > Gap + Eps && Count++ == 0) {
        WIdle = FirstIdle;
        WUnit = I;
        WIdleTime = Idle;
        WGap = Gap;
      }
      Free = TL.End[Unit];
      ++Unit;
      Idle = 0;
      FirstIdle = SIZE_MAX;
      if (A.overlapsNext() && I + 1 < Acts.size() &&
          isCompute(Acts[I + 1].Kind))
        ++I;
    }
    if (!Count)
      continue;
    std::string More = Count > 1
                           ? fmt::format(" ({} such slots on this rank)", Count)
                           : std::string();
    D.report(
         DiagKind::IdleWithReadyWork, locOf(S, Acts[WIdle]),
         fmt::format("rank {} idles {} time units at {} before {}, which is "
                     "ready after {}: the rank waits while its next work is "
                     "ready{}",
                     R, WIdleTime, describe(S, int32_t(R), WIdle),
                     describe(S, int32_t(R), WUnit), WGap, More))
        .note(
            locOf(S, Acts[WUnit]),
            "--align-bubbles recomputes the idle slots from the dependencies");
  }
}

void AlignBubblesPass::insertIdle(Schedule &S, const UnitIndex &U,
                                  const Timeline &TL) {
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
          size_t At =
              !New.empty() && isRecv(New.back().Kind) ? RecvRun : New.size();
          New.insert(New.begin() + At, Action::idle(float(Gap), A.Loc));
        }
        Free = TL.End[Unit];
        ++Unit;
        New.push_back(A);
        if (A.overlapsNext() && I + 1 < Acts.size() &&
            isCompute(Acts[I + 1].Kind))
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
  if (T.Stages <= 0 || T.Microbatches <= 0 ||
      int32_t(S.Ranks.size()) != T.Ranks ||
      int32_t(T.StageToRank.size()) != T.Stages)
    return;
  // Analysis only, and no idle slot to check: the makespan is all there is
  // to give, and an earlier pass may have timed this compute order.
  if (!Opts.Insert && Ctx.Results.ComputeMakespan &&
      llvm::none_of(S.Ranks, [](const RankProgram &P) {
        return llvm::any_of(P.Actions, [](const Action &A) {
          return A.Kind == ActionKind::Idle;
        });
      })) {
    Ctx.Results.Makespan = *Ctx.Results.ComputeMakespan;
    return;
  }
  UnitIndex U;
  U.build(S);
  Timeline TL;
  if (!computeTimeline(S, U, TL))
    return; // insert-comms or deadlock reports the cycle
  Ctx.Results.Makespan = TL.Makespan;
  Eps = 1e-9 * std::max(1.0, TL.Makespan);
  warnReadyWork(S, U, TL, Ctx.Diags);
  if (!Opts.Insert)
    return;
  // The idle slots insertIdle will write (one per gap), counted first.
  uint64_t Gaps = 0;
  for (size_t R = 0; R < S.Ranks.size(); ++R) {
    double Free = 0;
    for (uint32_t Unit = U.RankBase[R]; Unit < U.RankBase[R + 1]; ++Unit) {
      Gaps += TL.Start[Unit] - Free > Eps;
      Free = TL.End[Unit];
    }
    Gaps += TL.Makespan - Free > Eps;
  }
  if (!checkActionLimit(S, Gaps, "idle slots", Ctx))
    return;
  insertIdle(S, U, TL);
}

std::unique_ptr<Pass> createAlignBubblesPass(AlignBubblesOptions Opts) {
  return std::make_unique<AlignBubblesPass>(Opts);
}

} // namespace pps::passes
