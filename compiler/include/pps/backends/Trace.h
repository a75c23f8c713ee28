//===- Trace.h - timelines and figures of a simulated schedule ------------===//
//
// The outputs people look at, all from one ir::Schedule and its
// sim::SimResult (with KeepTimes on):
//  * Chrome trace JSON (Perfetto, chrome://tracing): one process per rank,
//    tid 0 = compute, tid 1 = communication, tid 2 = receive waits (slices
//    that would overlap on one thread move to further lanes: transfers 3, 5,
//    ..., waits 4, 6, ...), complete events in trace microseconds (one time
//    unit = 1000 us), args with microbatch, stage and kind, flow arrows from
//    each send to its receive. Written through a fixed-size buffer: no
//    allocation or string concatenation per event.
//  * A terminal Gantt chart and a summary table.
//  * A self-contained SVG, and an HTML page embedding it with hover details.
//  * A CSV with one line per action, and JSON with every figure.
// The formats are described in docs/simulation.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"
#include "pps/sim/CommVolume.h"
#include "pps/sim/Simulator.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace pps::backends {

struct GanttOptions {
  /// Columns for the time axis (excluding the row label); 0 = 100.
  unsigned Width = 0;
  /// ANSI colours (the driver turns them on only for a terminal).
  bool Color = false;
};

/// Appends the text-form name of an action ("F3@5", "send F3@5 -> 2",
/// "recv B3@6 <- 1", "unshard 5", "idle") to Out.
void appendActionName(const ir::Action &A, std::string &Out);
std::string actionName(const ir::Action &A);

/// Chrome trace JSON ({"traceEvents": [...]}).
void writeChromeTrace(const ir::Schedule &S, const sim::SimResult &R,
                      llvm::raw_ostream &OS);

/// One row per rank; one column per time unit when the makespan fits the
/// width, scaled otherwise. Letters F/B/I/W (lower case for odd
/// microbatches so neighbours stay apart), O an overlap pair, '-' a message
/// in flight, '.' a receive waiting for its send, ' ' idle.
void writeGantt(const ir::Schedule &S, const sim::SimResult &R,
                llvm::raw_ostream &OS, const GanttOptions &Opts = {});

/// The figures as an aligned table (and the comm-volume report if given).
void writeSummary(const ir::Schedule &S, const sim::SimResult &R,
                  llvm::raw_ostream &OS,
                  const sim::CommVolumeReport *Volume = nullptr,
                  const sim::CommVolumeOptions *VolumeOpts = nullptr);

/// A self-contained SVG timeline: one lane per rank (compute boxes coloured
/// by kind with the microbatch number when it fits, comm transfers and
/// waits in a thin strip below), a time axis, a legend. Each box has a
/// <title> tooltip.
void writeSvg(const ir::Schedule &S, const sim::SimResult &R,
              llvm::raw_ostream &OS);

/// An HTML page with the SVG inline, the summary figures and a hover box
/// showing each action's name, rank, times and duration.
void writeHtml(const ir::Schedule &S, const sim::SimResult &R,
               llvm::raw_ostream &OS,
               const sim::CommVolumeReport *Volume = nullptr);

/// One line per action: rank,index,name,kind,microbatch,stage,peer,start,
/// transfer_start,end,duration.
void writeActionCsv(const ir::Schedule &S, const sim::SimResult &R,
                    llvm::raw_ostream &OS);

/// Every figure as JSON (for other tools).
void writeFiguresJson(const ir::Schedule &S, const sim::SimResult &R,
                      llvm::raw_ostream &OS,
                      const sim::CommVolumeReport *Volume = nullptr,
                      const sim::CommVolumeOptions *VolumeOpts = nullptr);

} // namespace pps::backends
