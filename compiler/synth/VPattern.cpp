//===- VPattern.cpp - repeating-pattern search for V placement ------------===//
//
// The search of "Pipeline Parallelism with Controllable Memory" (Qi et al.,
// NeurIPS 2024; sail-sg/zero-bubble-pipeline-parallelism, v-schedule),
// for V placement: rank i holds stage i (chunk 0: F forward, b backward, w
// weight) and stage 2P-1-i (chunk 1: f forward, B backward, W weight).
//
//  1. A pattern is the slot of each of F f B b W w in a period of 6 on
//     rank 0; W and w take the first free slot after their B and b.
//  2. Each next rank's pattern shifts F and B by +k and f and b by -1 slot
//     (k = 1..5), with one k for the first len0 ranks and another after.
//  3. Repeating the patterns and keeping microbatch j's slots gives the
//     steady state; the warmup is squeezed (F and f front-loaded up to the
//     peak the steady state already needs) and the cooldown reorganised
//     (B and b as tight as dependencies allow, W and w in the gaps), both
//     without raising the peak; patterns whose result needs more memory
//     than the limit are dropped.
//  4. Every surviving order is timed by our evaluator; the best is kept.
//
// The rows are strings of slot characters, as in the paper, so each step
// can be checked against it; a step that would break an invariant the
// paper asserts drops the candidate instead. For P > 8 the split point
// len0 is sampled (at most 8 values) so P = 32 stays well under a second.
//
//===----------------------------------------------------------------------===//
#include "pps/synth/Algorithms.h"

#include "pps/support/Parallel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace pps::synth {

