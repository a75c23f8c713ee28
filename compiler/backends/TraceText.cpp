//===- TraceText.cpp - terminal Gantt chart and summary table -------------===//
#include "TraceCommon.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace pps::backends {

using detail::fmtBytes;
using detail::fmtTime;
using detail::memNoun;
using detail::memText;

namespace {

/// What a Gantt cell shows; the order is the drawing priority.
enum Cell : uint8_t { Empty, Wait, Transfer, CF, CI, CW, CB, COverlap, CCtl };

const char *ansiFor(uint8_t C) {
  switch (C) {
  case CF:
    return "\x1b[97;44m";
  case CB:
    return "\x1b[30;42m";
  case CI:
    return "\x1b[30;46m";
  case CW:
    return "\x1b[30;43m";
  case COverlap:
    return "\x1b[97;45m";
  case CCtl:
    return "\x1b[97;41m";
  case Transfer:
    return "\x1b[33m";
  case Wait:
    return "\x1b[90m";
  default:
    return "";
  }
}

uint8_t cellOf(ir::ActionKind K) {
  switch (K) {
  case ir::ActionKind::F:
    return CF;
  case ir::ActionKind::I:
    return CI;
  case ir::ActionKind::W:
    return CW;
  case ir::ActionKind::B:
    return CB;
  default:
    return CCtl;
  }
}

} // namespace

void writeGantt(const ir::Schedule &S, const sim::SimResult &R,
                llvm::raw_ostream &OS, const GanttOptions &Opts) {
  double T = R.Makespan;
  int32_t P = int32_t(S.Ranks.size());
  if (R.Times.size() != S.Ranks.size()) {
    OS << "(no per-action times to draw)\n";
    return;
  }
  if (!(T > 0)) {
    OS << "(empty timeline)\n";
    return;
  }
  unsigned Width = Opts.Width ? Opts.Width : 100;
  Width = std::max(Width, 10u);
  // One column per unit when it fits, else scaled.
  double Scale = 1.0;
  double Units = std::ceil(T - 1e-9); // compared as a double: T may be huge
  unsigned Cols = Width;
  if (Units > Width)
    Scale = T / Width;
  else
    Cols = unsigned(Units);
  Cols = std::max(Cols, 1u);
  auto Col = [&](double X) {
    long C = std::lround(X / Scale);
    return size_t(std::clamp<long>(C, 0, long(Cols)));
  };
  std::string Label = fmt::format("rank {}", P - 1);
  size_t LabelW = Label.size() + 1;

  // Axis: a tick every 10 columns with its time.
  std::string Axis(LabelW + Cols + 12, ' ');
  for (unsigned C = 0; C <= Cols; C += 10) {
    std::string L =
        Scale == 1.0 ? fmtTime(C) : fmt::format("{:.4g}", C * Scale);
    for (size_t K = 0; K < L.size() && LabelW + C + K < Axis.size(); ++K)
      Axis[LabelW + C + K] = L[K];
  }
  while (!Axis.empty() && Axis.back() == ' ')
    Axis.pop_back();
  OS << Axis << '\n';
  std::string Ticks(LabelW, ' ');
  for (unsigned C = 0; C < Cols; ++C)
    Ticks += C % 10 == 0 ? '|' : (C % 5 == 0 ? '+' : '-');
  OS << Ticks << '\n';

  std::vector<uint8_t> Kind(Cols);
  std::vector<char> Text(Cols);
  for (int32_t Rk = 0; Rk < P; ++Rk) {
    std::fill(Kind.begin(), Kind.end(), Empty);
    std::fill(Text.begin(), Text.end(), ' ');
    const auto &Acts = S.Ranks[Rk].Actions;
    const sim::RankTimeline &Tl = R.Times[Rk];
    auto Fill = [&](double A, double B, uint8_t K, char Ch, bool Force) {
      if (!std::isfinite(A) || !std::isfinite(B) || B < A)
        return;
      size_t C0 = Col(A), C1 = Col(B);
      if (C1 == C0 && B > A && Force)
        C1 = std::min<size_t>(C0 + 1, Cols);
      for (size_t C = C0; C < C1; ++C)
        if (K >= Kind[C]) {
          Kind[C] = K;
          Text[C] = Ch;
        }
    };
    // Comm first (background), computes over them.
    for (size_t I = 0; I < Acts.size(); ++I) {
      const ir::Action &A = Acts[I];
      if (!ir::isComm(A.Kind))
        continue;
      Fill(Tl.Start[I], Tl.TransferStart[I], Wait, '.', false);
      Fill(Tl.TransferStart[I], Tl.End[I], Transfer, '-', false);
    }
    for (size_t I = 0; I < Acts.size(); ++I) {
      const ir::Action &A = Acts[I];
      if (!ir::isCompute(A.Kind))
        continue;
      bool Pair = A.overlapsNext() || (I > 0 && Acts[I - 1].overlapsNext() &&
                                       ir::isCompute(A.Kind));
      uint8_t K = Pair ? uint8_t(COverlap) : cellOf(A.Kind);
      char Ch;
      if (Opts.Color)
        Ch = char('0' + (A.Microbatch >= 0 ? A.Microbatch % 10 : 0));
      else if (Pair)
        Ch = 'O';
      else {
        Ch = ir::actionKindName(A.Kind)[0];
        if (A.Microbatch % 2 == 1)
          Ch = char(Ch - 'A' + 'a');
      }
      Fill(Tl.Start[I], Tl.End[I], K, Ch, true);
    }
    std::string Row = fmt::format("rank {}", Rk);
    Row.resize(LabelW, ' ');
    OS << Row;
    if (!Opts.Color) {
      size_t Len = Text.size();
      while (Len > 0 && Text[Len - 1] == ' ')
        --Len; // no trailing blanks
      OS.write(Text.data(), Len);
      OS << '\n';
      continue;
    }
    uint8_t Cur = Empty;
    for (unsigned C = 0; C < Cols; ++C) {
      if (Kind[C] != Cur) {
        OS << "\x1b[0m" << ansiFor(Kind[C]);
        Cur = Kind[C];
      }
      OS << Text[C];
    }
    OS << "\x1b[0m\n";
  }
  OS << fmt::format("1 column = {} time unit{}; ", fmtTime(Scale),
                    Scale == 1.0 ? "" : "s");
  if (Opts.Color)
    OS << "digits are microbatches mod 10; \x1b[97;44m F \x1b[0m \x1b[30;46m I "
          "\x1b[0m \x1b[30;43m W \x1b[0m \x1b[30;42m B \x1b[0m \x1b[97;45m "
          "overlap \x1b[0m; '-' message in flight, '.' waiting for a message\n";
  else
    OS << "F/I/W/B (lower case: odd microbatch), O overlap pair, '-' message "
          "in flight, '.' waiting for a message\n";
}

