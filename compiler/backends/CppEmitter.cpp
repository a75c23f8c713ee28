//===- CppEmitter.cpp - the C++ executor backend --------------------------===//
//
// The output is data plus one call: the runtime (runtime/include/ppsrt)
// interprets the tables. Keeping the code generic and the schedule as
// constant arrays is what makes huge schedules compile fast and keeps the
// generated file readable.
//
//===----------------------------------------------------------------------===//
#include "pps/backends/CppEmitter.h"

#include "pps/analysis/Memory.h"
#include "pps/analysis/Routes.h"
#include "pps/sim/Simulator.h"
#include "ppsrt/Schedule.h"

#include "llvm/Support/ErrorHandling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace pps::backends {

using ir::Action;
using ir::ActionKind;

// The tables are read by the runtime: its kinds and comm models must be the
// IR's (both are the schema's enums, so this holds by construction).
static_assert(std::is_same_v<ppsrt::Kind, ir::ActionKind> &&
                  std::is_same_v<ppsrt::CommModel, ir::CommModel>,
              "the runtime's kinds are the compiler's");

std::vector<double> executorMakespans(const ir::Schedule &S) {
  std::vector<double> Out;
  for (unsigned M = 0; M < schema::NumCommModels; ++M)
    for (bool BlockingRecv : {false, true}) {
      sim::SimOptions SO;
      SO.CommModel = ir::CommModel(M);
      SO.Dataflow = sim::DataflowMode::Comms;
      SO.ExecutorTiming = true;
      SO.ExecutorBlockingRecv = BlockingRecv;
      SO.CriticalPath = false;
      SO.KeepTimes = false;
      sim::SimResult R = sim::simulate(S, SO);
      Out.push_back(R.Deadlocked ? -1.0 : R.Makespan);
    }
  return Out;
}

std::vector<double> streamMakespans(const ir::Schedule &S) {
  auto Time = [&](ir::CommModel M, ir::CommStream St) {
    sim::SimOptions SO;
    SO.CommModel = M;
    SO.Stream = St;
    SO.BlockingComm = false; // the executor's streams run asynchronously
    SO.Dataflow = sim::DataflowMode::Comms;
    SO.CriticalPath = false;
    SO.KeepTimes = false;
    sim::SimResult R = sim::simulate(S, SO);
    return R.Deadlocked ? -1.0 : R.Makespan;
  };
  return {S.Stream.inOrder() ? Time(S.Comm, S.Stream) : -1.0,
          Time(ir::CommModel::Rendezvous, schema::NcclStream)};
}

void encodeRow(const ir::Action &A, int32_t *Row) {
  schema::encodeRow(A.Kind, A.Flags, A.Peer, A.Microbatch, A.Stage, Row);
}

std::string cppStringLiteral(llvm::StringRef S) {
  std::string Out;
  Out.reserve(S.size());
  for (char C : S) {
    auto U = static_cast<unsigned char>(C);
    if (C == '"' || C == '\\')
      Out += fmt::format("\\{}", C);
    else if (U >= 0x20 && U < 0x7f && C != '?') // '?' avoids trigraphs
      Out += C;
    else
      Out += fmt::format("\\{:03o}", U);
  }
  return Out;
}

std::string cppCommentText(llvm::StringRef S) {
  std::string Out;
  Out.reserve(S.size());
  for (char C : S) {
    auto U = static_cast<unsigned char>(C);
    Out += U >= 0x20 && U < 0x7f && C != '\\' ? C : '?';
  }
  return Out;
}

/// A double as a C++ literal that round-trips.
static std::string cppDouble(double V) {
  if (!std::isfinite(V))
    return V > 0 ? "1e300" : "-1.0";
  std::string S = fmt::format("{}", V);
  if (S.find_first_of(".e") == std::string::npos)
    S += ".0";
  return S;
}

/// The short text of one action for the table comments.
static std::string commentText(const Action &A) {
  std::string S = ir::actionText(A);
  if (A.overlapsNext())
    S = "overlap(" + S + ",";
  return cppCommentText(S);
}

static const char *commModelEnum(ir::CommModel C) {
  switch (C) {
  case ir::CommModel::Rendezvous:
    return "ppsrt::CommModel::Rendezvous";
  case ir::CommModel::Eager:
    return "ppsrt::CommModel::Eager";
  case ir::CommModel::Batched:
    return "ppsrt::CommModel::Batched";
  }
  llvm_unreachable("every CommModel has an executor enum");
}

