//===- StageGraph.h - one stage's autograd graph, backward split in I and W
//===//
//
// Part of pps_runtime_torch. A StageGraph holds the autograd graph a stage's
// forward built for one microbatch and runs its backward either whole (B) or
// split into the input gradient (I) and the weight gradients (W), the split
// zero-bubble schedules are made of.
//
// The split costs no second backward. Calling grad(output, params) after
// grad(output, input) would re-run every node between the output and the
// parameters; instead (as PyTorch's pipelining does in stage_backward_input /
// stage_backward_weight, torch/distributed/pipelining/_backward.py):
//
//  * the *input path* is every node from which the stage input is reachable;
//    I runs exactly those nodes (Engine::execute with the input's gradient
//    edge as the only output, the graph kept);
//  * the *intermediates* are the input-path nodes where a parameter-only
//    branch joins it (e.g. a linear layer's AddmmBackward: its input edge is
//    on the path, its weight edge is not). During I a pre-hook on each
//    captures the gradients flowing into it;
//  * after I, the intermediates' edges into the input path are cut, and W is
//    one engine pass whose roots are the intermediates with their captured
//    gradients and whose outputs are the parameters' gradient edges: each
//    intermediate computes only its weight-side outputs (a linear layer: the
//    weight GEMM), and only the parameter-only branches below it run.
//
// Every node of B runs once in I + W, except the intermediates, which run
// once in each computing disjoint outputs. The C++ engine takes edge lists
// directly, so unlike PyTorch 1.13's Python API any node (multi-output ones
// too) can be a root of W. A stage whose input needs no gradient (the first
// stage) has an empty input path: I does nothing, W is the whole backward.
//
// Memory: the graph stays whole until the StageGraph is destroyed (the
// runtime does that at the (m, s) release the memory analysis counts), so
// measured activation bytes follow the analysis.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/autograd/edge.h>

#include <memory>
#include <vector>

namespace ppsrt {
namespace torch {

class StageGraph {
public:
  /// Output: the stage's output or, on the last stage, its loss. Input: the
  /// leaf the stage's forward read (requires grad), or an undefined tensor
  /// when the input needs no gradient (the first stage). Params: the
  /// tensors whose gradients B and W accumulate into .grad (the module's
  /// parameters).
  StageGraph(const at::Tensor &Output, const at::Tensor &Input,
             const std::vector<at::Tensor> &Params);
  StageGraph(const StageGraph &) = delete;
  StageGraph &operator=(const StageGraph &) = delete;

  /// B: one engine pass; returns dL/dInput (undefined without an input) and
  /// accumulates dL/dParams into the parameters' .grad.
  at::Tensor backward(const at::Tensor &GradOutput);
  /// I: returns dL/dInput; the parameters' .grad are untouched; keeps what
  /// W needs (the gradients flowing into the intermediates).
  at::Tensor backwardInput(const at::Tensor &GradOutput);
  /// W (after I): accumulates dL/dParams into .grad, running only the
  /// weight-side nodes.
  void backwardWeight();

  /// What the split found (tests and benchmarks).
  struct Stats {
    size_t nodes = 0;         ///< nodes reachable from the output
    size_t inputPath = 0;     ///< nodes I runs
    size_t intermediates = 0; ///< input-path nodes where weights join
    size_t weightRoots = 0;   ///< root edges of W
  };
  const Stats &stats() const { return Figures; }

  /// The graph's nodes reachable from the output (for tests).
  std::vector<std::shared_ptr<::torch::autograd::Node>> nodes() const;

private:
  struct Captured;
  void analyse();

  ::torch::autograd::Edge Root;
  ::torch::autograd::Edge InputEdge; ///< invalid without an input
  std::vector<::torch::autograd::Edge> ParamEdges;
  at::Tensor Input;
  at::Tensor SavedGradOutput; ///< for W when the output's node is weight-only
  bool RootInW = false;
  bool InputDone = false, WeightDone = false;
  std::vector<std::shared_ptr<::torch::autograd::Node>> Intermediates;
  std::shared_ptr<Captured> Grads; ///< shared with the capture hooks
  /// Input-path nodes cut off from the intermediates, kept alive until the
  /// release so the activation memory is freed where the analysis says.
  std::vector<std::shared_ptr<::torch::autograd::Node>> Kept;
  /// Per intermediate, which of its edges lead into the input path.
  std::vector<std::vector<uint8_t>> CutMask;
  Stats Figures;
};

} // namespace torch
} // namespace ppsrt
