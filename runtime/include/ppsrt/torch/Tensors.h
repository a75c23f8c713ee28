//===- Tensors.h - tensors in runtime Buffers, and activation accounting --===//
//
// Part of pps_runtime_torch. Two pieces the stage kernels build on:
//
//  * Tensors cross ranks inside ppsrt::Buffers: toBuffer() wraps a tensor as
//    the Buffer's payload (the threads transport hands it over as is, no
//    copy); the MPI transport sends the payload's header (dtype and shape)
//    and its contiguous bytes, and fromBuffer() rebuilds the tensor from
//    them on the receiving rank.
//
//  * Activation bytes are measured, not estimated: a CPU allocator wrapping
//    libtorch's records every allocation made inside a ChargeScope as
//    *claimed* by that scope's Account (one per (m, s) forward), and takes
//    it off when the memory is freed, on whatever thread that happens. An
//    account can also claim a tensor it received (handed over by another
//    rank's thread without a copy), so a storage may have several claimants
//    and each counts it, as if each held its own copy (as on two devices).
//    Releasing an account drops its claims; memory still alive with no
//    claimant left is counted as *leaked* in the account's Pool (the rank)
//    until it is freed. A Pool's bytes are therefore exactly what its live
//    activations hold, plus what outlived its activation. Allocations a
//    rank's thread makes outside any ChargeScope (weights, gradients,
//    optimizer state, the backward's temporaries) are its pool's *other*
//    bytes, whose peak the profile reports (MemoryTracker::countOtherBytes).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/Buffer.h"

#include <ATen/ATen.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace ppsrt {
namespace torch {

/// A tensor as a Buffer payload.
class TensorPayload : public Payload {
public:
  explicit TensorPayload(at::Tensor T) : T(std::move(T)) {}
  std::string header() const override;
  const void *contiguousBytes(size_t &Bytes) const override;
  const at::Tensor &tensor() const { return T; }

private:
  at::Tensor T;
  mutable at::Tensor Contiguous; ///< made on demand for the MPI transport
};

/// The header of a tensor: a version byte, the dtype, the rank and the
/// sizes (little-endian int64).
std::string encodeTensorHeader(at::ScalarType Type, at::IntArrayRef Sizes);
/// Decodes a header; false (with Error set) if it is not a tensor header.
bool decodeTensorHeader(const std::string &Header, at::ScalarType &Type,
                        std::vector<int64_t> &Sizes, std::string &Error);

/// A Buffer carrying T (no copy).
Buffer toBuffer(const at::Tensor &T);
/// The tensor in B: its payload (no copy), or one rebuilt from the header
/// and bytes the MPI transport received. Throws std::runtime_error on a
/// Buffer that holds no tensor.
at::Tensor fromBuffer(const Buffer &B);

/// "float32 [4, 32, 64]".
std::string describeTensor(at::ScalarType Type, at::IntArrayRef Sizes);
std::string describeTensor(const at::Tensor &T);

/// A rank's activation bytes: what its live accounts claim, plus memory
/// still alive after its last claimant was released.
struct Pool {
  std::atomic<int64_t> live{0};
  std::atomic<int64_t> leaked{0};
  int64_t bytes() const { return live.load() + leaked.load(); }
  /// Other bytes, and their peak (both under the tracker's lock).
  int64_t other = 0, otherPeak = 0;
};

/// The bytes one holder (one (m, s)'s forward) claims.
class Account {
public:
  explicit Account(Pool *P = nullptr) : pool(P) {}
  /// Drops the claims (MemoryTracker::release) if still held.
  ~Account();
  Account(const Account &) = delete;
  Account &operator=(const Account &) = delete;
  int64_t bytes() const { return live.load(); }

private:
  friend class MemoryTracker;
  friend class TrackingAllocator;
  void add(int64_t B);
  std::atomic<int64_t> live{0};
  Pool *pool;
  std::vector<void *> claims; ///< storages (guarded by the tracker)
};

/// Allocations on this thread are claimed by A while the scope lives.
class ChargeScope {
public:
  explicit ChargeScope(Account *A);
  ~ChargeScope();
  ChargeScope(const ChargeScope &) = delete;
  ChargeScope &operator=(const ChargeScope &) = delete;

private:
  Account *Prev;
};

/// The process's allocation tracker.
class MemoryTracker {
public:
  /// Installs the tracking CPU allocator (once per process). Returns false
  /// if libtorch's CPU allocator cannot be wrapped (bytes stay unmeasured).
  static bool install();
  static bool installed();
  /// A also claims T's storage (no effect if it already does).
  static void claim(const at::Tensor &T, Account *A);
  /// A no longer claims T's storage.
  static void unclaim(const at::Tensor &T, Account *A);
  /// Drops all of A's claims; storages still alive that nobody claims any
  /// more count as leaked in A's pool until they are freed.
  static void release(Account *A);
  /// Forgets A's records of storages freed since (bounds its memory).
  static void compact(Account *A);
  /// From now on, allocations on this thread outside a ChargeScope count
  /// as P's other bytes (null: not counted). Returns the previous pool.
  static Pool *countOtherBytes(Pool *P);
};

} // namespace torch
} // namespace ppsrt
