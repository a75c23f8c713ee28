//===- Parallel.h - a deterministic parallel loop for synthesis (private) -===//
//
// The searches try many independent candidates (the V search's pattern
// sets, the greedy's rule variants). parallelFor runs them on a few
// threads; each body writes only its own index's slot, and the caller then
// reads the slots in index order, so a result never depends on the number
// of threads or on which thread ran what.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace pps::synth {

/// The threads a search uses: Requested, or with 0 one per core (at most
/// 4: the candidates are few and memory-bound).
inline unsigned searchThreads(unsigned Requested) {
  if (Requested > 0)
    return Requested;
  return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
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
    for (size_t I; (I = Next.fetch_add(1)) < N;)
      Body(I, Worker);
  };
  std::vector<std::thread> Pool;
  for (unsigned W = 1; W < Threads; ++W)
    Pool.emplace_back(Work, W);
  Work(0);
  for (std::thread &T : Pool)
    T.join();
}

} // namespace pps::synth
