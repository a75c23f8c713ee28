//===- FastPathsTest.cpp - the lint passes' fast paths against references -===//
//
// The passes take shortcuts for speed (docs/performance.md); each is
// checked here against a plain reference on every input the repository
// has: every stdlib schedule at several sizes, every .pps and .csv under
// stdlib/, examples/ and tests/, each also with zero costs (every unit
// ties, so the tie-breaks decide) and with a latency.
//
//  * insert-comms (the dependency timeline with its links made before the
//    worklist, a streaming merge) against a reference written the plain
//    way: units found by map lookups, each unit's producers looked up on
//    every visit of the same worklist, and every rank's new program made
//    by sorting all its units and pair events by key. The IR (actions and
//    locations) must be the same, and a cycle found by both.
//  * align-bubbles taking insert-comms' makespan (ComputeMakespan) instead
//    of timing the compute order again: the pipeline's makespan must be
//    what align-bubbles alone computes on the result.
//  * FIFO matching against a reference over a map of channels: partners,
//    peer problems and every channel's figures.
//
//===----------------------------------------------------------------------===//
#include "pps/analysis/Dependencies.h"
#include "pps/analysis/Matching.h"
#include "pps/frontend/Frontend.h"
#include "pps/import/TorchCsv.h"
#include "pps/passes/AlignBubbles.h"
#include "pps/passes/InsertComms.h"
#include "pps/pipeline/PassPipeline.h"
#include "pps/support/Parallel.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <tuple>

using namespace pps;
using ir::Action;
using ir::ActionKind;

