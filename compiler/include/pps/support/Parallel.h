//===- Parallel.h - a deterministic parallel loop -------------------------===//
//
// Loops whose iterations are independent (synthesis' candidates, the
// passes' per-rank walks) run on a few threads. Each body writes only its
// own index's slot (or its worker's scratch), and the caller then reads the
// slots in index order, so a result never depends on the number of threads
// or on which thread ran what.
//
// PPS_THREADS=N in the environment sets the threads (1: everything on the
// calling thread); by default one per core, at most 4 (the loops are
// memory-bound).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

namespace pps {

/// The threads a loop uses: Requested if not 0 (synthesis' option), else
/// PPS_THREADS, else one per core, at most 4.
inline unsigned workerThreads(unsigned Requested = 0) {
  if (Requested > 0)
    return Requested;
  static const unsigned N = [] {
    if (const char *E = std::getenv("PPS_THREADS")) {
      char *End = nullptr;
      long V = std::strtol(E, &End, 10);
      if (End != E && *End == '\0' && V >= 1)
        return unsigned(std::min<long>(V, 64));
    }
    return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  }();
  return N;
}

/// The threads worth starting for a loop over Work actions: one below
/// 64k actions, where the loop is too short to gain from a second thread.
inline unsigned threadsForActions(uint64_t Work) {
  return Work < (uint64_t(1) << 16) ? 1u : workerThreads();
}

/// Calls Body(Index, Worker) for every Index in [0, N) on up to Threads
/// threads (the calling thread is worker 0); Worker < Threads names the
/// thread, for per-thread scratch space.
template <typename Fn>
void parallelFor(size_t N, unsigned Threads, const Fn &Body) {
  Threads = unsigned(std::min<size_t>(std::max(Threads, 1u), N));
  if (Threads <= 1) {
    for (size_t I = 0; I < N; ++I)
      Body(I, 0u);
    return;
  }
  std::atomic<size_t> Next{0};
  auto Work = [&](unsigned Worker) {
    for (size_t I; (I = Next.fetch_add(1, std::memory_order_relaxed)) < N;)
      Body(I, Worker);
  };
  std::vector<std::thread> Pool;
  for (unsigned W = 1; W < Threads; ++W)
    Pool.emplace_back(Work, W);
  Work(0);
  for (std::thread &T : Pool)
    T.join();
}

/// The sum of Body(Index, Worker) over every Index in [0, N), each term
/// computed as parallelFor computes it and added in index order.
template <typename Fn>
uint64_t parallelSum(size_t N, unsigned Threads, const Fn &Body) {
  std::vector<uint64_t> Terms(N, 0);
  parallelFor(N, Threads,
              [&](size_t I, unsigned Worker) { Terms[I] = Body(I, Worker); });
  uint64_t Sum = 0;
  for (uint64_t T : Terms)
    Sum += T;
  return Sum;
}

} // namespace pps
