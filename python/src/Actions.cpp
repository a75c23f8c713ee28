//===- Actions.cpp - pps._pps: actions, runtime tables, torch CSV ---------===//
//
// A schedule's actions as pps.Action tuples (built in C: a schedule can
// hold millions), each rank's program as a runtime (pps.torch) walks it,
// in the action schema's terms, and the PyTorch CSV text form.
//
//===----------------------------------------------------------------------===//
#include "Module.h"

#include "pps/analysis/Matching.h"
#include "pps/analysis/Routes.h"
#include "pps/backends/TorchCsv.h"

#include "llvm/ADT/DenseSet.h"

#include <fmt/format.h>

namespace pps::python {

//===----------------------------------------------------------------------===//
// Actions
//===----------------------------------------------------------------------===//

PythonTypes Types;

py::handle registered(py::handle T, const char *Name) {
  if (!T)
    throw std::runtime_error(fmt::format(
        "pps._pps is used without the pps package (pps.{} is not registered)",
        Name));
  return T;
}

/// An instance of a named tuple type from its fields, built in C (as
/// tuple.__new__(Type, Fields) does): a schedule can hold millions of
/// actions. The fields are numbers, strings, None or such tuples, so the
/// result cannot be part of a reference cycle: it is untracked by the cycle
/// collector (as CPython untracks such tuples itself, but only once a
/// collection has scanned them), which keeps a million-action list from
/// costing repeated collections while it is built.
py::object namedTuple(py::handle Type, const py::tuple &Fields) {
  py::tuple Args = py::make_tuple(Fields);
  PyObject *Obj = PyTuple_Type.tp_new(
      reinterpret_cast<PyTypeObject *>(Type.ptr()), Args.ptr(), nullptr);
  if (!Obj)
    throw py::error_already_set();
  PyObject_GC_UnTrack(Obj); // a no-op if it is not tracked
  return py::reinterpret_steal<py::object>(Obj);
}

ActionConverter::ActionConverter(const SourceManager &SM)
    : SM(SM), ActionType(registered(Types.Action, "Action")) {
  Kinds.reserve(ir::NumActionKinds);
  for (unsigned I = 0; I < ir::NumActionKinds; ++I)
    Kinds.emplace_back(kindName(ir::ActionKind(I)));
}

py::object ActionConverter::operator()(const ir::Action &A) {
  bool Idle = A.Kind == ir::ActionKind::Idle;
  py::object File = py::none(), Line = py::none(), Col = py::none();
  if (SM.isValid(A.Loc)) {
    SourcePos P = SM.resolve(A.Loc);
    auto It = Files.find(P.File);
    if (It == Files.end())
      It = Files.emplace(P.File, py::str(SM.fileName(P.File).str())).first;
    File = It->second;
    Line = py::int_(P.Line);
    Col = py::int_(P.Col);
  }
  return namedTuple(ActionType,
                    py::make_tuple(Kinds[unsigned(A.Kind)], A.Microbatch,
                                   A.Stage, ir::isComm(A.Kind) ? A.Peer : -1,
                                   A.overlapsNext(),
                                   Idle ? double(A.idleTime()) : 0.0,
                                   ir::actionText(A), File, Line, Col));
}

void checkRank(const ir::Schedule &S, int64_t Rank) {
  if (Rank < 0 || Rank >= S.Topo.Ranks)
    throw py::value_error(
        fmt::format("rank {} is out of range 0..{}", Rank, S.Topo.Ranks - 1));
}

py::list actionsOf(const SourceManager &SM, const ir::Schedule &S,
                   int64_t Rank) {
  checkRank(S, Rank);
  ActionConverter Convert(SM);
  const std::vector<ir::Action> &Acts = S.Ranks[Rank].Actions;
  py::list L(Acts.size());
  for (size_t I = 0; I < Acts.size(); ++I)
    L[I] = Convert(Acts[I]);
  return L;
}

//===----------------------------------------------------------------------===//
// What a runtime needs (pps.torch), by the action schema
//===----------------------------------------------------------------------===//

/// One rank's program as the schema sees it, for a runtime to walk: per
/// action (kind number, microbatch, stage, peer, overlap_next, memory
/// effect, producer stage, consumer stage, partner stage, text, partner's
/// text). The memory effect is schema::memoryEffect (W(m, s) on this rank
/// decides whether I(m, s) releases); the producer and consumer stages are
/// the schema's cross-stage producer of a compute's input and consumer of
/// its output (-1 if none: the route's first or last stage, W); the
/// partner of a comm is the matching comm on its peer.
py::list runtimeTable(const ir::Schedule &S, int64_t Rank) {
  checkRank(S, Rank);
  const std::vector<ir::Action> &Acts = S.Ranks[size_t(Rank)].Actions;
  schema::Route R = S.Topo.route();
  auto Key = [](int32_t Mb, int32_t Stage) {
    return (uint64_t(uint32_t(Mb)) << 32) | uint32_t(Stage);
  };
  llvm::DenseSet<uint64_t> HasW;
  for (const ir::Action &A : Acts)
    if (A.Kind == ir::ActionKind::W)
      HasW.insert(Key(A.Microbatch, A.Stage));
  py::list L(Acts.size());
  for (size_t I = 0; I < Acts.size(); ++I) {
    const ir::Action &A = Acts[I];
    schema::Kind K = A.Kind;
    bool Comm = schema::isComm(K);
    int32_t Producer = -1, Consumer = -1, PartnerStage = -1;
    std::string Partner;
    if (schema::isCompute(K)) {
      schema::Producer P = schema::producerOf(K, A.Microbatch, A.Stage, R);
      Producer = P.CrossStage ? P.Stage : -1;
      Consumer = schema::consumerStage(K, A.Microbatch, A.Stage, R);
    } else if (Comm) {
      schema::Action M = schema::matchingComm(
          schema::Action{K, A.Flags, A.Peer, A.Microbatch, A.Stage},
          int32_t(Rank));
      PartnerStage = M.stage;
      Partner = schema::actionText(M.kind, M.mb, M.stage, M.peer);
    }
    auto Effect =
        schema::memoryEffect(K, HasW.contains(Key(A.Microbatch, A.Stage)));
    L[I] =
        py::make_tuple(unsigned(K), A.Microbatch, A.Stage, Comm ? A.Peer : -1,
                       A.overlapsNext(), unsigned(Effect), Producer, Consumer,
                       PartnerStage, ir::actionText(A), Partner);
  }
  return L;
}

/// The first FIFO mismatch of S in the runtimes' words (the analysis
/// layer's matching, the schema's wording, as ppsrt::checkMatch words it),
/// or nothing.
std::optional<std::string> fifoMismatch(const ir::Schedule &S) {
  analysis::Matching M = analysis::matchComms(S);
  for (const analysis::ChannelMatch &C : M.Channels) {
    if (C.FirstBad == analysis::NoAction)
      continue;
    uint32_t Send = M.Partner[C.FirstBad];
    if (Send == analysis::NoAction)
      continue;
    auto Text = [&](uint32_t G) {
      const ir::Action &A =
          S.Ranks[size_t(M.Ids.rankOf(G))].Actions[M.Ids.indexOf(G)];
      return "`" + ir::actionText(A) + "`";
    };
    return fmt::format("{} ({}) [fifo-mismatch]",
                       schema::fifoMismatchMessage(C.BadOrdinal, C.Src, C.Dst,
                                                   Text(Send),
                                                   Text(C.FirstBad)),
                       schema::FifoRule);
  }
  return std::nullopt;
}

py::object memoryAmount(double V) {
  if (V == std::floor(V) && std::fabs(V) < 9e15)
    return py::int_(int64_t(V));
  return py::float_(V);
}

py::dict memoryModelOf(const schema::MemoryModel &M) {
  py::dict D;
  D["F"] = memoryAmount(M.Forward);
  D["I"] = memoryAmount(M.inputAmount());
  D["W"] = memoryAmount(M.weightAmount());
  return D;
}

py::dict memoryModelOf(const ir::MemorySpec &M) {
  py::dict D = memoryModelOf(M.Default);
  if (M.Bytes)
    D["unit"] = "bytes";
  if (!M.Stages.empty()) {
    py::list L;
    for (const schema::MemoryModel &X : M.Stages)
      L.append(memoryModelOf(X));
    D["stages"] = L;
  }
  return D;
}

py::dict costsOf(const ir::Schedule &S, int32_t Stage) {
  py::dict D;
  for (ir::ActionKind K : {ir::ActionKind::F, ir::ActionKind::I,
                           ir::ActionKind::W, ir::ActionKind::B})
    D[py::str(kindName(K))] = S.Cost.computeCost(K, Stage);
  // The time of an overlap pair whose first compute is on the stage, when
  // one is given (else a pair costs the sum of its two computes).
  if (std::optional<double> T = S.Cost.overlapTime(Stage))
    D["overlap"] = *T;
  return D;
}

std::string torchCsv(const Unit &U, bool WithComms, bool Verify) {
  const ir::Schedule &S = U.Lowered;
  // What PyTorch cannot express is refused as `ppsc emit --target=torch`
  // refuses it, before the proof.
  DiagnosticEngine Diags(*U.SM);
  if (!backends::checkTorchExport(S, Diags))
    fail(Diags);
  backends::ExportStatus Status =
      exportStatus(U, Verify, "to_torch_csv(verify=False)", !WithComms);
  return render([&](llvm::raw_ostream &OS) {
    backends::emitTorchCsv(S, OS, {WithComms, Status});
  });
}

py::dict layoutOf(const ir::Schedule &S) {
  analysis::ModelLayout L = analysis::modelLayout(S.Topo);
  py::list Routes, Groups;
  for (const analysis::Route &R : L.Routes)
    Routes.append(py::make_tuple(R.FirstMicrobatch, R.Microbatches,
                                 R.FirstStage, R.LastStage, R.DataRank,
                                 R.LossRank));
  for (const auto &G : L.Groups)
    Groups.append(std::vector<int32_t>(G.begin(), G.end()));
  py::dict D;
  D["routes"] = Routes;
  D["data_ranks"] =
      std::vector<int32_t>(L.DataRanks.begin(), L.DataRanks.end());
  D["loss_ranks"] =
      std::vector<int32_t>(L.LossRanks.begin(), L.LossRanks.end());
  D["weight_groups"] = Groups;
  return D;
}

} // namespace pps::python