namespace {

constexpr uint32_t None = ~uint32_t(0);

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

struct Input {
  std::string Name;
  ir::Schedule S;
};

std::vector<std::string> filesUnder(const std::string &Dir, const char *Ext) {
  std::vector<std::string> Out;
  std::error_code EC;
  for (llvm::sys::fs::recursive_directory_iterator It(Dir, EC), End;
       It != End && !EC; It.increment(EC))
    if (llvm::sys::path::extension(It->path()) == Ext)
      Out.push_back(It->path());
  std::sort(Out.begin(), Out.end());
  return Out;
}

frontend::FrontendOptions options() {
  frontend::FrontendOptions O;
  O.StdlibDir = PPS_SOURCE_DIR "/stdlib";
  return O;
}

/// Every schedule the repository's inputs compile to, and each with zero
/// costs and with a latency.
const std::vector<Input> &inputs() {
  static const std::vector<Input> All = [] {
    std::vector<Input> Out;
    auto Add = [&](const std::string &Name, std::optional<ir::Schedule> S) {
      if (!S)
        return;
      ir::Schedule Zero = *S, Late = *S;
      Zero.Cost.Default = ir::StageCost{0, 0, 0, 0};
      Zero.Cost.PerStage.clear();
      Zero.Cost.Overlap.reset();
      Zero.Cost.Latency = 0;
      Zero.Cost.BandwidthBytesPerMs = 0;
      Late.Cost.Latency = 0.25;
      Out.push_back({Name, std::move(*S)});
      Out.push_back({Name + " (zero costs)", std::move(Zero)});
      Out.push_back({Name + " (latency)", std::move(Late)});
    };
    const char *Schedules[][3] = {
        {"gpipe", "P", "loop"},
        {"one_f_one_b", "P", "loop"},
        {"interleaved_1f1b", "2 * P", "loop"},
        {"interleaved_1f1b_overlap", "2 * P", "loop"},
        {"looped_bfs", "2 * P", "loop"},
        {"zb_h1", "P", "loop"},
        {"zb_h2", "P", "loop"},
        {"zb_v", "2 * P", "v"},
        {"v_half", "2 * P", "v"},
        {"v_min", "2 * P", "v"},
        {"dualpipe_v", "2 * P", "v"},
        {"dualpipe", "2 * P", "v; directions 2"},
    };
    for (auto &N : Schedules)
      for (auto [P, M] : {std::pair{1, 1},
                          {2, 3},
                          {4, 8},
                          {4, 5},
                          {8, 16},
                          {3, 32},
                          {16, 7}}) {
        std::string Text =
            fmt::format("pipeline p {{ ranks {}; stages {} placement {}; "
                        "microbatches {}; schedule {}(); }}\n",
                        P, N[1], N[2], M, N[0]);
        SourceManager SM;
        DiagnosticEngine D(SM);
        Add(fmt::format("{} P={} M={}", N[0], P, M),
            frontend::compileBuffer("std.pps", Text, SM, D, options()));
      }
    for (const char *Dir : {"/stdlib", "/examples", "/tests"}) {
      for (const std::string &F :
           filesUnder(std::string(PPS_SOURCE_DIR) + Dir, ".pps")) {
        SourceManager SM;
        DiagnosticEngine D(SM);
        Add(F, frontend::compileFile(F, SM, D, options()));
      }
      for (const std::string &F :
           filesUnder(std::string(PPS_SOURCE_DIR) + Dir, ".csv")) {
        SourceManager SM;
        DiagnosticEngine D(SM);
        Add(F, import::importTorchCsvFile(F, SM, D, {}));
      }
    }
    return Out;
  }();
  return All;
}

//===----------------------------------------------------------------------===//
// Reference insert-comms
//===----------------------------------------------------------------------===//

bool inRange(const ir::Topology &T, const Action &A) {
  if (A.Kind == ActionKind::Idle)
    return true;
  if (A.Stage < 0 || A.Stage >= T.Stages)
    return false;
  if (ir::isControl(A.Kind))
    return true;
  return A.Microbatch >= 0 && A.Microbatch < T.Microbatches &&
         T.hasStage(A.Microbatch, A.Stage);
}

bool isUnitPair(const std::vector<Action> &Acts, size_t I) {
  return Acts[I].overlapsNext() && I + 1 < Acts.size() &&
         ir::isCompute(Acts[I + 1].Kind);
}

double clampCost(double C) { return std::isfinite(C) && C > 0 ? C : 0.0; }

/// The timeline the plain way: what insert-comms computed before its links
/// were made ahead of the worklist.
struct RefTimeline {
  // Units, rank by rank: the first action's index and the unit's length.
  std::vector<uint32_t> RankBase;
  std::vector<int32_t> UnitRank;
  std::vector<size_t> UnitAt;
  std::vector<unsigned> UnitLen;
  // (slot, microbatch, stage) -> unit * 2 + member; slot 0 F, 1 B or I.
  std::map<std::tuple<int, int32_t, int32_t>, uint32_t> Entry;
  bool Duplicates = false;
  std::vector<double> Start, End;
  std::vector<uint32_t> Seq;
  // Per unit member: the producer unit on another rank, or None.
  std::vector<uint32_t> Prod;
  double Makespan = 0;
  bool Ok = false;

  uint32_t lookup(int Slot, int32_t Mb, int32_t St) const {
    auto It = Entry.find({Slot, Mb, St});
    return It == Entry.end() ? None : It->second;
  }
  bool registered(const ir::Topology &T, const Action &A, uint32_t Unit,
                  unsigned J) const {
    if (!inRange(T, A))
      return false;
    if (A.Kind == ActionKind::F)
      return lookup(0, A.Microbatch, A.Stage) == Unit * 2 + J;
    if (A.Kind == ActionKind::B || A.Kind == ActionKind::I)
      return lookup(1, A.Microbatch, A.Stage) == Unit * 2 + J;
    return false;
  }
  /// The cross-rank producer entry of member J of Unit, or None.
  uint32_t producer(const ir::Schedule &S, uint32_t Unit, unsigned J) const {
    const ir::Topology &T = S.Topo;
    const Action &X = S.Ranks[size_t(UnitRank[Unit])].Actions[UnitAt[Unit] + J];
    if (Duplicates ? !registered(T, X, Unit, J) : !inRange(T, X))
      return None;
    schema::Producer Pr = analysis::producerOf(T, X);
    if (!Pr.CrossStage)
      return None;
    return lookup(Pr.What == schema::Needs::F ? 0 : 1, Pr.Mb, Pr.Stage);
  }

