//===- Problem.cpp - synthesis problem, evaluator, IR conversion ----------===//
#include "pps/synth/Problem.h"

#include "pps/analysis/Memory.h"
#include "pps/frontend/Limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <functional>
#include <memory>

namespace pps::synth {

Problem Problem::make(int32_t Ranks, int32_t Microbatches, ir::Placement Pl,
                      JobCost C, int64_t MemoryLimit, double Latency,
                      int32_t Stages) {
  Problem P;
  P.Ranks = Ranks;
  P.Microbatches = Microbatches;
  P.Place = Pl;
  P.Stages = Stages > 0 ? Stages : Pl == ir::Placement::V ? 2 * Ranks : Ranks;
  P.Latency = Latency;
  P.MemoryLimit = MemoryLimit;
  P.Cost.assign(std::max(P.Stages, 0), C);
  P.Mem.assign(size_t(std::max(P.Stages, 0)), MemTicks{});
  ir::Topology T;
  T.Ranks = Ranks;
  T.Stages = P.Stages;
  if (T.place(Pl))
    P.StageToRank.assign(T.StageToRank.begin(), T.StageToRank.end());
  return P;
}

Problem Problem::fromSchedule(const ir::Schedule &S, int64_t MemoryLimit) {
  Problem P;
  P.Ranks = S.Topo.Ranks;
  P.Stages = S.Topo.Stages;
  P.Microbatches = S.Topo.Microbatches;
  P.Place = S.Topo.Place;
  P.StageToRank.assign(S.Topo.StageToRank.begin(), S.Topo.StageToRank.end());
  for (int32_t St = 0; St < P.Stages; ++St)
    P.Cost.push_back({S.Cost.computeCost(ir::ActionKind::F, St),
                      S.Cost.computeCost(ir::ActionKind::I, St),
                      S.Cost.computeCost(ir::ActionKind::W, St)});
  P.Latency = S.Cost.messageTime(ir::ActionKind::SendF);
  P.setMemory(S.Memory, MemoryLimit);
  return P;
}

bool Problem::setMemory(const ir::MemorySpec &M, int64_t LimitUnits) {
  // The amounts of a valid order (F, I, W of each (m, s) once, in
  // dependency order: F finds (m, s) not live, I finds it live with a W to
  // come, W finds it live after its I), by the memory analysis' rule.
  auto Delta = [&](const schema::MemoryModel &X, JobKind K) {
    schema::MemoryEffect E = schema::memoryEffect(actionKind(K), /*HasW=*/true);
    return analysis::memoryDelta(X, E, /*Live=*/K != JobKind::F,
                                 /*InputDone=*/K == JobKind::W);
  };
  const size_t N = size_t(std::max(Stages, 0));
  std::vector<std::array<double, 2>> D(N);
  for (size_t St = 0; St < N; ++St)
    D[St] = {Delta(M.of(int32_t(St)), JobKind::F),
             Delta(M.of(int32_t(St)), JobKind::I)};
  auto Whole = [](double V) {
    return std::fabs(V - std::round(V)) <= 1e-9 * std::max(1.0, std::fabs(V));
  };
  MemBytes = M.Bytes;
  for (int64_t Scale = 1; Scale <= 1024; ++Scale) {
    bool AllWhole = true;
    for (size_t St = 0; St < N && AllWhole; ++St)
      AllWhole =
          Whole(D[St][0] * double(Scale)) && Whole(D[St][1] * double(Scale));
    if (!AllWhole)
      continue;
    MemScale = Scale;
    Mem.assign(N, MemTicks{});
    MemF = 1, MemI = 0, MemW = -1;
    for (size_t St = 0; St < N; ++St) {
      MemTicks &T = Mem[St];
      T.F = int64_t(std::llround(D[St][0] * double(Scale)));
      T.I = int64_t(std::llround(D[St][1] * double(Scale)));
      T.W = -(T.F + T.I); // exactly the rest, as the rule says
      if (St == 0 || T.F > MemF)
        MemF = T.F, MemI = T.I, MemW = T.W;
    }
    // Limits beyond any schedule's needs saturate (2^62 ticks: a rank's
    // memory stays far from overflow, validate() bounds the amounts).
    constexpr int64_t Max = int64_t(1) << 62;
    MemoryLimit = LimitUnits > Max / Scale ? Max : LimitUnits * Scale;
    MemoryError.clear();
    return true;
  }
  MemoryError = fmt::format(
      "synthesis counts memory in whole ticks: the memory model's amounts "
      "(F = {:g}, I = {:g}{}) must be multiples of 1/N of a unit for some N "
      "up to 1024",
      N ? D[0][0] : 1.0, N ? D[0][1] : 0.0, M.isUniform() ? "" : ", ...");
  Mem.assign(N, MemTicks{});
  MemF = 1;
  MemI = 0;
  MemW = -1;
  MemScale = 1;
  MemoryLimit = LimitUnits;
  return false;
}

ir::MemorySpec Problem::memoryModel() const {
  auto Model = [&](const MemTicks &T) {
    schema::MemoryModel X;
    X.Forward = memoryUnits(T.F);
    X.InputGrad = memoryUnits(-T.I);
    return X;
  };
  ir::MemorySpec S;
  S.Bytes = MemBytes;
  for (const MemTicks &T : Mem)
    S.Stages.push_back(Model(T));
  S.normalize();
  return S;
}

int64_t Problem::memoryAfterInput() const {
  int64_t Min = Mem.empty() ? 1 : INT64_MAX;
  for (const MemTicks &T : Mem)
    Min = std::min(Min, T.F + T.I);
  return Min;
}

int64_t Problem::smallestF() const {
  int64_t Min = Mem.empty() ? 1 : INT64_MAX;
  for (const MemTicks &T : Mem)
    Min = std::min(Min, T.F);
  return Min;
}

llvm::SmallVector<int32_t, 4> Problem::stagesOf(int32_t Rank) const {
  llvm::SmallVector<int32_t, 4> Out;
  for (int32_t S = 0; S < Stages; ++S)
    if (StageToRank[S] == Rank)
      Out.push_back(S);
  return Out;
}

std::string Problem::validate() const {
  if (Ranks < 1)
    return "synthesis needs at least one rank";
  if (Microbatches < 1)
    return "synthesis needs at least one microbatch";
  if (Stages < Ranks || int32_t(StageToRank.size()) != Stages)
    return fmt::format("synthesis needs every rank to hold a stage and a "
                       "placement for every stage; got {} stages on {} "
                       "ranks{}",
                       Stages, Ranks,
                       Place == ir::Placement::V && Stages % Ranks
                           ? " (v placement needs a multiple of the ranks)"
                           : "");
  for (int32_t R : StageToRank)
    if (R < 0 || R >= Ranks)
      return "a stage is placed on a rank that does not exist";
  for (int32_t R = 0; R < Ranks; ++R)
    if (stagesOf(R).empty())
      return fmt::format("rank {} holds no stage", R);
  if (int32_t(Cost.size()) != Stages)
    return "the cost model does not give every stage a cost";
  for (const JobCost &C : Cost) {
    if (!(C.F > 0) || !(C.I > 0) || !(C.W >= 0) || !std::isfinite(C.F) ||
        !std::isfinite(C.I) || !std::isfinite(C.W))
      return "synthesis needs positive, finite F and I costs and W >= 0";
    if (C.F > frontend::MaxTime || C.I > frontend::MaxTime ||
        C.W > frontend::MaxTime)
      return fmt::format("costs must be at most {:.10g} time units",
                         frontend::MaxTime);
  }
  if (!(Latency >= 0) || !std::isfinite(Latency))
    return "the communication latency must be finite and >= 0";
  if (Latency > frontend::MaxTime)
    return fmt::format("the communication latency must be at most {:.10g} time "
                       "units",
                       frontend::MaxTime);
  if (int64_t(Stages) * Microbatches > 1'000'000)
    return fmt::format("synthesis handles up to 1M (stage, microbatch) pairs, "
                       "got {} stages x {} microbatches",
                       Stages, Microbatches);
  if (!MemoryError.empty())
    return MemoryError;
  if (MemScale < 1)
    return "the memory model must count in whole ticks";
  for (const MemTicks &T : Mem) {
    if (!(T.F > 0) || T.I > 0 || T.W > 0 || T.F + T.I + T.W != 0)
      return "the memory model must allocate at F and free it all by W";
    // A rank holds at most every (m, s) of its stages at once: keep that
    // far inside 64 bits (bytes of 1 TiB each times 2^20 pairs is 2^60).
    if (T.F > (int64_t(1) << 60) /
                  std::max<int64_t>(1, int64_t(Stages) * Microbatches))
      return "the memory amounts are too large for this many (stage, "
             "microbatch) pairs";
  }
  if (MemoryLimit < 1)
    return fmt::format("the memory limit must be at least 1, got {}",
                       MemoryLimit);
  return {};
}

/// The producer of a job (-1 if none) as a dense index.
static int32_t producerOf(const Problem &P, const Job &J) {
  std::optional<Job> Pr = P.producerOf(J);
  return Pr ? P.index(Pr->Kind, Pr->Stage, Pr->Mb) : -1;
}

/// The largest memory of a rank over its order.
static int64_t rankPeak(const Problem &P, const std::vector<Job> &Jobs) {
  int64_t Mem = 0, Peak = 0;
  for (const Job &J : Jobs)
    Peak = std::max(Peak, Mem += P.memoryDelta(J.Kind, J.Stage));
  return Peak;
}

Evaluation evaluate(const Problem &P, const Order &O, bool KeepStarts) {
  Evaluation E;
  const int32_t N = P.numJobs();
  auto Fail = [&](std::string Msg) {
    E.Valid = false;
    E.Error = std::move(Msg);
    return E;
  };
  if (int32_t(O.Ranks.size()) != P.Ranks)
    return Fail("the order has the wrong number of ranks");
  std::vector<double> End(N, -1.0), Start(N, 0.0);
  std::vector<uint8_t> Seen(N, 0);
  size_t Total = 0;
  for (int32_t R = 0; R < P.Ranks; ++R) {
    for (const Job &J : O.Ranks[R]) {
      if (J.Stage < 0 || J.Stage >= P.Stages || J.Mb < 0 ||
          J.Mb >= P.Microbatches)
        return Fail("a job is out of range");
      if (P.rankOf(J.Stage) != R)
        return Fail(
            fmt::format("job on stage {} placed on rank {}", J.Stage, R));
      int32_t Id = P.index(J.Kind, J.Stage, J.Mb);
      if (Seen[Id]++)
        return Fail("a job appears twice");
    }
    Total += O.Ranks[R].size();
  }
  if (Total != size_t(N))
    return Fail("the order misses jobs");

  // Time the order: sweep the ranks, advancing each as far as its producers
  // allow, until every job ran or no rank can move.
  std::vector<size_t> Ptr(P.Ranks, 0);
  std::vector<double> Free(P.Ranks, 0.0), Busy(P.Ranks, 0.0);
  size_t Done = 0;
  bool Progress = true;
  const int32_t S = P.Stages;
  while (Progress && Done < Total) {
    Progress = false;
    for (int32_t R = 0; R < P.Ranks; ++R) {
      const std::vector<Job> &Jobs = O.Ranks[R];
      while (Ptr[R] < Jobs.size()) {
        const Job &J = Jobs[Ptr[R]];
        double Ready = Free[R];
        int32_t Dep = producerOf(P, J);
        if (Dep >= 0) {
          if (End[Dep] < 0)
            break;
          int32_t DepStage = (Dep / P.Microbatches) % S;
          double Arr = End[Dep] + (P.rankOf(DepStage) != R ? P.Latency : 0.0);
          Ready = std::max(Ready, Arr);
        }
        int32_t Id = P.index(J.Kind, J.Stage, J.Mb);
        double C = P.cost(J.Kind, J.Stage);
        Start[Id] = Ready;
        End[Id] = Ready + C;
        Free[R] = Ready + C;
        Busy[R] += C;
        ++Ptr[R];
        ++Done;
        Progress = true;
      }
    }
  }
  if (Done < Total) {
    for (int32_t R = 0; R < P.Ranks; ++R)
      if (Ptr[R] < O.Ranks[R].size()) {
        const Job &J = O.Ranks[R][Ptr[R]];
        return Fail(fmt::format("rank {} waits forever at {}{}@{}", R,
                                "FIW"[int(J.Kind)], J.Mb, J.Stage));
      }
  }

  E.Valid = true;
  double TotalBusy = 0;
  for (int32_t R = 0; R < P.Ranks; ++R) {
    const std::vector<Job> &Jobs = O.Ranks[R];
    double First = 0, Last = 0;
    if (!Jobs.empty()) {
      const Job &J0 = Jobs.front(), &J1 = Jobs.back();
      First = Start[P.index(J0.Kind, J0.Stage, J0.Mb)];
      Last = End[P.index(J1.Kind, J1.Stage, J1.Mb)];
    }
    E.Span.push_back(Last - First);
    E.Bubble.push_back(Last - First - Busy[R]);
    E.Makespan = std::max(E.Makespan, Last);
    E.MaxSpan = std::max(E.MaxSpan, Last - First);
    TotalBusy += Busy[R];
    int64_t Peak = rankPeak(P, Jobs);
    E.PeakMemory.push_back(Peak);
    E.MaxPeakMemory = std::max(E.MaxPeakMemory, Peak);
  }
  for (int32_t R = 0; R < P.Ranks; ++R)
    E.Idle.push_back(E.Makespan - Busy[R]);
  E.BubbleRate = E.Makespan > 0 ? (P.Ranks * E.Makespan - TotalBusy) /
                                      (P.Ranks * E.Makespan)
                                : 0.0;
  if (KeepStarts)
    E.Start = std::move(Start);
  return E;
}

namespace {

/// The start times of a valid order, kept up to date as fillGaps swaps
/// adjacent jobs: a job starts when the job before it on its rank ends and
/// its producer's output has arrived, computed with evaluate()'s own
/// operations, so the times are the same doubles evaluate() gives the new
/// order. A swap re-times the two jobs, and each job whose time changed
/// re-times the job after it and its consumers: the work is what the move
/// changes, not the whole order (at P = 128, M = 256 fillGaps took 256
/// rounds of a whole evaluation each, a sixth of synth's time).
class Retimer {
public:
  Retimer(const Problem &P, const Order &O, std::vector<double> Starts)
      : P(P), O(O), Start(std::move(Starts)) {
    const int32_t N = P.numJobs();
    End.resize(size_t(N));
    Pos.resize(size_t(N));
    Producer.resize(size_t(N));
    std::vector<int32_t> Count(size_t(N) + 1, 0);
    for (const std::vector<Job> &Jobs : O.Ranks)
      for (size_t K = 0; K < Jobs.size(); ++K) {
        const Job &J = Jobs[K];
        int32_t Id = P.index(J.Kind, J.Stage, J.Mb);
        End[size_t(Id)] = Start[size_t(Id)] + P.cost(J.Kind, J.Stage);
        Pos[size_t(Id)] = int32_t(K);
        int32_t Prod = producerOf(P, J);
        Producer[size_t(Id)] = Prod;
        if (Prod >= 0)
          ++Count[size_t(Prod) + 1];
      }
    for (int32_t Id = 0; Id < N; ++Id)
      Count[size_t(Id) + 1] += Count[size_t(Id)];
    ConsumerAt = Count;
    Consumers.resize(size_t(Count[size_t(N)]));
    for (int32_t Id = 0; Id < N; ++Id)
      if (Producer[size_t(Id)] >= 0)
        Consumers[size_t(Count[size_t(Producer[size_t(Id)])]++)] = Id;
    Queued.assign(size_t(N), 0);
  }

