//===- VerifyDeps.cpp - verify-deps: completeness and data dependencies ---===//
//
// Three linear sweeps over a table indexed by (microbatch, stage):
//  1. register every compute and comm at its global position, reporting
//     out-of-range, stray and duplicate actions;
//  2. completeness per (microbatch, stage);
//  3. per rank, each compute's same-rank producers, and (when the schedule
//     has comms) the recv before and the send after each cross-rank edge.
//
// Work and memory are bounded by the actions present, not by the sizes
// declared: the table is a flat array when stages x microbatches is within
// a small multiple of the actions, and a hash of the cells that occur
// otherwise (a one-line file may declare 65536 ranks and 16M
// microbatches); the completeness sweep visits cells in order and stops
// listing missing actions at the error limit, counting the rest from the
// totals instead of formatting them.
//
// Sweeps 1 and 3 are per rank (a rank registers and reads only the cells of
// its own stages): each rank is checked quietly first, on a few threads for
// big schedules, and only if one has a problem do the ranks run again one
// after the other to report, so what is reported is what one walk finds.
//
//===----------------------------------------------------------------------===//
#include "pps/passes/VerifyDeps.h"

#include "PassUtil.h"
#include "VerifyDepsImpl.h"
#include "pps/analysis/Dependencies.h"
#include "pps/support/Parallel.h"

#include <fmt/format.h>

#include <algorithm>

namespace pps::passes {

using namespace ir;
using namespace detail;

namespace {

enum Slot : unsigned {
  SF,
  SB,
  SI,
  SW,
  SSendF,
  SRecvF,
  SSendB,
  SRecvB,
  NumSlots
};

unsigned slotOf(ActionKind K) {
  switch (K) {
  case ActionKind::F:
    return SF;
  case ActionKind::B:
    return SB;
  case ActionKind::I:
    return SI;
  case ActionKind::W:
    return SW;
  case ActionKind::SendF:
    return SSendF;
  case ActionKind::RecvF:
    return SRecvF;
  case ActionKind::SendB:
    return SSendB;
  case ActionKind::RecvB:
    return SRecvB;
  default:
    return NumSlots;
  }
}

/// Missing actions listed one by one when no error limit is set; the rest
/// are summed up in one error.
constexpr uint64_t MaxMissingListed = 10000;

class Verifier {
public:
  Verifier(const Schedule &S, DiagnosticEngine &D) : S(S), T(S.Topo), D(D) {}
  bool run();

private:
  bool checkShape();
  void registerActions();
  void checkComplete();
  /// The errors checkComplete reports in all, from the registered cells.
  uint64_t completenessErrors() const;
  void checkRanks();
  /// Sweeps 1 and 3 on one rank. Report: report what is wrong; else stop
  /// at the first problem with false, reporting nothing.
  template <bool Report> bool registerRank(int32_t R);
  template <bool Report> bool checkRank(int32_t R);
  /// Runs Quiet(r) on every rank: true if none has a problem.
  template <typename Fn> bool allClean(const Fn &Quiet);
  void reportRange(int32_t R, size_t I);
  /// True if an error is past the limit: it is counted and not formatted.
  bool unshown() {
    if (!D.errorLimitReached())
      return false;
    D.countUnshownErrors(1);
    return true;
  }

  uint32_t gid(int32_t R, size_t I) const { return Base[R] + uint32_t(I); }
  size_t local(int32_t R, uint32_t G) const { return G - Base[R]; }
  std::string name(ActionKind K, int32_t Mb, int32_t Stage,
                   int32_t Peer = -1) const {
    return fmt::format(
        "`{}`", ir::actionText(Peer < 0 ? Action::compute(K, Mb, Stage)
                                        : Action::comm(K, Mb, Stage, Peer)));
  }
  LocId loc(int32_t R, size_t I) const {
    return locOf(S, S.Ranks[R].Actions[I]);
  }

