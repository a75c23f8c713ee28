//===- Profile.cpp - measured costs of a run, as a .pps costs file --------===//
#include "ppsrt/Profile.h"
#include "ppsrt/OutputFile.h"
#include "ppsrt/Trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <time.h>
#include <tuple>
#include <unordered_map>

namespace ppsrt {

// Compute times are kept per kind, indexed by the kind's number.
static_assert(size_t(Kind::F) == 0 && size_t(Kind::I) == 1 &&
                  size_t(Kind::W) == 2 && size_t(Kind::B) == 3,
              "the compute kinds come first in ActionKinds.def");

namespace {

/// Collects samples of one figure: overall mean, extremes, and the means
/// per step (for the spread over steps).
class Accumulator {
public:
  void add(int Step, double V) {
    auto &[Sum, N] = PerStep[Step];
    Sum += V;
    ++N;
    Total += V;
    ++Count;
    Min = std::min(Min, V);
    Max = std::max(Max, V);
  }
  ProfileStat stat() const {
    ProfileStat St;
    St.samples = Count;
    if (!Count)
      return St;
    St.mean = Total / double(Count);
    St.min = Min;
    St.max = Max;
    if (PerStep.size() > 1) {
      double Mean = 0;
      for (auto &[Step, SN] : PerStep)
        Mean += SN.first / double(SN.second);
      Mean /= double(PerStep.size());
      double Sq = 0;
      for (auto &[Step, SN] : PerStep) {
        double D = SN.first / double(SN.second) - Mean;
        Sq += D * D;
      }
      St.sdSteps = std::sqrt(Sq / double(PerStep.size() - 1));
    }
    return St;
  }

private:
  std::map<int, std::pair<double, int64_t>> PerStep;
  double Total = 0;
  int64_t Count = 0;
  double Min = std::numeric_limits<double>::infinity();
  double Max = -std::numeric_limits<double>::infinity();
};

/// A time in ms to 0.1 us, without trailing zeros: "1.4021", "20", "0".
std::string ms(double V) {
  std::string T = fmt::format("{:.4f}", V);
  while (!T.empty() && T.back() == '0')
    T.pop_back();
  if (!T.empty() && T.back() == '.')
    T.pop_back();
  return T == "-0" ? "0" : T;
}

/// How the profiled run placed its stages, in the language's words.
std::string placementText(const ScheduleDesc &S) {
  bool Loop = true, V = S.stages % S.ranks == 0;
  std::string Explicit;
  for (int32_t St = 0; St < S.stages; ++St) {
    int32_t R = S.stageToRank[St];
    Loop &= R == St % S.ranks;
    int32_t Within = St % S.ranks;
    V &= R == ((St / S.ranks) % 2 == 0 ? Within : S.ranks - 1 - Within);
    Explicit += fmt::format("{}{} -> {}", St ? ", " : "", St, R);
  }
  if (Loop)
    return "loop";
  if (V)
    return "v";
  return "{ " + Explicit + " }";
}

/// "177.8 (ppsc sim), 254.5 (executor timing)": the compiler's makespans.
std::string predictions(const ProfileRun &Run) {
  std::string Out;
  if (Run.simMakespan > 0)
    Out = ms(Run.simMakespan) + " (ppsc sim)";
  if (Run.executorMakespan > 0)
    Out += (Out.empty() ? "" : ", ") + ms(Run.executorMakespan) +
           " (executor timing)";
  return Out;
}

std::string statRow(const ProfileStat &St) {
  if (!St.samples)
    return "-";
  return fmt::format("{:<9} {:<9} {:<9} {:<9} {}", ms(St.mean), ms(St.sdSteps),
                     ms(St.min), ms(St.max), St.samples);
}

} // namespace

std::string summarizeProfile(const ScheduleDesc &S,
                             const std::vector<ProfileEvent> &Events,
                             const std::vector<ActivationBytes> &Bytes,
                             int Warmup, ProfileSummary &Out, bool Cpu) {
  Out = ProfileSummary();
  std::vector<std::array<Accumulator, 4>> Compute(size_t(S.stages));
  std::vector<Accumulator> StageBytes(size_t(S.stages));
  std::map<int, std::pair<double, double>> Steps; // step -> first start, end
  // Send posts by message (channel and position), for the receives.
  std::unordered_map<uint64_t, double> SendPost;
  for (const ProfileEvent &E : Events)
    if (isSend(E.kind))
      SendPost[flowId(E.rank, E.peer, S.ranks, E.seq)] = E.start;
  std::map<std::tuple<int32_t, int32_t, bool>, std::pair<Accumulator, int64_t>>
      Links;
  Accumulator Messages;
  int LastStep = -1;
  for (const ProfileEvent &E : Events) {
    LastStep = std::max(LastStep, E.step);
    if (E.step < Warmup)
      continue;
    // A step lasts from its first compute to the last rank ending it, as
    // the simulator's makespan does (a rank that begins the step early
    // only waits for its input).
    auto &[First, End] =
        Steps.try_emplace(E.step, std::numeric_limits<double>::infinity(), 0.0)
            .first->second;
    if (E.flags & ProfileEvent::StepMark) {
      End = std::max(End, E.end);
      continue;
    }
    if (isCompute(E.kind)) {
      First = std::min(First, E.start);
      if (E.stage < 0 || E.stage >= S.stages)
        continue;
      if (E.flags & ProfileEvent::Overlapped) {
        ++Out.overlapped;
        continue;
      }
      if ((E.flags & ProfileEvent::Probe) && E.kind == Kind::I)
        ++Out.probes;
      Compute[size_t(E.stage)][size_t(E.kind)].add(
          E.step, (Cpu ? E.cpu : E.end - E.start) / 1000.0);
      if (E.kind == Kind::F && E.bytes >= 0)
        StageBytes[size_t(E.stage)].add(E.step, double(E.bytes));
      continue;
    }
    if (!isRecv(E.kind))
      continue;
    auto &[Acc, Unmeasured] = Links[{E.peer, E.rank, E.kind == Kind::RecvB}];
    auto Sent = SendPost.find(flowId(E.peer, E.rank, S.ranks, E.seq));
    if (E.waitStart < 0 || Sent == SendPost.end()) {
      ++Unmeasured;
      continue;
    }
    // From the later of the two posts to the waiting rank getting the
    // data; clocks of different hosts can disagree by a little.
    double T = std::max(0.0, E.end - std::max(E.start, Sent->second)) / 1000.0;
    Acc.add(E.step, T);
    Messages.add(E.step, T);
  }
  if (Steps.empty())
    return fmt::format("no step to measure after the {} warm-up step{}: run "
                       "more steps (--steps) than --profile-warmup",
                       Warmup, Warmup == 1 ? "" : "s");
  Out.firstStep = Steps.begin()->first;
  Out.steps = int(Steps.size());
  Accumulator StepTime;
  for (auto &[Step, Span] : Steps)
    if (std::isfinite(Span.first))
      StepTime.add(Step, (Span.second - Span.first) / 1000.0);
  Out.stepTime = StepTime.stat();
  Out.messages = Messages.stat();
  Out.stages.resize(size_t(S.stages));
  for (int32_t St = 0; St < S.stages; ++St) {
    ProfileSummary::Stage &P = Out.stages[size_t(St)];
    const auto &C = Compute[size_t(St)];
    P.F = C[size_t(Kind::F)].stat();
    P.I = C[size_t(Kind::I)].stat();
    P.W = C[size_t(Kind::W)].stat();
    P.B = C[size_t(Kind::B)].stat();
    P.bytes = StageBytes[size_t(St)].stat();
    if (!P.F.samples)
      return fmt::format("stage {} ran no F outside an overlap pair in the "
                         "measured steps, so its cost is unknown",
                         St);
    bool Split = P.I.samples && P.W.samples;
    if (P.B.samples && !Split)
      return fmt::format("stage {} ran its backward whole only once per "
                         "run, so I and W (every other B runs as I then W) "
                         "were not timed: run more steps",
                         St);
  }
  for (auto &[Key, AU] : Links) {
    ProfileSummary::Link L;
    std::tie(L.from, L.to, L.gradient) = Key;
    L.time = AU.first.stat();
    L.unmeasured = AU.second;
    Out.links.push_back(L);
  }
  for (const ActivationBytes &B : Bytes) {
    Out.nonActivationPeak.push_back(B.nonActivationPeak);
    Out.activationPeak.push_back(B.expected);
  }
  return {};
}

/// The profile's memory field: with every stage's activation bytes
/// measured, a memory model in bytes per stage (what one F holds until
/// its last backward) and a limit of this run's peak of them, so `ppsc
/// synth --memory-limit 2GiB` re-plans for a size; else `memory limit N;`
/// in live activations (the run's peak, Peak).
static std::string memoryBlock(const ScheduleDesc &S, const ProfileSummary &P,
                               int64_t Peak) {
  bool All = !P.stages.empty();
  bool Fixed = true; // every (m, s) of a stage holds the same bytes
  for (const ProfileSummary::Stage &X : P.stages) {
    All &= X.bytes.samples > 0 && X.bytes.max >= 1;
    Fixed &= X.bytes.min == X.bytes.max;
  }
  if (!All)
    return fmt::format("  memory limit {};\n", std::max<int64_t>(Peak, 1));
  // A stage's amount is its largest measured size (a size that varies by
  // microbatch is never under-counted).
  std::vector<int64_t> Amount;
  for (const ProfileSummary::Stage &X : P.stages)
    Amount.push_back(int64_t(std::ceil(X.bytes.max)));
  // The limit the profiled run held: its analysis peak (the same sums as
  // the model, when sizes are fixed); else live activations times the
  // rank's largest amount, which bounds the model's count of the run.
  int64_t Limit = 0;
  for (int32_t R = 0; R < S.ranks; ++R) {
    int64_t Max = 0;
    for (int32_t St = 0; St < S.stages; ++St)
      if (S.stageToRank[St] == R)
        Max = std::max(Max, Amount[size_t(St)]);
    int64_t Count = size_t(R) < P.activationPeak.size() && Fixed
                        ? P.activationPeak[size_t(R)]
                        : -1;
    if (Count < 0)
      Count = S.predictedPeak ? S.predictedPeak[R] * Max : Peak * Max;
    Limit = std::max(Limit, Count);
  }
  std::string Out = "  // Activation bytes per (microbatch, stage), measured; "
                    "the limit is this\n  // run's peak. Re-plan for a "
                    "device: ppsc synth THIS_FILE --memory-limit 2GiB\n"
                    "  memory {\n";
  for (int32_t St = 0; St < S.stages; ++St)
    Out += fmt::format("    F[stage {}] = {} B;\n", St, Amount[size_t(St)]);
  Out += fmt::format("    limit {} B;\n  }}\n", std::max<int64_t>(Limit, 1));
  return Out;
}

std::string formatProfile(const ScheduleDesc &S, const ProfileSummary &P,
                          const ProfileRun &Run) {
  std::string T;
  auto F = std::back_inserter(T);
  int Last = P.firstStep + P.steps - 1;
  fmt::format_to(
      F,
      "// Profile of pipeline '{}' ({} ranks, {} stages, {} microbatches), "
      "measured by\n// {} on {} (comm {}): step{} {} of steps 0..{}{}.\n",
      S.name, S.ranks, S.stages, S.microbatches, Run.program, Run.transport,
      commModelName(Run.comm), P.steps == 1 ? "" : "s",
      P.steps == 1 ? fmt::format("{}", P.firstStep)
                   : fmt::format("{}..{}", P.firstStep, Last),
      Run.totalSteps - 1,
      P.firstStep == 0 ? ""
      : P.firstStep == 1
          ? " (step 0 is warm-up)"
          : fmt::format(" (steps 0..{} are warm-up)", P.firstStep - 1));
  fmt::format_to(
      F,
      "//\n// Per microbatch, in ms (one time unit of the costs below = 1 "
      "ms): mean over\n// the measured actions, sd of the per-step means, "
      "fastest, slowest, count.\n// A compute is its kernel alone{}; F "
      "includes the loss on the last stage.\n",
      Run.cpuClock ? ", by its thread's CPU time (--profile-clock=cpu)" : "");
  if (!Run.note.empty())
    fmt::format_to(F, "// Note: {}.\n", Run.note);
  if (P.probes)
    fmt::format_to(F,
                   "// {} B ran as I then W to time the split (every "
                   "other B of a stage).\n",
                   P.probes);
  if (P.overlapped)
    fmt::format_to(F, "// {} computes inside overlap pairs are not counted.\n",
                   P.overlapped);
  fmt::format_to(F, "//\n// stage kind  {:<9} {:<9} {:<9} {:<9} n\n", "mean",
                 "sd", "min", "max");
  for (int32_t St = 0; St < S.stages; ++St) {
    const ProfileSummary::Stage &X = P.stages[size_t(St)];
    const std::pair<char, const ProfileStat *> Kinds[] = {
        {'F', &X.F}, {'I', &X.I}, {'W', &X.W}, {'B', &X.B}};
    for (auto &[K, St2] : Kinds)
      if (St2->samples)
        fmt::format_to(F, "// {:<5} {:<5} {}\n", St, K, statRow(*St2));
  }
  // Whether the split pays: I + W against B (a second backward would make
  // it about 1.6).
  fmt::format_to(F, "//\n// The I/W split: I + W against B per stage (1 = "
                    "free; over 1.1, zero-bubble\n// schedules lose what "
                    "they gain):\n// stage I + W      B          (I + W) / "
                    "B\n");
  for (int32_t St = 0; St < S.stages; ++St) {
    const ProfileSummary::Stage &X = P.stages[size_t(St)];
    if (!X.I.samples || !X.W.samples) {
      fmt::format_to(F, "// {:<5} -          {:<10} (no I and W)\n", St,
                     X.B.samples ? ms(X.B.mean) : "-");
      continue;
    }
    double IW = X.I.mean + X.W.mean;
    if (!X.B.samples) {
      fmt::format_to(F,
                     "// {:<5} {:<10} -          (no B: the schedule "
                     "splits every backward)\n",
                     St, ms(IW));
      continue;
    }
    fmt::format_to(F, "// {:<5} {:<10} {:<10} {}\n", St, ms(IW), ms(X.B.mean),
                   X.B.mean > 0 ? fmt::format("{:.3f}", IW / X.B.mean) : "-");
  }
  fmt::format_to(
      F,
      "//\n// Messages, in ms: from the send posted (or the receive, if "
      "later) to the data\n// at a receiver that was waiting for it; "
      "\"not waited\" messages had arrived\n// before their receiver "
      "looked (no sample).\n// link            {:<9} {:<9} {:<9} {:<9} n  "
      "  not waited\n",
      "mean", "sd", "min", "max");
  for (const ProfileSummary::Link &L : P.links)
    fmt::format_to(
        F, "// {:<15} {}   {}\n",
        fmt::format("{} -> {} {}", L.from, L.to, L.gradient ? "grad" : "act"),
        L.time.samples ? statRow(L.time) : "-", L.unmeasured);
  fmt::format_to(F, "// {:<15} {}\n", "all", statRow(P.messages));
  fmt::format_to(F,
                 "//\n// Step time, ms (first compute starting to the last "
                 "rank ending): {}\n",
                 statRow(P.stepTime));
  if (Run.simMakespan > 0 || Run.executorMakespan > 0)
    fmt::format_to(F,
                   "// The compiler predicted {} for this run, in the time "
                   "units of the costs it\n// was compiled with (ms if "
                   "compiled from a profile).\n",
                   predictions(Run));
  bool AnyBytes = false;
  for (const ProfileSummary::Stage &X : P.stages)
    AnyBytes |= X.bytes.samples > 0;
  if (AnyBytes) {
    fmt::format_to(F, "//\n// Activation bytes per microbatch (what one F's "
                      "activations hold):\n// stage mean       min        "
                      "max\n");
    for (int32_t St = 0; St < S.stages; ++St) {
      const ProfileStat &B = P.stages[size_t(St)].bytes;
      if (B.samples)
        fmt::format_to(F, "// {:<5} {:<10.0f} {:<10.0f} {:.0f}\n", St, B.mean,
                       B.min, B.max);
    }
  }
  std::string Other;
  for (size_t R = 0; R < P.nonActivationPeak.size(); ++R)
    if (P.nonActivationPeak[R] >= 0)
      Other += fmt::format("{}{}", Other.empty() ? "" : ", ",
                           P.nonActivationPeak[R]);
  if (!Other.empty())
    fmt::format_to(F,
                   "// Peak of the other bytes (weights, gradients, "
                   "optimizer state, temporaries)\n// per rank: {}\n",
                   Other);

  int64_t Peak = 0;
  for (int64_t X : Run.peaks)
    Peak = std::max(Peak, X);
  fmt::format_to(
      F,
      "//\n// Re-plan for these costs within the run's peak of {} "
      "activations per rank\n// (each send right after its producer, "
      "run on a comm stream per peer):\n//   ppsc synth THIS_FILE "
      "--comm-placement=producer -o replanned.pps\n//   ppsc emit "
      "--target=cpp --stream=peer -Wno-early-recv replanned.pps\n//     -o "
      "replanned.cpp\n"
      "// Time another schedule of {} stages with them:\n//   ppsc sim "
      "--costs=THIS_FILE other.pps\n",
      Peak, S.stages);
  fmt::format_to(F,
                 "pipeline {}_measured {{\n  ranks {};\n  stages {} "
                 "placement {};\n  microbatches {};\n",
                 S.name, S.ranks, S.stages, placementText(S), S.microbatches);
  if (S.directions == 2)
    fmt::format_to(F, "  directions 2;\n");
  fmt::format_to(F, "  cost {{\n");
  for (int32_t St = 0; St < S.stages; ++St) {
    const ProfileSummary::Stage &X = P.stages[size_t(St)];
    fmt::format_to(F, "    F[stage {0}] = {1};", St, ms(X.F.mean));
    if (X.I.samples && X.W.samples)
      fmt::format_to(F, " I[stage {0}] = {1}; W[stage {0}] = {2};", St,
                     ms(X.I.mean), ms(X.W.mean));
    if (X.B.samples)
      fmt::format_to(F, " B[stage {}] = {};", St, ms(X.B.mean));
    fmt::format_to(F, "\n");
  }
  fmt::format_to(F, "  }}\n  comm {{ latency {}; }}\n",
                 ms(P.messages.samples ? P.messages.mean : 0));
  if (!P.messages.samples)
    fmt::format_to(F, "  // no receiver waited for a message: latency not "
                      "measured\n");
  fmt::format_to(F, "{}  schedule synth();\n}}\n", memoryBlock(S, P, Peak));
  return T;
}

std::string writeProfile(const std::string &Path, const ScheduleDesc &S,
                         const std::vector<ProfileEvent> &Events,
                         const std::vector<ActivationBytes> &Bytes, int Warmup,
                         const ProfileRun &Run, bool Quiet) {
  ProfileSummary P;
  std::string Error =
      summarizeProfile(S, Events, Bytes, Warmup, P, Run.cpuClock);
  if (!Error.empty())
    return "--profile: " + Error;
  if (!writeFileWhole(Path, formatProfile(S, P, Run), Error))
    return Error;
  if (!Quiet)
    fmt::print("profile: step time {} ms (mean of {} step{} after {} "
               "warm-up; sd {} ms){}; wrote {}\n",
               ms(P.stepTime.mean), P.steps, P.steps == 1 ? "" : "s", Warmup,
               ms(P.stepTime.sdSteps),
               Run.simMakespan > 0 || Run.executorMakespan > 0
                   ? "; predicted " + predictions(Run) + " time units"
                   : "",
               Path);
  if (!Quiet && !Run.note.empty())
    fmt::print("note: {}\n", Run.note);
  return {};
}

double threadCpuMicros() {
  timespec T{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &T);
  return double(T.tv_sec) * 1e6 + double(T.tv_nsec) * 1e-3;
}

} // namespace ppsrt
