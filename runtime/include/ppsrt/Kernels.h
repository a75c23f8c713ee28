//===- Kernels.h - the user kernel interface of generated executors -------===//
//
// A generated executor calls user kernels for compute actions. Per
// (microbatch, stage) the runtime owns one StageIO: the forward's input and
// output, the gradient arriving from the next stage, the gradient sent back,
// and whatever the kernel saves for the backward pass. The runtime creates it
// at F(m, s) and releases it at the last backward of (m, s) (B, or W after
// I), so its live count is the activation memory of the memory analysis.
//
// Linking your own kernels: define, in a file linked into the executor,
//
//   std::unique_ptr<ppsrt::Kernels> ppsrt::makeKernels(const
//   ppsrt::ScheduleDesc &);
//
// The runtime's own definition is weak; it returns the built-in busy-wait
// workload, which sleeps nothing and spins for each action's cost-model time
// (scaled by --time-scale). See docs/runtime.md and examples/mlp/.
//
// Concurrency: with the threads transport one Kernels object serves every
// rank, and calls for different ranks run concurrently; a stage is only ever
// touched by the rank that holds it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/Buffer.h"
#include "ppsrt/Schedule.h"

#include <memory>
#include <string>
#include <vector>

namespace ppsrt {

/// Kernel-owned state of one (microbatch, stage) that must live exactly as
/// long as its activations (e.g. an autograd graph): kept in StageIO::state
/// and destroyed when the runtime releases the StageIO.
class StageState {
public:
  virtual ~StageState() = default;
};

/// The runtime-owned state of one (microbatch, stage).
struct StageIO {
  int32_t microbatch = -1;
  int32_t stage = -1;
  /// F's input: received from the previous stage (empty at stage 0).
  Buffer input;
  /// F's output: sent to the next stage after F (unused at the last stage).
  Buffer output;
  /// Gradient w.r.t. the output: received from the next stage, or set by
  /// loss() at the last stage.
  Buffer gradOutput;
  /// Gradient w.r.t. the input, written by backward/backwardInput and sent
  /// to the previous stage (not needed at stage 0).
  Buffer gradInput;
  /// Anything the kernel keeps between forward and backward.
  std::vector<Buffer> saved;
  /// Loss of this microbatch (last stage only).
  double loss = 0;
  /// Kernels that measure memory: the bytes F's activations hold, set by
  /// forward (the profile's activation bytes per microbatch; -1: unknown).
  int64_t activationBytes = -1;
  /// Kernel state of this (m, s); destroyed at the release (the last
  /// backward of (m, s), where the memory analysis releases it).
  std::unique_ptr<StageState> state;

  /// Drops everything (at the release); buffers keep their memory for reuse.
  void reset() {
    state.reset();
    input.reset();
    output.reset();
    gradOutput.reset();
    gradInput.reset();
    saved.clear();
  }
};

/// Activation bytes of one rank, for kernels that measure them (see
/// Kernels::activationBytes): printed next to the activation counts.
struct ActivationBytes {
  /// Measured peak of the bytes the rank's live activations hold.
  int64_t peak = -1;
  /// What the memory analysis predicts: its live (m, s) set at each point
  /// times each (m, s)'s bytes; for one activation size, peak count x size.
  int64_t expected = -1;
  /// Smallest and largest bytes of one activation (one (m, s)) on the rank.
  int64_t minPerActivation = 0, maxPerActivation = 0;
  /// A difference between peak and expected fails the run.
  bool strict = false;
  /// Peak of the rank's other bytes (weights, gradients, optimizer state,
  /// temporaries), for the profile; -1 if not measured.
  int64_t nonActivationPeak = -1;
};

/// Per-process context handed to kernels.
struct KernelContext {
  const ScheduleDesc *schedule = nullptr;
  /// Seconds of busy work per time unit (--time-scale / 1000).
  double secondsPerUnit = 1e-3;
  /// Default message size for the built-in workload (--message-bytes).
  size_t messageBytes = 64;
  /// Built-in workload: sleep instead of spinning (--kernel=sleep), for
  /// timing runs with more ranks than free cores.
  bool sleep = false;
  /// Training steps of the run (--steps).
  int steps = 1;
  /// The executor's arguments after `--`, for the kernels to interpret.
  std::vector<std::string> args;
};

class Executor;

/// User kernels. Only forward, backwardInput and backwardWeight are
/// required; everything else has a sensible default.
class Kernels {
public:
  virtual ~Kernels();

  /// Called once per rank before the first step.
  virtual void setup(const KernelContext &Ctx, int32_t Rank) {}
  /// Lets the kernels install custom handlers (overlap pairs, control
  /// actions, any kind) on a rank's executor before it runs.
  virtual void installHandlers(Executor &E) {}
  /// Bytes of F(m, Stage)'s output (Gradient = false) or of the gradient
  /// I/B(m, Stage) sends to the previous stage (Gradient = true). The MPI
  /// transport posts receives of this size before the data arrives. 0 means
  /// "variable": messages then carry their own size and header (Buffer's
  /// payload), at the cost of a small frame per message.
  virtual size_t messageBytes(int32_t Stage, bool Gradient) = 0;

  /// F(m, s): reads IO.input (empty at stage 0: produce the microbatch's
  /// data), writes IO.output, saves what the backward needs.
  virtual void forward(StageIO &IO) = 0;
  /// Last stage, right after forward: sets IO.loss and IO.gradOutput.
  virtual void loss(StageIO &IO) {}
  /// I(m, s): reads IO.gradOutput, writes IO.gradInput.
  virtual void backwardInput(StageIO &IO) = 0;
  /// W(m, s): accumulates the weight gradient.
  virtual void backwardWeight(StageIO &IO) = 0;
  /// B(m, s): both halves.
  virtual void backward(StageIO &IO) {
    backwardInput(IO);
    backwardWeight(IO);
  }

  /// FSDP control actions (no-ops by default).
  virtual void unshard(int32_t Rank, int32_t Stage) {}
  virtual void reshard(int32_t Rank, int32_t Stage) {}
  virtual void reduceGrad(int32_t Rank, int32_t Stage) {}

  /// Around each training step of a rank (e.g. zero grads / optimizer step).
  virtual void beginStep(int32_t Rank, int Step) {}
  virtual void endStep(int32_t Rank, int Step) {}
  /// After the last step of a rank; throw to fail the run (e.g. a check).
  virtual void finish(int32_t Rank) {}
  /// The rank's measured activation bytes, if the kernels measure them
  /// (called after finish).
  virtual ActivationBytes activationBytes(int32_t Rank) { return {}; }
};

/// The built-in workload: each compute spins for its cost-model time times
/// KernelContext::secondsPerUnit; messages are KernelContext::messageBytes.
class BusyWaitKernels : public Kernels {
public:
  void setup(const KernelContext &Ctx, int32_t Rank) override;
  void installHandlers(Executor &E) override;
  size_t messageBytes(int32_t Stage, bool Gradient) override;
  void forward(StageIO &IO) override;
  void loss(StageIO &IO) override;
  void backwardInput(StageIO &IO) override;
  void backwardWeight(StageIO &IO) override;
  void backward(StageIO &IO) override;

private:
  void spin(double Units) const;
  void fill(Buffer &B) const;
  KernelContext Ctx;
};

/// Spins (no sleeping) for the given number of seconds.
void busyWait(double Seconds);

/// The kernel factory. Weak in the runtime (returns BusyWaitKernels);
/// define it in your own file to link your kernels.
std::unique_ptr<Kernels> makeKernels(const ScheduleDesc &S);

} // namespace ppsrt
