//===- MutationTest.cpp - the linter against a step-by-step executor ------===//
//
// Takes valid lowered schedules (insert-comms output, one with overlap
// pairs), applies thousands of random edits (swap adjacent actions, drop
// one, duplicate one, move a receive) and compares the linter's verdict with a
// reference written here: an obviously-correct executor that steps the ranks
// round-robin, posts comm groups into FIFO channel queues, pairs the n-th send
// with the n-th receive, and checks every compute's inputs as it runs. They
// must agree on every case, both on "runs to the end" (the deadlock pass's
// DeadlockFree) and on "valid" (no error from verify-deps or deadlock).
//
//===----------------------------------------------------------------------===//
#include "Schedules.h"

#include "pps/analysis/Timing.h"
#include "pps/passes/Deadlock.h"
#include "pps/passes/InsertComms.h"
#include "pps/passes/VerifyDeps.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

using namespace pps;
using namespace pps::ir;
using namespace pps::passes;

namespace {

// ---------------------------------------------------------------------------
// The reference executor.

struct RefVerdict {
  bool Completes = false;
  bool Valid = false;
  std::string Why; // first violation, for failure messages
};

class Reference {
public:
  /// Stream: the stream rule, written here independently of the schema:
  /// a send is eager when its message (the cost model's activation or
  /// gradient bytes) is declared and at most the threshold; under scope
  /// peer a rank's comms form one in-order queue per peer, each operation
  /// posted once the computes before it have run, a compute waiting for
  /// the receive that feeds it.
  Reference(const Schedule &S, CommModel Model, CommStream Stream = {})
      : S(S), T(S.Topo), Model(Model), Stream(Stream) {}

  RefVerdict run() {
    size_t P = S.Ranks.size();
    if (Stream.Scope == StreamScope::Peer)
      buildQueues();
    Pc.assign(P, 0);
    Posted.assign(P, {});
    Paired.assign(P, {});
    Done.assign(P, {});
    DoneAt.assign(P, {});
    Finished.assign(P, {});
    Delivered.assign(P, {});
    CommSeen.assign(P, {});
    for (size_t R = 0; R < P; ++R) {
      Posted[R].assign(S.Ranks[R].Actions.size(), 0);
      Paired[R].assign(S.Ranks[R].Actions.size(), {-1, -1});
    }
    for (bool Progress = true; Progress;) {
      Progress = false;
      for (size_t R = 0; R < P; ++R)
        Progress |=
            Stream.Scope == StreamScope::Peer ? stepPeer(int(R)) : step(int(R));
    }
    RefVerdict V;
    V.Completes = true;
    for (size_t R = 0; R < P; ++R) {
      V.Completes &= Pc[R] == S.Ranks[R].Actions.size();
      if (Stream.Scope == StreamScope::Peer)
        for (const auto &[Peer, Q] : Queues[R])
          V.Completes &= Q.Head == Q.Ops.size();
    }
    if (!V.Completes)
      bad("some rank cannot finish");
    // Every posted operation found its partner.
    for (size_t R = 0; R < P; ++R)
      for (size_t I = 0; I < S.Ranks[R].Actions.size(); ++I)
        if (Posted[R][I] && Paired[R][I].first < 0)
          bad("an operation was never matched");
    // Counts per (microbatch, stage).
    for (int M = 0; M < T.Microbatches; ++M)
      for (int St = 0; St < T.Stages; ++St) {
        int F = Runs.count({ActionKind::F, M, St}),
            B = Runs.count({ActionKind::B, M, St}),
            I = Runs.count({ActionKind::I, M, St}),
            W = Runs.count({ActionKind::W, M, St});
        if (F != 1 ||
            !((B == 1 && I == 0 && W == 0) || (B == 0 && I == 1 && W == 1)))
          bad("a compute is missing or repeated");
      }
    V.Valid = Why.empty();
    V.Why = Why;
    return V;
  }

private:
  using Key = std::tuple<ActionKind, int, int>;

  void bad(const std::string &W) {
    if (Why.empty())
      Why = W;
  }

