//===- Prefetch.h - a cache hint for the line N elements ahead ------------===//
//
// The walks that visit many ranks in turn (the dependency timeline, the
// deadlock walk, the simulator's engine) read each rank's arrays as one
// sequential stream per rank; with dozens of ranks interleaved the hardware
// prefetcher loses them, so a walk asks for the lines it reads next as it
// leaves a rank. The element asked for may lie past the end of its array
// (or the array may be empty, its data null): the address is computed as
// an integer, so no out-of-bounds pointer is formed and nothing is read.
// A prefetch never faults and never changes a result.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>

namespace pps {

/// The address of P[N] as a hint only (never dereferenced): the
/// integer-to-pointer cast is the point, so clang-tidy's
/// performance-no-int-to-ptr does not apply.
template <typename T> inline const void *hintAddress(const T *P, size_t N) {
  return reinterpret_cast<const void *>( // NOLINT(performance-no-int-to-ptr)
      reinterpret_cast<uintptr_t>(P) + N * sizeof(T));
}

/// Hints that the line holding P[N] will be read soon.
template <typename T> inline void prefetchRead(const T *P, size_t N) {
  __builtin_prefetch(hintAddress(P, N));
}

/// Hints that the line holding P[N] will be written soon.
template <typename T> inline void prefetchWrite(const T *P, size_t N) {
  __builtin_prefetch(hintAddress(P, N), 1);
}

} // namespace pps