  double start(int32_t Id) const { return Start[size_t(Id)]; }

  /// Jobs K and K + 1 of rank R have been swapped in the order.
  void swapped(int32_t R, size_t K) {
    for (size_t X : {K, K + 1}) {
      const Job &J = O.Ranks[size_t(R)][X];
      int32_t Id = P.index(J.Kind, J.Stage, J.Mb);
      Pos[size_t(Id)] = int32_t(X);
      push(Id);
    }
    // The job after them follows another job now.
    if (K + 2 < O.Ranks[size_t(R)].size())
      push(idOf(O.Ranks[size_t(R)][K + 2]));
  }

  /// Re-times every job the swaps since the last call affect; false if
  /// that took more than a few whole orders' work (a cycle, which a valid
  /// move cannot make; the caller then evaluates from scratch).
  bool propagate() {
    size_t Work = 0, Limit = 4 * Start.size() + 64;
    while (!Queue.empty()) {
      if (++Work > Limit)
        return false;
      int32_t Id = Queue.front();
      Queue.pop_front();
      Queued[size_t(Id)] = 0;
      const Job J = P.job(Id);
      const int32_t R = P.rankOf(J.Stage);
      const std::vector<Job> &Jobs = O.Ranks[size_t(R)];
      const size_t K = size_t(Pos[size_t(Id)]);
      // As evaluate(): the rank's free time, then the producer's arrival.
      double Ready = K == 0 ? 0.0 : End[size_t(idOf(Jobs[K - 1]))];
      int32_t Dep = Producer[size_t(Id)];
      if (Dep >= 0) {
        double Arr = End[size_t(Dep)] +
                     (P.rankOf(P.job(Dep).Stage) != R ? P.Latency : 0.0);
        Ready = std::max(Ready, Arr);
      }
      double C = P.cost(J.Kind, J.Stage);
      if (Ready == Start[size_t(Id)] && Ready + C == End[size_t(Id)])
        continue;
      Start[size_t(Id)] = Ready;
      End[size_t(Id)] = Ready + C;
      if (K + 1 < Jobs.size())
        push(idOf(Jobs[K + 1]));
      for (int32_t X = ConsumerAt[size_t(Id)]; X < ConsumerAt[size_t(Id) + 1];
           ++X)
        push(Consumers[size_t(X)]);
    }
    return true;
  }