  bool step(int R) {
    const auto &Acts = S.Ranks[R].Actions;
    size_t &Pcr = Pc[R];
    if (Pcr >= Acts.size())
      return false;
    const Action &A = Acts[Pcr];
    if (A.Kind == ActionKind::Idle || isControl(A.Kind)) {
      ++Pcr;
      return true;
    }
    if (isCompute(A.Kind)) {
      size_t Len = 1;
      if (A.overlapsNext()) {
        if (Pcr + 1 < Acts.size() && isCompute(Acts[Pcr + 1].Kind) &&
            !Acts[Pcr + 1].overlapsNext())
          Len = 2;
        else
          bad("a broken overlap pair");
      }
      for (size_t J = 0; J < Len; ++J)
        checkInputs(R, Acts[Pcr + J]);
      for (size_t J = 0; J < Len; ++J) {
        const Action &X = Acts[Pcr + J];
        Key K{X.Kind, X.Microbatch, X.Stage};
        Done[R].insert(K);
        DoneAt[R].try_emplace(K, Pcr + J);
        Runs.insert(K);
      }
      Pcr += Len;
      return true;
    }
    // A comm group: one op, or under batched every consecutive comm.
    size_t End = Pcr + 1;
    if (Model == CommModel::Batched)
      while (End < Acts.size() && isComm(Acts[End].Kind))
        ++End;
    if (!Posted[R][Pcr]) {
      for (size_t I = Pcr; I < End; ++I)
        post(R, I);
      return true;
    }
    for (size_t I = Pcr; I < End; ++I)
      if (!complete(R, I))
        return false;
    for (size_t I = Pcr; I < End; ++I)
      if (isRecv(Acts[I].Kind))
        deliver(R, I);
    Pcr = End;
    return true;
  }

  /// True if the send of comm kind K's message does not wait for its
  /// receive.
  bool eagerMessage(ActionKind K) const {
    if (Model == CommModel::Eager)
      return true;
    double Bytes = (K == ActionKind::SendF || K == ActionKind::RecvF ||
                    S.Cost.GradientBytes < 0)
                       ? S.Cost.ActivationBytes
                       : S.Cost.GradientBytes;
    return Stream.EagerThreshold >= 0 && Bytes > 0 &&
           Bytes <= Stream.EagerThreshold;
  }

  /// A posted operation is complete once it is paired, or it is an eager
  /// send; a receive of an eager message still needs its send posted.
  bool complete(int R, size_t I) const {
    const Action &A = S.Ranks[R].Actions[I];
    return Paired[R][I].first >= 0 || (isSend(A.Kind) && eagerMessage(A.Kind));
  }

  // --- scope peer ----------------------------------------------------------

  struct Queue {
    std::vector<size_t> Ops;
    size_t Head = 0;
  };

  void buildQueues() {
    Queues.assign(S.Ranks.size(), {});
    for (size_t R = 0; R < S.Ranks.size(); ++R) {
      const auto &Acts = S.Ranks[R].Actions;
      for (size_t I = 0; I < Acts.size(); ++I)
        if (isComm(Acts[I].Kind))
          Queues[R][Acts[I].Peer].Ops.push_back(I);
    }
  }

  /// The first receive on rank R that feeds compute X, if it sits before
  /// Pos (the one a compute waits for); -1 otherwise.
  long feedingRecv(int R, const Action &X, size_t Pos) const {
    const auto &Acts = S.Ranks[R].Actions;
    ActionKind Want =
        X.Kind == ActionKind::F ? ActionKind::RecvF : ActionKind::RecvB;
    for (size_t I = 0; I < Acts.size(); ++I)
      if (Acts[I].Kind == Want && Acts[I].Microbatch == X.Microbatch &&
          Acts[I].Stage == X.Stage)
        return I < Pos ? long(I) : -1;
    return -1;
  }

