//===- Tensors.cpp - tensors in runtime Buffers, activation accounting ----===//
//
// One of the libtorch translation units of pps_runtime_torch: Tensors.h
// (tensor payloads and their headers, the tracking CPU allocator that
// measures what each (m, s) claims). StageKernels.cpp builds on it.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/torch/Tensors.h"

#include <c10/core/CPUAllocator.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace ppsrt {
namespace torch {

//===----------------------------------------------------------------------===//
// Tensors in Buffers
//===----------------------------------------------------------------------===//

static constexpr unsigned char HeaderVersion = 1;

std::string encodeTensorHeader(at::ScalarType Type, at::IntArrayRef Sizes) {
  std::string H;
  H.reserve(3 + 8 * Sizes.size());
  H.push_back(char(HeaderVersion));
  H.push_back(char(static_cast<unsigned char>(Type)));
  H.push_back(char(uint8_t(Sizes.size())));
  for (int64_t D : Sizes) {
    char B[8];
    std::memcpy(B, &D, 8);
    H.append(B, 8);
  }
  return H;
}

bool decodeTensorHeader(const std::string &H, at::ScalarType &Type,
                        std::vector<int64_t> &Sizes, std::string &Error) {
  if (H.size() < 3 || (unsigned char)H[0] != HeaderVersion) {
    Error = "the message has no tensor header";
    return false;
  }
  int T = int(static_cast<unsigned char>(H[1]));
  size_t Dims = (unsigned char)H[2];
  if (T < 0 || T >= int(at::ScalarType::NumOptions) ||
      H.size() != 3 + 8 * Dims) {
    Error = "the message's tensor header is corrupt";
    return false;
  }
  Type = static_cast<at::ScalarType>(T);
  Sizes.resize(Dims);
  for (size_t I = 0; I < Dims; ++I) {
    std::memcpy(&Sizes[I], H.data() + 3 + 8 * I, 8);
    if (Sizes[I] < 0) {
      Error = "the message's tensor header has a negative size";
      return false;
    }
  }
  return true;
}

std::string TensorPayload::header() const {
  return encodeTensorHeader(T.scalar_type(), T.sizes());
}

const void *TensorPayload::contiguousBytes(size_t &Bytes) const {
  if (!Contiguous.defined())
    Contiguous = T.is_contiguous() ? T : T.contiguous();
  Bytes = Contiguous.numel() * Contiguous.element_size();
  return Contiguous.data_ptr();
}

Buffer toBuffer(const at::Tensor &T) {
  Buffer B;
  B.setPayload(std::make_shared<TensorPayload>(T));
  return B;
}

at::Tensor fromBuffer(const Buffer &B) {
  if (B.payload()) {
    if (auto *P = dynamic_cast<const TensorPayload *>(B.payload().get()))
      return P->tensor();
    throw std::runtime_error("the message carries an object that is not a "
                             "tensor");
  }
  at::ScalarType Type;
  std::vector<int64_t> Sizes;
  std::string Error;
  if (!decodeTensorHeader(B.header(), Type, Sizes, Error))
    throw std::runtime_error(Error);
  at::Tensor T = at::empty(Sizes, at::TensorOptions().dtype(Type));
  size_t Want = size_t(T.numel()) * T.element_size();
  if (Want != B.bytes())
    throw std::runtime_error(
        fmt::format("the message has {} bytes, its header says {} ({})",
                    B.bytes(), Want, describeTensor(Type, Sizes)));
  if (Want)
    std::memcpy(T.data_ptr(), B.data(), Want);
  return T;
}

static std::string dtypeName(at::ScalarType T) {
  switch (T) {
  case at::kFloat:
    return "float32";
  case at::kDouble:
    return "float64";
  case at::kHalf:
    return "float16";
  case at::kBFloat16:
    return "bfloat16";
  case at::kLong:
    return "int64";
  case at::kInt:
    return "int32";
  case at::kShort:
    return "int16";
  case at::kChar:
    return "int8";
  case at::kByte:
    return "uint8";
  case at::kBool:
    return "bool";
  default:
    return c10::toString(T);
  }
}

std::string describeTensor(at::ScalarType Type, at::IntArrayRef Sizes) {
  std::string S = dtypeName(Type) + " [";
  for (size_t I = 0; I < Sizes.size(); ++I)
    S += fmt::format("{}{}", I ? ", " : "", Sizes[I]);
  return S + "]";
}

std::string describeTensor(const at::Tensor &T) {
  return describeTensor(T.scalar_type(), T.sizes());
}

//===----------------------------------------------------------------------===//
// The tracking allocator
//===----------------------------------------------------------------------===//

static thread_local Account *Charged = nullptr;
static thread_local Pool *OtherPool = nullptr;

/// Wraps libtorch's CPU allocator: every allocation gets our deleter (the
/// context is the data pointer, as the default allocator has it), and one
/// made inside a ChargeScope is recorded with its claimant. All records are
/// under one lock (allocations are few per action: tensors, not elements).
class TrackingAllocator final : public c10::Allocator {
public:
  c10::Allocator *Base = nullptr;
  c10::DeleterFnPtr BaseDeleter = nullptr;