/// ", one stream per rank, sends of up to 64 KiB eager" ("" for none).
static std::string streamRuleText(const ir::CommStream &St) {
  std::string T;
  if (St.Scope == ir::StreamScope::Rank)
    T += ", one in-order stream per rank";
  else if (St.Scope == ir::StreamScope::Peer)
    T += ", one in-order stream per peer";
  if (St.EagerThreshold >= 0)
    T += fmt::format(", sends of up to {} eager", fmtBytes(St.EagerThreshold));
  return T;
}

/// Under a stream rule: per rank, how long its comms were held back behind
/// an earlier one, the idle time the rule adds, and the operation that held
/// back the most (RankTimeline::Held, HeldBy).
static void writeStreamHolds(const ir::Schedule &S, const sim::SimResult &R,
                             llvm::raw_ostream &OS) {
  if (!std::isfinite(R.MakespanWithoutStreams) || R.Times.empty())
    return;
  OS << "\n  held back on the comm stream (time comms waited behind an "
        "earlier one; idle time the rule adds; what held back the most)\n";
  OS << fmt::format("  {:>5} {:>10} {:>10}  {}\n", "rank", "held", "added",
                    "cause");
  for (size_t Rk = 0; Rk < R.Ranks.size(); ++Rk) {
    const sim::RankTimeline &T = R.Times[Rk];
    llvm::DenseMap<uint64_t, std::pair<double, uint32_t>> ByCause;
    for (size_t I = 0; I < T.Held.size(); ++I)
      if (T.Held[I] > 0 && T.HeldBy[I] != ~uint64_t(0)) {
        auto &E = ByCause[T.HeldBy[I]];
        E.first += T.Held[I];
        ++E.second;
      }
    uint64_t Top = ~uint64_t(0);
    std::pair<double, uint32_t> Best{0, 0};
    for (const auto &[Ref, E] : ByCause)
      if (E.first > Best.first || (E.first == Best.first && Ref < Top)) {
        Best = E;
        Top = Ref;
      }
    std::string Cause = "-";
    if (Top != ~uint64_t(0)) {
      const ir::Action &A =
          S.Ranks[size_t(Top >> 32)].Actions[size_t(uint32_t(Top))];
      Cause = fmt::format("`{}` ({} operation{}, {} in all)", actionName(A),
                          Best.second, Best.second == 1 ? "" : "s",
                          fmtTime(Best.first));
    }
    const sim::RankStats &X = R.Ranks[Rk];
    OS << fmt::format("  {:>5} {:>10} {:>10}  {}\n", Rk, fmtTime(X.StreamHeld),
                      fmtTime(X.StreamBubble), Cause);
  }
}