  void run(const ir::Schedule &S);
};

void RefTimeline::run(const ir::Schedule &S) {
  const ir::Topology &T = S.Topo;
  size_t NumRanks = S.Ranks.size();
  RankBase.assign(NumRanks + 1, 0);
  for (size_t R = 0; R < NumRanks; ++R) {
    RankBase[R] = uint32_t(UnitRank.size());
    const auto &Acts = S.Ranks[R].Actions;
    for (size_t I = 0; I < Acts.size();) {
      if (!ir::isCompute(Acts[I].Kind)) {
        ++I;
        continue;
      }
      unsigned Len = isUnitPair(Acts, I) ? 2 : 1;
      auto U = uint32_t(UnitRank.size());
      UnitRank.push_back(int32_t(R));
      UnitAt.push_back(I);
      UnitLen.push_back(Len);
      for (unsigned J = 0; J < Len; ++J) {
        const Action &A = Acts[I + J];
        if (A.Kind == ActionKind::W || !inRange(T, A))
          continue;
        auto [It, New] = Entry.try_emplace(
            {A.Kind == ActionKind::F ? 0 : 1, A.Microbatch, A.Stage},
            U * 2 + J);
        Duplicates |= !New;
      }
      I += Len;
    }
  }
  RankBase[NumRanks] = uint32_t(UnitRank.size());
  size_t N = UnitRank.size();
  Start.assign(N, 0);
  End.assign(N, -1);
  Seq.assign(N, 0);
  Prod.assign(N * 2, None);
  double MsgF = clampCost(S.Cost.messageTime(ActionKind::SendF));
  double MsgB = clampCost(S.Cost.messageTime(ActionKind::SendB));
  auto Cost = [&](uint32_t U) {
    const auto &Acts = S.Ranks[size_t(UnitRank[U])].Actions;
    const Action &A = Acts[UnitAt[U]];
    double C = clampCost(S.Cost.computeCost(A.Kind, A.Stage));
    if (UnitLen[U] == 1)
      return C;
    if (S.Cost.Overlap)
      return clampCost(*S.Cost.Overlap);
    const Action &B = Acts[UnitAt[U] + 1];
    return C + clampCost(S.Cost.computeCost(B.Kind, B.Stage));
  };
  std::vector<uint32_t> Next(NumRanks), WaitFor(NumRanks, None);
  std::vector<double> Time(NumRanks, 0);
  std::vector<std::vector<int32_t>> Waiters(NumRanks);
  std::vector<bool> Listed(NumRanks, true);
  std::vector<int32_t> Work;
  for (size_t R = NumRanks; R-- > 0;)
    Work.push_back(int32_t(R));
  uint32_t Counter = 0;
  while (!Work.empty()) {
    int32_t R = Work.back();
    Work.pop_back();
    Listed[size_t(R)] = false;
    for (uint32_t U = RankBase[size_t(R)] + Next[size_t(R)];
         U < RankBase[size_t(R) + 1]; ++U, ++Next[size_t(R)]) {
      double Ready = Time[size_t(R)];
      bool Blocked = false;
      for (unsigned J = 0; J < UnitLen[U] && !Blocked; ++J) {
        uint32_t E = producer(S, U, J);
        uint32_t P = E == None ? None : E >> 1;
        if (P == None || UnitRank[P] == R)
          continue;
        if (End[P] < 0) {
          WaitFor[size_t(R)] = P;
          Waiters[size_t(UnitRank[P])].push_back(R);
          Blocked = true;
          continue;
        }
        const Action &X = S.Ranks[size_t(R)].Actions[UnitAt[U] + J];
        Ready =
            std::max(Ready, End[P] + (X.Kind == ActionKind::F ? MsgF : MsgB));
      }
      if (Blocked)
        break;
      for (unsigned J = 0; J < UnitLen[U]; ++J) {
        uint32_t E = producer(S, U, J);
        if (E != None && UnitRank[E >> 1] != R)
          Prod[size_t(U) * 2 + J] = E >> 1;
      }
      WaitFor[size_t(R)] = None;
      Start[U] = Ready;
      End[U] = Ready + Cost(U);
      Seq[U] = Counter++;
      Time[size_t(R)] = End[U];
      auto &Ws = Waiters[size_t(R)];
      for (size_t K = 0; K < Ws.size();) {
        int32_t W = Ws[K];
        if (WaitFor[size_t(W)] != U) {
          ++K;
          continue;
        }
        Ws[K] = Ws.back();
        Ws.pop_back();
        if (!Listed[size_t(W)]) {
          Listed[size_t(W)] = true;
          Work.push_back(W);
        }
      }
    }
  }
  Ok = true;
  for (size_t R = 0; R < NumRanks; ++R) {
    Makespan = std::max(Makespan, Time[R]);
    Ok &= RankBase[R] + Next[R] == RankBase[R + 1];
  }
}

/// A key of the global order (see InsertComms.cpp); After orders the
/// non-compute actions that follow a unit.
using Key = std::tuple<double, uint32_t, uint32_t, uint32_t, uint32_t>;

/// The programs insert-comms writes, by sorting every rank's units and pair
/// events by key; std::nullopt if the compute order is stuck.
std::optional<std::vector<std::vector<Action>>>
referenceInsert(const ir::Schedule &S) {
  RefTimeline TL;
  TL.run(S);
  if (!TL.Ok)
    return std::nullopt;
  const ir::Topology &T = S.Topo;
  size_t NumRanks = S.Ranks.size();
  std::vector<std::vector<std::pair<Key, Action>>> Items(NumRanks);
  auto UnitKey = [&](uint32_t U, uint32_t After) {
    return Key{TL.Start[U], 1, TL.Seq[U], 2, After};
  };
  auto PairKey = [&](uint32_t P, uint32_t C, uint32_t J) {
    return Key{TL.Start[C], TL.Start[P] < TL.Start[C] ? 0u : 1u, TL.Seq[C], J,
               0};
  };
  for (size_t R = 0; R < NumRanks; ++R) {
    const auto &Acts = S.Ranks[R].Actions;
    uint32_t Unit = TL.RankBase[R];
    uint32_t After = 0;
    Key Last{-1.0, 0, 0, 0, 0};
    for (size_t I = 0; I < Acts.size(); ++I) {
      if (!ir::isCompute(Acts[I].Kind)) {
        // Written where it is: right after the unit before it.
        Key K = Last;
        std::get<4>(K) = ++After;
        Items[R].push_back({K, Acts[I]});
        continue;
      }
      Last = UnitKey(Unit, 0);
      After = 0;
      unsigned Len = TL.UnitLen[Unit];
      for (unsigned J = 0; J < Len; ++J) {
        Key K = Last;
        std::get<4>(K) = J; // the members stay in order
        Items[R].push_back({K, Acts[I + J]});
      }
      After = Len;
      for (unsigned J = 0; J < Len; ++J) {
        uint32_t P = TL.Prod[size_t(Unit) * 2 + J];
        if (P == None)
          continue;
        const Action &X = Acts[I + J];
        // The receive on this rank, the send on the producer's (from the
        // member that produces).
        Items[R].push_back(
            {PairKey(P, Unit, J),
             Action::comm(analysis::inputRecvKind(T, X), X.Microbatch, X.Stage,
                          TL.UnitRank[P], X.Loc)});
        uint32_t Member = TL.producer(S, Unit, J) & 1;
        auto Q = size_t(TL.UnitRank[P]);
        const Action &Y = S.Ranks[Q].Actions[TL.UnitAt[P] + Member];
        Items[Q].push_back(
            {PairKey(P, Unit, J),
             Action::comm(analysis::outputSendKind(T, Y), Y.Microbatch, Y.Stage,
                          int32_t(R), Y.Loc)});
      }
      I += Len - 1;
      ++Unit;
    }
  }
  std::vector<std::vector<Action>> Out(NumRanks);
  for (size_t R = 0; R < NumRanks; ++R) {
    std::stable_sort(
        Items[R].begin(), Items[R].end(),
        [](const auto &A, const auto &B) { return A.first < B.first; });
    for (auto &[K, A] : Items[R])
      Out[R].push_back(A);
  }
  return Out;
}

std::string describeDiff(const std::vector<Action> &Got,
                         const std::vector<Action> &Want) {
  size_t I = 0;
  while (I < Got.size() && I < Want.size() && Got[I].sameAs(Want[I]) &&
         Got[I].Loc == Want[I].Loc)
    ++I;
  return fmt::format("{} vs {} actions, first difference at {}: {} vs {}",
                     Got.size(), Want.size(), I,
                     I < Got.size() ? ir::actionText(Got[I]) : "(end)",
                     I < Want.size() ? ir::actionText(Want[I]) : "(end)");
}

//===----------------------------------------------------------------------===//
// Reference matching
//===----------------------------------------------------------------------===//

analysis::Matching referenceMatching(const ir::Schedule &S) {
  using analysis::PeerProblem;
  analysis::Matching M;
  M.Ids.build(S);
  M.Partner.assign(M.Ids.size(), analysis::NoAction);
  M.Peer.assign(M.Ids.size(), PeerProblem::None);
  auto NumRanks = int32_t(S.Ranks.size());
  const ir::Topology &T = S.Topo;
  bool Placed = int32_t(T.StageToRank.size()) == T.Stages;
  std::map<std::pair<int32_t, int32_t>, size_t> Index;
  std::vector<std::deque<uint32_t>> Sends;
  auto Channel = [&](int32_t Src, int32_t Dst) {
    auto [It, New] = Index.try_emplace({Src, Dst}, M.Channels.size());
    if (New) {
      M.Channels.emplace_back();
      M.Channels.back().Src = Src;
      M.Channels.back().Dst = Dst;
      Sends.emplace_back();
    }
    return It->second;
  };
  for (int32_t R = 0; R < NumRanks; ++R)
    for (size_t I = 0; I < S.Ranks[size_t(R)].Actions.size(); ++I) {
      const Action &A = S.Ranks[size_t(R)].Actions[I];
      if (!ir::isComm(A.Kind))
        continue;
      int32_t PS = schema::partnerStage(A.Kind, A.Stage);
      PeerProblem P = PeerProblem::None;
      if (A.Peer < 0 || A.Peer >= NumRanks)
        P = PeerProblem::NoSuchRank;
      else if (A.Peer == R)
        P = PeerProblem::Self;
      else if (Placed && A.Stage >= 0 && A.Stage < T.Stages && PS >= 0 &&
               PS < T.Stages && T.StageToRank[size_t(PS)] != A.Peer)
        P = PeerProblem::WrongPeer;
      M.Peer[M.Ids.gid(R, I)] = P;
      if (P != PeerProblem::NoSuchRank && ir::isSend(A.Kind))
        Sends[Channel(R, A.Peer)].push_back(M.Ids.gid(R, I));
    }
  std::vector<uint32_t> Taken(Sends.size(), 0);
  for (int32_t R = 0; R < NumRanks; ++R)
    for (size_t I = 0; I < S.Ranks[size_t(R)].Actions.size(); ++I) {
      const Action &A = S.Ranks[size_t(R)].Actions[I];
      uint32_t G = M.Ids.gid(R, I);
      if (!ir::isRecv(A.Kind) || M.Peer[G] == PeerProblem::NoSuchRank)
        continue;
      size_t Ch = Channel(A.Peer, R);
      analysis::ChannelMatch &CM = M.Channels[Ch];
      uint32_t Ord = CM.Recvs++;
      Taken.resize(Sends.size(), 0);
      if (Ord >= Sends[Ch].size()) {
        if (M.Peer[G] == PeerProblem::None && CM.LooseCount++ == 0)
          CM.FirstLoose = G;
        continue;
      }
      uint32_t Sd = Sends[Ch][Ord];
      M.Partner[G] = Sd;
      M.Partner[Sd] = G;
      const Action &SA = S.Ranks[size_t(A.Peer)].Actions[M.Ids.indexOf(Sd)];
      if (!schema::commsMatch(SA.Kind, SA.Microbatch, SA.Stage, A.Kind,
                              A.Microbatch, A.Stage) &&
          CM.BadCount++ == 0) {
        CM.FirstBad = G;
        CM.BadOrdinal = Ord;
      }
    }
  for (size_t Ch = 0; Ch < M.Channels.size(); ++Ch) {
    analysis::ChannelMatch &CM = M.Channels[Ch];
    CM.Sends = uint32_t(Sends[Ch].size());
    for (size_t K = CM.Recvs; K < Sends[Ch].size(); ++K)
      if (M.Peer[Sends[Ch][K]] == PeerProblem::None && CM.LooseCount++ == 0)
        CM.FirstLoose = Sends[Ch][K];
  }
  return M;
}

} // namespace