namespace {

constexpr int Period = 6;
using Pattern = std::array<int, 6>; // slots of F f B b W w, -1 = none
using Rows = std::vector<std::string>;
const char *const Notation = "FfBbWw";

/// What each slot character stands for: its index in Notation (F f B b W
/// w), or -1 for an empty slot; and the job kind of that slot. One table
/// lookup per character: the rows are long and every step walks them.
struct SlotTable {
  int8_t Index[256];
  int8_t Kind[256]; // JobKind, or -1
  bool Lower[256];  // f b w: chunk 0's backward passes, chunk 1's forward
};
SlotTable makeSlotTable() {
  SlotTable T;
  for (int C = 0; C < 256; ++C) {
    T.Index[C] = -1;
    T.Kind[C] = -1;
    T.Lower[C] = C == 'f' || C == 'b' || C == 'w';
  }
  for (int I = 0; I < Period; ++I) {
    auto C = static_cast<unsigned char>(Notation[I]);
    T.Index[C] = int8_t(I);
    // F f forward, B b input gradient, W w weight gradient.
    T.Kind[C] = int8_t(I < 2 ? JobKind::F : I < 4 ? JobKind::I : JobKind::W);
  }
  return T;
}
const SlotTable Slots = makeSlotTable();
/// Notation index of a slot character (-1: empty).
int slotIndex(char C) { return Slots.Index[static_cast<unsigned char>(C)]; }

/// What each slot character adds to its rank's memory: a job's amount
/// under a memory model (ticks; with a model per stage, the largest
/// stage's: a pre-check, as every order is evaluated exactly against the
/// limit before it is taken), 0 for an empty slot.
struct DeltaTable {
  int64_t Delta[256];
  explicit DeltaTable(const Problem &P) {
    for (int C = 0; C < 256; ++C)
      Delta[C] = Slots.Kind[C] < 0 ? 0 : P.largestDelta(JobKind(Slots.Kind[C]));
  }
};
/// The chunk model's amounts: the construction's own unit (the paper counts
/// its warmup and cooldown in chunks).
const DeltaTable ChunkDeltas(Problem::make(1, 1, ir::Placement::Loop, {}, 1));

/// The largest per-rank peak of the rows under Table's amounts.
int64_t peakOf(const Rows &S, const DeltaTable &Table) {
  int64_t Max = 0;
  for (const std::string &Row : S) {
    int64_t Mem = 0;
    for (char C : Row) {
      Mem += Table.Delta[static_cast<unsigned char>(C)];
      Max = std::max(Max, Mem);
    }
  }
  return Max;
}
/// The peak in chunks: what the construction's steps are sized by.
int peakMemory(const Rows &S) { return int(peakOf(S, ChunkDeltas)); }

Pattern fillW(Pattern Pt) {
  bool Vis[Period] = {};
  for (int V : Pt)
    if (V >= 0)
      Vis[V] = true;
  for (auto [B, W] : {std::pair{2, 4}, std::pair{3, 5}})
    for (int J = 0; J < Period; ++J) {
      int Pos = (Pt[B] + J) % Period;
      if (!Vis[Pos]) {
        Pt[W] = Pos;
        Vis[Pos] = true;
        break;
      }
    }
  return Pt;
}

bool wholePattern(const Pattern &P0, const std::array<int, 4> &Off0,
                  const std::array<int, 4> &Off1, int Len0, int P,
                  std::vector<Pattern> &Out) {
  Out.assign(1, P0);
  for (int I = 0; I + 1 < P; ++I) {
    const Pattern &Last = Out[I];
    Pattern New;
    New.fill(-1);
    bool Vis[Period] = {};
    const auto &Off = I < Len0 ? Off0 : Off1;
    for (int V = 0; V < 4; ++V) {
      int Pos = ((Last[V] + Off[V]) % Period + Period) % Period;
      if (Vis[Pos])
        return false;
      Vis[Pos] = true;
      New[V] = Pos;
    }
    Out.push_back(fillW(New));
  }
  return true;
}

/// Builds, squeezes and reorganises the rows of one pattern set; false if
/// a step's invariant fails.
class PatternSchedule {
public:
  PatternSchedule(int P, int M, const DeltaTable &Memory)
      : P(P), M(M), Memory(&Memory) {}
  /// Limit (memory ticks, under the problem's model): candidates whose
  /// steady state needs more memory are dropped before the (costly) warmup
  /// and cooldown steps, which never lower the steady-state peak below what
  /// the limit allows... in practice; see docs/synthesis.md. Peak is the
  /// result's peak in chunks (the steps keep it at the steady state's).
  /// RawInOut: Out already holds buildRaw's rows of the same patterns,
  /// whose peak under the problem's model is RawPeak.
  bool build(const std::vector<Pattern> &Pats, Rows &Out, int &Peak,
             int64_t Limit, bool RawInOut = false, int64_t RawPeak = -1);
  /// The repeated patterns cut to M microbatches, without the warmup and
  /// cooldown rewrite (how the stdlib's V-Half and V-Min are built: the
  /// block order, idle slots squeezed out by timing).
  void buildRaw(const std::vector<Pattern> &Pats, Rows &Out);

private:
  void clearRun(Rows &S, int Row, int Pos, int Step) {
    while (Pos >= 0 && Pos < int(S[Row].size())) {
      S[Row][Pos] = ' ';
      Pos += Step * Period;
    }
  }
  void clearInvalid(Rows &S, int MM);
  void repeatPatterns(const std::vector<Pattern> &Pats, Rows &S, int Mb);
  /// Peak: peakMemory(S), which the caller has.
  bool warmup(Rows &S, int MM, int Peak);
  bool squeeze(Rows &S, int MM);
  bool cooldown(Rows &S);

