//===- StageKernels.cpp - pipeline stages over torch::nn::Modules ---------===//
//
// One of the libtorch translation units of pps_runtime_torch: StageKernels.h
// (the kernels F, I, W, B over the user's modules, the step's end with the
// weight groups' gradient exchange). Tensors in Buffers and the byte
// accounting are in Tensors.cpp, the split backward and the unpipelined
// reference in StageGraph.cpp; StageSupport.h has what they share.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/torch/StageKernels.h"

#include "StageSupport.h"

#include "ppsrt/Executor.h"

#include <c10/util/Exception.h>
#include <torch/optim/optimizer.h>
#include <torch/utils.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ppsrt {
namespace torch {

//===----------------------------------------------------------------------===//
// Stage kernels
//===----------------------------------------------------------------------===//

/// How many microbatches end at Stage (their loss is computed there), from
/// the compiler's routes when the description has them.
static int32_t endingMicrobatches(const ScheduleDesc &S, int32_t Stage) {
  int32_t Count = 0;
  if (S.routes) {
    for (int32_t R = 0; R < S.numRoutes; ++R)
      if (S.routes[R].lastStage == Stage)
        Count += S.routes[R].microbatches;
    return Count;
  }
  for (int32_t M = 0; M < S.microbatches; ++M)
    Count += lastStage(S, M) == Stage;
  return Count;
}

struct StageKernels::StageSlot {
  StageModule mod;
  std::vector<at::Tensor> params;
  std::unique_ptr<::torch::optim::Optimizer> opt;
  bool ends = false; ///< the last stage of some microbatch
  /// The output's dtype and shape, fixed by the first microbatch.
  bool haveOut = false;
  at::ScalarType outType = at::kFloat;
  std::vector<int64_t> outSizes;
  int32_t outMb = -1;
  /// What the stage expects to receive (declared, or the first input).
  bool haveIn = false, inDeclared = false;
  at::ScalarType inType = at::kFloat;
  std::vector<int64_t> inSizes;
  int32_t inMb = -1;
  int32_t ending = 0; ///< microbatches whose loss the stage computes
  double lossSum = 0;
  std::vector<double> stepLoss;
};

/// Activation accounting of one rank. Samples are taken after every F and
/// every release: the pool (bytes the live forwards' accounts claim, plus
/// what outlived its activation) against the bookkeeping (the bytes each
/// (m, s) claimed when its F ended, summed over the (m, s) the runtime holds
/// live, i.e. the memory analysis' live set).
struct StageKernels::RankSlot {
  Pool pool;
  Executor *exec = nullptr; ///< set by installHandlers
  int step = 0;
  bool threadsSet = false;
  int64_t book = 0;
  int64_t peakMeasured = 0, peakBook = 0;
  int64_t minPer = std::numeric_limits<int64_t>::max(), maxPer = 0;
  int64_t worstGap = 0; ///< largest |measured - book| at a sample
  void sample() {
    int64_t M = pool.bytes();
    peakMeasured = std::max(peakMeasured, M);
    peakBook = std::max(peakBook, book);
    worstGap = std::max(worstGap, std::abs(M - book));
  }
};

/// The kernel state of one (m, s): its graph and what the backward needs.
class StageKernels::State : public StageState {
public:
  explicit State(RankSlot &R) : rank(&R), account(&R.pool) {}
  RankSlot *rank;
  Account account; ///< the bytes this (m, s) holds
  std::unique_ptr<StageGraph> graph;
  at::Tensor gradRoot; ///< the last stage: the loss's gradient seed
  at::ScalarType outType = at::kFloat, inType = at::kFloat;
  std::vector<int64_t> outSizes, inSizes;
  int64_t bytes = 0; ///< claimed when F ended
  bool counted = false;
  /// dL/dInput to send back (zeros for an input without a gradient).
  at::Tensor inputGrad(const at::Tensor &G) const {
    return G.defined() ? G : at::zeros(inSizes, at::TensorOptions(inType));
  }
  ~State() override {
    // Free the graph first: what it held is freed here, at the release;
    // whatever is still alive after that outlived its activation.
    graph.reset();
    gradRoot = at::Tensor();
    MemoryTracker::release(&account);
    if (!counted)
      return;
    rank->book -= bytes;
    rank->sample();
  }
};

StageKernels::StageKernels(const ScheduleDesc &Sched, Config Cfg)
    : S(Sched), C(std::move(Cfg)) {
  Scale = C.lossScale != 0 ? C.lossScale : 1.0 / double(S.microbatches);
  for (int32_t St = 0; St < S.stages; ++St)
    Stages.push_back(std::make_unique<StageSlot>());
  for (int32_t R = 0; R < S.ranks; ++R)
    Ranks.push_back(std::make_unique<RankSlot>());
  Groups.resize(size_t(numWeightGroups(S)));
  for (int32_t St = 0; St < S.stages; ++St)
    Groups[size_t(weightGroupOf(S, St))].push_back(St);
  MemoryTracker::install();
}

// The stages' tensors (weights, gradients, optimizer state) are charged to
// their rank's pool as other bytes, and freeing one updates that pool: free
// them while the pools exist (members die in reverse order, Ranks first).
StageKernels::~StageKernels() { Stages.clear(); }

StageKernels::StageSlot &StageKernels::slot(int32_t Stage) {
  return *Stages[size_t(Stage)];
}

::torch::nn::Module *StageKernels::module(int32_t Stage) {
  if (Stage < 0 || Stage >= S.stages)
    return nullptr;
  return Stages[size_t(Stage)]->mod.module.get();
}

const std::vector<double> &StageKernels::stepLosses(int32_t Stage) const {
  return Stages[size_t(Stage)]->stepLoss;
}

void StageKernels::setup(const KernelContext &, int32_t Rank) {
  if (!C.module || !C.data || !C.loss || !C.optimizer)
    throw std::runtime_error("ppsrt::torch::Config needs module, data, loss "
                             "and optimizer");
  // The rank's weights and optimizer are its other bytes (Tensors.h).
  Pool *Prev = MemoryTracker::countOtherBytes(&Ranks[size_t(Rank)]->pool);
  for (int32_t St = 0; St < S.stages; ++St) {
    if (S.stageToRank[St] != Rank)
      continue;
    StageSlot &Slot = slot(St);
    int32_t Layer = weightGroupOf(S, St);
    Slot.mod = buildModule(C, Layer);
    Slot.params = trainable(Slot.mod);
    Slot.opt = C.optimizer(Slot.params, St);
    Slot.ending = endingMicrobatches(S, St);
    Slot.ends = Slot.ending > 0;
    if (C.inputShape) {
      Slot.inSizes = C.inputShape(Layer);
      Slot.haveIn = Slot.inDeclared = !Slot.inSizes.empty();
    }
  }
  MemoryTracker::countOtherBytes(Prev);
}

at::Tensor StageKernels::receive(const StageIO &IO, bool Gradient,
                                 const State *St) {
  int32_t From = IO.stage + (Gradient ? 1 : -1);
  int32_t Peer = S.stageToRank[From];
  const Buffer &B = Gradient ? IO.gradOutput : IO.input;
  const char *What = Gradient ? "gradient" : "input";
  // Both ranks and the receive, or the stage that handed it over locally.
  std::string Where =
      Peer == S.stageToRank[IO.stage]
          ? fmt::format("the {} handed over by stage {} on this rank", What,
                        From)
          : fmt::format("the {} received from rank {} (`recv {}{}@{} <- {}`)",
                        What, Peer, Gradient ? "B" : "F", IO.microbatch,
                        IO.stage, Peer);
  at::Tensor T;
  try {
    T = fromBuffer(B);
  } catch (const std::exception &E) {
    throw stageError(IO.stage, IO.microbatch,
                     fmt::format("{}: {}", Where, E.what()));
  }
  if (Gradient) {
    // The gradient of our own output: exactly its dtype and shape.
    if (T.scalar_type() != St->outType || T.sizes() != St->outSizes)
      throw stageError(IO.stage, IO.microbatch,
                       fmt::format("{} is {}, but the stage's output was {}",
                                   Where, describeTensor(T),
                                   describeTensor(St->outType, St->outSizes)));
    return T;
  }
  StageSlot &Slot = slot(IO.stage);
  if (!Slot.haveIn || Slot.inMb < 0) {
    if (Slot.haveIn) {
      // Declared: check the shape (-1 = any), take the dtype.
      bool Ok = Slot.inSizes.size() == size_t(T.dim());
      for (size_t I = 0; Ok && I < Slot.inSizes.size(); ++I)
        Ok = Slot.inSizes[I] < 0 || Slot.inSizes[I] == T.size(int64_t(I));
      if (!Ok) {
        std::string Want = "[";
        for (size_t I = 0; I < Slot.inSizes.size(); ++I)
          Want += fmt::format("{}{}", I ? ", " : "",
                              Slot.inSizes[I] < 0
                                  ? std::string("*")
                                  : std::to_string(Slot.inSizes[I]));
        throw stageError(IO.stage, IO.microbatch,
                         fmt::format("{} is {}, but stage {} expects shape "
                                     "{}] (Config::inputShape)",
                                     Where, describeTensor(T), IO.stage, Want));
      }
    }
    Slot.haveIn = true;
    Slot.inType = T.scalar_type();
    Slot.inSizes = T.sizes().vec();
    Slot.inMb = IO.microbatch;
    return T;
  }
  if (T.scalar_type() != Slot.inType || T.sizes() != Slot.inSizes)
    throw stageError(
        IO.stage, IO.microbatch,
        fmt::format("{} is {}, but stage {} expects {} (as received for "
                    "microbatch {})",
                    Where, describeTensor(T), IO.stage,
                    describeTensor(Slot.inType, Slot.inSizes), Slot.inMb));
  return T;
}

void StageKernels::forward(StageIO &IO) {
  const int32_t St = IO.stage, Mb = IO.microbatch;
  StageSlot &Slot = slot(St);
  RankSlot &R = *Ranks[size_t(S.stageToRank[St])];
  bool First = St == firstStage(S, Mb), Last = St == lastStage(S, Mb);
  auto State_ = std::make_unique<State>(R);
  State &State = *State_;
  {
    ChargeScope Charge(&State.account);
    at::Tensor In, Leaf;
    Batch Data;
    if (First || Last)
      Data = guarded(St, Mb, "the data source",
                     [&] { return C.data(R.step, Mb); });
    if (First) {
      In = Data.input;
    } else {
      at::Tensor Got = receive(IO, false, nullptr);
      IO.input.reset();
      // A leaf of this stage's graph. With threads it shares the sender's
      // storage: it is this (m, s)'s activation now (and still the
      // sender's too if the sender's graph saved it).
      Leaf = Got.detach();
      if (Got.is_floating_point() || Got.is_complex())
        Leaf.requires_grad_(true);
      MemoryTracker::claim(Leaf, &State.account);
      State.inType = Leaf.scalar_type();
      State.inSizes = Leaf.sizes().vec();
      In = Leaf;
    }
    at::Tensor Out = guarded(St, Mb, "the module's forward",
                             [&] { return Slot.mod.forward(In); });
    if (!Out.defined())
      throw stageError(St, Mb, "the module's forward returned no tensor");
    if (!Slot.haveOut) {
      Slot.haveOut = true;
      Slot.outType = Out.scalar_type();
      Slot.outSizes = Out.sizes().vec();
      Slot.outMb = Mb;
    } else if (Out.scalar_type() != Slot.outType ||
               Out.sizes() != Slot.outSizes) {
      throw stageError(
          St, Mb,
          fmt::format("the module's output is {}, but microbatch {}'s was {} "
                      "(a stage's output must keep its dtype and shape)",
                      describeTensor(Out), Slot.outMb,
                      describeTensor(Slot.outType, Slot.outSizes)));
    }
    State.outType = Out.scalar_type();
    State.outSizes = Out.sizes().vec();
    if (Last) {
      at::Tensor L =
          guarded(St, Mb, "the loss", [&] { return C.loss(Out, Data.target); });
      if (!L.defined() || L.numel() != 1)
        throw stageError(
            St, Mb,
            fmt::format("the loss must be one number, not {}",
                        L.defined() ? describeTensor(L) : "no tensor"));
      double V = L.detach().to(at::kDouble).item<double>();
      if (!std::isfinite(V))
        throw stageError(St, Mb, fmt::format("the loss is {}", V));
      IO.loss = V;
      Slot.lossSum += V;
      State.gradRoot = at::full_like(L, Scale);
      State.graph = std::make_unique<StageGraph>(L, Leaf, Slot.params);
    } else {
      State.graph = std::make_unique<StageGraph>(Out, Leaf, Slot.params);
      at::Tensor Sent = Out.detach();
      Out = at::Tensor();
      // The output leaves this rank (handed over, or sent and freed): it is
      // the receiver's activation, and ours only if our graph saved it
      // (then something besides Sent holds its storage).
      if (Sent.storage().use_count() == 1)
        MemoryTracker::unclaim(Sent, &State.account);
      IO.output = toBuffer(Sent);
    }
  }
  // What this (m, s) keeps: the graph's saved tensors and its input.
  MemoryTracker::compact(&State.account);
  State.bytes = IO.activationBytes = State.account.bytes();
  State.counted = true;
  R.book += State.bytes;
  R.minPer = std::min(R.minPer, State.bytes);
  R.maxPer = std::max(R.maxPer, State.bytes);
  R.sample();
  IO.state = std::move(State_);
}

void StageKernels::backwardInput(StageIO &IO) {
  auto *St = static_cast<State *>(IO.state.get());
  if (!St)
    throw stageError(IO.stage, IO.microbatch, "I without its forward's state");
  at::Tensor G = St->gradRoot.defined() ? St->gradRoot : receive(IO, true, St);
  IO.gradOutput.reset();
  at::Tensor GI = guarded(IO.stage, IO.microbatch, "the input backward (I)",
                          [&] { return St->graph->backwardInput(G); });
  if (IO.stage > firstStage(S, IO.microbatch))
    IO.gradInput = toBuffer(St->inputGrad(GI));
}

void StageKernels::backwardWeight(StageIO &IO) {
  auto *St = static_cast<State *>(IO.state.get());
  if (!St)
    throw stageError(IO.stage, IO.microbatch, "W without its forward's state");
  guarded(IO.stage, IO.microbatch, "the weight backward (W)",
          [&] { St->graph->backwardWeight(); });
}

void StageKernels::backward(StageIO &IO) {
  auto *St = static_cast<State *>(IO.state.get());
  if (!St)
    throw stageError(IO.stage, IO.microbatch, "B without its forward's state");
  at::Tensor G = St->gradRoot.defined() ? St->gradRoot : receive(IO, true, St);
  IO.gradOutput.reset();
  at::Tensor GI = guarded(IO.stage, IO.microbatch, "the backward (B)",
                          [&] { return St->graph->backward(G); });
  if (IO.stage > firstStage(S, IO.microbatch))
    IO.gradInput = toBuffer(St->inputGrad(GI));
}

void StageKernels::control(Kind K, int32_t Rank, int32_t Stage) {
  if (C.control && Stage >= 0 && Stage < S.stages && slot(Stage).mod.module)
    C.control(K, Rank, Stage, *slot(Stage).mod.module);
}
void StageKernels::unshard(int32_t Rank, int32_t Stage) {
  control(Kind::Unshard, Rank, Stage);
}
void StageKernels::reshard(int32_t Rank, int32_t Stage) {
  control(Kind::Reshard, Rank, Stage);
}
void StageKernels::reduceGrad(int32_t Rank, int32_t Stage) {
  control(Kind::ReduceGrad, Rank, Stage);
}

void StageKernels::beginStep(int32_t Rank, int Step) {
  RankSlot &R = *Ranks[size_t(Rank)];
  R.step = Step;
  MemoryTracker::countOtherBytes(&R.pool); // this thread runs the rank

  // On the rank's own thread: OpenMP's thread count is per thread.
  if (C.intraOpThreads > 0 && !R.threadsSet) {
    at::set_num_threads(C.intraOpThreads);
    R.threadsSet = true;
  }
}

void StageKernels::installHandlers(Executor &E) {
  Ranks[size_t(E.rank())]->exec = &E;
}

/// A stage's parameter gradients as one flat tensor (zeros where a
/// parameter has none), a copy: the threads transport hands it over as is.
static at::Tensor flatGradients(const std::vector<at::Tensor> &Params) {
  std::vector<at::Tensor> Parts;
  Parts.reserve(Params.size());
  for (const at::Tensor &P : Params)
    Parts.push_back(P.grad().defined() ? P.grad().detach().reshape(-1)
                                       : at::zeros({P.numel()}, P.options()));
  if (Parts.empty())
    return at::zeros({0});
  return at::cat(Parts).clone();
}

void StageKernels::sumSharedGradients(int32_t Rank) {
  // Per weight group with a stage here and a copy elsewhere: every holder
  // sends its stages' gradients to the other holders, then adds them all up
  // in stage order, so every copy gets the same sum, bit for bit.
  std::vector<ExtraMessage> Sends, Recvs;
  std::vector<std::pair<int32_t, size_t>> Received; // (stage, index)
  for (const std::vector<int32_t> &G : Groups) {
    if (G.size() < 2 || std::none_of(G.begin(), G.end(), [&](int32_t St) {
          return S.stageToRank[St] == Rank;
        }))
      continue;
    std::vector<int32_t> Peers;
    for (int32_t St : G)
      if (int32_t Q = S.stageToRank[St];
          Q != Rank && std::find(Peers.begin(), Peers.end(), Q) == Peers.end())
        Peers.push_back(Q);
    std::sort(Peers.begin(), Peers.end());
    for (int32_t Q : Peers)
      for (int32_t St : G) {
        Action What;
        What.kind = Kind::ReduceGrad;
        What.stage = St;
        if (S.stageToRank[St] == Rank) {
          ExtraMessage M;
          M.peer = Q;
          M.what = What;
          M.buf = toBuffer(flatGradients(slot(St).params));
          Sends.push_back(std::move(M));
        } else if (S.stageToRank[St] == Q) {
          ExtraMessage M;
          M.peer = Q;
          M.what = What;
          Received.emplace_back(St, Recvs.size());
          Recvs.push_back(std::move(M));
        }
      }
  }
  if (Sends.empty() && Recvs.empty())
    return;
  RankSlot &R = *Ranks[size_t(Rank)];
  if (!R.exec)
    throw std::runtime_error("stages that share weights need the executor "
                             "(StageKernels::installHandlers was not called)");
  R.exec->exchange(Sends, Recvs);
  for (const std::vector<int32_t> &G : Groups) {
    if (G.size() < 2 || std::none_of(G.begin(), G.end(), [&](int32_t St) {
          return S.stageToRank[St] == Rank;
        }))
      continue;
    at::Tensor Sum;
    for (int32_t St : G) {
      at::Tensor Part;
      if (S.stageToRank[St] == Rank) {
        Part = flatGradients(slot(St).params);
      } else {
        auto It = std::find_if(Received.begin(), Received.end(),
                               [&](const auto &X) { return X.first == St; });
        Part = fromBuffer(Recvs[It->second].buf);
      }
      if (Sum.defined() && Part.sizes() != Sum.sizes())
        throw std::runtime_error(fmt::format(
            "stage {} has {} gradient values, stage {} (a copy of the same "
            "weights) {}",
            St, Part.numel(), G.front(), Sum.numel()));
      Sum = Sum.defined() ? Sum + Part : Part;
    }
    for (int32_t St : G) {
      if (S.stageToRank[St] != Rank)
        continue;
      int64_t At = 0;
      for (at::Tensor &P : slot(St).params) {
        at::Tensor Slice = Sum.narrow(0, At, P.numel()).view_as(P);
        At += P.numel();
        if (P.grad().defined())
          P.mutable_grad().copy_(Slice);
        else
          P.mutable_grad() = Slice.clone();
      }
    }
  }
}

void StageKernels::endStep(int32_t Rank, int Step) {
  sumSharedGradients(Rank);
  for (int32_t St = 0; St < S.stages; ++St) {
    if (S.stageToRank[St] != Rank)
      continue;
    StageSlot &Slot = slot(St);
    try {
      Slot.opt->step();
      Slot.opt->zero_grad();
    } catch (const std::exception &E) {
      throw std::runtime_error(
          fmt::format("stage {}: the optimizer step threw: {}", St, what(E)));
    }
    if (!Slot.ends)
      continue;
    Slot.stepLoss.push_back(Slot.lossSum);
    if (C.onStepLoss)
      C.onStepLoss(Rank, Step, St, Slot.lossSum, Slot.ending);
    Slot.lossSum = 0;
  }
}

static double relativeGap(const at::Tensor &A, const at::Tensor &B) {
  at::Tensor X = A.detach().to(at::kDouble), Y = B.detach().to(at::kDouble);
  double Scale = Y.abs().max().item<double>();
  double Gap = (X - Y).abs().max().item<double>();
  if (Scale == 0)
    return Gap;
  return Gap / Scale;
}

void StageKernels::finish(int32_t Rank) {
  MemoryTracker::countOtherBytes(nullptr); // the reference is not the run's
  // The peaks are compared by the runtime; here every sample must agree.
  const RankSlot &R = *Ranks[size_t(Rank)];
  if (C.strictActivationBytes && MemoryTracker::installed() && R.worstGap)
    throw std::runtime_error(fmt::format(
        "the bytes held by rank {}'s live activations differed from the "
        "memory analysis' live set (times each activation's bytes) by up to "
        "{} bytes",
        Rank, R.worstGap));
  if (!C.checkReference)
    return;
  int Steps = int(Ranks[size_t(Rank)]->step) + 1;
  for (int32_t St = 0; St < S.stages; ++St)
    if (S.stageToRank[St] == Rank && slot(St).ends)
      Steps = int(slot(St).stepLoss.size());
  std::call_once(ReferenceOnce, [&] { Ref = runReference(C, S, Steps); });
  std::string Report;
  std::string Failure;
  for (int32_t St = 0; St < S.stages; ++St) {
    if (S.stageToRank[St] != Rank)
      continue;
    StageSlot &Slot = slot(St);
    const std::vector<at::Tensor> &Want =
        Ref.params[size_t(weightGroupOf(S, St))];
    if (Want.size() != Slot.params.size())
      throw std::runtime_error(
          fmt::format("stage {}: {} parameters, the reference has {}", St,
                      Slot.params.size(), Want.size()));
    double Worst = 0;
    for (size_t I = 0; I < Want.size(); ++I)
      Worst = std::max(Worst, relativeGap(Slot.params[I], Want[I]));
    Report += fmt::format("rank {} stage {}: {} parameter tensors after {} "
                          "steps, max |p - reference| / max |reference| = "
                          "{:.3g}\n",
                          Rank, St, Want.size(), Steps, Worst);
    if (!(Worst <= C.referenceTolerance) && Failure.empty())
      Failure = fmt::format("stage {}'s parameters differ from the "
                            "unpipelined reference by {:.3g} (relative; "
                            "tolerance {:.3g})",
                            St, Worst, C.referenceTolerance);
    if (!Slot.ends)
      continue;
    for (int Step = 0; Step < Steps; ++Step) {
      double Got = Slot.stepLoss[size_t(Step)];
      double Exp = Ref.stageLoss[size_t(Step)][size_t(St)];
      double Gap = std::fabs(Got - Exp) / std::max(std::fabs(Exp), 1e-30);
      Report += fmt::format("step {} stage {} loss sum {:.9g} (reference "
                            "{:.9g}, relative gap {:.3g})\n",
                            Step, St, Got, Exp, Gap);
      if (!(Gap <= C.referenceTolerance) && Failure.empty())
        Failure = fmt::format("step {}: stage {}'s loss {} differs from the "
                              "unpipelined reference {}",
                              Step, St, Got, Exp);
    }
  }
  {
    std::lock_guard<std::mutex> L(PrintMu);
    fmt::print("{}", Report);
    std::fflush(stdout);
  }
  if (!Failure.empty())
    throw std::runtime_error(Failure);
}

ActivationBytes StageKernels::activationBytes(int32_t Rank) {
  ActivationBytes B;
  if (!MemoryTracker::installed())
    return B;
  RankSlot &R = *Ranks[size_t(Rank)];
  B.peak = R.peakMeasured;
  B.expected = R.peakBook;
  B.minPerActivation = R.maxPer ? R.minPer : 0;
  B.maxPerActivation = R.maxPer;
  B.strict = C.strictActivationBytes;
  B.nonActivationPeak = R.pool.otherPeak;
  return B;
}

} // namespace torch
} // namespace ppsrt