TEST(FastPaths, InsertCommsEqualsTheSortedReference) {
  const auto &All = inputs();
  ASSERT_GE(All.size(), 300u);
  size_t Compared = 0, Stuck = 0;
  for (const Input &In : All) {
    const ir::Schedule &S = In.S;
    const ir::Topology &T = S.Topo;
    if (S.hasComms() || T.Stages <= 0 || T.Microbatches <= 0 ||
        int32_t(S.Ranks.size()) != T.Ranks ||
        int32_t(T.StageToRank.size()) != T.Stages)
      continue;
    ir::Schedule Got = S;
    SourceManager SM;
    DiagnosticEngine D(SM);
    passes::PassContext Ctx{D, {}};
    Ctx.MaxActions = uint64_t(1) << 30; // the inputs that test the limit
    passes::createInsertCommsPass()->run(Got, Ctx);
    auto Want = referenceInsert(S);
    if (!Want) {
      EXPECT_TRUE(D.has(DiagKind::Deadlock)) << In.Name;
      ++Stuck;
      continue;
    }
    EXPECT_FALSE(D.hasErrors()) << In.Name;
    for (size_t R = 0; R < S.Ranks.size(); ++R) {
      const auto &G = Got.Ranks[R].Actions;
      const auto &W = (*Want)[R];
      bool Same = G.size() == W.size() &&
                  std::equal(G.begin(), G.end(), W.begin(),
                             [](const Action &A, const Action &B) {
                               return A.sameAs(B) && A.Loc == B.Loc;
                             });
      EXPECT_TRUE(Same) << In.Name << ", rank " << R << ": "
                        << describeDiff(G, W);
    }
    ++Compared;
  }
  EXPECT_GE(Compared, 250u);
  EXPECT_GE(Stuck, 1u);
}

