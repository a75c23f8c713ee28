//===- Heap.h - the allocator set up for one short batch run --------------===//
//
// A batch run of ppsc (every subcommand but the language server) builds a
// schedule of up to tens of megabytes, hands it from pass to pass and
// exits. On a 782k-action lint, first-touch page faults (one per 4 KiB)
// were a fifth of the CPU time. See Heap.cpp for what is set and why.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace pps::driver {

/// At start-up: one arena (the front end runs on its own thread), blocks
/// up to 32 MiB from the heap rather than fresh mappings, no trimming, and
/// the heap grown once by 256 MiB of address space (not memory: pages are
/// only touched as they are used).
void tuneHeapForBatchRun();

/// Before the pass pipeline of a tuned run: the heap's free top asks for
/// transparent huge pages, so what the passes allocate (exact-size arrays and
/// programs) faults in 2 MiB at a time. The front end's growing vectors stay on
/// 4 KiB pages, where capacity they never fill is not resident.
void adviseHugePagesForPasses();

} // namespace pps::driver
