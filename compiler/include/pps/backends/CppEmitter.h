//===- CppEmitter.h - the C++ executor backend ----------------------------===//
//
// Emits a C++ translation unit that, built against runtime/ (pps_runtime,
// and pps_runtime_mpi for --transport=mpi), runs the schedule for real: the
// topology, the cost model, one compact action table per rank (three 32-bit
// words per action, eight actions per line with their text form in a
// comment, so a million actions compile in seconds), the memory analysis'
// peak per rank, the simulator's makespan and the executor timing's (per
// comm model and receive mode) for comparison, the routes (where data enters
// and losses are computed) and weight-sharing groups (analysis/Routes.h),
// whether the schedule was verified, and a main() that hands everything to
// ppsrt::executorMain.
//
// Requires: a lowered schedule (comms inserted; the pass pipeline ran with
//   PipelineGoal::Check so it is linted, unless the status says it is
//   unverified), valid ranks/stages/microbatches.
// Guarantees: deterministic output; nothing from the source (pipeline name,
//   file name) reaches the generated code except inside escaped string
//   literals and sanitised comments.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/backends/Export.h"
#include "pps/ir/Schedule.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace pps::backends {

struct CppEmitOptions {
  /// The source file name, for the header comment and the executor banner.
  std::string SourceName;
  /// Compute the predicted makespan with the simulator (on by default).
  bool Simulate = true;
  /// Whether the schedule was proved (ScheduleDesc::unverified).
  ExportStatus Status{/*Verified=*/true};
};

/// Writes the executor translation unit for S to OS.
void emitCpp(const ir::Schedule &S, const CppEmitOptions &Opts,
             llvm::raw_ostream &OS);

/// The makespan of one step as ppsrt::Executor runs S (the timing engine's
/// executor timing), per comm model and receive mode at [model * 2 +
/// blockingRecv] (ppsrt::ScheduleDesc::executorMakespan); -1 where S cannot
/// finish.
std::vector<double> executorMakespans(const ir::Schedule &S);

/// The makespan of one step as ppsrt::Executor runs S under a stream rule
/// (the timing engine's asynchronous timing, as ppsc sim runs it): [0]
/// under S's own comm model and stream rule (-1 if S has no in-order
/// streams), [1] under the nccl preset (ppsrt::ScheduleDesc::
/// streamMakespan); -1 where S cannot finish.
std::vector<double> streamMakespans(const ir::Schedule &S);

/// The schema::RowWords words of A's row in a generated executor's table
/// (ppsrt/Schema.h's encoding).
void encodeRow(const ir::Action &A, int32_t *Row);

/// S as the body of a C++ string literal (without the quotes): printable
/// ASCII kept, quotes and backslashes escaped, everything else as octal.
std::string cppStringLiteral(llvm::StringRef S);
/// S made safe for a `//` comment: no line breaks, no control characters,
/// no backslash (a trailing one would splice the next line into the comment).
std::string cppCommentText(llvm::StringRef S);

} // namespace pps::backends