TEST(FastPaths, AlignBubblesTakesTheMakespanInsertCommsComputed) {
  size_t Compared = 0;
  for (const Input &In : inputs()) {
    ir::Schedule S = In.S;
    SourceManager SM;
    DiagnosticEngine D(SM);
    passes::PassManager PM;
    pipeline::PipelineConfig Config;
    Config.Until = pipeline::Goal::Check;
    pipeline::addPasses(PM, S, Config);
    passes::PassContext Ctx{D, {}};
    if (!PM.run(S, Ctx) || Ctx.Results.CommsInserted == 0)
      continue;
    // align-bubbles on its own times the result from scratch.
    SourceManager SM2;
    DiagnosticEngine D2(SM2);
    passes::PassContext Fresh{D2, {}};
    passes::createAlignBubblesPass({/*Insert=*/false})->run(S, Fresh);
    EXPECT_EQ(Ctx.Results.Makespan, Fresh.Results.Makespan) << In.Name;
    EXPECT_EQ(D.has(DiagKind::IdleWithReadyWork),
              D2.has(DiagKind::IdleWithReadyWork))
        << In.Name;
    ++Compared;
  }
  EXPECT_GE(Compared, 200u);
}

void expectSameMatching(const analysis::Matching &Got,
                        const analysis::Matching &Want,
                        const std::string &Name) {
  EXPECT_EQ(Got.Partner, Want.Partner) << Name;
  EXPECT_EQ(Got.Peer, Want.Peer) << Name;
  ASSERT_EQ(Got.Channels.size(), Want.Channels.size()) << Name;
  for (size_t C = 0; C < Got.Channels.size(); ++C) {
    const analysis::ChannelMatch &G = Got.Channels[C], &W = Want.Channels[C];
    EXPECT_EQ(std::tie(G.Src, G.Dst, G.Sends, G.Recvs, G.FirstBad, G.BadOrdinal,
                       G.BadCount, G.FirstLoose, G.LooseCount),
              std::tie(W.Src, W.Dst, W.Sends, W.Recvs, W.FirstBad, W.BadOrdinal,
                       W.BadCount, W.FirstLoose, W.LooseCount))
        << Name << ", channel " << C;
  }
}

