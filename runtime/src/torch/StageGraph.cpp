//===- StageGraph.cpp - one stage's backward, whole or split in I and W ---===//
//
// See StageGraph.h for the method. The graph analysis is linear in the
// graph's nodes and edges: one breadth-first walk from the output builds
// the reverse edges, one walk up from the input marks the input path, one
// multi-source walk up from the parameters stops at the input path and
// records the intermediates.
//
// Also the unpipelined reference (runReference) the stages' results are
// checked against: the same modules, one process, no schedule.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/torch/StageGraph.h"

#include "StageSupport.h"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <torch/optim/optimizer.h>

#include <chrono>
#include <stdexcept>
#include <unordered_map>

namespace ppsrt {
namespace torch {

using ::torch::autograd::Edge;
using ::torch::autograd::edge_list;
using ::torch::autograd::Engine;
using ::torch::autograd::Node;
using ::torch::autograd::variable_list;

/// Gradients flowing into each intermediate during I (one list per node,
/// one entry per node input).
struct StageGraph::Captured {
  std::vector<variable_list> grads;
  std::vector<uint8_t> seen;
};

namespace {

/// Records the gradients an intermediate receives the first time it runs.
/// Registered after any user hook, so it sees what the node itself sees.
class CaptureHook : public ::torch::autograd::FunctionPreHook {
public:
  CaptureHook(std::shared_ptr<void> Owner, variable_list *Slot, uint8_t *Seen)
      : Owner(std::move(Owner)), Slot(Slot), Seen(Seen) {}
  variable_list operator()(const variable_list &Grads) override {
    if (!*Seen) {
      *Slot = Grads;
      *Seen = 1;
    }
    return Grads;
  }

private:
  std::shared_ptr<void> Owner; ///< keeps the slots alive
  variable_list *Slot;
  uint8_t *Seen;
};

} // namespace

StageGraph::StageGraph(const at::Tensor &Output, const at::Tensor &In,
                       const std::vector<at::Tensor> &Params) {
  if (Output.defined() && Output.requires_grad())
    Root = ::torch::autograd::impl::gradient_edge(Output);
  if (In.defined() && In.requires_grad()) {
    if (!In.is_leaf())
      throw std::invalid_argument("StageGraph: the stage input must be a leaf");
    Input = In;
    InputEdge = ::torch::autograd::impl::gradient_edge(In);
  }
  for (const at::Tensor &P : Params)
    if (P.requires_grad())
      ParamEdges.push_back(::torch::autograd::impl::gradient_edge(P));
}

std::vector<std::shared_ptr<Node>> StageGraph::nodes() const {
  std::vector<std::shared_ptr<Node>> Out;
  if (!Root.is_valid())
    return Out;
  std::unordered_map<Node *, uint32_t> Seen;
  Out.push_back(Root.function);
  Seen.emplace(Root.function.get(), 0);
  for (size_t I = 0; I < Out.size(); ++I)
    for (const Edge &E : Out[I]->next_edges())
      if (E.function && Seen.emplace(E.function.get(), 0).second)
        Out.push_back(E.function);
  return Out;
}

at::Tensor StageGraph::backward(const at::Tensor &GradOutput) {
  if (InputDone || WeightDone)
    throw std::logic_error("StageGraph: B after I or W");
  InputDone = WeightDone = true;
  if (!Root.is_valid())
    return {};
  edge_list Outputs = ParamEdges;
  if (InputEdge.is_valid())
    Outputs.push_back(InputEdge);
  // One pass; AccumulateGrad stores dL/dInput in the input leaf's .grad,
  // exactly as it accumulates the parameters' (the same code path as W).
  Engine::get_default_engine().execute({Root}, {GradOutput},
                                       /*keep_graph=*/false,
                                       /*create_graph=*/false,
                                       /*accumulate_grad=*/true, Outputs);
  if (!Input.defined())
    return {};
  at::Tensor G = Input.grad();
  return G.defined() ? G : at::zeros_like(Input);
}

void StageGraph::analyse() {
  // Nodes reachable from the output, numbered in breadth-first order, and
  // the reverse edges (node -> the nodes that have an edge to it).
  std::unordered_map<Node *, uint32_t> Id;
  std::vector<Node *> Nodes;
  std::vector<std::vector<uint32_t>> Parents;
  Id.reserve(256);
  auto number = [&](Node *N) {
    auto Ins = Id.emplace(N, uint32_t(Nodes.size()));
    if (Ins.second) {
      Nodes.push_back(N);
      Parents.emplace_back();
    }
    return Ins.first->second;
  };
  number(Root.function.get());
  for (size_t I = 0; I < Nodes.size(); ++I)
    for (const Edge &E : Nodes[I]->next_edges())
      if (E.function) {
        uint32_t C = number(E.function.get());
        Parents[C].push_back(uint32_t(I));
      }
  Figures.nodes = Nodes.size();

  // The input path: every node from which the input's accumulator is
  // reachable.
  std::vector<uint8_t> OnPath(Nodes.size(), 0);
  std::vector<uint32_t> Queue;
  if (InputEdge.is_valid()) {
    auto It = Id.find(InputEdge.function.get());
    if (It != Id.end()) {
      OnPath[It->second] = 1;
      Queue.push_back(It->second);
    }
  }
  for (size_t I = 0; I < Queue.size(); ++I)
    for (uint32_t P : Parents[Queue[I]])
      if (!OnPath[P]) {
        OnPath[P] = 1;
        Queue.push_back(P);
      }
  // The input's accumulator itself never runs in I (its gradient is
  // captured); everything else on the path does.
  Figures.inputPath = Queue.empty() ? 0 : Queue.size() - 1;

  // Up from the parameters through weight-only nodes; an input-path node
  // reached that way is an intermediate. Reaching the output's own node
  // means W must start there (nothing on the input path feeds it).
  std::vector<uint8_t> Seen(Nodes.size(), 0), IsMid(Nodes.size(), 0);
  Queue.clear();
  for (const Edge &E : ParamEdges) {
    auto It = Id.find(E.function.get());
    if (It != Id.end() && !Seen[It->second]) {
      Seen[It->second] = 1;
      Queue.push_back(It->second);
    }
  }
  std::vector<uint32_t> Mids;
  for (size_t I = 0; I < Queue.size(); ++I)
    for (uint32_t P : Parents[Queue[I]]) {
      if (OnPath[P]) {
        if (!IsMid[P]) {
          IsMid[P] = 1;
          Mids.push_back(P);
        }
        continue;
      }
      if (!Seen[P]) {
        Seen[P] = 1;
        Queue.push_back(P);
      }
    }
  RootInW = Seen[0] != 0;
  Figures.intermediates = Mids.size();

  Grads = std::make_shared<Captured>();
  Grads->grads.resize(Mids.size());
  Grads->seen.assign(Mids.size(), 0);
  Intermediates.reserve(Mids.size());
  for (size_t K = 0; K < Mids.size(); ++K) {
    Node *N = Nodes[Mids[K]];
    Intermediates.push_back(N->shared_from_this());
    N->add_pre_hook(std::make_unique<CaptureHook>(Grads, &Grads->grads[K],
                                                  &Grads->seen[K]));
  }
  // Everything on the input path stays alive until the release (the cut
  // below would otherwise free part of it before W).
  Kept.reserve(Figures.inputPath);
  for (size_t I = 0; I < Nodes.size(); ++I)
    if (OnPath[I] && !IsMid[I] && I != 0)
      Kept.push_back(Nodes[I]->shared_from_this());
  // Remember which edges to cut after I: an intermediate's edges into the
  // input path (W must not follow them down to earlier layers' weights).
  CutMask.clear();
  for (size_t K = 0; K < Mids.size(); ++K) {
    const edge_list &Next = Nodes[Mids[K]]->next_edges();
    std::vector<uint8_t> M(Next.size(), 0);
    for (size_t J = 0; J < Next.size(); ++J)
      if (Next[J].function) {
        auto It = Id.find(Next[J].function.get());
        M[J] = It != Id.end() && OnPath[It->second];
      }
    CutMask.push_back(std::move(M));
  }
}

at::Tensor StageGraph::backwardInput(const at::Tensor &GradOutput) {
  if (InputDone || WeightDone)
    throw std::logic_error("StageGraph: I twice, or after W or B");
  InputDone = true;
  if (!Root.is_valid())
    return {};
  analyse();
  SavedGradOutput = RootInW ? GradOutput : at::Tensor();
  at::Tensor GradIn;
  if (Figures.inputPath > 0) {
    variable_list R = Engine::get_default_engine().execute(
        {Root}, {GradOutput}, /*keep_graph=*/true, /*create_graph=*/false,
        /*accumulate_grad=*/false, {InputEdge});
    GradIn = R.empty() ? at::Tensor() : R[0];
  }
  if (Input.defined() && !GradIn.defined())
    GradIn = at::zeros_like(Input);
  // Cut the intermediates off the input path (see analyse()).
  for (size_t K = 0; K < Intermediates.size(); ++K) {
    edge_list &Next = Intermediates[K]->next_edges();
    for (size_t J = 0; J < Next.size(); ++J)
      if (CutMask[K][J])
        Next[J] = Edge();
  }
  return GradIn;
}

void StageGraph::backwardWeight() {
  if (!InputDone || WeightDone)
    throw std::logic_error("StageGraph: W without I, or twice");
  WeightDone = true;
  if (!Root.is_valid())
    return;
  edge_list Roots;
  variable_list In;
  for (size_t K = 0; K < Intermediates.size(); ++K) {
    Node *N = Intermediates[K].get();
    // The hooks did their work in I (user hooks included: what was
    // captured is what the node saw); they must not run again.
    N->pre_hooks().clear();
    variable_list &G = Grads->grads[K];
    for (size_t J = 0; J < G.size(); ++J)
      if (G[J].defined()) {
        Roots.emplace_back(Intermediates[K], uint32_t(J));
        In.push_back(std::move(G[J]));
      }
  }
  if (RootInW && SavedGradOutput.defined()) {
    Roots.push_back(Root);
    In.push_back(std::move(SavedGradOutput));
  }
  Figures.weightRoots = Roots.size();
  if (Roots.empty() || ParamEdges.empty())
    return;
  Engine::get_default_engine().execute(Roots, In, /*keep_graph=*/false,
                                       /*create_graph=*/false,
                                       /*accumulate_grad=*/true, ParamEdges);
}

//===----------------------------------------------------------------------===//
// The unpipelined reference
//===----------------------------------------------------------------------===//

Reference runReference(const Config &C, const ScheduleDesc &S, int Steps) {
  Reference Ref;
  std::vector<StageModule> Mods;
  std::vector<std::vector<at::Tensor>> Params;
  std::vector<std::unique_ptr<::torch::optim::Optimizer>> Opts;
  // One module per layer: the stages that share weights use the same one.
  for (int32_t Layer = 0; Layer < numWeightGroups(S); ++Layer) {
    Mods.push_back(buildModule(C, Layer));
    Params.push_back(trainable(Mods.back()));
    Opts.push_back(C.optimizer(Params.back(), Layer));
  }
  double Scale = C.lossScale != 0 ? C.lossScale : 1.0 / double(S.microbatches);
  // With weight sharing, a layer's gradient is accumulated per route and
  // the routes' sums added in route order, the association the pipeline
  // uses (each copy accumulates its route's microbatches, and the copies'
  // sums are added in stage order, which is route order). The same sum,
  // rounded the same way, so the two agree to the bit.
  bool Shares = numWeightGroups(S) < S.stages;
  std::vector<std::vector<at::Tensor>> Done(Params.size());
  auto EndRoute = [&] {
    for (size_t L = 0; L < Params.size(); ++L) {
      if (Done[L].empty())
        Done[L].resize(Params[L].size());
      for (size_t I = 0; I < Params[L].size(); ++I) {
        at::Tensor &P = Params[L][I];
        if (!P.grad().defined())
          continue;
        Done[L][I] = Done[L][I].defined() ? Done[L][I] + P.grad()
                                          : P.grad().detach().clone();
        P.mutable_grad() = at::Tensor();
      }
    }
  };
  auto T0 = std::chrono::steady_clock::now();
  for (int Step = 0; Step < Steps; ++Step) {
    std::vector<double> Loss(size_t(S.stages), 0.0);
    for (int32_t M = 0; M < S.microbatches; ++M) {
      if (Shares && M > 0 && firstStage(S, M) != firstStage(S, M - 1))
        EndRoute();
      Batch B = C.data(Step, M);
      at::Tensor X = B.input;
      int32_t Last = lastStage(S, M);
      for (int32_t St = firstStage(S, M); St <= Last; ++St)
        X = guarded(St, M, "the module's forward (reference run)", [&] {
          return Mods[size_t(weightGroupOf(S, St))].forward(X);
        });
      at::Tensor L = C.loss(X, B.target);
      Loss[size_t(Last)] += L.detach().to(at::kDouble).item<double>();
      L.backward(at::full_like(L, Scale));
    }
    if (Shares) {
      EndRoute();
      for (size_t L = 0; L < Params.size(); ++L)
        for (size_t I = 0; I < Params[L].size(); ++I)
          if (Done[L][I].defined())
            Params[L][I].mutable_grad() = std::move(Done[L][I]);
    }
    for (auto &O : Opts) {
      O->step();
      O->zero_grad();
    }
    Ref.stageLoss.push_back(std::move(Loss));
  }
  Ref.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
          .count();
  for (auto &P : Params) {
    std::vector<at::Tensor> Copy;
    Copy.reserve(P.size());
    for (const at::Tensor &T : P)
      Copy.push_back(T.detach().clone());
    Ref.params.push_back(std::move(Copy));
  }
  return Ref;
}

} // namespace torch
} // namespace ppsrt