  /// evaluate()'s makespan: the latest end of a rank's last job.
  double makespan() const {
    double M = 0;
    for (const std::vector<Job> &Jobs : O.Ranks)
      if (!Jobs.empty())
        M = std::max(M, End[size_t(idOf(Jobs.back()))]);
    return M;
  }

private:
  int32_t idOf(const Job &J) const { return P.index(J.Kind, J.Stage, J.Mb); }
  void push(int32_t Id) {
    if (!Queued[size_t(Id)]) {
      Queued[size_t(Id)] = 1;
      Queue.push_back(Id);
    }
  }

  const Problem &P;
  const Order &O;
  std::vector<double> Start, End;
  std::vector<int32_t> Pos, Producer, ConsumerAt, Consumers;
  std::vector<uint8_t> Queued;
  std::deque<int32_t> Queue;
};

} // namespace

unsigned fillGaps(const Problem &P, Order &O) {
  const double Eps = 1e-9;
  unsigned Moves = 0;
  Evaluation E = evaluate(P, O, /*KeepStarts=*/true);
  if (!E.Valid)
    return 0;
  double Makespan = E.Makespan;
  llvm::SmallVector<int64_t, 8> Peaks = E.PeakMemory;
  int64_t MaxPeak = E.MaxPeakMemory;
  auto T = std::make_unique<Retimer>(P, O, std::move(E.Start));
  // After the swaps of a round: the times (from scratch if re-timing
  // failed), and the peaks of the ranks that moved.
  auto Settle = [&](llvm::ArrayRef<std::pair<int32_t, size_t>> Swaps) {
    for (auto [R, K] : Swaps)
      T->swapped(R, K);
    if (!T->propagate()) {
      Evaluation Fresh = evaluate(P, O, /*KeepStarts=*/true);
      if (!Fresh.Valid)
        return false;
      T = std::make_unique<Retimer>(P, O, std::move(Fresh.Start));
    }
    for (auto [R, K] : Swaps)
      Peaks[size_t(R)] = rankPeak(P, O.Ranks[size_t(R)]);
    return true;
  };
  // Each move puts a backward job one place earlier, so this terminates;
  // the cap only bounds pathological inputs.
  for (unsigned Round = 0; Round < 100000; ++Round) {
    // The first fillable gap of each rank, with exact times.
    llvm::SmallVector<std::pair<int32_t, size_t>, 8> Found;
    for (int32_t R = 0; R < P.Ranks; ++R) {
      const std::vector<Job> &Jobs = O.Ranks[R];
      double Free = 0;
      for (size_t K = 0; K + 1 < Jobs.size(); ++K) {
        const Job &A = Jobs[K], &Bj = Jobs[K + 1];
        int32_t IdA = P.index(A.Kind, A.Stage, A.Mb);
        double StartA = T->start(IdA);
        double Gap = StartA - Free;
        Free = StartA + P.cost(A.Kind, A.Stage);
        if (Gap <= Eps || Bj.Kind == JobKind::F ||
            P.cost(Bj.Kind, Bj.Stage) > Gap + Eps)
          continue;
        int32_t Prod = producerOf(P, Bj);
        if (Prod == IdA)
          continue;
        if (Prod >= 0) {
          const Job Pj = P.job(Prod);
          double Arr = T->start(Prod) + P.cost(Pj.Kind, Pj.Stage) +
                       (P.rankOf(Pj.Stage) != R ? P.Latency : 0.0);
          if (Arr > StartA - Gap + Eps)
            continue;
        }
        Found.push_back({R, K});
        break;
      }
    }
    if (Found.empty())
      break;
    // A move alone never delays anything (the job fits in the gap and only
    // makes its consumers' inputs earlier); moves on several ranks at once
    // can shrink each other's gaps, so fall back to one if they do. No
    // set of moves makes the order wait on itself: each moved job's input
    // ended before the job it passes started.
    auto SwapAll = [&](llvm::ArrayRef<std::pair<int32_t, size_t>> Swaps) {
      for (auto [R, K] : Swaps)
        std::swap(O.Ranks[R][K], O.Ranks[R][K + 1]);
    };
    SwapAll(Found);
    if (!Settle(Found)) {
      SwapAll(Found);
      break;
    }
    int64_t NewPeak = *std::max_element(Peaks.begin(), Peaks.end());
    if (Found.size() > 1 &&
        (T->makespan() > Makespan + Eps || NewPeak > MaxPeak)) {
      llvm::ArrayRef<std::pair<int32_t, size_t>> Undo(Found);
      Undo = Undo.drop_front();
      SwapAll(Undo);
      if (!Settle(Undo)) {
        SwapAll(Found.front());
        break;
      }
      Found.resize(1);
      NewPeak = *std::max_element(Peaks.begin(), Peaks.end());
    }
    Moves += Found.size();
    Makespan = T->makespan();
    MaxPeak = NewPeak;
  }
  return Moves;
}

bool repairOrder(const Problem &P, Order &O, unsigned MaxMoves) {
  // The order is run as the evaluator runs it; when every rank is stuck the
  // earliest job that could run is moved to the head of its rank's rest.
  // A moved job runs at once and the rest keep their relative order, so a
  // rank's final order is the order its jobs ran in, and each job keeps its
  // original position as a key: "earliest" compares keys. What is ready is
  // kept up to date as jobs finish (each job has at most two consumers), so
  // a move costs a heap operation instead of a scan of every rank's rest;
  // only an F must scan, for the memory it would add, up to the first ready
  // F that fits. The result is the one the scanning rule gives
  // (tests/unit/synth/RepairTest.cpp holds it against that rule).
  const int32_t N = P.numJobs();
  if (int32_t(O.Ranks.size()) != P.Ranks)
    return false;
  std::vector<uint8_t> Seen(N, 0);
  // Per job: its rank and its position there.
  std::vector<int32_t> RankOf(N), Key(N);
  size_t Total = 0;
  for (int32_t R = 0; R < P.Ranks; ++R) {
    const std::vector<Job> &Jobs = O.Ranks[R];
    for (size_t K = 0; K < Jobs.size(); ++K) {
      const Job &J = Jobs[K];
      if (J.Stage < 0 || J.Stage >= P.Stages || J.Mb < 0 ||
          J.Mb >= P.Microbatches || P.rankOf(J.Stage) != R)
        return false;
      int32_t Id = P.index(J.Kind, J.Stage, J.Mb);
      if (Seen[Id]++)
        return false;
      RankOf[Id] = R;
      Key[Id] = int32_t(K);
    }
    Total += Jobs.size();
  }
  if (Total != size_t(N))
    return false;
  // Producers, and consumers in compressed rows.
  std::vector<int32_t> ProdOf(N, -1), ConsStart(N + 1, 0), Cons;
  for (int32_t K = 0; K < 3; ++K)
    for (int32_t St = 0; St < P.Stages; ++St)
      for (int32_t Mb = 0; Mb < P.Microbatches; ++Mb)
        ProdOf[P.index(JobKind(K), St, Mb)] =
            producerOf(P, Job{JobKind(K), Mb, St});
  for (int32_t Id = 0; Id < N; ++Id)
    if (ProdOf[Id] >= 0)
      ++ConsStart[ProdOf[Id] + 1];
  for (int32_t Id = 0; Id < N; ++Id)
    ConsStart[Id + 1] += ConsStart[Id];
  Cons.resize(size_t(ConsStart[N]));
  {
    std::vector<int32_t> Fill(ConsStart.begin(), ConsStart.end() - 1);
    for (int32_t Id = 0; Id < N; ++Id)
      if (ProdOf[Id] >= 0)
        Cons[size_t(Fill[ProdOf[Id]]++)] = Id;
  }
  std::vector<uint8_t> Done(N, 0);
  auto Ready = [&](int32_t Id) { return ProdOf[Id] < 0 || Done[ProdOf[Id]]; };
  auto IdOf = [&](const Job &J) { return P.index(J.Kind, J.Stage, J.Mb); };
  // Per rank: the first position not run yet, the memory held when the jobs
  // before it ran, what ran in order, and the ready jobs not run yet, by
  // key (min-heaps; entries that ran since are dropped when seen).
  using Heap = std::vector<int32_t>;
  const auto ByKey = std::greater<int32_t>();
  std::vector<size_t> Cur(P.Ranks, 0);
  std::vector<int64_t> MemAt(P.Ranks, 0);
  std::vector<std::vector<Job>> Ran(P.Ranks);
  std::vector<Heap> ReadyBack(P.Ranks), ReadyF(P.Ranks);
  auto PushReady = [&](int32_t Id) {
    int32_t R = RankOf[Id];
    Heap &H = O.Ranks[R][size_t(Key[Id])].Kind == JobKind::F ? ReadyF[R]
                                                             : ReadyBack[R];
    H.push_back(Key[Id]);
    std::push_heap(H.begin(), H.end(), ByKey);
  };
  auto Top = [&](int32_t R, Heap &H) -> int32_t {
    while (!H.empty() && Done[IdOf(O.Ranks[R][size_t(H.front())])]) {
      std::pop_heap(H.begin(), H.end(), ByKey);
      H.pop_back();
    }
    return H.empty() ? -1 : H.front();
  };
  std::vector<int32_t> Work; // ranks to advance
  auto Run = [&](int32_t Id) {
    int32_t R = RankOf[Id];
    const Job &J = O.Ranks[R][size_t(Key[Id])];
    Done[Id] = 1;
    Ran[R].push_back(J);
    MemAt[R] += P.memoryDelta(J.Kind, J.Stage);
    for (int32_t C = ConsStart[Id]; C < ConsStart[Id + 1]; ++C) {
      PushReady(Cons[size_t(C)]);
      Work.push_back(RankOf[Cons[size_t(C)]]);
    }
  };
  for (int32_t Id = 0; Id < N; ++Id)
    if (ProdOf[Id] < 0)
      PushReady(Id);
  for (int32_t R = 0; R < P.Ranks; ++R)
    Work.push_back(R);
  size_t Finished = 0;
  unsigned Moves = 0;
  while (true) {
    // Run every rank as far as it goes; the point where all are stuck does
    // not depend on the order the ranks are visited in.
    while (!Work.empty()) {
      int32_t R = Work.back();
      Work.pop_back();
      const std::vector<Job> &Jobs = O.Ranks[R];
      while (Cur[R] < Jobs.size()) {
        int32_t Id = IdOf(Jobs[Cur[R]]);
        if (Done[Id]) { // moved ahead earlier
          ++Cur[R];
          continue;
        }
        if (!Ready(Id))
          break;
        ++Cur[R];
        Run(Id);
        ++Finished;
      }
    }
    if (Finished == Total)
      break;
    // Every rank is stuck: pull the earliest runnable job forward, an I or
    // W on the lowest rank that has one, else an F the memory limit allows.
    if (Moves++ >= MaxMoves)
      return false;
    int32_t Move = -1;
    for (int32_t R = 0; R < P.Ranks && Move < 0; ++R)
      if (int32_t K = Top(R, ReadyBack[R]); K >= 0)
        Move = IdOf(O.Ranks[R][size_t(K)]);
    for (int32_t R = 0; R < P.Ranks && Move < 0; ++R) {
      if (Top(R, ReadyF[R]) < 0)
        continue;
      // The memory before each of the rank's jobs not run yet, in order, up
      // to the first ready F that fits; the peak only grows along the way.
      const std::vector<Job> &Jobs = O.Ranks[R];
      int64_t Mem = MemAt[R], Peak = Mem;
      for (size_t K = Cur[R]; K < Jobs.size(); ++K) {
        int32_t Id = IdOf(Jobs[K]);
        if (Done[Id])
          continue;
        if (Jobs[K].Kind == JobKind::F && Ready(Id) &&
            Peak + P.memoryDelta(JobKind::F, Jobs[K].Stage) <= P.MemoryLimit) {
          Move = Id;
          break;
        }
        if (Peak + P.smallestF() > P.MemoryLimit)
          break; // no later F fits either
        Mem += P.memoryDelta(Jobs[K].Kind, Jobs[K].Stage);
        Peak = std::max(Peak, Mem);
      }
    }
    if (Move < 0)
      return false;
    Run(Move);
    ++Finished;
    Work.push_back(RankOf[Move]);
  }
  for (int32_t R = 0; R < P.Ranks; ++R)
    O.Ranks[R] = std::move(Ran[R]);
  return true;
}

bool better(const Evaluation &A, const Evaluation &B, Objective G) {
  if (!A.Valid || !B.Valid)
    return A.Valid && !B.Valid;
  const double Eps = 1e-9;
  const Objective Other =
      G == Objective::Span ? Objective::Makespan : Objective::Span;
  for (Objective O : {G, Other}) {
    double X = objectiveValue(A, O), Y = objectiveValue(B, O);
    if (X < Y - Eps)
      return true;
    if (X > Y + Eps)
      return false;
  }
  return A.MaxPeakMemory < B.MaxPeakMemory;
}

ir::Schedule toSchedule(const Problem &P, const Order &O,
                        const ir::Schedule *Base) {
  ir::Schedule S;
  if (Base) {
    S.Name = Base->Name;
    S.Cost = Base->Cost;
    S.Comm = Base->Comm;
    S.Fsdp = Base->Fsdp;
    S.DeclLoc = Base->DeclLoc;
  }
  S.Topo.Ranks = P.Ranks;
  S.Topo.Stages = P.Stages;
  S.Topo.Microbatches = P.Microbatches;
  S.Topo.Place = P.Place;
  S.Topo.StageToRank.assign(P.StageToRank.begin(), P.StageToRank.end());
  if (!Base) {
    S.Name = "synth";
    S.Cost.Latency = P.Latency;
    bool Uniform =
        std::all_of(P.Cost.begin(), P.Cost.end(), [&](const JobCost &C) {
          return C.F == P.Cost[0].F && C.I == P.Cost[0].I && C.W == P.Cost[0].W;
        });
    auto ToStage = [](const JobCost &C) {
      ir::StageCost SC;
      SC.F = C.F;
      SC.I = C.I;
      SC.W = C.W;
      SC.B = C.I + C.W;
      return SC;
    };
    S.Cost.Default = ToStage(P.Cost.empty() ? JobCost{} : P.Cost[0]);
    if (!Uniform)
      for (const JobCost &C : P.Cost)
        S.Cost.PerStage.push_back(ToStage(C));
  }
  // The limit in the model's units (whole: it was set in them).
  S.Memory = P.memoryModel();
  S.MemoryLimit = P.MemoryLimit / P.MemScale;
  S.resetRanks();
  static const ir::ActionKind Kinds[] = {ir::ActionKind::F, ir::ActionKind::I,
                                         ir::ActionKind::W};
  for (int32_t R = 0; R < P.Ranks && R < int32_t(O.Ranks.size()); ++R) {
    std::vector<ir::Action> &Out = S.Ranks[R].Actions;
    Out.reserve(O.Ranks[R].size());
    for (const Job &J : O.Ranks[R])
      Out.push_back(ir::Action::compute(Kinds[int(J.Kind)], J.Mb, J.Stage,
                                        Base ? Base->DeclLoc : NoLoc));
  }
  return S;
}

Order fromIr(const ir::Schedule &S) {
  Order O;
  O.Ranks.resize(S.Ranks.size());
  for (size_t R = 0; R < S.Ranks.size(); ++R)
    for (const ir::Action &A : S.Ranks[R].Actions) {
      switch (A.Kind) {
      case ir::ActionKind::F:
        O.Ranks[R].push_back({JobKind::F, A.Microbatch, A.Stage});
        break;
      case ir::ActionKind::I:
        O.Ranks[R].push_back({JobKind::I, A.Microbatch, A.Stage});
        break;
      case ir::ActionKind::W:
        O.Ranks[R].push_back({JobKind::W, A.Microbatch, A.Stage});
        break;
      case ir::ActionKind::B:
        O.Ranks[R].push_back({JobKind::I, A.Microbatch, A.Stage});
        O.Ranks[R].push_back({JobKind::W, A.Microbatch, A.Stage});
        break;
      default:
        break;
      }
    }
  return O;
}

} // namespace pps::synth