  struct Entry {
    int64_t bytes = 0;
    std::vector<Account *> holders;
    Pool *orphanOf = nullptr; ///< counted as leaked there
    Pool *otherOf = nullptr;  ///< counted as other bytes there
  };
  std::mutex Mu;
  std::unordered_map<void *, Entry> Live;
  std::atomic<int64_t> Count{0};

  c10::DataPtr allocate(size_t N) const override {
    c10::DataPtr D = Base->allocate(N);
    void *P = D.get();
    c10::Device Dev = D.device();
    if (D.get_context() != P)
      return D; // not the default allocator's layout: leave it alone
    D.release_context();
    if (Account *A = Charged; A && P) {
      auto *Self = const_cast<TrackingAllocator *>(this);
      std::lock_guard<std::mutex> L(Self->Mu);
      Entry &E = Self->Live[P];
      E.bytes = int64_t(N);
      E.holders.assign(1, A);
      A->claims.push_back(P);
      A->add(int64_t(N));
      Self->Count.fetch_add(1, std::memory_order_relaxed);
    } else if (Pool *O = OtherPool; O && P) {
      auto *Self = const_cast<TrackingAllocator *>(this);
      std::lock_guard<std::mutex> L(Self->Mu);
      Self->Live[P] = Entry{int64_t(N), {}, nullptr, O};
      O->other += int64_t(N);
      O->otherPeak = std::max(O->otherPeak, O->other);
      Self->Count.fetch_add(1, std::memory_order_relaxed);
    }
    return {P, P, &TrackingAllocator::release, Dev};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  static TrackingAllocator &get() {
    static TrackingAllocator *T = new TrackingAllocator(); // never destroyed
    return *T;
  }
  /// The deleter of every allocation: takes it off its claimants.
  static void release(void *P) {
    TrackingAllocator &T = get();
    if (P && T.Count.load(std::memory_order_relaxed) > 0) {
      std::lock_guard<std::mutex> L(T.Mu);
      auto It = T.Live.find(P);
      if (It != T.Live.end()) {
        Entry &E = It->second;
        for (Account *A : E.holders)
          A->add(-E.bytes);
        if (E.orphanOf)
          E.orphanOf->leaked.fetch_sub(E.bytes, std::memory_order_relaxed);
        if (E.otherOf)
          E.otherOf->other -= E.bytes;
        T.Live.erase(It);
        T.Count.fetch_sub(1, std::memory_order_relaxed);
      }
    }
    T.BaseDeleter(P);
  }
};

namespace {
std::once_flag InstallOnce;
bool Installed = false;
} // namespace

void Account::add(int64_t B) {
  live.fetch_add(B, std::memory_order_relaxed);
  if (pool)
    pool->live.fetch_add(B, std::memory_order_relaxed);
}

Account::~Account() {
  if (!claims.empty())
    MemoryTracker::release(this);
}

ChargeScope::ChargeScope(Account *A) : Prev(Charged) { Charged = A; }
ChargeScope::~ChargeScope() { Charged = Prev; }

bool MemoryTracker::install() {
  std::call_once(InstallOnce, [] {
    TrackingAllocator &T = TrackingAllocator::get();
    T.Base = c10::GetCPUAllocator();
    T.BaseDeleter = T.Base->raw_deleter();
    // Our deleter forwards to the base one with the data pointer as the
    // context, which is how libtorch's default CPU allocator works.
    c10::DataPtr Probe = T.Base->allocate(16);
    if (!T.BaseDeleter || Probe.get_context() != Probe.get())
      return;
    c10::SetCPUAllocator(&T, /*priority=*/100);
    Installed = c10::GetCPUAllocator() == &T;
  });
  return Installed;
}

bool MemoryTracker::installed() { return Installed; }

static void *storageKey(const at::Tensor &T) {
  if (!T.defined() || !T.has_storage())
    return nullptr;
  return T.storage().data_ptr().get();
}

void MemoryTracker::claim(const at::Tensor &Tensor, Account *A) {
  void *P = storageKey(Tensor);
  if (!P || !A || !Installed)
    return;
  TrackingAllocator &T = TrackingAllocator::get();
  std::lock_guard<std::mutex> L(T.Mu);
  auto Ins = T.Live.try_emplace(P);
  TrackingAllocator::Entry &E = Ins.first->second;
  if (Ins.second) {
    E.bytes = int64_t(Tensor.storage().nbytes());
    T.Count.fetch_add(1, std::memory_order_relaxed);
  }
  if (std::find(E.holders.begin(), E.holders.end(), A) != E.holders.end())
    return;
  if (E.orphanOf) {
    E.orphanOf->leaked.fetch_sub(E.bytes, std::memory_order_relaxed);
    E.orphanOf = nullptr;
  }
  if (E.otherOf) { // claimed: an activation now
    E.otherOf->other -= E.bytes;
    E.otherOf = nullptr;
  }
  E.holders.push_back(A);
  A->claims.push_back(P);
  A->add(E.bytes);
}

void MemoryTracker::unclaim(const at::Tensor &Tensor, Account *A) {
  void *P = storageKey(Tensor);
  if (!P || !A || !Installed)
    return;
  TrackingAllocator &T = TrackingAllocator::get();
  std::lock_guard<std::mutex> L(T.Mu);
  auto It = T.Live.find(P);
  if (It == T.Live.end())
    return;
  TrackingAllocator::Entry &E = It->second;
  auto H = std::find(E.holders.begin(), E.holders.end(), A);
  if (H == E.holders.end())
    return;
  E.holders.erase(H);
  A->add(-E.bytes);
  A->claims.erase(std::find(A->claims.begin(), A->claims.end(), P));
  // Nobody claims it: in flight (e.g. sent), not anyone's activation.
  if (E.holders.empty() && !E.orphanOf) {
    T.Live.erase(It);
    T.Count.fetch_sub(1, std::memory_order_relaxed);
  }
}

void MemoryTracker::release(Account *A) {
  if (!Installed || !A)
    return;
  TrackingAllocator &T = TrackingAllocator::get();
  std::lock_guard<std::mutex> L(T.Mu);
  for (void *P : A->claims) {
    auto It = T.Live.find(P);
    if (It == T.Live.end())
      continue; // freed already
    TrackingAllocator::Entry &E = It->second;
    auto H = std::find(E.holders.begin(), E.holders.end(), A);
    if (H == E.holders.end())
      continue;
    E.holders.erase(H);
    A->add(-E.bytes);
    if (E.holders.empty() && A->pool) {
      // Still alive, and no activation holds it any more.
      E.orphanOf = A->pool;
      A->pool->leaked.fetch_add(E.bytes, std::memory_order_relaxed);
    }
  }
  A->claims.clear();
}

Pool *MemoryTracker::countOtherBytes(Pool *P) {
  Pool *Prev = OtherPool;
  OtherPool = P;
  return Prev;
}

void MemoryTracker::compact(Account *A) {
  if (!Installed || !A)
    return;
  TrackingAllocator &T = TrackingAllocator::get();
  std::lock_guard<std::mutex> L(T.Mu);
  std::vector<void *> Keep;
  for (void *P : A->claims) {
    auto It = T.Live.find(P);
    if (It == T.Live.end())
      continue;
    const std::vector<Account *> &H = It->second.holders;
    if (std::find(H.begin(), H.end(), A) != H.end() &&
        std::find(Keep.begin(), Keep.end(), P) == Keep.end())
      Keep.push_back(P);
  }
  A->claims = std::move(Keep);
}

} // namespace torch
} // namespace ppsrt
