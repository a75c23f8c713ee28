//===- Simulator.cpp - the cost-model simulator and its figures -----------===//
//
// The options people pass (comm model, blocking or executor timing,
// latency, dataflow) resolved into the timing engine's, the engine run
// (pps/analysis/Timing.h), and the figures computed from its times:
// bubble, idle, memory (pps/analysis/Memory.h), channels, critical path.
// Matching and deadlocks are explained by the analysis layer.
//
//===----------------------------------------------------------------------===//
#include "pps/sim/Simulator.h"

#include "pps/analysis/Deadlock.h"
#include "pps/analysis/Matching.h"
#include "pps/analysis/Memory.h"
#include "pps/support/Parallel.h"

#include <algorithm>
#include <optional>
#include <thread>

namespace pps::sim {

namespace {

/// The figures people compare schedules by, from the engine's times.
/// Memory is the analysis layer's (the one rule, the schedule's model).
void figures(const analysis::TimingResult &T,
             const analysis::MemoryProfile &Mem, SimResult &Res) {
  int32_t P = int32_t(T.Ranks.size());
  double Makespan = T.Makespan;
  double Ideal = 0, SumBusy = 0;
  Res.Memory = Mem.Model;
  Res.Makespan = Makespan;
  Res.Ranks.resize(P);
  for (int32_t R = 0; R < P; ++R) {
    const analysis::RankTiming &X = T.Ranks[R];
    RankStats &RS = Res.Ranks[R];
    RS.ComputeBusy = X.ComputeBusy;
    RS.CommBusy = X.CommBusy;
    RS.CommWait = X.CommWait;
    RS.End = X.End;
    RS.Span = X.Computes ? X.ComputeEnd - X.ComputeStart : 0;
    Res.Span = std::max(Res.Span, RS.Span);
    RS.Computes = X.Computes;
    RS.Sends = X.Sends;
    RS.Recvs = X.Recvs;
    RS.Idle = Makespan - RS.ComputeBusy;
    Ideal = std::max(Ideal, RS.ComputeBusy);
    SumBusy += RS.ComputeBusy;
    RS.PeakMemory = Mem.Ranks[R].Peak;
    RS.PeakMemoryAt = Mem.Ranks[R].PeakAt;
    Res.PeakMemory = std::max(Res.PeakMemory, RS.PeakMemory);
  }
  Res.Ideal = Ideal;
  if (Makespan > 0) {
    Res.BubbleOverMakespan = (Makespan - Ideal) / Makespan;
    Res.MeanIdleFraction = P > 0 ? 1.0 - SumBusy / (double(P) * Makespan) : 0;
  }
  if (Ideal > 0)
    Res.BubbleOverIdeal = (Makespan - Ideal) / Ideal;
  // Channels sorted by (src, dst).
  Res.Channels.reserve(T.Channels.size());
  for (const analysis::ChannelTraffic &C : T.Channels) {
    Res.Channels.push_back({C.Src, C.Dst, C.Messages, C.Bytes});
    Res.Messages += C.Messages;
    Res.Bytes += C.Bytes;
  }
  llvm::sort(Res.Channels, [](const ChannelStats &A, const ChannelStats &B) {
    return std::make_pair(A.Src, A.Dst) < std::make_pair(B.Src, B.Dst);
  });
}

} // namespace

void applyScheduleOverrides(ir::Schedule &S, const SimOptions &Opts) {
  if (Opts.CommModel)
    S.Comm = *Opts.CommModel;
  if (Opts.Stream)
    S.Stream = *Opts.Stream;
  if (Opts.Latency)
    S.Cost.Latency = *Opts.Latency;
  if (Opts.BlockingComm)
    S.Cost.AsyncComm = !*Opts.BlockingComm;
}

SimResult simulate(const ir::Schedule &S, const SimOptions &Opts,
                   DiagnosticEngine *Diags) {
  analysis::TimingOptions TO;
  TO.Model = Opts.CommModel.value_or(S.Comm);
  TO.Stream = Opts.Stream.value_or(S.Stream);
  TO.Cost = S.Cost;
  if (Opts.Latency)
    TO.Cost->Latency = *Opts.Latency;
  bool Blocking = Opts.BlockingComm.value_or(!S.Cost.AsyncComm);
  TO.Timing = Opts.ExecutorTiming ? analysis::CommTiming::Executor
              : Blocking          ? analysis::CommTiming::Blocking
                                  : analysis::CommTiming::Async;
  TO.BlockingRecv = Opts.ExecutorBlockingRecv;
  TO.Dataflow = Opts.Dataflow == DataflowMode::Dataflow ||
                (Opts.Dataflow == DataflowMode::Auto && !S.hasComms());
  TO.KeepPreds = Opts.CriticalPath;
  bool Streams = TO.Stream->inOrder() &&
                 TO.Timing == analysis::CommTiming::Async && !TO.Dataflow;
  TO.KeepHeld = Streams && Opts.KeepTimes;

  // Matching findings (wrong peers, FIFO mismatches, unmatched operations)
  // are errors whether or not the run completes; the deadlock pass reported
  // them already when its result is given.
  std::optional<analysis::Matching> Matched;
  if (Diags && !TO.Dataflow && !Opts.Deadlock) {
    Matched = analysis::matchComms(S);
    analysis::reportMatching(S, *Matched, *Diags);
  }

  // The memory figures do not depend on the times: on big schedules they
  // are counted on another thread while the engine runs (the same result).
  analysis::MemoryProfile Mem;
  std::thread MemoryThread;
  if (threadsForActions(S.numActions()) > 1)
    MemoryThread = std::thread([&] { Mem = analysis::analyzeMemory(S); });
  analysis::TimingResult T = analysis::computeTiming(S, TO);
  if (MemoryThread.joinable())
    MemoryThread.join();
  else
    Mem = analysis::analyzeMemory(S);
  SimResult Res;
  Res.Comm = TO.Model;
  Res.Stream = *TO.Stream;
  Res.Blocking = TO.Timing != analysis::CommTiming::Async;
  Res.UsedDataflow = TO.Dataflow;
  Res.Deadlocked = T.Deadlocked;
  Res.StuckAt = T.StuckAt;
  figures(T, Mem, Res);
  for (int32_t R = 0; R < int32_t(Res.Ranks.size()); ++R)
    Res.Ranks[R].StreamHeld = T.Ranks[R].StreamHeld;
  if (Streams && !T.Deadlocked) {
    // What the stream rule costs: the same schedule timed without it.
    analysis::TimingOptions Without = TO;
    Without.Stream->Scope = ir::StreamScope::None;
    Without.KeepPreds = false;
    Without.KeepHeld = false;
    analysis::TimingResult W = analysis::computeTiming(S, Without);
    if (!W.Deadlocked) {
      Res.MakespanWithoutStreams = W.Makespan;
      // Per rank, the idle time inside its span (first compute to last):
      // what the rank itself waits, whatever the other ranks do.
      for (int32_t R = 0; R < int32_t(Res.Ranks.size()); ++R) {
        const analysis::RankTiming &X = W.Ranks[R];
        double Inside = X.Computes ? X.ComputeEnd - X.ComputeStart : 0;
        RankStats &RS = Res.Ranks[R];
        RS.StreamBubble = (RS.Span - RS.ComputeBusy) - (Inside - X.ComputeBusy);
      }
    }
  }
  if (Opts.CriticalPath)
    Res.CriticalPath = T.criticalPath();

  if (Diags && T.Deadlocked) {
    // With comms, the deadlock analysis explains the hang as a cycle of
    // waits (with locations); the simulator only speaks when it finds
    // nothing to say (dataflow mode, or a stall it does not model).
    bool Explained = false;
    if (!TO.Dataflow) {
      if (Opts.Deadlock && Opts.Deadlock->Model == TO.Model &&
          Opts.Deadlock->Stream == *TO.Stream) {
        Explained = !Opts.Deadlock->Free; // the pass reported it
      } else {
        if (!Matched)
          Matched = analysis::matchComms(S);
        analysis::DeadlockResult DR =
            analysis::checkDeadlock(S, *Matched, TO.Model, TO.Stream);
        analysis::reportDeadlock(S, *Matched, DR, *Diags);
        Explained = !DR.Free;
      }
    }
    if (!Explained)
      analysis::reportStuckRun(S, T, *Diags);
  }
  if (Opts.KeepTimes)
    Res.Times.assign(std::make_move_iterator(T.Times.begin()),
                     std::make_move_iterator(T.Times.end()));
  return Res;
}

} // namespace pps::sim