  /// Scope peer: the compute cursor Pc runs computes (skipping comms) as
  /// long as their inputs are there; each peer's queue posts its head once
  /// every compute before it has run, and moves on once it completes.
  bool stepPeer(int R) {
    const auto &Acts = S.Ranks[R].Actions;
    size_t &Pcr = Pc[R];
    bool Moved = false;
    while (Pcr < Acts.size()) {
      const Action &A = Acts[Pcr];
      if (!isCompute(A.Kind)) {
        ++Pcr;
        Moved = true;
        continue;
      }
      size_t Len = A.overlapsNext() && Pcr + 1 < Acts.size() &&
                           isCompute(Acts[Pcr + 1].Kind) &&
                           !Acts[Pcr + 1].overlapsNext()
                       ? 2
                       : 1;
      bool Wait = false;
      for (size_t J = 0; J < Len; ++J) {
        const Action &X = Acts[Pcr + J];
        bool CrossInput =
            (X.Kind == ActionKind::F && X.Stage > 0 && X.Stage < T.Stages &&
             T.StageToRank[X.Stage - 1] != R) ||
            ((X.Kind == ActionKind::B || X.Kind == ActionKind::I) &&
             X.Stage >= 0 && X.Stage + 1 < T.Stages &&
             T.StageToRank[X.Stage + 1] != R);
        // It waits for that receive to complete (whatever it carries: a
        // mismatched message is still a completed receive).
        long Rv = CrossInput ? feedingRecv(R, X, Pcr) : -1;
        if (Rv >= 0 && !Finished[R].count(size_t(Rv)))
          Wait = true;
      }
      if (Wait)
        break;
      if (A.overlapsNext() && Len == 1)
        bad("a broken overlap pair");
      for (size_t J = 0; J < Len; ++J)
        checkInputs(R, Acts[Pcr + J]);
      for (size_t J = 0; J < Len; ++J) {
        const Action &X = Acts[Pcr + J];
        Key K{X.Kind, X.Microbatch, X.Stage};
        Done[R].insert(K);
        DoneAt[R].try_emplace(K, Pcr + J);
        Runs.insert(K);
      }
      Pcr += Len;
      Moved = true;
    }
    for (auto &[Peer, Q] : Queues[R]) {
      while (Q.Head < Q.Ops.size()) {
        size_t I = Q.Ops[Q.Head];
        if (!Posted[R][I]) {
          if (Pcr < I)
            break; // a compute before it has not run
          post(R, I);
          Moved = true;
        }
        if (!complete(R, I))
          break;
        if (isRecv(S.Ranks[R].Actions[I].Kind))
          deliver(R, I);
        Finished[R].insert(I);
        ++Q.Head;
        Moved = true;
      }
    }
    return Moved;
  }

  /// The rank that must be at the other end of a comm, or -1 if none.
  int expectedPeer(const Action &A) const {
    int PS = (A.Kind == ActionKind::SendF || A.Kind == ActionKind::RecvB)
                 ? A.Stage + 1
                 : A.Stage - 1;
    if (PS < 0 || PS >= T.Stages)
      return -1;
    return T.StageToRank[PS];
  }

  void post(int R, size_t I) {
    const Action &A = S.Ranks[R].Actions[I];
    Posted[R][I] = 1;
    bool InRange = A.Stage >= 0 && A.Stage < T.Stages && A.Microbatch >= 0 &&
                   A.Microbatch < T.Microbatches;
    if (!InRange || T.StageToRank[A.Stage] != R)
      bad("a comm on the wrong rank or out of range");
    else if (expectedPeer(A) != A.Peer || A.Peer == R)
      bad("a comm to the wrong peer");
    if (!CommSeen[R].insert({A.Kind, A.Microbatch, A.Stage}).second)
      bad("a comm twice");
    if (isSend(A.Kind)) {
      // The data a send carries is the compute's before it in program
      // order (with in-order streams the compute cursor may be further on).
      auto Before = [&](ActionKind K) {
        auto It = DoneAt[R].find({K, A.Microbatch, A.Stage});
        return It != DoneAt[R].end() && It->second < I;
      };
      bool Produced = A.Kind == ActionKind::SendF
                          ? Before(ActionKind::F)
                          : Before(ActionKind::B) || Before(ActionKind::I);
      if (!Produced)
        bad("a send before the compute it carries");
    }
    if (A.Peer < 0 || A.Peer >= int(S.Ranks.size()))
      return; // goes nowhere: never matched
    std::pair<int, int> Ch =
        isSend(A.Kind) ? std::make_pair(R, A.Peer) : std::make_pair(A.Peer, R);
    Channel &C = Channels[Ch];
    (isSend(A.Kind) ? C.Sends : C.Recvs).push_back({R, int(I)});
    while (!C.Sends.empty() && !C.Recvs.empty()) {
      auto Sd = C.Sends.front(), Rv = C.Recvs.front();
      C.Sends.pop_front();
      C.Recvs.pop_front();
      Paired[Sd.first][Sd.second] = Rv;
      Paired[Rv.first][Rv.second] = Sd;
    }
  }

