//===- CommStreams.cpp - comm-streams: what the stream rule costs ---------===//
//
// One timing run under the stream rule keeps, for every comm held back by
// its stream, the operation that caused it (RankTimeline::HeldBy: the first
// of the chain of held operations ahead of it). Each receive that caused a
// hold is a finding; for the receives that hold back the most, a second run
// with the receive moved to its consumer says what the makespan gains.
//
//===----------------------------------------------------------------------===//
#include "pps/passes/CommStreams.h"

#include "PassUtil.h"
#include "pps/analysis/Deadlock.h"
#include "pps/analysis/Matching.h"
#include "pps/analysis/Timing.h"
#include "pps/support/Figures.h"

#include "llvm/ADT/DenseMap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pps::passes {

using namespace ir;
using namespace detail;

namespace {

constexpr uint64_t NoRef = ~uint64_t(0);

/// A receive that held back operations behind it on its stream.
struct Culprit {
  int32_t Rank = 0;
  uint32_t Recv = 0;
  /// Its consumer (the compute it serves), or None.
  uint32_t Consumer = None;
  /// The operation it held back the longest, and by how much.
  int32_t HeldRank = 0;
  uint32_t Held = 0;
  double Delay = 0;
  uint32_t Count = 0;
};

/// The position the receive at Rv of Acts moves to when deferred to its
/// consumer C: just before C (before the overlap pair holding it), but not
/// past the next receive on the same channel, which would change the FIFO
/// matching. Returns Rv itself when it cannot move.
size_t deferredPosition(llvm::ArrayRef<Action> Acts, size_t Rv, size_t C) {
  size_t To = C;
  if (To > 0 && Acts[To - 1].overlapsNext())
    --To;
  for (size_t I = Rv + 1; I < To; ++I)
    if (isRecv(Acts[I].Kind) && Acts[I].Peer == Acts[Rv].Peer)
      return I - 1 > Rv ? I - 1 : Rv;
  return To - 1 > Rv ? To - 1 : Rv;
}

/// S with the receive at (Rank, From) moved to position To (To > From).
Schedule withMoved(const Schedule &S, int32_t Rank, size_t From, size_t To) {
  Schedule M = S;
  auto &Acts = M.Ranks[Rank].Actions;
  std::rotate(Acts.begin() + From, Acts.begin() + From + 1,
              Acts.begin() + To + 1);
  return M;
}

class CommStreamsPass : public AnalysisPass {
public:
  llvm::StringRef name() const override { return "comm-streams"; }
  llvm::StringRef description() const override {
    return "time the comms under the stream rule; report receives that hold "
           "back their stream (early-recv)";
  }
  void analyze(const Schedule &S, PassContext &Ctx) override;
};

void CommStreamsPass::analyze(const Schedule &S, PassContext &Ctx) {
  if (!S.Stream.inOrder() || !S.Cost.AsyncComm || !Ctx.Results.DeadlockFree ||
      !S.hasComms())
    return;
  analysis::TimingOptions TO = analysis::timingOf(S);
  TO.KeepHeld = true;
  analysis::TimingResult T = analysis::computeTiming(S, TO);
  if (T.Deadlocked)
    return; // the deadlock pass has the last word on that
  double Eps = 1e-9 * std::max(1.0, T.Makespan);

  // The receives that caused holds, with the longest hold each caused.
  llvm::DenseMap<uint64_t, uint32_t> ByRecv;
  std::vector<Culprit> Found;
  for (int32_t R = 0; R < int32_t(S.Ranks.size()); ++R) {
    const analysis::RankTimeline &TL = T.Times[R];
    for (uint32_t I = 0; I < TL.Held.size(); ++I) {
      if (!(TL.Held[I] > Eps) || TL.HeldBy[I] == NoRef)
        continue;
      int32_t CR = int32_t(TL.HeldBy[I] >> 32);
      uint32_t CI = uint32_t(TL.HeldBy[I]);
      if (!isRecv(S.Ranks[CR].Actions[CI].Kind))
        continue;
      auto [It, New] = ByRecv.try_emplace(TL.HeldBy[I], uint32_t(Found.size()));
      if (New) {
        Found.emplace_back();
        Found.back().Rank = CR;
        Found.back().Recv = CI;
      }
      Culprit &C = Found[It->second];
      ++C.Count;
      if (TL.Held[I] > C.Delay + Eps) {
        C.Delay = TL.Held[I];
        C.HeldRank = R;
        C.Held = I;
      }
    }
  }
  if (Found.empty())
    return;

  // Each culprit's consumer: the compute on its rank the receive serves.
  llvm::DenseMap<uint64_t, std::vector<uint32_t>> Wanted; // rank -> culprits
  for (uint32_t K = 0; K < Found.size(); ++K)
    Wanted[uint64_t(Found[K].Rank)].push_back(K);
  for (auto &[Rank, Ks] : Wanted) {
    const auto &Acts = S.Ranks[Rank].Actions;
    llvm::DenseMap<std::pair<uint64_t, uint64_t>, uint32_t> ComputeAt;
    for (uint32_t I = 0; I < Acts.size(); ++I) {
      const Action &A = Acts[I];
      if (!isCompute(A.Kind))
        continue;
      ActionKind RK = analysis::inputRecvKind(S.Topo, A);
      if (RK != ActionKind::Idle)
        ComputeAt.try_emplace(
            {uint64_t(RK),
             (uint64_t(uint32_t(A.Microbatch)) << 32) | uint32_t(A.Stage)},
            I);
    }
    for (uint32_t K : Ks) {
      const Action &Rv = Acts[Found[K].Recv];
      auto It = ComputeAt.find(
          {uint64_t(Rv.Kind),
           (uint64_t(uint32_t(Rv.Microbatch)) << 32) | uint32_t(Rv.Stage)});
      if (It != ComputeAt.end() && It->second > Found[K].Recv)
        Found[K].Consumer = It->second;
    }
  }

  // The makespan effect of the receives that hold back the most.
  std::vector<uint32_t> Order(Found.size());
  for (uint32_t K = 0; K < Found.size(); ++K)
    Order[K] = K;
  std::stable_sort(Order.begin(), Order.end(), [&](uint32_t A, uint32_t B) {
    return Found[A].Delay > Found[B].Delay;
  });
  std::string Model = commDescription(S.Comm, S.Stream);
  for (size_t Pos = 0; Pos < Order.size(); ++Pos) {
    const Culprit &C = Found[Order[Pos]];
    const auto &Acts = S.Ranks[C.Rank].Actions;
    std::string Effect;
    bool Report = true;
    if (C.Consumer == None) {
      Effect = "";
    } else if (Pos >= MaxTimedEarlyRecvs) {
      Effect = fmt::format("; its effect on the makespan was not measured "
                           "(only the {} receives that hold back the most "
                           "are)",
                           MaxTimedEarlyRecvs);
    } else {
      size_t To = deferredPosition(Acts, C.Recv, C.Consumer);
      if (To == C.Recv) {
        Effect = "; it cannot move later without passing another receive "
                 "from the same rank";
      } else {
        Schedule Moved = withMoved(S, C.Rank, C.Recv, To);
        analysis::Matching M = analysis::matchComms(Moved);
        analysis::DeadlockResult DR =
            analysis::checkDeadlock(Moved, M, S.Comm, S.Stream);
        if (!M.clean() || !DR.Free) {
          Effect = "; moved to its consumer it would deadlock, so the order "
                   "needs more than this one move (`ppsc lint --fix` "
                   "reorders the comms as a whole)";
        } else {
          analysis::TimingResult T2 = analysis::computeTiming(Moved, TO);
          double Gain = T.Makespan - T2.Makespan;
          if (T2.Deadlocked || !(Gain > Eps)) {
            Report = false; // the hold costs nothing in the end
          } else {
            Effect = fmt::format("; makespan +{} against the receive moved "
                                 "to its consumer ({} instead of {})",
                                 figureText(Gain), figureText(T2.Makespan),
                                 figureText(T.Makespan));
          }
        }
      }
    }
    if (!Report)
      continue;
    std::string Where =
        C.Consumer == None
            ? std::string()
            : fmt::format(", posted {} actions before {} needs it",
                          C.Consumer - C.Recv, describe(S, C.Rank, C.Consumer));
    std::string Others = C.Count > 1
                             ? fmt::format(" (and {} more operation{})",
                                           C.Count - 1, C.Count > 2 ? "s" : "")
                             : std::string();
    Diagnostic &D = Ctx.Diags.report(
        DiagKind::EarlyRecv, locOf(S, Acts[C.Recv]),
        fmt::format("{}{}, holds back {} by {}{} on its stream under the "
                    "{}{}",
                    describe(S, C.Rank, C.Recv), Where,
                    describe(S, C.HeldRank, C.Held), figureText(C.Delay),
                    Others, Model, Effect));
    double Start = T.Times[C.HeldRank].Start[C.Held];
    D.note(locOf(S, S.Ranks[C.HeldRank].Actions[C.Held]),
           fmt::format("{} is issued at {} and starts at {}, when the stream "
                       "ahead of it has drained",
                       describe(S, C.HeldRank, C.Held),
                       figureText(Start - C.Delay), figureText(Start)));
    if (C.Consumer != None)
      D.note(locOf(S, Acts[C.Consumer]),
             fmt::format("{} is here", describe(S, C.Rank, C.Consumer)));
  }
}

} // namespace

std::unique_ptr<Pass> createCommStreamsPass() {
  return std::make_unique<CommStreamsPass>();
}

} // namespace pps::passes
