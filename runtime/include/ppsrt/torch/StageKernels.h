//===- StageKernels.h - pipeline stages as torch::nn::Modules -------------===//
//
// Part of pps_runtime_torch (built when libtorch is found; link it with
// pps_add_executor(<target> <file.pps> <sources> COMPONENTS torch)). The user
// brings one module per stage, a data source, a loss and an optimizer;
// StageKernels implements ppsrt::Kernels with them, so any executor `ppsc emit
// --target=cpp` generates trains the model under its schedule:
//
//  * F(m, s) runs the stage's module and keeps the autograd graph in the
//    (m, s) state; a received activation becomes a leaf that requires grad.
//    The first stage of a microbatch reads data(step, m).input, its last
//    stage computes loss(output, data(step, m).target), seeded with
//    lossScale (1/M by default: the step's loss is the mean over
//    microbatches).
//  * I, W and B run the stage's backward through StageGraph (I = input
//    gradient only, W = parameter gradients only, B = both in one pass),
//    accumulating parameter gradients over the step's microbatches; the
//    optimizer steps (and zeroes them) at the end of every step.
//  * The (m, s) state dies where the runtime releases it (the last backward
//    of (m, s), as the memory analysis counts), and the bytes it holds are
//    measured (see Tensors.h): the run prints them per rank next to the
//    analysis' activation counts.
//  * Tensors of any dtype and shape cross ranks through the runtime's
//    transports (threads: handed over; MPI: header, then the bytes). A
//    stage's output must keep its dtype and shape from one microbatch to the
//    next, and a received tensor must have the dtype and shape the receiving
//    stage expects (Config::inputShape, else what it first received): either
//    mistake, a module or loss that throws, and a non-finite loss stop the
//    run with the rank, the action, the stage and the microbatch.
//  * Overlapped pairs run one after the other; unshard / reshard /
//    reduce_grad call Config::control.
//  * Weight sharing: a stage holds layer weightGroupOf(S, stage) of the
//    model (ScheduleDesc::weightGroup, from the compiler; the stage itself
//    unless the schedule replicates stages, as DualPipe's two directions
//    do). Config::module builds layers, so the copies of a layer start
//    alike; at the end of every step, before the optimizers, the holders
//    of a group's copies exchange their gradients through the run's
//    transport (Executor::exchange) and each copy gets the group's sum,
//    added up in stage order so that the copies stay identical.
//
// Determinism: every process builds layer l's module with the global
// generator seeded with seed + l (under a process-wide lock), so all ranks,
// all copies and the reference agree; modules should not draw random
// numbers in forward (threads share libtorch's generator).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/Kernels.h"
#include "ppsrt/torch/StageGraph.h"
#include "ppsrt/torch/Tensors.h"

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace ppsrt {
namespace torch {

/// One stage: a module (its parameters are the stage's) and its forward.
struct StageModule {
  std::shared_ptr<::torch::nn::Module> module;
  std::function<at::Tensor(const at::Tensor &)> forward;

  StageModule() = default;
  /// Any module with a `forward(Tensor)` returning a Tensor.
  template <class M>
  StageModule(std::shared_ptr<M> Mod)
      : module(Mod),
        forward([Mod](const at::Tensor &X) { return Mod->forward(X); }) {}
  /// A module holder (torch::nn::Linear, torch::nn::Sequential, a
  /// TORCH_MODULE of your own).
  template <class M>
  StageModule(const ::torch::nn::ModuleHolder<M> &H) : StageModule(H.ptr()) {}
};

/// One microbatch's data: the first stage's input and the loss's target.
struct Batch {
  at::Tensor input;
  at::Tensor target;
};

/// What the user gives StageKernels.
struct Config {
  /// Builds layer Layer's module: the weight group of the stage it serves
  /// (ppsrt::weightGroupOf; the stage itself without weight sharing), one
  /// of numWeightGroups(S) layers. Every copy of a shared layer is built
  /// from the same call.
  std::function<StageModule(int32_t Layer)> module;
  /// Microbatch Microbatch of training step Step. Called on the rank of the
  /// microbatch's first stage (for the input) and of its last (for the
  /// target), so it must depend on (Step, Microbatch) only.
  std::function<Batch(int Step, int32_t Microbatch)> data;
  /// The loss of one microbatch (a one-element tensor).
  std::function<at::Tensor(const at::Tensor &Output, const at::Tensor &Target)>
      loss;
  /// The optimizer of one stage's parameters (any torch::optim; in the
  /// unpipelined reference, of one layer's).
  std::function<std::unique_ptr<::torch::optim::Optimizer>(
      const std::vector<at::Tensor> &Params, int32_t Stage)>
      optimizer;

  /// Layer l's module is built with the global generator seeded seed + l.
  uint64_t seed = 0;
  /// Gradient seed of each microbatch's loss; 0 = 1 / microbatches.
  double lossScale = 0;
  /// The dtype-free shape a layer expects as input (-1: any size); empty
  /// or unset: the first input it receives fixes it.
  std::function<std::vector<int64_t>(int32_t Layer)> inputShape;
  /// unshard / reshard / reduce_grad of a stage (FSDP); default: nothing.
  std::function<void(Kind Action, int32_t Rank, int32_t Stage,
                     ::torch::nn::Module &Module)>
      control;
  /// Called at the end of every step on the rank holding a stage that is
  /// some microbatch's last, with the sum of those microbatches' losses.
  std::function<void(int32_t Rank, int Step, int32_t Stage, double LossSum,
                     int32_t Microbatches)>
      onStepLoss;
  /// Intra-op threads of each rank (0: libtorch's default).
  int intraOpThreads = 0;
  /// A measured peak of activation bytes that differs from the analysis'
  /// fails the run (see Kernels::activationBytes).
  bool strictActivationBytes = false;
  /// After the last step, compare every stage's parameters and every step's
  /// loss with the same training run in one process without pipelining
  /// (runReference), to referenceTolerance relative; a difference fails.
  bool checkReference = false;
  double referenceTolerance = 1e-5;
};

/// The same training as the pipeline, in one process without pipelining:
/// the model with each layer once (stages that share weights use the same
/// module); every microbatch in order runs its route's layers, its loss
/// (times lossScale) is backpropagated through the whole model in one
/// backward, and the optimizers step after each step. A shared layer's
/// gradient is summed per route, then over the routes in order, as the
/// pipeline sums its copies' gradients (the same rounding).
struct Reference {
  /// [step][stage]: sum of the losses of the microbatches ending at stage.
  std::vector<std::vector<double>> stageLoss;
  /// [layer]: the parameters after the last step.
  std::vector<std::vector<at::Tensor>> params;
  /// Wall-clock seconds of the training (module building excluded).
  double seconds = 0;
};
Reference runReference(const Config &C, const ScheduleDesc &S, int Steps);

/// ppsrt::Kernels over torch::nn::Modules (see the file comment).
class StageKernels : public Kernels {
public:
  StageKernels(const ScheduleDesc &S, Config C);
  ~StageKernels() override;

  void setup(const KernelContext &Ctx, int32_t Rank) override;
  /// Keeps the rank's executor, whose transport sums shared gradients.
  void installHandlers(Executor &E) override;
  size_t messageBytes(int32_t Stage, bool Gradient) override { return 0; }
  void forward(StageIO &IO) override;
  void loss(StageIO &IO) override {}
  void backwardInput(StageIO &IO) override;
  void backwardWeight(StageIO &IO) override;
  void backward(StageIO &IO) override;
  void unshard(int32_t Rank, int32_t Stage) override;
  void reshard(int32_t Rank, int32_t Stage) override;
  void reduceGrad(int32_t Rank, int32_t Stage) override;
  void beginStep(int32_t Rank, int Step) override;
  void endStep(int32_t Rank, int Step) override;
  void finish(int32_t Rank) override;
  ActivationBytes activationBytes(int32_t Rank) override;

  /// The configuration (may be changed before the first setup()).
  Config &config() { return C; }
  const ScheduleDesc &schedule() const { return S; }
  /// A stage built by setup() on this process, or null.
  ::torch::nn::Module *module(int32_t Stage);
  /// Per step, the loss sum of the microbatches ending at Stage.
  const std::vector<double> &stepLosses(int32_t Stage) const;

private:
  struct StageSlot;
  struct RankSlot;
  class State;
  StageSlot &slot(int32_t Stage);
  void control(Kind K, int32_t Rank, int32_t Stage);
  /// Sums the gradients of the stages that hold copies of the same weights
  /// (see the file comment).
  void sumSharedGradients(int32_t Rank);
  at::Tensor receive(const StageIO &IO, bool Gradient, const State *St);

  const ScheduleDesc &S;
  Config C;
  double Scale;
  std::vector<std::unique_ptr<StageSlot>> Stages;
  std::vector<std::unique_ptr<RankSlot>> Ranks;
  /// Per weight group (layer), its stages, ascending.
  std::vector<std::vector<int32_t>> Groups;
  std::once_flag ReferenceOnce;
  Reference Ref;
  std::mutex PrintMu;
};

} // namespace torch
} // namespace ppsrt
