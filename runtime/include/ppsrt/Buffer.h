//===- Buffer.h - runtime-owned byte buffers for activations and gradients ===//
//
// Activations and gradients move between ranks as Buffers. The in-process
// transport hands a Buffer over by moving it (zero copy); the MPI transport
// sends its bytes. A Buffer is aligned for any scalar type (it is allocated
// with operator new[]), and typed views are a cast away.
//
// A Buffer can also carry an object instead of bytes (a Payload, e.g. a
// tensor) and a short header describing it (e.g. dtype and shape). The
// threads transport hands the object over as is; the MPI transport sends the
// header and then the object's contiguous bytes, and the receiving Buffer
// holds the header and the bytes (see MpiTransport.h). Nothing here depends
// on what the object is, so the runtime needs no tensor library.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

namespace ppsrt {

/// An object a Buffer carries instead of its bytes (for example a tensor).
class Payload {
public:
  virtual ~Payload() = default;
  /// A short description of the contents, sent ahead of the bytes by the MPI
  /// transport (at most MaxHeaderBytes).
  virtual std::string header() const = 0;
  /// The contents as contiguous bytes; valid while the payload lives.
  virtual const void *contiguousBytes(size_t &Bytes) const = 0;
};

/// Longest Buffer header the MPI transport carries.
constexpr size_t MaxHeaderBytes = 512;

/// A contiguous block of bytes with typed views. Growing does not
/// initialise the new bytes (a receive overwrites them anyway); shrinking
/// keeps the memory for reuse.
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(size_t Bytes) { resizeBytes(Bytes); }
  Buffer(const Buffer &O) { *this = O; }
  Buffer(Buffer &&O) noexcept { *this = std::move(O); }
  /// Copies the bytes; a payload is shared, not copied.
  Buffer &operator=(const Buffer &O) {
    if (this != &O) {
      resizeBytes(O.Size);
      if (O.Size)
        std::memcpy(Data.get(), O.Data.get(), O.Size);
      Object = O.Object;
      Header = O.Header;
    }
    return *this;
  }
  Buffer &operator=(Buffer &&O) noexcept {
    Data = std::move(O.Data);
    Size = O.Size;
    Capacity = O.Capacity;
    O.Size = O.Capacity = 0;
    Object = std::move(O.Object);
    Header = std::move(O.Header);
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
    Object.reset();
    Header.clear();
  }
  /// Drops the contents (bytes, payload, header) but keeps the memory.
  void reset() {
    Size = 0;
    Object.reset();
    Header.clear();
  }

  /// The object carried instead of bytes, if any.
  const std::shared_ptr<Payload> &payload() const { return Object; }
  void setPayload(std::shared_ptr<Payload> P) { Object = std::move(P); }
  /// The header of a payload: set by the sender, or by the MPI transport on
  /// the receiving side (where the bytes are the payload's bytes).
  const std::string &header() const { return Header; }
  void setHeader(std::string H) { Header = std::move(H); }

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
  std::shared_ptr<Payload> Object;
  std::string Header;
};

} // namespace ppsrt
