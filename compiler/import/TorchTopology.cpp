//===- TorchTopology.cpp - sizes, stage placement and peers of a CSV ------===//
//
// Phase two of the import: the sizes (within the front end's limits), the
// stage -> rank map read off where each stage's actions are (named loop or
// v when it is one), and the peer of every comm action from that map.
//
//===----------------------------------------------------------------------===//
#include "TorchCsvImpl.h"

#include "pps/frontend/Limits.h"
#include "pps/import/TorchNames.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <fmt/format.h>

#include <algorithm>

namespace pps::import {

using namespace ir;
using frontend::MaxMicrobatches;
using frontend::MaxRanks;
using frontend::MaxStages;

bool TopologyBuilder::run(Topology &T) {
  return sizes(T) && placeStages(T) && everyRankHoldsAStage(T) &&
         resolvePeers(T);
}

bool TopologyBuilder::sizes(Topology &T) {
  int32_t MaxStage = -1, MaxMb = -1;
  LocId MaxStageLoc = NoLoc, MaxMbLoc = NoLoc;
  for (const auto &Row : Rows)
    for (const Action &A : Row) {
      if (A.Stage > MaxStage) {
        MaxStage = A.Stage;
        MaxStageLoc = A.Loc;
      }
      if (A.Microbatch > MaxMb) {
        MaxMb = A.Microbatch;
        MaxMbLoc = A.Loc;
      }
    }
  if (MaxStage < 0) {
    Diags.report(DiagKind::NoPipeline, DeclLoc,
                 "the file holds no action; a schedule CSV has one row of "
                 "actions per rank, such as 0F0,0F1,0B0,0B1");
    return false;
  }
  bool Ok = true;
  T.Ranks = int32_t(Rows.size());
  if (Opts.Ranks) {
    if (*Opts.Ranks < T.Ranks) {
      Diags.report(DiagKind::OutOfRange, DeclLoc,
                   fmt::format("the file has {} rows (one per rank) but "
                               "--ranks is {}",
                               T.Ranks, *Opts.Ranks));
      Ok = false;
    }
    T.Ranks = std::max(T.Ranks, *Opts.Ranks);
  }
  T.Stages = Opts.Stages ? *Opts.Stages : MaxStage + 1;
  // A file of control actions alone still has one microbatch.
  T.Microbatches =
      Opts.Microbatches ? *Opts.Microbatches : std::max(MaxMb + 1, 1);
  if (T.Stages <= 0 || T.Microbatches <= 0) {
    Diags.report(DiagKind::InvalidValue, DeclLoc,
                 "--stages and --microbatches must be positive");
    return false;
  }
  auto TooMany = [&](int64_t N, int64_t Max, const char *What, LocId Loc) {
    if (N <= Max)
      return false;
    Diags.report(DiagKind::OutOfRange, Loc,
                 fmt::format("{} {} are too many (at most {})", N, What, Max));
    return true;
  };
  if (TooMany(T.Ranks, MaxRanks, "ranks", DeclLoc) ||
      TooMany(T.Stages, MaxStages, "stages",
              Opts.Stages ? DeclLoc : MaxStageLoc) ||
      TooMany(T.Microbatches, MaxMicrobatches, "microbatches",
              Opts.Microbatches ? DeclLoc : MaxMbLoc))
    return false;
  // Report each out-of-range index once per kind of overflow.
  bool StageReported = false, MbReported = false;
  for (const auto &Row : Rows)
    for (const Action &A : Row) {
      if (A.Stage >= T.Stages && !StageReported) {
        Diags.report(DiagKind::OutOfRange, A.Loc,
                     fmt::format("stage {} is out of range: the pipeline has "
                                 "{} stages (--stages)",
                                 A.Stage, T.Stages));
        StageReported = true;
        Ok = false;
      }
      if (A.Microbatch >= T.Microbatches && !MbReported) {
        Diags.report(DiagKind::OutOfRange, A.Loc,
                     fmt::format("microbatch {} is out of range: the pipeline "
                                 "has {} microbatches (--microbatches)",
                                 A.Microbatch, T.Microbatches));
        MbReported = true;
        Ok = false;
      }
    }
  return Ok;
}

bool TopologyBuilder::placeStages(Topology &T) {
  // Where each stage was first seen, from computes first (they decide),
  // then from comm and control actions (which name a local stage too).
  llvm::SmallVector<int32_t, 16> RankOf(T.Stages, -1);
  llvm::SmallVector<LocId, 16> FirstLoc(T.Stages, NoLoc);
  llvm::SmallVector<bool, 16> Reported(T.Stages, false);
  bool Ok = true;
  for (bool ComputePass : {true, false})
    for (int32_t R = 0; R < int32_t(Rows.size()); ++R)
      for (const Action &A : Rows[R]) {
        if (A.Kind == ActionKind::Idle || isCompute(A.Kind) != ComputePass)
          continue;
        int32_t S = A.Stage;
        if (RankOf[S] < 0) {
          RankOf[S] = R;
          FirstLoc[S] = A.Loc;
          continue;
        }
        if (RankOf[S] == R || Reported[S])
          continue;
        Reported[S] = true;
        Ok = false;
        Diags
            .report(DiagKind::StagePlacement, A.Loc,
                    fmt::format("stage {} appears on rank {} here and on rank "
                                "{} elsewhere; a stage lives on one rank",
                                S, R, RankOf[S]))
            .note(FirstLoc[S],
                  fmt::format("stage {} is placed on rank {} by this action", S,
                              RankOf[S]));
      }
  if (!Ok)
    return false;

  if (Opts.Place) {
    Topology Want = T;
    if (!Want.place(*Opts.Place)) {
      Diags.report(DiagKind::InvalidValue, DeclLoc,
                   fmt::format("{} placement needs the stages ({}) to be a "
                               "multiple of the ranks ({})",
                               placementName(*Opts.Place).str(), T.Stages,
                               T.Ranks));
      return false;
    }
    for (int32_t S = 0; S < T.Stages; ++S) {
      if (RankOf[S] < 0 || RankOf[S] == Want.StageToRank[S])
        continue;
      Diags.report(DiagKind::StagePlacement, FirstLoc[S],
                   fmt::format("stage {} is on rank {}, but {} placement puts "
                               "it on rank {}",
                               S, RankOf[S], placementName(*Opts.Place).str(),
                               Want.StageToRank[S]));
      Ok = false;
    }
    if (Ok)
      T = Want;
    return Ok;
  }

  // One diagnostic for all unplaced stages (there may be many).
  int32_t Unplaced = llvm::count(RankOf, -1);
  if (Unplaced) {
    int32_t First = int32_t(llvm::find(RankOf, -1) - RankOf.begin());
    Diags.report(DiagKind::StagePlacement, DeclLoc,
                 fmt::format("stage {}{} has no action on any rank; give "
                             "--placement loop or v to place it",
                             First,
                             Unplaced > 1 ? fmt::format(" (and {} more stages)",
                                                        Unplaced - 1)
                                          : ""));
    return false;
  }
  // Name the placement when it is a standard one (loop wins when both fit,
  // e.g. one stage per rank).
  for (Placement P : {Placement::Loop, Placement::V}) {
    Topology Candidate = T;
    if (Candidate.place(P) && llvm::equal(Candidate.StageToRank, RankOf)) {
      T = Candidate;
      return true;
    }
  }
  T.Place = Placement::Explicit;
  T.StageToRank.assign(RankOf.begin(), RankOf.end());
  return true;
}

// The language's rule (a pipeline's every rank holds a stage): a CSV with
// more rows or --ranks than stages has no .pps form, so the import, which
// `ppsc import` prints as .pps, is refused the way the front end refuses it.
bool TopologyBuilder::everyRankHoldsAStage(const Topology &T) {
  llvm::SmallVector<bool, 16> Holds(T.Ranks, false);
  for (int32_t R : T.StageToRank)
    if (R >= 0 && R < T.Ranks)
      Holds[R] = true;
  const bool *Empty = llvm::find(Holds, false);
  if (Empty == Holds.end())
    return true;
  Diags.report(DiagKind::StagePlacement, DeclLoc,
               fmt::format("rank {} holds no stage ({} stages on {} ranks)",
                           Empty - Holds.begin(), T.Stages, T.Ranks));
  return false;
}

bool TopologyBuilder::resolvePeers(const Topology &T) {
  bool Ok = true;
  for (auto &Row : Rows)
    for (Action &A : Row) {
      if (!isComm(A.Kind))
        continue;
      // The schema's partner rule, as PyTorch's _add_send_recv has it:
      // SEND_F(s) -> s+1, RECV_F(s) <- s-1, SEND_B(s) -> s-1, RECV_B(s) <- s+1.
      int32_t Partner = schema::partnerStage(A.Kind, A.Stage);
      if (Partner < 0 || Partner >= T.Stages) {
        Diags.report(DiagKind::OutOfRange, A.Loc,
                     fmt::format("{} has no partner: stage {} does not exist "
                                 "({} stages)",
                                 torchActionName(A), Partner, T.Stages));
        Ok = false;
        continue;
      }
      A.Peer = T.StageToRank[Partner];
    }
  return Ok;
}

} // namespace pps::import