TEST(FastPaths, MatchingEqualsTheMapReference) {
  size_t Compared = 0;
  for (const Input &In : inputs()) {
    // The schedules as lint matches them: with the comms insert-comms
    // writes when they have none.
    ir::Schedule S = In.S;
    SourceManager SM;
    DiagnosticEngine D(SM);
    passes::PassContext Ctx{D, {}};
    Ctx.MaxActions = uint64_t(1) << 30;
    passes::createInsertCommsPass()->run(S, Ctx);
    expectSameMatching(analysis::matchComms(S), referenceMatching(S), In.Name);
    ++Compared;
  }
  EXPECT_GE(Compared, 300u);
}

// Big schedules are matched rank by rank on a few threads: the channels
// must come out numbered, and every finding counted, as one walk over the
// ranks would. Edits make mismatched pairs, unmatched operations, channels
// only receives use, self comms and peers out of range.
TEST(FastPaths, MatchingOnThreadsEqualsTheMapReference) {
  SourceManager SM;
  DiagnosticEngine D(SM);
  std::optional<ir::Schedule> Base = frontend::compileBuffer(
      "big.pps",
      "pipeline p { ranks 16; stages 2 * P; microbatches 1100; "
      "schedule interleaved_1f1b(); }\n",
      SM, D, options());
  ASSERT_TRUE(Base);
  passes::PassContext Ctx{D, {}};
  passes::createInsertCommsPass()->run(*Base, Ctx);
  ASSERT_FALSE(D.hasErrors());
  ASSERT_GT(threadsForActions(Base->numActions()), 1u)
      << "the schedule is big enough for the threads (PPS_THREADS=1?)";
  auto NumRanks = int32_t(Base->Ranks.size());
  expectSameMatching(analysis::matchComms(*Base), referenceMatching(*Base),
                     "unedited");
  std::mt19937 Rng(18);
  for (int Round = 0; Round < 12; ++Round) {
    ir::Schedule S = *Base;
    for (int Edit = 0; Edit < 1 + Round % 4; ++Edit) {
      auto R = size_t(Rng() % uint32_t(NumRanks));
      auto &Acts = S.Ranks[R].Actions;
      size_t I = Rng() % Acts.size();
      while (I < Acts.size() && !ir::isComm(Acts[I].Kind))
        ++I;
      if (I == Acts.size())
        continue;
      switch ((Round + Edit) % 5) {
      case 0: // swap with the next comm: a FIFO mismatch
        for (size_t J = I + 1; J < Acts.size(); ++J)
          if (ir::isComm(Acts[J].Kind) && Acts[J].Peer == Acts[I].Peer) {
            std::swap(Acts[I], Acts[J]);
            break;
          }
        break;
      case 1: // dropped: its partner is unmatched
        Acts.erase(Acts.begin() + ptrdiff_t(I));
        break;
      case 2: // a receive from a rank that never sends here
        Acts.insert(Acts.begin() + ptrdiff_t(I),
                    ir::Action::comm(ir::ActionKind::RecvF, 0, 0,
                                     int32_t(R + 3) % NumRanks, {}));
        break;
      case 3: // to itself
        Acts[I].Peer = int32_t(R);
        break;
      case 4: // to no rank
        Acts[I].Peer = NumRanks + 1;
        break;
      }
    }
    expectSameMatching(analysis::matchComms(S), referenceMatching(S),
                       fmt::format("round {}", Round));
  }
}