  void deliver(int R, size_t I) {
    const Action &Rv = S.Ranks[R].Actions[I];
    auto [Q, J] = Paired[R][I];
    const Action &Sd = S.Ranks[Q].Actions[J];
    bool Fwd = Rv.Kind == ActionKind::RecvF;
    bool Match = Sd.Kind == (Fwd ? ActionKind::SendF : ActionKind::SendB) &&
                 Sd.Microbatch == Rv.Microbatch &&
                 Sd.Stage == (Fwd ? Rv.Stage - 1 : Rv.Stage + 1);
    if (!Match) {
      bad("a receive got another message");
      return;
    }
    Delivered[R].insert(
        {Fwd ? ActionKind::F : ActionKind::B, Rv.Microbatch, Rv.Stage});
  }

  void checkInputs(int R, const Action &X) {
    int M = X.Microbatch, St = X.Stage;
    if (St < 0 || St >= T.Stages || M < 0 || M >= T.Microbatches) {
      bad("a compute out of range");
      return;
    }
    if (T.StageToRank[St] != R)
      bad("a compute on the wrong rank");
    auto DoneHere = [&](ActionKind K, int Stage) {
      return Done[R].count({K, M, Stage}) > 0;
    };
    bool Ok = true;
    switch (X.Kind) {
    case ActionKind::F:
      if (St > 0)
        Ok = T.StageToRank[St - 1] == R
                 ? DoneHere(ActionKind::F, St - 1)
                 : Delivered[R].count({ActionKind::F, M, St}) > 0;
      break;
    case ActionKind::B:
    case ActionKind::I:
      if (St == T.Stages - 1)
        Ok = DoneHere(ActionKind::F, St);
      else if (T.StageToRank[St + 1] == R)
        Ok = DoneHere(ActionKind::B, St + 1) || DoneHere(ActionKind::I, St + 1);
      else
        Ok = Delivered[R].count({ActionKind::B, M, St}) > 0;
      break;
    case ActionKind::W:
      Ok = DoneHere(ActionKind::I, St);
      break;
    default:
      break;
    }
    if (!Ok)
      bad("a compute without its input");
  }

  struct Channel {
    std::deque<std::pair<int, int>> Sends, Recvs;
  };
  const Schedule &S;
  const Topology &T;
  CommModel Model;
  CommStream Stream;
  std::vector<std::map<int32_t, Queue>> Queues;
  std::vector<size_t> Pc;
  std::vector<std::vector<char>> Posted;
  std::vector<std::vector<std::pair<int, int>>> Paired;
  std::vector<std::set<Key>> Done, Delivered, CommSeen;
  /// Where each compute first ran; the comms of each rank that completed.
  std::vector<std::map<Key, size_t>> DoneAt;
  std::vector<std::set<size_t>> Finished;
  std::multiset<Key> Runs;
  std::map<std::pair<int, int>, Channel> Channels;
  std::string Why;
};

// ---------------------------------------------------------------------------

struct LintVerdict {
  bool Completes = false;
  bool Valid = false;
  std::string Text;
};

LintVerdict lint(const Schedule &In, CommModel Model, CommStream Stream = {}) {
  Schedule S = In;
  S.Stream = Stream;
  SourceManager SM;
  DiagnosticEngine D(SM);
  PassContext Ctx{D, {}};
  createVerifyDepsPass()->run(S, Ctx);
  createDeadlockPass({Model})->run(S, Ctx);
  LintVerdict V;
  V.Completes = Ctx.Results.DeadlockFree;
  V.Valid = D.numErrors() == 0;
  llvm::raw_string_ostream OS(V.Text);
  D.print(OS);
  OS.flush();
  return V;
}

std::string dump(const Schedule &S) {
  std::ostringstream OS;
  for (size_t R = 0; R < S.Ranks.size(); ++R) {
    OS << "rank " << R << ":";
    for (const Action &A : S.Ranks[R].Actions) {
      OS << " " << actionKindName(A.Kind).str() << A.Microbatch << "@"
         << A.Stage;
      if (isComm(A.Kind))
        OS << ">" << A.Peer;
    }
    OS << "\n";
  }
  return OS.str();
}

/// One random edit; false if the schedule had nothing to edit.
bool mutate(Schedule &S, std::mt19937 &Rng) {
  auto Pick = [&](size_t N) {
    return size_t(std::uniform_int_distribution<size_t>(0, N - 1)(Rng));
  };
  size_t R = Pick(S.Ranks.size());
  auto &Acts = S.Ranks[R].Actions;
  if (Acts.size() < 2)
    return false;
  switch (Pick(4)) {
  case 0: { // swap adjacent
    size_t I = Pick(Acts.size() - 1);
    std::swap(Acts[I], Acts[I + 1]);
    return true;
  }
  case 1: // drop one
    Acts.erase(Acts.begin() + Pick(Acts.size()));
    return true;
  case 2: { // duplicate one, somewhere on the same rank
    Action A = Acts[Pick(Acts.size())];
    Acts.insert(Acts.begin() + Pick(Acts.size() + 1), A);
    return true;
  }
  default: { // move a receive
    std::vector<size_t> Recvs;
    for (size_t I = 0; I < Acts.size(); ++I)
      if (isRecv(Acts[I].Kind))
        Recvs.push_back(I);
    if (Recvs.empty())
      return false;
    size_t From = Recvs[Pick(Recvs.size())];
    Action A = Acts[From];
    Acts.erase(Acts.begin() + From);
    Acts.insert(Acts.begin() + Pick(Acts.size() + 1), A);
    return true;
  }
  }
}

/// Counts a disagreement between the reference and the linter, and shows
/// the first few in full.
void compare(const std::string &Under, const RefVerdict &R,
             const LintVerdict &L, const Schedule &S, unsigned &Disagree) {
  if (R.Completes == L.Completes && R.Valid == L.Valid)
    return;
  if (++Disagree <= 5)
    ADD_FAILURE() << Under << ": reference says "
                  << (R.Completes ? "finishes" : "stuck") << ", "
                  << (R.Valid ? "valid" : "invalid (" + R.Why + ")")
                  << "; linter says " << (L.Completes ? "finishes" : "stuck")
                  << ", " << (L.Valid ? "valid" : "invalid") << "\n"
                  << dump(S) << L.Text;
}

Schedule lowered(Schedule S) {
  SourceManager SM;
  DiagnosticEngine D(SM);
  PassContext Ctx{D, {}};
  createInsertCommsPass()->run(S, Ctx);
  EXPECT_EQ(D.numErrors(), 0u);
  return S;
}

} // namespace