  int P, M;
  const DeltaTable *Memory;
  /// squeeze's buffers, kept across calls (the rows are long and the
  /// search builds hundreds of candidates).
  Rows Scratch;
  std::vector<std::array<int, 6>> Idx;
  std::vector<int> UpAt, DownAt, Up, Down, UpFill, DownFill;
};

void PatternSchedule::clearInvalid(Rows &S, int MM) {
  int Index = Period;
  const int Len = int(S[0].size());
  for (char Id : {'F', 'f', 'B', 'b'}) {
    bool Down = Id == 'F' || Id == 'B';
    for (int K = 0; K < P; ++K) {
      int I = Down ? K : P - 1 - K;
      for (int J = 0; J < Period; ++J) {
        if (Index < Len && S[I][Index] == Id) {
          clearRun(S, I, Index - Period, -1);
          clearRun(S, I, Index + Period * MM, 1);
          ++Index;
          if (Id == 'B' || Id == 'b') {
            char WId = Id == 'B' ? 'W' : 'w';
            for (int X = 0; X < Period; ++X)
              if (Index + X < Len && S[I][Index + X] == WId) {
                clearRun(S, I, Index + X - Period, -1);
                clearRun(S, I, Index + X + Period * MM, 1);
                break;
              }
          }
          break;
        }
        ++Index;
      }
    }
  }
}

bool PatternSchedule::warmup(Rows &S, int MM, int Peak) {
  Peak = std::min(Peak, 2 * P);
  std::vector<int> CntF(P), CntFF(P);
  for (int I = 0; I < P; ++I) {
    CntFF[I] = std::min({I + 1, Peak / 2, MM});
    CntF[I] = std::min(Peak - CntFF[I], MM);
  }
  int Dist = 0;
  {
    const std::string &Last = S[P - 1];
    size_t J = Last.find('B');
    if (J != std::string::npos) {
      size_t K = Last.find('b', J);
      if (K != std::string::npos)
        Dist = int(K - J);
    }
  }
  const int Len = int(S[0].size());
  for (int I = 0; I < P; ++I) {
    std::string &Row = S[I];
    int CF = 0, CFF = 0, CB = 0, CW = 0;
    for (int J = 0; J < Len; ++J) {
      char C = Row[J];
      if (C == 'F') {
        ++CF;
      } else if (C == 'f') {
        ++CFF;
      } else if (C == 'B') {
        ++CB;
      } else if (C == 'W') {
        ++CW;
      } else if (C == 'b') {
        for (int X = J; X < Len; ++X) {
          char D = Row[X];
          if (D == 'f' && CFF < CntFF[P - 1]) {
            Row[X] = ' ';
            ++CFF;
          }
          if (D == 'B' && CB < CFF &&
              (CB < (2 * (P - I) + Dist) / 3 || CB < CntFF[P - 1] - CntFF[I])) {
            Row[X] = ' ';
            ++CB;
          }
          if (D == 'W' && CW < CB &&
              (CW < (2 * (P - I) + Dist - 1) / 3 ||
               CW < CntFF[P - 1] - CntFF[I])) {
            Row[X] = ' ';
            ++CW;
          }
        }
        for (int X = J; X < Len; ++X)
          if (Row[X] == 'F' && (CF < CFF || CF < CntF[I] ||
                                CF - CntF[I] + CFF - CntFF[I] < CW - 1)) {
            Row[X] = ' ';
            ++CF;
          }
        break;
      } else if (C != ' ') {
        return false;
      }
      Row[J] = ' ';
    }
    if (CF < CntF[I] || CFF < CntFF[I] || CW < CntFF[P - 1] - CntFF[I] ||
        CB < CntFF[P - 1] - CntFF[I])
      return false;
    int J = I, UF = 0, UFF = 0, UB = 0, UW = 0;
    auto Set = [&](char C) {
      if (J >= Len)
        return false;
      Row[J] = C;
      return true;
    };
    for (int K = 0; K < 2 * (P - 1 - I); ++K) {
      if (UF < CntF[I] && UF < CF) {
        if (!Set('F'))
          return false;
        ++UF;
      }
      ++J;
    }
    for (int K = 0; K < I + 1; ++K) {
      if (UF < CntF[I] && UF < CF) {
        if (!Set('F'))
          return false;
        ++UF;
      }
      ++J;
      if (UFF < CntFF[I] && UFF < CFF) {
        if (!Set('f'))
          return false;
        ++UFF;
      }
      ++J;
    }
    while (UF < CF || UFF < CFF || UB < CB || UW < CW) {
      if (UB < CB) {
        if (!Set('B'))
          return false;
        ++UB;
      }
      ++J;
      if (UW < CW) {
        if (!Set('W'))
          return false;
        ++UW;
      }
      ++J;
      if (UFF < CFF) {
        if (UFF >= UF || !Set('f'))
          return false;
        ++UFF;
      } else if (UF < CF) {
        if (!Set('F'))
          return false;
        ++UF;
      }
      ++J;
    }
  }
  return true;
}

bool PatternSchedule::squeeze(Rows &S, int MM) {
  const int Len = int(S[0].size());
  Rows &Out = Scratch;
  Out.resize(P);
  for (std::string &Row : Out)
    Row.assign(size_t(Len), ' ');
  std::vector<std::array<int, 6>> Cnt(P, {0, 0, 0, 0, 0, 0});
  Idx.assign(size_t(P) * MM, {-1, -1, -1, -1, -1, -1});
  std::vector<int> StageIndex(P, 0);
  // The slots are taken column by column, in each column F B W in rank
  // order and then f b w in reverse rank order (each waits on the rank
  // before it in that order). The rows are mostly empty, so the passes are
  // listed first, row by row, and only they are visited: Up and Down hold
  // the ranks of each column's F B W and f b w, from UpAt[J] and DownAt[J].
  UpAt.assign(size_t(Len) + 1, 0);
  DownAt.assign(size_t(Len) + 1, 0);
  for (int I = 0; I < P; ++I) {
    const char *Row = S[I].data();
    for (int J = 0; J < Len; ++J)
      if (Row[J] != ' ')
        ++(Slots.Lower[static_cast<unsigned char>(Row[J])] ? DownAt
                                                           : UpAt)[J + 1];
  }
  for (int J = 0; J < Len; ++J) {
    UpAt[J + 1] += UpAt[J];
    DownAt[J + 1] += DownAt[J];
  }
  Up.resize(size_t(UpAt[Len]));
  Down.resize(size_t(DownAt[Len]));
  // Down is filled in rank order too, and each column's part reversed.
  UpFill.assign(UpAt.begin(), UpAt.end() - 1);
  DownFill.assign(DownAt.begin(), DownAt.end() - 1);
  for (int I = 0; I < P; ++I) {
    const char *Row = S[I].data();
    for (int J = 0; J < Len; ++J)
      if (Row[J] != ' ') {
        if (Slots.Lower[static_cast<unsigned char>(Row[J])])
          Down[size_t(DownFill[J]++)] = I;
        else
          Up[size_t(UpFill[J]++)] = I;
      }
  }
  for (int J = 0; J < Len; ++J)
    std::reverse(Down.begin() + DownAt[J], Down.begin() + DownAt[J + 1]);
  auto Take = [&](int I, int J) {
    char Id = S[I][J];
    int Sl = slotIndex(Id);
    int C = Cnt[I][Sl];
    if (C >= MM)
      return false;
    int Index;
    if (Id == 'W' || Id == 'w' || (I == 0 && (Id == 'F' || Id == 'B')) ||
        (I == P - 1 && (Id == 'f' || Id == 'b'))) {
      Index = StageIndex[I];
    } else if (Id == 'F' || Id == 'B') {
      int Prev = Idx[size_t(C) * P + I - 1][Sl];
      if (Prev < 0)
        return false;
      Index = std::max(Prev + 1, StageIndex[I]);
    } else {
      int Prev = Idx[size_t(C) * P + I + 1][Sl];
      if (Prev < 0)
        return false;
      Index = std::max(Prev + 1, StageIndex[I]);
    }
    if (Index >= Len)
      return false;
    Out[I][Index] = Id;
    Cnt[I][Sl] = C + 1;
    Idx[size_t(C) * P + I][Sl] = Index;
    StageIndex[I] = Index + 1;
    return true;
  };
  for (int J = 0; J < Len; ++J) {
    for (int X = UpAt[J]; X < UpAt[J + 1]; ++X)
      if (!Take(Up[size_t(X)], J))
        return false;
    for (int X = DownAt[J]; X < DownAt[J + 1]; ++X)
      if (!Take(Down[size_t(X)], J))
        return false;
  }
  S.swap(Out);
  return true;
}

bool PatternSchedule::cooldown(Rows &S) {
  int Peak = peakMemory(S);
  if (Peak > 2 * P)
    return false;
  int MaxBB = std::min((Peak + 1) / 2, M);
  int MaxB = std::min(Peak - MaxBB, M);
  const int Len = int(S[0].size());
  int Starting = -1;
  for (int I = 0; I < P; ++I) {
    std::string &Row = S[I];
    int CB = 0, CBB = 0, CW = 0, CWW = 0, LastFF = -1;
    for (int J = Len - 1; J >= 0; --J) {
      char C = Row[J];
      if (C == 'f' && LastFF == -1)
        LastFF = J;
      if (C == 'B' && CB < I + 1 && CB < MaxB) {
        Row[J] = ' ';
        ++CB;
      }
      if (C == 'b' && CBB < MaxBB) {
        Row[J] = ' ';
        ++CBB;
      }
    }
    for (int J = Len - 1; J >= 0; --J) {
      char C = Row[J];
      if (C == 'W' && CW + CWW < Peak) {
        Row[J] = ' ';
        ++CW;
      }
      if (C == 'w' && CW + CWW < Peak) {
        Row[J] = ' ';
        ++CWW;
      }
    }
    if (I == 0)
      Starting = LastFF;
    for (int K = 0; K < CBB; ++K) {
      int Index = Starting - I + 2 * P - 2 * K;
      if (Index < 0 || Index >= Len || Row[Index] != ' ')
        return false;
      Row[Index] = 'b';
    }
    for (int K = 0; K < CB; ++K) {
      int Index = Starting + 1 + I - 2 * K;
      if (Index < 0 || Index >= Len || Row[Index] != ' ')
        return false;
      Row[Index] = 'B';
    }
  }
  if (!squeeze(S, M))
    return false;
  for (int I = 0; I < P; ++I) {
    std::string &Row = S[I];
    int CW = 0, CWW = 0, LastW = -2;
    for (int J = Len - 1; J >= 0; --J)
      if (Row[J] == 'W' || Row[J] == 'w') {
        if (LastW < 0) {
          Row[J] = ' ';
          ++LastW;
        } else {
          LastW = J;
          break;
        }
      }
    for (int J = 0; J < Len; ++J) {
      char C = Row[J];
      if (C == 'B')
        ++CW;
      else if (C == 'b')
        ++CWW;
      else if (C == 'W')
        --CW;
      else if (C == 'w')
        --CWW;
      if (C == ' ' && J > LastW) {
        if (CW > 0) {
          Row[J] = 'W';
          --CW;
        } else if (CWW > 0) {
          Row[J] = 'w';
          --CWW;
        }
      }
    }
  }
  return squeeze(S, M);
}

/// Repeats each stage's one-period pattern enough times to cover Mb
/// microbatches, then blanks the slots of microbatches that do not exist.
void PatternSchedule::repeatPatterns(const std::vector<Pattern> &Pats, Rows &S,
                                     int Mb) {
  const size_t Len = size_t(4 * P + Mb + 1) * Period;
  S.resize(P);
  for (int I = 0; I < P; ++I) {
    std::string &Row = S[I];
    Row.assign(Len, ' ');
    for (int V = 0; V < Period; ++V)
      if (Pats[I][V] >= 0)
        for (size_t J = size_t(Pats[I][V]); J < Len; J += Period)
          Row[J] = Notation[V];
  }
  clearInvalid(S, Mb);
}

void PatternSchedule::buildRaw(const std::vector<Pattern> &Pats, Rows &S) {
  repeatPatterns(Pats, S, M);
}

bool PatternSchedule::build(const std::vector<Pattern> &Pats, Rows &S,
                            int &Peak, int64_t Limit, bool RawInOut,
                            int64_t RawPeak) {
  int MM = std::max(M, 2 * P);
  // buildRaw's rows serve unless the steps need more microbatches.
  bool Reuse = RawInOut && MM == M;
  if (!Reuse)
    repeatPatterns(Pats, S, MM);
  // The model's peak first: most candidates stop here, and the caller has
  // it when the rows are its own.
  if ((Reuse && RawPeak >= 0 ? RawPeak : peakOf(S, *Memory)) > Limit)
    return false;
  int InitPeak = peakMemory(S);
  if (InitPeak > 2 * P)
    return false;
  if (!warmup(S, MM, InitPeak))
    return false;
  for (std::string &Row : S) {
    int Cnt[6] = {};
    for (char &C : Row) {
      if (C == ' ')
        continue;
      int Sl = slotIndex(C);
      if (Cnt[Sl] >= M)
        C = ' ';
      else
        ++Cnt[Sl];
    }
  }
  if (peakMemory(S) > InitPeak)
    return false;
  if (!squeeze(S, M) || !cooldown(S))
    return false;
  Peak = peakMemory(S);
  return Peak <= InitPeak;
}

/// Rows to an order: rank i holds stage i (F b w) and 2P-1-i (f B W),
/// 6M jobs in all.
Order toOrder(const Rows &S, int P, int M) {
  Order O;
  O.Ranks.assign(P, {});
  for (int I = 0; I < P; ++I) {
    O.Ranks[I].reserve(size_t(6) * M);
    int Cnt[6] = {};
    for (char C : S[I]) {
      if (C == ' ')
        continue;
      int Sl = slotIndex(C);
      bool Chunk1 = C == 'f' || C == 'B' || C == 'W';
      int32_t Stage = Chunk1 ? 2 * P - 1 - I : I;
      JobKind K = (C == 'F' || C == 'f')   ? JobKind::F
                  : (C == 'B' || C == 'b') ? JobKind::I
                                           : JobKind::W;
      O.Ranks[I].push_back({K, Cnt[Sl]++, Stage});
    }
  }
  return O;
}

/// The orders of one candidate's rows, each with its evaluation: as
/// repeated (Raw), when within the limit, and rewritten (warmup, squeeze,
/// cooldown; repaired when it waits on itself), when every step holds and
/// it stays within the limit. Take(Raw, Order, Evaluation) sees each.
template <typename Sink>
void candidateOrders(const Problem &P, const std::vector<Pattern> &Whole,
                     PatternSchedule &PS, Rows &S, const Sink &Take) {
  const int R = P.Ranks;
  const DeltaTable Memory(P);
  PS.buildRaw(Whole, S);
  const int64_t RawPeak = peakOf(S, Memory);
  if (RawPeak <= P.MemoryLimit) {
    Order O = toOrder(S, R, P.Microbatches);
    Evaluation E = evaluate(P, O);
    Take(/*Raw=*/true, O, E);
  }
  int Peak = 0;
  if (!PS.build(Whole, S, Peak, P.MemoryLimit, /*RawInOut=*/true, RawPeak) ||
      peakOf(S, Memory) > P.MemoryLimit)
    return;
  Order O = toOrder(S, R, P.Microbatches);
  Evaluation E = evaluate(P, O);
  // The rewrite can leave an order that waits on itself at larger P;
  // repair it with the fewest moves rather than drop the pattern.
  if (!E.Valid && repairOrder(P, O, /*MaxMoves=*/8u * unsigned(R)))
    E = evaluate(P, O);
  Take(/*Raw=*/false, O, E);
}

} // namespace

