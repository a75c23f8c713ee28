//===- Buffer.h - runtime-owned byte buffers for activations and gradients ===//
//
// Activations and gradients move between ranks as Buffers. The in-process
// transport hands a Buffer over by moving it (zero copy); the MPI transport
// sends its bytes. A Buffer is aligned for any scalar type (it is allocated
// with operator new[]), and typed views are a cast away.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>

namespace ppsrt {

/// A contiguous block of bytes with typed views. Growing does not
/// initialise the new bytes (a receive overwrites them anyway); shrinking
/// keeps the memory for reuse.
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(size_t Bytes) { resizeBytes(Bytes); }
  Buffer(const Buffer &O) { *this = O; }
  Buffer(Buffer &&O) noexcept { *this = std::move(O); }
  Buffer &operator=(const Buffer &O) {
    if (this != &O) {
      resizeBytes(O.Size);
      if (O.Size)
        std::memcpy(Data.get(), O.Data.get(), O.Size);
    }
    return *this;
  }
  Buffer &operator=(Buffer &&O) noexcept {
    Data = std::move(O.Data);
    Size = O.Size;
    Capacity = O.Capacity;
    O.Size = O.Capacity = 0;
    return *this;
  }

  size_t bytes() const { return Size; }
  bool empty() const { return Size == 0; }
  unsigned char *data() { return Data.get(); }
  const unsigned char *data() const { return Data.get(); }
  /// Resizes to N bytes; bytes beyond the old size are uninitialised.
  void resizeBytes(size_t N) {
    if (N > Capacity) {
      std::unique_ptr<unsigned char[]> New(new unsigned char[N]);
      if (Size)
        std::memcpy(New.get(), Data.get(), Size);
      Data = std::move(New);
      Capacity = N;
    }
    Size = N;
  }
  /// Drops the contents and the memory.
  void clear() {
    Data.reset();
    Size = Capacity = 0;
  }

  /// Number of T elements the buffer holds.
  template <class T> size_t count() const { return Size / sizeof(T); }
  /// Resizes to N elements of T (new elements uninitialised).
  template <class T> void resize(size_t N) { resizeBytes(N * sizeof(T)); }
  template <class T> T *as() { return reinterpret_cast<T *>(Data.get()); }
  template <class T> const T *as() const {
    return reinterpret_cast<const T *>(Data.get());
  }

private:
  // operator new[] of unsigned char is aligned for any fundamental type.
  std::unique_ptr<unsigned char[]> Data;
  size_t Size = 0;
  size_t Capacity = 0;
};

} // namespace ppsrt
