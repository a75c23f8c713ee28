//===- Templates.cpp - stdlib schedules as synthesis orders ---------------===//
//
// The compute orders of the standard library's schedules that are plain
// loops, built by the same rules as the .pps files (a B becomes I then W):
//
//  * one stage per rank: gpipe.pps, one_f_one_b.pps, zb_h1.pps, and
//    zb_h2.pps's unit-slot list scheduler with every activation cap from 1
//    to the memory limit (its `mem` parameter; the default 2P - 1 is one of
//    them);
//  * several stages per rank: interleaved_1f1b.pps (group size P, no
//    overlap) and looped_bfs.pps;
//  * V placement: zb_v.pps; and v_half.pps and v_min.pps compiled from the
//    stdlib itself (their published order is std.vshape's port of the
//    zero-bubble code's zbv_greedy steps, some 600 lines of .pps that a C++
//    copy would have to track), when their peak fits the limit.
//
// The orders ignore the costs (so do the .pps files); the evaluator times
// them under the problem's costs and latency, and the portfolio keeps the
// best that fits the limit. With them synth can never return a schedule
// slower than one of these that fits the same limit; the search still has
// to find the better ones (tests/unit/synth/DifferentialTest.cpp compiles
// the .pps files and checks synth against them).
//
//===----------------------------------------------------------------------===//
#include "pps/synth/Algorithms.h"

#include "pps/support/Parallel.h"

#include "pps/frontend/Frontend.h"
#include "pps/support/Diagnostics.h"
#include "pps/support/SourceManager.h"

#include <fmt/format.h>

#include <algorithm>