static std::vector<Schedule> mutationBases();

TEST(Mutation, LinterAgreesWithTheReferenceExecutor) {
  std::vector<Schedule> Bases = mutationBases();
  std::mt19937 Rng(20261122);
  const int PerBase = 500;
  unsigned Cases = 0, Stuck = 0, Valid = 0, Disagree = 0;
  for (const Schedule &Base : Bases)
    for (CommModel M :
         {CommModel::Rendezvous, CommModel::Eager, CommModel::Batched}) {
      // The unedited schedule is valid and finishes.
      RefVerdict R0 = Reference(Base, M).run();
      ASSERT_TRUE(R0.Valid && R0.Completes) << R0.Why << "\n" << dump(Base);
      LintVerdict L0 = lint(Base, M);
      ASSERT_TRUE(L0.Valid && L0.Completes) << L0.Text;
      for (int K = 0; K < PerBase; ++K) {
        Schedule S = Base;
        int Edits = 1 + int(Rng() % 3);
        for (int E = 0; E < Edits; ++E)
          mutate(S, Rng);
        if (!S.hasComms())
          continue; // the linter would insert comms instead
        RefVerdict R = Reference(S, M).run();
        LintVerdict L = lint(S, M);
        ++Cases;
        Stuck += !R.Completes;
        Valid += R.Valid;
        compare("model " + commModelName(M).str(), R, L, S, Disagree);
      }
    }
  EXPECT_EQ(Disagree, 0u);
  // The edits must exercise both sides of each verdict.
  EXPECT_GT(Cases, 10000u);
  EXPECT_GT(Stuck, Cases / 20);
  EXPECT_GT(Valid, Cases / 50);
  std::printf("mutation: %u cases, %u stuck, %u valid, %u disagreements\n",
              Cases, Stuck, Valid, Disagree);
}