void writeSummary(const ir::Schedule &S, const sim::SimResult &R,
                  llvm::raw_ostream &OS, const sim::CommVolumeReport *Vol,
                  const sim::CommVolumeOptions *VolOpts) {
  OS << fmt::format(
      "pipeline '{}': {} ranks, {} stages, {} microbatches, {} actions\n",
      S.Name, S.Topo.Ranks, S.Topo.Stages, S.Topo.Microbatches, S.numActions());
  OS << fmt::format("comm: {}, {}{}{}\n", ir::commModelName(R.Comm),
                    R.Blocking ? "blocking" : "async", streamRuleText(R.Stream),
                    R.UsedDataflow ? " (dataflow: no comm actions, each "
                                     "cross-rank dependency costs one message)"
                                   : "");
  if (R.Deadlocked) {
    OS << "DEADLOCK: no rank can progress; figures cover what ran\n";
  }
  auto Pct = [](double X) { return fmt::format("{:.2f}%", 100.0 * X); };
  OS << fmt::format("  {:<16}{}\n", "makespan", fmtTime(R.Makespan));
  OS << fmt::format("  {:<16}{}   (largest per-rank compute time)\n", "ideal",
                    fmtTime(R.Ideal));
  OS << fmt::format("  {:<16}{}   ((makespan - ideal) / makespan)\n", "bubble",
                    Pct(R.BubbleOverMakespan));
  OS << fmt::format("  {:<16}{}   ((makespan - ideal) / ideal)\n", "",
                    Pct(R.BubbleOverIdeal));
  OS << fmt::format("  {:<16}{}   (1 - sum of busy / (ranks * makespan))\n",
                    "mean idle", Pct(R.MeanIdleFraction));
  OS << fmt::format("  {:<16}{}   (largest per-rank first compute start to "
                    "last compute end)\n",
                    "span", fmtTime(R.Span));
  int32_t PeakRank = 0;
  for (size_t I = 0; I < R.Ranks.size(); ++I)
    if (R.Ranks[I].PeakMemory > R.Ranks[PeakRank].PeakMemory)
      PeakRank = int32_t(I);
  OS << fmt::format(
      "  {:<16}{} {} (rank {}){}\n", "peak memory",
      memText(R.Memory, R.PeakMemory), memNoun(R.Memory), PeakRank,
      S.MemoryLimit
          ? fmt::format(", limit {}", memText(R.Memory, double(*S.MemoryLimit)))
          : std::string());
  OS << fmt::format("  {:<16}{} ({})\n", "messages", R.Messages,
                    fmtBytes(R.Bytes));
  if (std::isfinite(R.MakespanWithoutStreams))
    OS << fmt::format("  {:<16}+{} makespan ({} without it: the same "
                      "schedule with comms to each peer in flight at once)\n",
                      "stream rule",
                      fmtTime(R.Makespan - R.MakespanWithoutStreams),
                      fmtTime(R.MakespanWithoutStreams));
  if (!R.CriticalPath.empty()) {
    size_t N = R.CriticalPath.size();
    unsigned Computes = 0;
    double Work = 0;
    for (const sim::ActionRef &A : R.CriticalPath) {
      const ir::Action &Act = S.Ranks[A.Rank].Actions[A.Index];
      if (ir::isCompute(Act.Kind)) {
        ++Computes;
        Work += R.end(A) - R.start(A);
      }
    }
    std::string Path;
    auto Add = [&](size_t I) {
      const sim::ActionRef &A = R.CriticalPath[I];
      if (!Path.empty())
        Path += " > ";
      Path += fmt::format("{}:r{}",
                          actionName(S.Ranks[A.Rank].Actions[A.Index]), A.Rank);
    };
    for (size_t I = 0; I < std::min<size_t>(N, 6); ++I)
      Add(I);
    if (N > 12)
      Path += " > ...";
    for (size_t I = std::max<size_t>(6, N > 6 ? N - 6 : N); I < N; ++I)
      Add(I);
    OS << fmt::format("  {:<16}{} actions, {} computes ({} units of "
                      "compute)\n  {:<16}{}\n",
                      "critical path", N, Computes, fmtTime(Work), "", Path);
  }
  OS << "\n";
  OS << fmt::format("  {:>5} {:>10} {:>10} {:>7} {:>10} {:>10} {:>8} {:>8} "
                    "{:>6} {:>6} {:>10}\n",
                    "rank", "busy", "idle", "util", "comm", "wait", "peakmem",
                    "computes", "sends", "recvs", "span");
  for (size_t I = 0; I < R.Ranks.size(); ++I) {
    const sim::RankStats &X = R.Ranks[I];
    OS << fmt::format(
        "  {:>5} {:>10} {:>10} {:>7} {:>10} {:>10} {:>8} {:>8} {:>6} {:>6} "
        "{:>10}\n",
        I, fmtTime(X.ComputeBusy), fmtTime(X.Idle),
        R.Makespan > 0 ? Pct(X.ComputeBusy / R.Makespan) : std::string("-"),
        fmtTime(X.CommBusy), fmtTime(X.CommWait),
        memText(R.Memory, X.PeakMemory), X.Computes, X.Sends, X.Recvs,
        fmtTime(X.Span));
  }
  writeStreamHolds(S, R, OS);
  if (!R.Channels.empty()) {
    OS << "\n  channel        messages      bytes\n";
    for (const sim::ChannelStats &C : R.Channels)
      OS << fmt::format("  {:>4} -> {:<4} {:>10} {:>10}\n", C.Src, C.Dst,
                        C.Messages, fmtBytes(C.Bytes));
  }
  if (Vol) {
    OS << fmt::format("\ncommunication volume ({}",
                      commVolumeKindName(Vol->Kind));
    if (VolOpts) {
      const sim::CacheConfig &C = VolOpts->Cache;
      OS << fmt::format(", cache {}", C.Enabled ? "on" : "off");
      if (C.Enabled)
        OS << fmt::format(
            ", policy {}, reuse across backward {}, max "
            "in-flight {}, eviction {}",
            cachePolicyName(C.Policy), C.ReuseAcrossBackward ? "on" : "off",
            C.MaxInflightMicrobatches, cacheEvictionName(C.Eviction));
      if (VolOpts->Steps > 1)
        OS << fmt::format(", {} steps", VolOpts->Steps);
    }
    OS << ")\n";
    OS << fmt::format("  {:<22}{}\n", "payload per transfer",
                      fmtBytes(double(Vol->PayloadBytes)));
    OS << fmt::format("  {:<22}{} forward, {} backward\n", "requests",
                      Vol->ForwardRequests, Vol->BackwardRequests);
    OS << fmt::format("  {:<22}{}\n", "bytes requested",
                      fmtBytes(double(Vol->BytesRequested)));
    OS << fmt::format("  {:<22}{}\n", "bytes transmitted",
                      fmtBytes(double(Vol->BytesTransmitted)));
    OS << fmt::format("  {:<22}{} hits, {} misses\n", "cache", Vol->Hits,
                      Vol->Misses);
    OS << fmt::format("  {:<22}{}\n", "resends avoided", Vol->ResendsAvoided);
    OS << fmt::format("  {:<22}{}\n", "backward reuse hits",
                      Vol->BackwardReuseHits);
    OS << fmt::format("  {:<22}{}\n", "invalidated entries",
                      Vol->InvalidatedEntries);
    OS << "  transmitted by source rank:";
    for (size_t I = 0; I < Vol->TransmittedBySource.size(); ++I)
      OS << fmt::format(" {}={}", I,
                        fmtBytes(double(Vol->TransmittedBySource[I])));
    OS << "\n";
  }
}

} // namespace pps::backends