namespace pps::synth {

namespace {

using Jobs = std::vector<Job>;

void backward(Jobs &L, int32_t Mb, int32_t Stage) {
  L.push_back({JobKind::I, Mb, Stage});
  L.push_back({JobKind::W, Mb, Stage});
}

Order gpipe(const Problem &P) {
  Order O;
  O.Ranks.assign(P.Ranks, {});
  for (int32_t R = 0; R < P.Ranks; ++R) {
    for (int32_t I = 0; I < P.Microbatches; ++I)
      O.Ranks[R].push_back({JobKind::F, I, R});
    for (int32_t I = 0; I < P.Microbatches; ++I)
      backward(O.Ranks[R], I, R);
  }
  return O;
}

/// 1F1B (Split = false: B as I then W) or ZB-H1 (Split = true: rank r
/// defers its W in its first r steady steps).
Order oneFOneB(const Problem &P, bool Split) {
  const int32_t M = P.Microbatches;
  Order O;
  O.Ranks.assign(P.Ranks, {});
  for (int32_t R = 0; R < P.Ranks; ++R) {
    Jobs &L = O.Ranks[R];
    int32_t Warm = std::min(P.Ranks - R - 1, M), NW = 0;
    auto Back = [&](int32_t I) {
      L.push_back({JobKind::I, I, R});
      if (!Split) {
        L.push_back({JobKind::W, I, R});
        ++NW;
      } else if (I >= R) {
        L.push_back({JobKind::W, NW++, R});
      }
    };
    for (int32_t I = 0; I < Warm; ++I)
      L.push_back({JobKind::F, I, R});
    for (int32_t I = 0; I < M - Warm; ++I) {
      L.push_back({JobKind::F, I + Warm, R});
      Back(I);
    }
    for (int32_t I = M - Warm; I < M; ++I)
      Back(I);
    while (NW < M)
      L.push_back({JobKind::W, NW++, R});
  }
  return O;
}

/// zb_h2.pps: in every unit slot each rank runs, in priority order, its
/// next I if its input gradient has arrived, else its next F if it has
/// arrived and fewer than Cap activations are live, else its oldest W.
std::optional<Order> zbH2(const Problem &P, int64_t Cap) {
  const int32_t N = P.Ranks, M = P.Microbatches;
  constexpr int64_t Never = INT64_MAX;
  std::vector<int64_t> FEnd(size_t(N) * M, Never), IEnd(size_t(N) * M, Never);
  std::vector<int32_t> NF(N, 0), NI(N, 0), NW(N, 0);
  Order O;
  O.Ranks.assign(N, {});
  int64_t Left = P.numJobs();
  for (int64_t T = 0; Left > 0; ++T) {
    if (T > 4 * int64_t(P.numJobs()) + 8)
      return std::nullopt; // cannot happen for Cap >= 1; a guard
    for (int32_t R = 0; R < N; ++R) {
      bool Done = false;
      int32_t Mb = NI[R];
      if (Mb < NF[R]) {
        int64_t Ready = R == N - 1 ? FEnd[size_t(R) * M + Mb]
                                   : IEnd[size_t(R + 1) * M + Mb];
        if (Ready <= T) {
          IEnd[size_t(R) * M + Mb] = T + 1;
          ++NI[R];
          O.Ranks[R].push_back({JobKind::I, Mb, R});
          Done = true;
        }
      }
      if (!Done && NF[R] < M && NF[R] - NW[R] < Cap) {
        int32_t F = NF[R];
        if (R == 0 || FEnd[size_t(R - 1) * M + F] <= T) {
          FEnd[size_t(R) * M + F] = T + 1;
          ++NF[R];
          O.Ranks[R].push_back({JobKind::F, F, R});
          Done = true;
        }
      }
      if (!Done && NW[R] < NI[R]) {
        O.Ranks[R].push_back({JobKind::W, NW[R]++, R});
        Done = true;
      }
      if (Done)
        --Left;
    }
  }
  return O;
}

/// common.pps il_chunk: the chunk of a rank's k-th forward (or backward)
/// when microbatches go through the chunks in rounds.
int32_t ilChunk(int64_t K, int64_t G, int64_t Base, int64_t Rem, int64_t V) {
  int64_t Big = G + Base + 1;
  if (K < Rem * Big * V)
    return int32_t((K % (Big * V)) / Big);
  int64_t K2 = K - Rem * Big * V, Sz = G + Base;
  return int32_t((K2 % (Sz * V)) / Sz);
}

/// interleaved_1f1b.pps with g = P and no overlap.
Order interleaved(const Problem &P) {
  const int64_t N = P.Ranks, M = P.Microbatches, V = P.Stages / P.Ranks;
  int64_t G = std::min<int64_t>(N, M), Rounds = M / G;
  int64_t Base = (M % G) / Rounds, Rem = (M % G) % Rounds;
  int64_t First = G + Base + (Rem > 0 ? 1 : 0), Total = M * V;
  Order O;
  O.Ranks.assign(N, {});
  for (int64_t R = 0; R < N; ++R) {
    Jobs &L = O.Ranks[R];
    int64_t Warm = std::min((V - 1) * First + 2 * (N - 1 - R), Total);
    std::vector<int32_t> FC(V, 0), BC(V, 0);
    auto F = [&](int64_t K) {
      int32_t C = ilChunk(K, G, Base, Rem, V);
      L.push_back({JobKind::F, FC[C]++, int32_t(C * N + R)});
    };
    for (int64_t K = 0; K < Warm; ++K)
      F(K);
    // Steady state: F(k) then the B of op k - warm, emitted before the next
    // F (as the .pps file does with its pending B).
    std::optional<Job> Pend;
    for (int64_t K = Warm; K < Total; ++K) {
      if (Pend)
        backward(L, Pend->Mb, Pend->Stage);
      F(K);
      int32_t D = int32_t(V - 1) - ilChunk(K - Warm, G, Base, Rem, V);
      Pend = Job{JobKind::I, BC[D]++, int32_t(D * N + R)};
    }
    if (Pend)
      backward(L, Pend->Mb, Pend->Stage);
    for (int64_t K = Total - Warm; K < Total; ++K) {
      int32_t D = int32_t(V - 1) - ilChunk(K, G, Base, Rem, V);
      backward(L, BC[D]++, int32_t(D * N + R));
    }
  }
  return O;
}

Order loopedBfs(const Problem &P) {
  const int32_t N = P.Ranks, M = P.Microbatches, V = P.Stages / P.Ranks;
  Order O;
  O.Ranks.assign(N, {});
  for (int32_t R = 0; R < N; ++R) {
    for (int32_t C = 0; C < V; ++C)
      for (int32_t I = 0; I < M; ++I)
        O.Ranks[R].push_back({JobKind::F, I, C * N + R});
    for (int32_t C = V - 1; C >= 0; --C)
      for (int32_t I = M - 1; I >= 0; --I)
        backward(O.Ranks[R], I, C * N + R);
  }
  return O;
}

/// zb_v.pps (V placement, two stages per rank): PyTorch's
/// ScheduleZBVZeroBubble order, built for max(M, 2P - 1) microbatches with
/// the ones beyond M dropped.
Order zbV(const Problem &P) {
  const int32_t N = P.Ranks, M = P.Microbatches, Nn = std::max(2 * N - 1, M);
  Order O;
  O.Ranks.assign(N, {});
  for (int32_t R = 0; R < N; ++R) {
    Jobs &L = O.Ranks[R];
    const int32_t S0 = R, S1 = 2 * N - 1 - R;
    int32_t F0 = 0, F1 = 0, B0 = 0, B1 = 0;
    auto Put = [&](JobKind K, int32_t &Ctr, int32_t S) {
      if (Ctr < M)
        L.push_back({K, Ctr, S});
      ++Ctr;
    };
    auto Back = [&](int32_t &Ctr, int32_t S) {
      if (Ctr < M)
        backward(L, Ctr, S);
      ++Ctr;
    };
    for (int32_t I = 0; I < 2 * (N - R) - 1; ++I)
      Put(JobKind::F, F0, S0);
    for (int32_t I = 0; I < R; ++I) {
      Put(JobKind::F, F1, S1);
      Put(JobKind::F, F0, S0);
    }
    for (int32_t I = 0; I < N - R; ++I) {
      Put(JobKind::F, F1, S1);
      Back(B1, S1);
    }
    while (F1 < F0 || F0 < Nn) {
      if (F0 < Nn)
        Put(JobKind::F, F0, S0);
      Back(B0, S0);
      Put(JobKind::F, F1, S1);
      Back(B1, S1);
    }
    int32_t W0 = B0, W1 = B1;
    for (int32_t I = 0; I < R; ++I) {
      Put(JobKind::I, B0, S0);
      Put(JobKind::I, B1, S1);
    }
    for (int32_t I = 0; I < N - R; ++I) {
      Put(JobKind::I, B0, S0);
      Put(JobKind::W, W0, S0);
    }
    while (W1 < B1)
      Put(JobKind::W, W1, S1);
    while (W0 < B0)
      Put(JobKind::W, W0, S0);
  }
  return O;
}

bool isV(const Problem &P) {
  if (P.Stages != 2 * P.Ranks)
    return false;
  for (int32_t R = 0; R < P.Ranks; ++R)
    if (P.rankOf(R) != R || P.rankOf(2 * P.Ranks - 1 - R) != R)
      return false;
  return true;
}

/// The order of stdlib schedule Name at P's sizes under V placement,
/// compiled from the stdlib (StdlibDir, or the front end's search path);
/// empty if it does not compile (the stdlib is not found, say).
std::optional<Order> compiledV(const Problem &P, const char *Name,
                               const std::string &StdlibDir) {
  std::string Text = fmt::format(
      "pipeline floor {{ ranks {}; stages {} placement v; microbatches {}; "
      "schedule {}(); }}\n",
      P.Ranks, P.Stages, P.Microbatches, Name);
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  frontend::FrontendOptions FO;
  FO.StdlibDir = StdlibDir;
  // The stdlib's own program, not input: V-Half's steps grow like P^3
  // (about 230M at P = 128), so deeper pipelines get twice the default.
  FO.StepBudget = 2 * FO.StepBudget;
  std::optional<ir::Schedule> S =
      frontend::compileBuffer("<synth floor>", Text, SM, Diags, FO);
  if (!S || Diags.hasErrors())
    return std::nullopt;
  return fromIr(*S);
}

} // namespace

std::vector<Result> stdlibTemplates(const Problem &P,
                                    const std::string &StdlibDir,
                                    unsigned Threads) {
  std::vector<Result> Out;
  if (!P.validate().empty())
    return Out;
  bool Loop = P.Stages % P.Ranks == 0;
  for (int32_t S = 0; S < P.Stages && Loop; ++S)
    Loop = P.rankOf(S) == S % P.Ranks;
  bool V = isV(P);
  if (!Loop && !V)
    return Out;
  auto Add = [&](std::optional<Order> O, std::string Name) {
    if (!O)
      return;
    Evaluation E = evaluate(P, *O);
    if (E.Valid)
      Out.push_back({std::move(*O), std::move(E), std::move(Name)});
  };
  if (V) {
    Add(zbV(P), "stdlib zb_v");
    // V-Half and V-Min, where their peaks (stdlib headers: (P + 2) / 2 and
    // (P + 4) / 3 whole-stage microbatches, in chunks twice that, for
    // M >= P; less below) can fit.
    // Each live chunk holds at least what stays after its I (memory ticks).
    const int64_t Ranks = P.Ranks;
    const int64_t Held = std::max<int64_t>(P.memoryAfterInput(), 1);
    const int64_t Peak[] = {2 * ((Ranks + 2) / 2) * Held,
                            2 * ((Ranks + 4) / 3) * Held};
    const char *Names[] = {"v_half", "v_min"};
    std::optional<Order> Orders[2];
    parallelFor(2, workerThreads(Threads), [&](size_t K, unsigned) {
      if (Peak[K] <= P.MemoryLimit || P.Microbatches < P.Ranks)
        Orders[K] = compiledV(P, Names[K], StdlibDir);
    });
    for (size_t K = 0; K < 2; ++K)
      Add(std::move(Orders[K]), fmt::format("stdlib {}", Names[K]));
  } else if (P.Stages == P.Ranks) {
    Add(gpipe(P), "stdlib gpipe");
    Add(oneFOneB(P, /*Split=*/false), "stdlib one_f_one_b");
    Add(oneFOneB(P, /*Split=*/true), "stdlib zb_h1");
    // zb_h2's cap counts live activations; under a memory model where I
    // frees part, more of them can fit the limit (each holds at least
    // what stays after its I).
    const int64_t Held = P.memoryAfterInput();
    int64_t MaxCap =
        Held > 0 ? std::min<int64_t>(P.MemoryLimit / Held, P.Microbatches)
                 : P.Microbatches;
    for (int64_t Cap = 1; Cap <= MaxCap; ++Cap)
      Add(zbH2(P, Cap), fmt::format("stdlib zb_h2(mem: {})", Cap));
  } else {
    Add(interleaved(P), "stdlib interleaved_1f1b");
    Add(loopedBfs(P), "stdlib looped_bfs");
  }
  return Out;
}

} // namespace pps::synth