  const Schedule &S;
  const Topology &T;
  DiagnosticEngine &D;
  bool HasComms = false;
  std::vector<uint32_t> Base;
  CellTable Cells; ///< each (slot, m, s)'s position, or None
};

bool Verifier::checkShape() {
  if (int32_t(S.Ranks.size()) != T.Ranks) {
    D.report(DiagKind::InvalidValue, S.DeclLoc,
             fmt::format("the schedule has {} rank programs but {} ranks",
                         S.Ranks.size(), T.Ranks));
    return false;
  }
  if (T.Stages <= 0 || T.Microbatches <= 0 || T.Ranks <= 0 ||
      int32_t(T.StageToRank.size()) != T.Stages) {
    D.report(DiagKind::InvalidValue, S.DeclLoc,
             fmt::format("the topology is incomplete: {} ranks, {} stages ({} "
                         "placed), {} microbatches",
                         T.Ranks, T.Stages, T.StageToRank.size(),
                         T.Microbatches));
    return false;
  }
  for (int32_t St = 0; St < T.Stages; ++St)
    if (T.StageToRank[St] < 0 || T.StageToRank[St] >= T.Ranks) {
      D.report(
          DiagKind::StagePlacement, S.DeclLoc,
          fmt::format("stage {} is placed on rank {}, which does not exist", St,
                      T.StageToRank[St]));
      return false;
    }
  return true;
}

void Verifier::reportRange(int32_t R, size_t I) {
  if (unshown())
    return;
  const Action &A = S.Ranks[R].Actions[I];
  std::string What =
      A.Stage < 0 || A.Stage >= T.Stages
          ? fmt::format("stage {} is out of range: the pipeline has {} stages",
                        A.Stage, T.Stages)
      : A.Microbatch >= 0 && A.Microbatch < T.Microbatches
          ? fmt::format(
                "microbatch {} does not traverse stage {}: its route is "
                "stages {}..{}",
                A.Microbatch, A.Stage, T.firstStage(A.Microbatch),
                T.lastStage(A.Microbatch))
          : fmt::format("microbatch {} is out of range: the pipeline has {} "
                        "microbatches",
                        A.Microbatch, T.Microbatches);
  D.report(DiagKind::OutOfRange, loc(R, I),
           fmt::format("{}: {}", describe(S, R, I), What));
}

/// The ranks are independent when nothing is wrong: a rank registers only
/// the actions of its own stages, and reads only those. So each rank is
/// first checked on its own, quietly and on a few threads (when the table
/// is a flat array: a hash would be shared); only if one has a problem do
/// the ranks run again, one after the other, to report exactly what a
/// single walk would, in its order and within the error limit.
template <typename Fn> bool Verifier::allClean(const Fn &Quiet) {
  unsigned Threads = Cells.dense() ? threadsForActions(Base.back()) : 1;
  std::vector<uint8_t> Clean(size_t(T.Ranks), 0);
  parallelFor(size_t(T.Ranks), Threads,
              [&](size_t R, unsigned) { Clean[R] = Quiet(int32_t(R)); });
  return std::all_of(Clean.begin(), Clean.end(), [](uint8_t C) { return C; });
}

void Verifier::registerActions() {
  auto Init = [&] {
    Cells.init(T, HasComms ? unsigned(NumSlots) : unsigned(SSendF),
               Base.back());
  };
  Init();
  if (allClean([&](int32_t R) { return registerRank<false>(R); }))
    return;
  Init();
  for (int32_t R = 0; R < T.Ranks; ++R)
    registerRank<true>(R);
}

template <bool Report> bool Verifier::registerRank(int32_t R) {
  const auto &Acts = S.Ranks[R].Actions;
  for (size_t I = 0; I < Acts.size(); ++I) {
    const Action &A = Acts[I];
    if (A.Kind == ActionKind::Idle)
      continue;
    if (!inRange(T, A)) {
      if (!Report)
        return false;
      reportRange(R, I);
      continue;
    }
    if (T.rankOf(A.Stage) != R) {
      if (!Report)
        return false;
      if (unshown())
        continue;
      D.report(
          DiagKind::StrayAction, loc(R, I),
          fmt::format("{} is on rank {}, but stage {} is placed on rank {}",
                      describe(S, R, I), R, A.Stage, T.rankOf(A.Stage)));
      continue;
    }
    if (isControl(A.Kind))
      continue;
    if (isCompute(A.Kind)) {
      bool Second = I > 0 && Acts[I - 1].overlapsNext();
      if (A.overlapsNext() &&
          (Second || I + 1 >= Acts.size() || !isCompute(Acts[I + 1].Kind))) {
        if (!Report)
          return false;
        if (!unshown())
          D.report(DiagKind::InvalidValue, loc(R, I),
                   fmt::format("{} is marked to overlap with the next "
                               "action, but overlap joins exactly two "
                               "computes",
                               describe(S, R, I)));
      }
    }
    if (isComm(A.Kind) && A.Peer != R) {
      int32_t PS = partnerStage(A);
      if (PS < T.firstStage(A.Microbatch) || PS > T.lastStage(A.Microbatch)) {
        if (!Report)
          return false;
        if (unshown())
          continue;
        D.report(DiagKind::StrayAction, loc(R, I),
                 fmt::format("{} carries nothing: stage {} is the {} stage",
                             describe(S, R, I), A.Stage,
                             PS < 0 ? "first" : "last"));
        continue;
      }
      // A partner stage on this very rank needs no message: the deadlock
      // pass reports the comm as wrong-peer (it must work standalone).
      if (T.rankOf(PS) == R)
        continue;
    }
    uint32_t &P = Cells.at(slotOf(A.Kind), A.Microbatch, A.Stage);
    if (P != None) {
      if (!Report)
        return false;
      if (unshown())
        continue;
      size_t First = local(R, P);
      D.report(DiagKind::DuplicateAction, loc(R, I),
               fmt::format("{} appears twice on rank {}", describe(S, R, I), R))
          .note(loc(R, First),
                fmt::format("first as {}", describe(S, R, First)));
      continue;
    }
    P = gid(R, I);
  }
  return true;
}

uint64_t Verifier::completenessErrors() const {
  // Cells expected: each stage's microbatches (its route's).
  uint64_t Expected = 0;
  for (int32_t St = 0; St < T.Stages; ++St)
    for (int32_t Mb : {0, T.Microbatches - 1})
      if (T.hasStage(Mb, St)) {
        Expected += T.Directions == 2 ? uint64_t(T.Microbatches / 2)
                                      : uint64_t(T.Microbatches);
        break;
      }
  uint64_t WithF = 0, WithBack = 0, Extra = 0;
  Cells.forEachRow([&](const uint32_t *Row) {
    bool HasB = Row[SB] != None, HasI = Row[SI] != None, HasW = Row[SW] != None;
    WithF += Row[SF] != None;
    WithBack += HasB || HasI || HasW;
    // Both B and I/W: one error. Else I without W or W without I: one.
    Extra += (HasB && (HasI || HasW)) || (!HasB && HasI != HasW);
  });
  return (Expected - WithF) + (Expected - WithBack) + Extra;
}

void Verifier::checkComplete() {
  // Cells are visited in order and each missing action is one error; the
  // visit stops once the error limit is reached (or, with no limit, after
  // MaxMissingListed errors), so it costs the cells present plus the errors
  // listed, whatever the declared sizes.
  uint64_t Listed = 0;
  bool Capped = false;
  auto Stop = [&] {
    if (D.errorLimitReached())
      return true;
    Capped = !D.errorLimit() && Listed >= MaxMissingListed;
    return Capped;
  };
  auto Finish = [&] {
    uint64_t Rest = completenessErrors() - Listed;
    if (!Capped) {
      D.countUnshownErrors(Rest);
      return;
    }
    D.report(DiagKind::MissingAction, S.DeclLoc,
             fmt::format("{} more missing actions are not listed one by one "
                         "(the first {} are)",
                         Rest, MaxMissingListed));
  };
  for (int32_t St = 0; St < T.Stages; ++St) {
    // The microbatches whose route holds the stage: all, or one half.
    int32_t MLo = 0, MHi = T.Microbatches;
    if (T.Directions == 2) {
      bool Lower = St < T.Stages / 2;
      MLo = Lower ? 0 : T.Microbatches / 2;
      MHi = Lower ? T.Microbatches / 2 : T.Microbatches;
    }
    for (int32_t M = MLo; M < MHi; ++M) {
      if (!T.hasStage(M, St))
        continue;
      int32_t R = T.rankOf(St);
      uint32_t PF = Cells.get(SF, M, St), PB = Cells.get(SB, M, St),
               PI = Cells.get(SI, M, St), PW = Cells.get(SW, M, St);
      if (PF == None) {
        if (Stop())
          return Finish();
        ++Listed;
        D.report(DiagKind::MissingAction, S.DeclLoc,
                 fmt::format("{} is missing: rank {} never runs it",
                             name(ActionKind::F, M, St), R));
      }
      bool HasB = PB != None, HasI = PI != None, HasW = PW != None;
      if (HasB && (HasI || HasW)) {
        if (Stop())
          return Finish();
        ++Listed;
        uint32_t Other = HasI ? PI : PW;
        D.report(
            DiagKind::DuplicateAction, loc(R, local(R, std::max(Other, PB))),
            fmt::format("{} and {} both appear: the backward of microbatch "
                        "{} on stage {} is either B, or I and W",
                        name(ActionKind::B, M, St),
                        name(HasI ? ActionKind::I : ActionKind::W, M, St), M,
                        St));
        continue;
      }
      if (HasB || (HasI && HasW))
        continue;
      if (Stop())
        return Finish();
      ++Listed;
      if (!HasI && !HasW)
        D.report(DiagKind::MissingAction, S.DeclLoc,
                 fmt::format("{} (or {} and {}) is missing: rank {} never runs "
                             "the backward of microbatch {} on stage {}",
                             name(ActionKind::B, M, St),
                             name(ActionKind::I, M, St),
                             name(ActionKind::W, M, St), R, M, St));
      else
        D.report(
            DiagKind::MissingAction, loc(R, local(R, HasI ? PI : PW)),
            fmt::format("{} is missing: rank {} runs {} but not {}",
                        name(HasI ? ActionKind::W : ActionKind::I, M, St), R,
                        name(HasI ? ActionKind::I : ActionKind::W, M, St),
                        name(HasI ? ActionKind::W : ActionKind::I, M, St)));
    }
  }
}

void Verifier::checkRanks() {
  if (allClean([&](int32_t R) { return checkRank<false>(R); }))
    return;
  for (int32_t R = 0; R < T.Ranks; ++R)
    checkRank<true>(R);
}

template <bool Report> bool Verifier::checkRank(int32_t R) {
  const auto &Acts = S.Ranks[R].Actions;
  for (size_t I = 0; I < Acts.size(); ++I) {
    const Action &X = Acts[I];
    if (!isCompute(X.Kind) || !inRange(T, X) || T.rankOf(X.Stage) != R)
      continue;
    uint32_t G = gid(R, I);
    if (Cells.get(slotOf(X.Kind), X.Microbatch, X.Stage) != G)
      continue; // a duplicate, already reported
    bool Second = I > 0 && Acts[I - 1].overlapsNext();
    size_t UnitStart = Second ? I - 1 : I;
    size_t UnitEnd = X.overlapsNext() && I + 1 < Acts.size() ? I + 1 : I;
    int32_t M = X.Microbatch;
    bool IsF = X.Kind == ActionKind::F;

    // The producer (the schema's rule), when it runs on this rank.
    schema::Producer Pr = analysis::producerOf(T, X);
    uint32_t Prod = None;
    if (Pr.What != schema::Needs::Nothing && T.rankOf(Pr.Stage) == R) {
      switch (Pr.What) {
      case schema::Needs::F:
        Prod = Cells.get(SF, Pr.Mb, Pr.Stage);
        break;
      case schema::Needs::BorI:
        Prod = Cells.get(SB, Pr.Mb, Pr.Stage);
        if (Prod == None)
          Prod = Cells.get(SI, Pr.Mb, Pr.Stage);
        break;
      case schema::Needs::I:
        Prod = Cells.get(SI, Pr.Mb, Pr.Stage);
        break;
      case schema::Needs::Nothing:
        break;
      }
    }
    if (Prod != None) {
      size_t PI = local(R, Prod);
      bool Overlapped = PI >= UnitStart && PI <= UnitEnd;
      if (!Report && (Overlapped || PI > I))
        return false;
      if ((Overlapped || PI > I) && unshown()) {
        // counted, not formatted
      } else if (Overlapped)
        D.report(DiagKind::DependencyOrder, loc(R, I),
                 fmt::format("{} is overlapped with {}, which it needs",
                             describe(S, R, I), describe(S, R, PI)));
      else if (PI > I)
        D.report(DiagKind::DependencyOrder, loc(R, I),
                 fmt::format("{} runs before {}, which it needs",
                             describe(S, R, I), describe(S, R, PI)))
            .note(loc(R, PI), fmt::format("{} is here", describe(S, R, PI)));
    }
    if (!HasComms)
      continue;

    // The receive feeding this compute from another rank.
    if (Pr.CrossStage && T.rankOf(Pr.Stage) != R) {
      int32_t From = T.rankOf(Pr.Stage);
      ActionKind RK = analysis::inputRecvKind(T, X);
      uint32_t Rv = Cells.get(slotOf(RK), X.Microbatch, X.Stage);
      if (!Report && (Rv == None || local(R, Rv) > UnitStart))
        return false;
      if ((Rv == None || local(R, Rv) > UnitStart) && unshown()) {
        // counted, not formatted
      } else if (Rv == None) {
        D.report(
            DiagKind::MissingComm, loc(R, I),
            fmt::format(
                "{} on rank {} needs {} from rank {}, but no {} carries it",
                describe(S, R, I), R,
                name(IsF ? ActionKind::F : ActionKind::B, M, Pr.Stage), From,
                name(RK, M, X.Stage, From)));
      } else if (local(R, Rv) > UnitStart) {
        D.report(DiagKind::DependencyOrder, loc(R, local(R, Rv)),
                 fmt::format("{} comes after {}, which needs it",
                             describe(S, R, local(R, Rv)), describe(S, R, I)))
            .note(loc(R, I), fmt::format("{} is here", describe(S, R, I)));
      }
    }
    // The send carrying this compute's output to another rank.
    int32_t Cs = analysis::consumerStage(T, X);
    if (Cs >= 0 && T.rankOf(Cs) != R) {
      int32_t To = T.rankOf(Cs);
      ActionKind SK = analysis::outputSendKind(T, X);
      uint32_t Sd = Cells.get(slotOf(SK), X.Microbatch, X.Stage);
      if (!Report && (Sd == None || local(R, Sd) < UnitEnd))
        return false;
      if ((Sd == None || local(R, Sd) < UnitEnd) && unshown()) {
        // counted, not formatted
      } else if (Sd == None) {
        D.report(DiagKind::MissingComm, loc(R, I),
                 fmt::format(
                     "{} on rank {} feeds {} on rank {}, but no {} carries it",
                     describe(S, R, I), R,
                     name(IsF ? ActionKind::F : ActionKind::B, M, Cs), To,
                     name(SK, M, X.Stage, To)));
      } else if (local(R, Sd) < UnitEnd) {
        D.report(DiagKind::DependencyOrder, loc(R, local(R, Sd)),
                 fmt::format("{} comes before {}, whose output it carries",
                             describe(S, R, local(R, Sd)), describe(S, R, I)))
            .note(loc(R, I), fmt::format("{} is here", describe(S, R, I)));
      }
    }
  }
  return true;
}

bool Verifier::run() {
  uint64_t Before = D.numErrors();
  if (!checkShape())
    return false;
  HasComms = S.hasComms();
  Base.resize(S.Ranks.size() + 1);
  uint32_t N = 0;
  for (size_t R = 0; R < S.Ranks.size(); ++R) {
    Base[R] = N;
    N += uint32_t(S.Ranks[R].Actions.size());
  }
  Base.back() = N;
  registerActions();
  checkComplete();
  checkRanks();
  return D.numErrors() == Before;
}

class VerifyDepsPass : public AnalysisPass {
public:
  llvm::StringRef name() const override { return "verify-deps"; }
  llvm::StringRef description() const override {
    return "check every compute is present once, in dependency order, with its "
           "comms";
  }
  void analyze(const Schedule &S, PassContext &Ctx) override {
    Ctx.Results.DepsVerified = verifyDeps(S, Ctx.Diags);
  }
};

} // namespace

bool detail::verifyDeps(const Schedule &S, DiagnosticEngine &Diags) {
  return Verifier(S, Diags).run();
}

std::unique_ptr<Pass> createVerifyDepsPass() {
  return std::make_unique<VerifyDepsPass>();
}

} // namespace pps::passes