std::optional<Result> vPatternSearch(const Problem &P, unsigned Threads) {
  if (P.Place != ir::Placement::V || P.Stages != 2 * P.Ranks ||
      !P.validate().empty() || P.Ranks < 2)
    return std::nullopt;
  const int R = P.Ranks, M = P.Microbatches;
  std::vector<Pattern> Patterns;
  for (int FF = 1; FF < Period; ++FF)
    for (int B = 1; B < Period; ++B)
      for (int BB = 1; BB < Period; ++BB) {
        if (FF == B || FF == BB || B == BB)
          continue;
        Patterns.push_back(fillW({0, FF, B, BB, -1, -1}));
      }
  std::vector<std::array<int, 4>> Offsets;
  for (int K = 1; K <= 5; ++K)
    Offsets.push_back({K, -1, K, -1});

  // A candidate: the choices that name it and the rows they give.
  struct Candidate {
    Pattern P0;
    int I0, I1, Len0;
    std::vector<Pattern> Whole;
    std::optional<Evaluation> Raw, Full;
  };
  // Many choices give the same rows (the second offset does not matter
  // when the split is at the last rank, the second phase revisits the
  // first's choices, ...): about two thirds of them at P >= 32. The result
  // depends on the rows alone, and a repeat can never be strictly better
  // than its first, so each is built once.
  std::set<std::vector<Pattern>> Seen;
  std::vector<Candidate> Cands;
  std::vector<Pattern> Whole;
  auto Add = [&](const Pattern &P0, int I0, int I1, int Len0) {
    if (wholePattern(P0, Offsets[I0], Offsets[I1], Len0, R, Whole) &&
        Seen.insert(Whole).second)
      Cands.push_back({P0, I0, I1, Len0, Whole, std::nullopt, std::nullopt});
  };
  // The candidates are built and timed in parallel (one PatternSchedule
  // and row set per thread), then offered in the order they were listed:
  // the same best as one at a time, whatever the threads.
  const unsigned NT = workerThreads(Threads);
  const DeltaTable Memory(P);
  std::vector<PatternSchedule> Scratch(NT, PatternSchedule(R, M, Memory));
  std::vector<Rows> ScratchRows(NT);
  // The best so far: a candidate and which of its orders.
  int BestCand = -1;
  bool BestRaw = false;
  auto Run = [&](size_t From) {
    parallelFor(Cands.size() - From, NT, [&](size_t K, unsigned Wk) {
      Candidate &C = Cands[From + K];
      candidateOrders(P, C.Whole, Scratch[Wk], ScratchRows[Wk],
                      [&](bool Raw, Order &, Evaluation &E) {
                        (Raw ? C.Raw : C.Full) = std::move(E);
                      });
    });
    for (size_t K = From; K < Cands.size(); ++K)
      for (bool Raw : {true, false}) {
        std::optional<Evaluation> &E = Raw ? Cands[K].Raw : Cands[K].Full;
        if (!E || !E->Valid || E->MaxPeakMemory > P.MemoryLimit)
          continue;
        if (BestCand >= 0) {
          const Candidate &B = Cands[size_t(BestCand)];
          if (!better(*E, BestRaw ? *B.Raw : *B.Full, P.Goal))
            continue;
        }
        BestCand = int(K);
        BestRaw = Raw;
      }
  };

  const int NOff = int(Offsets.size());
  if (R <= 8) {
    // The paper's search: every pattern, offset pair and split point.
    for (const Pattern &P0 : Patterns)
      for (int I0 = 0; I0 < NOff; ++I0)
        for (int I1 = 0; I1 <= I0; ++I1)
          for (int Len0 = 1; Len0 < R; ++Len0)
            Add(P0, I0, I1, Len0);
    Run(0);
  } else {
    // Larger P: the same space in two phases, so P = 32 stays near a
    // second. First every pattern and first offset, with the second offset
    // at 1 (the usual winner in the exhaustive searches, P <= 16) or equal
    // to the first (V-Half's shape), at four split points; then every
    // pattern and offset pair at split points around the best.
    llvm::SmallVector<int, 8> Coarse;
    for (int L : {1, R / 2 - 1, R / 2, R - 1})
      if (L >= 1 && L < R && llvm::find(Coarse, L) == Coarse.end())
        Coarse.push_back(L);
    for (const Pattern &P0 : Patterns)
      for (int I0 = 0; I0 < NOff; ++I0)
        for (int Len0 : Coarse) {
          Add(P0, I0, 0, Len0);
          if (I0 != 0)
            Add(P0, I0, I0, Len0); // one offset throughout (V-Half's shape)
        }
    Run(0);
    if (BestCand >= 0) {
      const int L = Cands[size_t(BestCand)].Len0;
      const int I1 = Cands[size_t(BestCand)].I1;
      size_t Phase2 = Cands.size();
      for (const Pattern &P0 : Patterns)
        for (int I0 = 0; I0 < NOff; ++I0)
          for (int Len0 = std::max(1, L - 3); Len0 <= std::min(R - 1, L + 3);
               ++Len0)
            Add(P0, I0, I1, Len0);
      Run(Phase2);
    }
  }
  if (BestCand < 0)
    return std::nullopt;
  // The winner's order, built again (the search kept figures only).
  const Candidate &B = Cands[size_t(BestCand)];
  std::optional<Result> Best;
  candidateOrders(P, B.Whole, Scratch[0], ScratchRows[0],
                  [&](bool Raw, Order &O, Evaluation &E) {
                    if (Raw == BestRaw)
                      Best = Result{std::move(O), std::move(E), ""};
                  });
  assert(Best && "the winner builds as it did in the search");
  Best->Algorithm = fmt::format("v-pattern{}(k0={},k1={},len0={},p0={})",
                                BestRaw ? "-raw" : "", Offsets[B.I0][0],
                                Offsets[B.I1][0], B.Len0, fmt::join(B.P0, ""));
  return Best;
}

} // namespace pps::synth
