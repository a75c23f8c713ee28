//===- Heap.cpp - the allocator set up for one short batch run ------------===//
//
// glibc's defaults suit long-running programs: blocks over 128 KiB (later
// up to 32 MiB) are fresh mappings that are unmapped when freed, and the
// heap is trimmed as it shrinks, so every pass of ppsc touched fresh pages
// again; each first touch of a 4 KiB page is a fault (9,460 of them, 10-25
// ms of system time on a virtual machine, for lint of interleaved 1F1B at
// 64x2x1024). Here a batch run keeps its memory and reuses it, and the
// passes, which allocate arrays and programs of exact sizes, get
// transparent huge pages (one fault per 2 MiB; Linux's default THP mode,
// madvise, honours the request; where THP is off, nothing changes).
//
//===----------------------------------------------------------------------===//
#include "pps/driver/Heap.h"

#include <cstdint>
#include <cstdlib>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

namespace pps::driver {

static bool Tuned = false;

void tuneHeapForBatchRun() {
  Tuned = true;
  constexpr int Step = 256 << 20;
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest
  mallopt(M_TRIM_THRESHOLD, INT32_MAX);
  // Grow the heap now by Step (a block larger than its free top makes it
  // grow by the block and the pad), then in 64 MiB steps. Through a
  // volatile, so that the compiler keeps the malloc and the free.
  mallopt(M_TOP_PAD, Step);
  static void *volatile Probe;
  Probe = std::malloc(size_t(1) << 20);
  std::free(Probe);
  mallopt(M_TOP_PAD, 64 << 20);
}

void adviseHugePagesForPasses() {
  if (!Tuned)
    return;
  constexpr uintptr_t Huge = uintptr_t(2) << 20;
  auto End = reinterpret_cast<uintptr_t>(sbrk(0));
  if (End == ~uintptr_t(0))
    return;
  // The heap's free top (keepcost) reaches up to the break.
  size_t Free = mallinfo2().keepcost;
  uintptr_t Lo = (End - Free + Huge - 1) & ~(Huge - 1);
  uintptr_t Hi = End & ~(Huge - 1);
  if (Hi > Lo)
    madvise(reinterpret_cast<void *>(Lo), Hi - Lo, MADV_HUGEPAGE);
}

} // namespace pps::driver
