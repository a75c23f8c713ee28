//===- Buffer.h - runtime-owned byte buffers for activations and gradients -===//
//
// Activations and gradients move between ranks as Buffers. The in-process
// transport hands a Buffer over by moving it (zero copy); the MPI transport
// sends its bytes. A Buffer is aligned for any scalar type (it is allocated
// with operator new), and typed views are a cast away.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <vector>

namespace ppsrt {

/// A contiguous block of bytes with typed views.
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(size_t Bytes) : Data(Bytes) {}

  size_t bytes() const { return Data.size(); }
  bool empty() const { return Data.empty(); }
  unsigned char *data() { return Data.data(); }
  const unsigned char *data() const { return Data.data(); }
  void resizeBytes(size_t N) { Data.resize(N); }
  void clear() { Data.clear(); Data.shrink_to_fit(); }

  /// Number of T elements the buffer holds.
  template <class T> size_t count() const { return Data.size() / sizeof(T); }
  /// Resizes to N elements of T (new bytes are zero).
  template <class T> void resize(size_t N) { Data.resize(N * sizeof(T)); }
  template <class T> T *as() { return reinterpret_cast<T *>(Data.data()); }
  template <class T> const T *as() const {
    return reinterpret_cast<const T *>(Data.data());
  }

private:
  std::vector<unsigned char> Data;
};

} // namespace ppsrt