static void emitTable(const ir::Schedule &S, int32_t Rank,
                      llvm::raw_ostream &OS) {
  const std::vector<Action> &Acts = S.Ranks[Rank].Actions;
  OS << fmt::format("// rank {}: {} actions\n", Rank, Acts.size());
  OS << fmt::format("const int32_t kRank{}[] = {{\n", Rank);
  if (Acts.empty())
    OS << "    0, // (no actions)\n";
  constexpr size_t PerLine = 8;
  std::string Line, Comment;
  for (size_t I = 0; I < Acts.size(); I += PerLine) {
    Line.clear();
    Comment.clear();
    for (size_t J = I; J < std::min(Acts.size(), I + PerLine); ++J) {
      const Action &A = Acts[J];
      int32_t Row[schema::RowWords];
      encodeRow(A, Row);
      Line += fmt::format("{},{},{}, ", Row[0], Row[1], Row[2]);
      std::string Text = commentText(A);
      // The second half of an overlap pair closes the parenthesis.
      if (J > 0 && Acts[J - 1].overlapsNext())
        Text += ")";
      Comment += (Comment.empty() ? "" : " | ") + Text;
    }
    OS << "    " << Line << "// " << Comment << "\n";
  }
  OS << "};\n";
}

void emitCpp(const ir::Schedule &S, const CppEmitOptions &Opts,
             llvm::raw_ostream &OS) {
  const ir::Topology &T = S.Topo;
  std::string Name = S.Name.empty() ? "schedule" : S.Name;
  std::string Source = Opts.SourceName.empty() ? "<builder>" : Opts.SourceName;

  // The analyses the executor compares its measurements with.
  // The chunk model's peaks: what the executor counts (StageIO objects);
  // and, under another memory model, the peaks in its units.
  analysis::MemoryOptions Chunks;
  Chunks.Model = analysis::MemoryModel::chunks();
  std::vector<int64_t> Peaks = analysis::analyzeMemory(S, Chunks).wholePeaks();
  analysis::MemoryProfile ModelPeaks;
  if (!S.Memory.isChunks())
    ModelPeaks = analysis::analyzeMemory(S);
  double Predicted = -1;
  std::vector<double> Executor, Streams;
  if (Opts.Simulate) {
    sim::SimOptions SO;
    SO.CriticalPath = false;
    SO.KeepTimes = false;
    sim::SimResult R = sim::simulate(S, SO);
    if (!R.Deadlocked)
      Predicted = R.Makespan;
    Executor = executorMakespans(S);
    Streams = streamMakespans(S);
  }

  OS << "//===- Generated by ppsc emit --target=cpp. Do not edit. "
        "-----------------===//\n";
  OS << "//\n";
  OS << fmt::format("// Pipeline: {}\n", cppCommentText(Name));
  OS << fmt::format("// Source:   {}\n", cppCommentText(Source));
  OS << fmt::format("// {} ranks, {} stages (placement {}), {} microbatches, "
                    "comm {}, {} actions\n",
                    T.Ranks, T.Stages, ir::placementName(T.Place).str(),
                    T.Microbatches, ir::commDescription(S.Comm, S.Stream),
                    S.numActions());
  OS << fmt::format("// {}\n", cppCommentText(Opts.Status.sentence()));
  OS << "//\n"
        "// Build with pps_add_executor (CMake, find_package(pps)) or with\n"
        "// pkg-config pps-runtime / pps-runtime-mpi (docs/runtime.md), then:\n"
        "//   ./exec [--transport=threads|mpi] [--steps=N] "
        "[--watchdog=SECONDS]\n"
        "//          [--trace=FILE] [--time-scale=MS_PER_UNIT] [--comm=MODEL]\n"
        "//   mpirun -n RANKS ./exec --transport=mpi\n"
        "// The built-in workload spins for the cost model's times; link your\n"
        "// own kernels by defining ppsrt::makeKernels (see ppsrt/Kernels.h).\n"
        "//\n"
        "//===------------------------------------------------------------"
        "----------===//\n";
  OS << "#include \"ppsrt/Main.h\"\n\n#include <cstdint>\n\nnamespace {\n\n";

  OS << "// Topology: the rank of each stage.\n";
  OS << fmt::format("const int32_t kStageToRank[{}] = {{", T.Stages);
  for (int32_t St = 0; St < T.Stages; ++St)
    OS << (St ? ", " : "") << T.rankOf(St);
  OS << "};\n\n";

  OS << "// Cost model: time units of {F, I, W, B} per stage.\n";
  OS << fmt::format("const ppsrt::StageCost kStageCost[{}] = {{\n", T.Stages);
  for (int32_t St = 0; St < T.Stages; ++St) {
    const ir::StageCost &C = S.Cost.stage(St);
    OS << fmt::format("    {{{}, {}, {}, {}}}, // stage {}\n", cppDouble(C.F),
                      cppDouble(C.I), cppDouble(C.W), cppDouble(C.B), St);
  }
  OS << "};\n\n";

  std::string Kinds;
  for (unsigned K = 0; K < schema::NumKinds; ++K)
    Kinds += fmt::format("{}{}", K ? " " : "", schema::kindName(ActionKind(K)));
  OS << "// Action tables: per action {kind | flags << 4 | (peer + 1) << 8, "
        "microbatch, stage}\n"
     << fmt::format("// (kinds {} = 0..{},\n", Kinds, schema::NumKinds - 1)
     << "// flag 1 = overlapped with the next action; ppsrt/Schema.h); "
        "comments give the\n// text form.\n";
  for (int32_t R = 0; R < T.Ranks; ++R)
    emitTable(S, R, OS);
  OS << "\n";
  OS << fmt::format("const ppsrt::RankTable kRankTables[{}] = {{\n", T.Ranks);
  for (int32_t R = 0; R < T.Ranks; ++R)
    OS << fmt::format("    {{kRank{}, {}}},\n", R, S.Ranks[R].Actions.size());
  OS << "};\n\n";

  analysis::ModelLayout Layout = analysis::modelLayout(T);
  OS << "// Routes: {first microbatch, microbatches, first stage, last stage, "
        "data rank,\n// loss rank}: where inputs are read and losses "
        "computed.\n";
  OS << fmt::format("const ppsrt::RouteDesc kRoutes[{}] = {{",
                    std::max<size_t>(1, Layout.Routes.size()));
  for (size_t I = 0; I < Layout.Routes.size(); ++I) {
    const analysis::Route &R = Layout.Routes[I];
    OS << fmt::format("{}{{{}, {}, {}, {}, {}, {}}}", I ? ", " : "",
                      R.FirstMicrobatch, R.Microbatches, R.FirstStage,
                      R.LastStage, R.DataRank, R.LossRank);
  }
  OS << "};\n\n";
  OS << "// Weight sharing: the weight group (model layer) of each stage; "
        "the stages of a\n// group hold copies of the same weights, whose "
        "gradients are summed.\n";
  OS << fmt::format("const int32_t kWeightGroup[{}] = {{", T.Stages);
  for (int32_t St = 0; St < T.Stages; ++St)
    OS << (St ? ", " : "") << Layout.GroupOf[size_t(St)];
  OS << "};\n\n";

  OS << "// Memory analysis: peak activations per rank.\n";
  OS << fmt::format("const int64_t kPredictedPeak[{}] = {{", T.Ranks);
  for (int32_t R = 0; R < T.Ranks; ++R)
    OS << (R ? ", " : "") << (size_t(R) < Peaks.size() ? Peaks[R] : 0);
  OS << "};\n\n";

  if (!S.Memory.isChunks()) {
    if (S.Memory.Stages.empty())
      OS << fmt::format("// Memory analysis: peak memory per rank in the "
                        "memory model's {} (F = {}, I = {}).\n",
                        S.Memory.Bytes ? "bytes" : "units",
                        cppDouble(S.Memory.Default.Forward),
                        cppDouble(S.Memory.Default.inputAmount()));
    else
      OS << fmt::format("// Memory analysis: peak memory per rank in the "
                        "memory model's {} (kStageMemory).\n",
                        S.Memory.Bytes ? "bytes" : "units");
    OS << fmt::format("const double kPredictedMemory[{}] = {{", T.Ranks);
    for (int32_t R = 0; R < T.Ranks; ++R)
      OS << (R ? ", " : "")
         << cppDouble(size_t(R) < ModelPeaks.Ranks.size()
                          ? ModelPeaks.Ranks[size_t(R)].Peak
                          : 0.0);
    OS << "};\n\n";
  }
  if (!S.Memory.Stages.empty()) {
    OS << "// Per stage: its memory model (F allocates, I frees).\n";
    OS << fmt::format("const pps::schema::MemoryModel kStageMemory[{}] = {{",
                      T.Stages);
    for (int32_t St = 0; St < T.Stages; ++St) {
      const schema::MemoryModel &M = S.Memory.of(St);
      OS << fmt::format("{}{{{}, {}}}", St ? ", " : "", cppDouble(M.Forward),
                        cppDouble(M.InputGrad));
    }
    OS << "};\n\n";
  }
  if (!S.Cost.StageOverlap.empty()) {
    OS << "// Per stage: the time of an overlap pair whose first compute is "
          "there (< 0: the\n// overlap cost above).\n";
    OS << fmt::format("const double kStageOverlapCost[{}] = {{", T.Stages);
    for (int32_t St = 0; St < T.Stages; ++St) {
      double V = -1.0;
      if (size_t(St) < S.Cost.StageOverlap.size())
        V = S.Cost.StageOverlap[size_t(St)].value_or(-1.0);
      OS << (St ? ", " : "") << cppDouble(V);
    }
    OS << "};\n\n";
  }

  if (!Executor.empty()) {
    OS << "// Timing of one step as the executor runs it (ppsc's timing "
          "engine), per comm\n// model (rendezvous, eager, batched) and "
          "receive mode (deferred, blocking);\n// < 0: cannot finish.\n";
    OS << fmt::format("const double kExecutorMakespan[{}] = {{",
                      Executor.size());
    for (size_t I = 0; I < Executor.size(); ++I)
      OS << (I ? ", " : "") << cppDouble(Executor[I]);
    OS << "};\n\n";
  }
  if (!Streams.empty()) {
    OS << "// Timing of one step as the executor runs it on in-order comm "
          "streams (ppsc sim's\n// timing), under the schedule's own stream "
          "rule and under the nccl preset;\n// < 0: none, or cannot finish.\n";
    OS << fmt::format("const double kStreamMakespan[2] = {{{}, {}}};\n\n",
                      cppDouble(Streams[0]), cppDouble(Streams[1]));
  }

  double Grad =
      S.Cost.GradientBytes < 0 ? S.Cost.ActivationBytes : S.Cost.GradientBytes;
  OS << "const ppsrt::ScheduleDesc kSchedule = {\n";
  OS << fmt::format("    \"{}\", // name\n", cppStringLiteral(Name));
  OS << fmt::format("    \"{}\", // source\n", cppStringLiteral(Source));
  OS << fmt::format("    {}, {}, {}, // ranks, stages, microbatches\n", T.Ranks,
                    T.Stages, T.Microbatches);
  OS << "    kStageToRank,\n    kStageCost,\n";
  OS << fmt::format("    {}, // overlap cost (< 0: sum of the pair)\n",
                    cppDouble(S.Cost.Overlap ? *S.Cost.Overlap : -1.0));
  OS << fmt::format("    {}, // latency (units per message)\n",
                    cppDouble(S.Cost.Latency));
  OS << fmt::format("    {}, // bandwidth (bytes per ms, 0 = infinite)\n",
                    cppDouble(S.Cost.BandwidthBytesPerMs));
  OS << fmt::format("    {}, {}, // activation and gradient bytes\n",
                    cppDouble(S.Cost.ActivationBytes), cppDouble(Grad));
  OS << fmt::format("    {},\n", commModelEnum(S.Comm));
  OS << "    kRankTables,\n    kPredictedPeak,\n";
  OS << fmt::format("    {}, // simulated makespan (units; < 0 unknown)\n",
                    cppDouble(Predicted));
  OS << fmt::format("    {}, // directions\n", T.Directions);
  OS << fmt::format("    {}, // executor timing per comm model\n",
                    Executor.empty() ? "nullptr" : "kExecutorMakespan");
  OS << fmt::format("    {}, kRoutes, // routes\n", Layout.Routes.size());
  OS << fmt::format("    kWeightGroup, {}, // weight group per stage, groups\n",
                    Layout.Groups.size());
  if (Opts.Status.Verified)
    OS << "    nullptr, // verified: no reason to warn\n";
  else
    OS << fmt::format("    \"{}\", // unverified\n",
                      cppStringLiteral(Opts.Status.sentence()));
  if (!S.Memory.isChunks() || !S.Cost.StageOverlap.empty() ||
      S.Stream != ir::CommStream() || !Streams.empty()) {
    OS << fmt::format("    {{{}, {}}}, // memory model: F allocates, I frees\n",
                      cppDouble(S.Memory.Default.Forward),
                      cppDouble(S.Memory.Default.InputGrad));
    OS << fmt::format("    {}, // predicted memory per rank\n",
                      S.Memory.isChunks() ? "nullptr" : "kPredictedMemory");
    OS << fmt::format("    {}, // overlap cost per stage\n",
                      S.Cost.StageOverlap.empty() ? "nullptr"
                                                  : "kStageOverlapCost");
    OS << fmt::format("    {{pps::schema::StreamScope::{}, {}}}, // stream "
                      "rule: scope, eager threshold (bytes; < 0 none)\n",
                      S.Stream.Scope == ir::StreamScope::None   ? "None"
                      : S.Stream.Scope == ir::StreamScope::Peer ? "Peer"
                                                                : "Rank",
                      cppDouble(S.Stream.EagerThreshold));
    OS << fmt::format("    {}, // executor timing under a stream rule\n",
                      Streams.empty() ? "nullptr" : "kStreamMakespan");
    if (!S.Memory.Stages.empty() || S.Memory.Bytes)
      OS << fmt::format("    {}, {}, // memory model per stage, in bytes\n",
                        S.Memory.Stages.empty() ? "nullptr" : "kStageMemory",
                        S.Memory.Bytes ? "true" : "false");
  }
  OS << "};\n\n} // namespace\n\n";
  OS << "int main(int argc, char **argv) {\n"
        "  return ppsrt::executorMain(kSchedule, argc, argv);\n"
        "}\n";
}

} // namespace pps::backends