/// The stream rule: forward messages small (1 KiB), backward ones large
/// (128 KiB), so a 64 KiB threshold makes only the forward sends eager; one
/// stream per rank or per peer.
TEST(Mutation, StreamRuleAgreesWithTheReferenceExecutor) {
  std::vector<Schedule> Bases = mutationBases();
  struct Rule {
    CommModel Model;
    CommStream Stream;
  };
  const Rule Rules[] = {
      {CommModel::Rendezvous, {StreamScope::Rank, 64 * 1024}},
      {CommModel::Rendezvous, {StreamScope::Rank, 0}},
      {CommModel::Rendezvous, {StreamScope::Peer, -1}},
      {CommModel::Rendezvous, {StreamScope::Peer, 64 * 1024}},
      {CommModel::Batched, {StreamScope::Rank, 64 * 1024}},
  };
  std::mt19937 Rng(20261201);
  const int PerBase = 300;
  unsigned Cases = 0, Stuck = 0, Valid = 0, Disagree = 0;
  for (Schedule Base : Bases) {
    Base.Cost.ActivationBytes = 1024;
    Base.Cost.GradientBytes = 128 * 1024;
    for (size_t Ru = 0; Ru < std::size(Rules); ++Ru) {
      const Rule &X = Rules[Ru];
      RefVerdict R0 = Reference(Base, X.Model, X.Stream).run();
      ASSERT_TRUE(R0.Valid && R0.Completes) << R0.Why << "\n" << dump(Base);
      LintVerdict L0 = lint(Base, X.Model, X.Stream);
      ASSERT_TRUE(L0.Valid && L0.Completes) << L0.Text;
      for (int K = 0; K < PerBase; ++K) {
        Schedule S = Base;
        int Edits = 1 + int(Rng() % 3);
        for (int E = 0; E < Edits; ++E)
          mutate(S, Rng);
        if (!S.hasComms())
          continue;
        RefVerdict R = Reference(S, X.Model, X.Stream).run();
        LintVerdict L = lint(S, X.Model, X.Stream);
        ++Cases;
        // The timing engine runs the same streams: on a valid schedule it
        // finishes exactly when the reference does.
        if (R.Valid) {
          analysis::TimingOptions TO;
          TO.Model = X.Model;
          TO.Stream = X.Stream;
          TO.KeepPreds = false;
          bool Finished = !analysis::computeTiming(S, TO).Deadlocked;
          if (Finished != R.Completes && ++Disagree <= 5)
            ADD_FAILURE() << "timing under "
                          << commDescription(X.Model, X.Stream)
                          << ": reference says "
                          << (R.Completes ? "finishes" : "stuck")
                          << ", the timing engine the opposite\n"
                          << dump(S);
        }
        Stuck += !R.Completes;
        Valid += R.Valid;
        compare("rule " + commDescription(X.Model, X.Stream), R, L, S,
                Disagree);
      }
    }
  }
  EXPECT_EQ(Disagree, 0u);
  EXPECT_GT(Cases, 10000u);
  EXPECT_GT(Stuck, Cases / 20);
  EXPECT_GT(Valid, Cases / 50);
  std::printf("mutation (stream rule): %u cases, %u stuck, %u valid, %u "
              "disagreements\n",
              Cases, Stuck, Valid, Disagree);
}

static std::vector<Schedule> mutationBases() {
  std::vector<Schedule> Bases;
  Bases.push_back(lowered(pps::testing::oneFOneB(3, 3)));
  Bases.push_back(
      lowered(pps::testing::oneFOneB(4, 2))); // fewer microbatches than ranks
  Bases.push_back(lowered(pps::testing::interleaved(2, 2, 2)));
  Bases.push_back(lowered(pps::testing::interleaved(2, 2, 4)));
  Bases.push_back(lowered(pps::testing::gpipe(2, 4, 2, Placement::V)));
  Bases.push_back(lowered(
      pps::testing::gpipe(3, 3, 2, Placement::Loop, {}, /*Split=*/true)));
  {
    int32_t Map[] = {0, 0, 1, 2, 1};
    Bases.push_back(
        lowered(pps::testing::gpipe(3, 5, 2, Placement::Loop, Map)));
  }
  {
    // 1F1B on 2 ranks with the steady state's F and B overlapped on rank 1.
    ScheduleBuilder B(2, 2, 3);
    B.rank(0).F(0).F(1).B(0).F(2).B(1).B(2);
    B.rank(1).F(0).overlap(Action::compute(ActionKind::F, 1, -1),
                           Action::compute(ActionKind::B, 0, -1));
    B.rank(1).overlap(Action::compute(ActionKind::F, 2, -1),
                      Action::compute(ActionKind::B, 1, -1));
    B.rank(1).B(2);
    Bases.push_back(lowered(B.build()));
  }
  return Bases;
}
