//===- StageKernelsTest.cpp - the libtorch runtime component --------------===//
//
// pps_runtime_torch: the backward split (I leaves parameter gradients
// untouched, W then gives exactly the full backward's, and no node runs
// more than it does in B), tensor headers, the activation-byte accounting,
// and StageKernels running real schedules on rank threads against the
// unpipelined reference, with its errors.
//
//===----------------------------------------------------------------------===//
#include "../runtime/RuntimeTestUtil.h"

#include "ppsrt/Main.h"
#include "ppsrt/torch/StageKernels.h"

#include <torch/torch.h>

#include <map>
#include <set>

// Not `using namespace ppsrt`: ppsrt::torch would make TORCH_MODULE's
// unqualified torch:: ambiguous.
using ppsrt::ActivationBytes;
using ppsrt::Buffer;
using ppsrt::ExitError;
using ppsrt::ExitOk;
using ppsrt::RunOptions;
using ppsrt::RunResult;
using ppsrt::torch::Account;
using ppsrt::torch::Batch;
using ppsrt::torch::ChargeScope;
using ppsrt::torch::Config;
using ppsrt::torch::encodeTensorHeader;
using ppsrt::torch::fromBuffer;
using ppsrt::torch::MemoryTracker;
using ppsrt::torch::StageGraph;
using ppsrt::torch::StageKernels;
using ppsrt::torch::StageModule;
using ppsrt::torch::toBuffer;

namespace {

//===----------------------------------------------------------------------===//
// The backward split
//===----------------------------------------------------------------------===//

/// Counts how often each node of a graph runs (a post hook on every node).
struct RunCounter {
  std::shared_ptr<std::map<const ::torch::autograd::Node *, int>> Runs =
      std::make_shared<std::map<const ::torch::autograd::Node *, int>>();
  struct Hook : ::torch::autograd::FunctionPostHook {
    std::shared_ptr<std::map<const ::torch::autograd::Node *, int>> Runs;
    const ::torch::autograd::Node *N;
    ::torch::autograd::variable_list
    operator()(const ::torch::autograd::variable_list &Out,
               const ::torch::autograd::variable_list &) override {
      ++(*Runs)[N];
      return Out;
    }
  };
  void attach(const StageGraph &G) {
    for (const auto &N : G.nodes()) {
      auto H = std::make_unique<Hook>();
      H->Runs = Runs;
      H->N = N.get();
      N->add_post_hook(std::move(H));
      (*Runs)[N.get()] += 0;
    }
  }
  int total() const {
    int T = 0;
    for (auto &KV : *Runs)
      T += KV.second;
    return T;
  }
  int maxRuns() const {
    int M = 0;
    for (auto &KV : *Runs)
      M = std::max(M, KV.second);
    return M;
  }
};

/// A stage under test: a module factory and an input maker.
struct Case {
  const char *name;
  std::function<StageModule()> make;
  std::function<at::Tensor()> input; ///< a fresh input (no grad)
  bool inputNeedsGrad;
};

struct AttentionBlockImpl : ::torch::nn::Module {
  AttentionBlockImpl() {
    ln1 = register_module(
        "ln1", ::torch::nn::LayerNorm(::torch::nn::LayerNormOptions({16})));
    qkv = register_module("qkv", ::torch::nn::Linear(16, 48));
    proj = register_module("proj", ::torch::nn::Linear(16, 16));
    ln2 = register_module(
        "ln2", ::torch::nn::LayerNorm(::torch::nn::LayerNormOptions({16})));
    fc1 = register_module("fc1", ::torch::nn::Linear(16, 32));
    fc2 = register_module("fc2", ::torch::nn::Linear(32, 16));
  }
  at::Tensor forward(at::Tensor X) {
    // qkv.chunk() is a multi-output node on the input path.
    auto Parts = qkv(ln1(X)).chunk(3, -1);
    at::Tensor A = ::torch::softmax(
        ::torch::matmul(Parts[0], Parts[1].transpose(-2, -1)) / 4.0, -1);
    X = X + proj(::torch::matmul(A, Parts[2]));
    return X + fc2(::torch::gelu(fc1(ln2(X))));
  }
  ::torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  ::torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(AttentionBlock);

struct EmbeddingStageImpl : ::torch::nn::Module {
  EmbeddingStageImpl() {
    emb = register_module("emb", ::torch::nn::Embedding(20, 16));
    fc = register_module("fc", ::torch::nn::Linear(16, 16));
  }
  at::Tensor forward(const at::Tensor &Tokens) {
    return ::torch::tanh(fc(emb(Tokens)));
  }
  ::torch::nn::Embedding emb{nullptr};
  ::torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(EmbeddingStage);

/// The output ignores the input: the input path is empty.
struct IgnoresInputImpl : ::torch::nn::Module {
  IgnoresInputImpl() { w = register_parameter("w", ::torch::randn({3, 4})); }
  at::Tensor forward(const at::Tensor &X) {
    return (w * 2).sum(0).expand({X.size(0), 4});
  }
  at::Tensor w;
};
TORCH_MODULE(IgnoresInput);

/// A weight used twice, once on a parameter-only branch joining at the
/// output's own node.
struct SharedWeightImpl : ::torch::nn::Module {
  SharedWeightImpl() { fc = register_module("fc", ::torch::nn::Linear(8, 8)); }
  at::Tensor forward(const at::Tensor &X) {
    return fc(::torch::relu(fc(X))) + fc->weight.sum(1);
  }
  ::torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(SharedWeight);

std::vector<Case> cases() {
  return {
      {"mlp",
       [] {
         return StageModule(::torch::nn::Sequential(
             ::torch::nn::Linear(8, 16), ::torch::nn::Tanh(),
             ::torch::nn::Linear(16, 8)));
       },
       [] {
         return ::torch::randn({5, 8});
       },
       true},
      {"attention_block", [] { return StageModule(AttentionBlock()); },
       [] {
         return ::torch::randn({2, 6, 16});
       },
       true},
      {"embedding_first_stage", [] { return StageModule(EmbeddingStage()); },
       [] {
         return ::torch::randint(0, 20, {3, 7});
       },
       false},
      {"ignores_input", [] { return StageModule(IgnoresInput()); },
       [] {
         return ::torch::randn({5, 2});
       },
       true},
      {"shared_weight", [] { return StageModule(SharedWeight()); },
       [] {
         return ::torch::randn({4, 8});
       },
       true},
  };
}

class Split : public ::testing::TestWithParam<Case> {};

TEST_P(Split, InputLeavesWeightsUntouchedAndWeightMatchesTheFullBackward) {
  const Case &C = GetParam();
  ::torch::manual_seed(7);
  StageModule M = C.make();
  ::torch::manual_seed(7);
  StageModule Twin = C.make(); // same weights, for the full backward
  ::torch::manual_seed(11);
  at::Tensor X = C.input();
  at::Tensor GradOut;

  auto leaf = [&](const at::Tensor &T) {
    return C.inputNeedsGrad ? T.detach().clone().requires_grad_(true)
                            : T.clone();
  };
  std::vector<at::Tensor> P, PT;
  for (auto &T : M.module->parameters())
    P.push_back(T);
  for (auto &T : Twin.module->parameters())
    PT.push_back(T);

  // B on the twin.
  at::Tensor XB = leaf(X);
  at::Tensor OutB = Twin.forward(XB);
  GradOut = ::torch::randn_like(OutB);
  StageGraph GB(OutB, C.inputNeedsGrad ? XB : at::Tensor(), PT);
  RunCounter CB;
  CB.attach(GB);
  at::Tensor GInB = GB.backward(GradOut);

  // I then W.
  at::Tensor XS = leaf(X);
  at::Tensor OutS = M.forward(XS);
  StageGraph GS(OutS, C.inputNeedsGrad ? XS : at::Tensor(), P);
  RunCounter CS;
  CS.attach(GS);
  at::Tensor GInI = GS.backwardInput(GradOut);
  for (auto &T : P)
    EXPECT_FALSE(T.grad().defined()) << "I touched a parameter gradient";
  if (C.inputNeedsGrad) {
    ASSERT_TRUE(GInI.defined());
    EXPECT_TRUE(::torch::allclose(GInI, GInB, 1e-6, 1e-7))
        << "I's input gradient differs from B's";
    // And from autograd's own answer.
    at::Tensor XR = leaf(X);
    at::Tensor Want =
        ::torch::autograd::grad({Twin.forward(XR)}, {XR}, {GradOut},
                                /*retain_graph=*/c10::nullopt,
                                /*create_graph=*/false,
                                /*allow_unused=*/true)[0];
    if (!Want.defined())
      Want = ::torch::zeros_like(XR);
    EXPECT_TRUE(::torch::allclose(GInI, Want, 1e-6, 1e-7));
  } else {
    EXPECT_FALSE(GInI.defined());
  }
  if (C.inputNeedsGrad && GS.stats().inputPath == 0) {
    EXPECT_EQ(GInI.abs().sum().item<double>(), 0.0);
  }
  int AfterI = CS.total();
  GS.backwardWeight();
  for (size_t K = 0; K < P.size(); ++K) {
    ASSERT_EQ(P[K].grad().defined(), PT[K].grad().defined()) << "param " << K;
    if (P[K].grad().defined()) {
      EXPECT_TRUE(::torch::allclose(P[K].grad(), PT[K].grad(), 1e-6, 1e-7))
          << C.name << ": W's gradient of parameter " << K
          << " differs from B's by "
          << (P[K].grad() - PT[K].grad()).abs().max().item<double>();
    }
  }
  // No second backward: every node runs at most as often as in B, except
  // the intermediates, which run once in I and once in W (disjoint
  // outputs). B also runs the input's accumulator; I captures instead.
  const StageGraph::Stats &St = GS.stats();
  EXPECT_LE(CS.maxRuns(), 2);
  EXPECT_EQ(CS.total(), CB.total() + int(St.intermediates) -
                            (C.inputNeedsGrad && St.inputPath ? 1 : 0))
      << C.name << ": I ran " << AfterI << " nodes, W " << CS.total() - AfterI
      << ", B " << CB.total() << " (" << St.intermediates << " intermediates)";
  int Twice = 0;
  for (auto &KV : *CS.Runs)
    Twice += KV.second == 2;
  EXPECT_EQ(Twice, int(St.intermediates));
}

INSTANTIATE_TEST_SUITE_P(Stages, Split, ::testing::ValuesIn(cases()),
                         [](const auto &I) {
                           return std::string(I.param.name);
                         });

TEST(Split, AccumulatesOverMicrobatchesLikeTheFullBackward) {
  ::torch::manual_seed(3);
  AttentionBlock A, B;
  ::torch::NoGradGuard G0;
  for (size_t K = 0; K < A->parameters().size(); ++K)
    B->parameters()[K].copy_(A->parameters()[K]);
  std::vector<at::Tensor> PA = A->parameters(), PB = B->parameters();
  {
    ::torch::AutoGradMode On(true);
    for (int M = 0; M < 3; ++M) {
      at::Tensor X = ::torch::randn({2, 5, 16});
      at::Tensor XA = X.clone().requires_grad_(true);
      at::Tensor XB = X.clone().requires_grad_(true);
      at::Tensor G = ::torch::randn({2, 5, 16});
      StageGraph SA(A->forward(XA), XA, PA);
      SA.backwardInput(G);
      SA.backwardWeight();
      StageGraph SB(B->forward(XB), XB, PB);
      SB.backward(G);
    }
  }
  for (size_t K = 0; K < PA.size(); ++K)
    EXPECT_TRUE(::torch::allclose(PA[K].grad(), PB[K].grad(), 1e-6, 1e-7));
}

TEST(Split, MisuseIsAnError) {
  ::torch::nn::Linear L(4, 4);
  at::Tensor X = ::torch::randn({2, 4}).requires_grad_(true);
  std::vector<at::Tensor> P = L->parameters();
  StageGraph G(L(X), X, P);
  EXPECT_THROW(G.backwardWeight(), std::logic_error);
  G.backwardInput(::torch::ones({2, 4}));
  EXPECT_THROW(G.backward(::torch::ones({2, 4})), std::logic_error);
  G.backwardWeight();
  EXPECT_THROW(G.backwardWeight(), std::logic_error);
}

//===----------------------------------------------------------------------===//
// Tensors in Buffers and the accounting
//===----------------------------------------------------------------------===//

TEST(Tensors, HeadersRoundTripAnyDtypeAndShape) {
  for (at::ScalarType T : {at::kFloat, at::kDouble, at::kHalf, at::kLong,
                           at::kBool, at::kBFloat16})
    for (const std::vector<int64_t> &Sizes :
         {std::vector<int64_t>{}, {0}, {3}, {2, 3, 4}, {1, 1, 1, 1, 5}}) {
      at::Tensor X = ::torch::ones(Sizes, at::TensorOptions(T));
      // What MPI delivers: the header and the contiguous bytes.
      Buffer B = toBuffer(X);
      size_t N = 0;
      const void *P = B.payload()->contiguousBytes(N);
      Buffer Wire(N);
      if (N)
        std::memcpy(Wire.data(), P, N);
      Wire.setHeader(B.payload()->header());
      at::Tensor Y = fromBuffer(Wire);
      EXPECT_EQ(Y.scalar_type(), T);
      EXPECT_EQ(Y.sizes(), X.sizes());
      EXPECT_TRUE(::torch::equal(X, Y));
      // Threads: the same tensor, no copy.
      EXPECT_TRUE(fromBuffer(B).is_same(X));
    }
}

TEST(Tensors, NonContiguousTensorsAreSentContiguous) {
  at::Tensor X = ::torch::arange(12, at::kFloat).view({3, 4}).t();
  Buffer B = toBuffer(X);
  size_t N = 0;
  const void *P = B.payload()->contiguousBytes(N);
  Buffer Wire(N);
  std::memcpy(Wire.data(), P, N);
  Wire.setHeader(B.payload()->header());
  EXPECT_TRUE(::torch::equal(fromBuffer(Wire), X));
}

TEST(Tensors, BadMessagesAreErrors) {
  Buffer Plain(8);
  EXPECT_THROW(fromBuffer(Plain), std::runtime_error);
  Buffer Short(4);
  Short.setHeader(encodeTensorHeader(at::kFloat, {2}));
  try {
    fromBuffer(Short);
    FAIL() << "no error";
  } catch (const std::runtime_error &E) {
    EXPECT_EQ(std::string(E.what()),
              "the message has 4 bytes, its header says 8 (float32 [2])");
  }
}

TEST(Tensors, ClaimsFollowStoragesUntilFreedOrReleased) {
  ASSERT_TRUE(MemoryTracker::install());
  ppsrt::torch::Pool Rank;
  Account A(&Rank), B(&Rank);
  at::Tensor X;
  {
    ChargeScope S(&A);
    X = ::torch::empty({1000}, at::kFloat);
    at::Tensor Temp = ::torch::empty({10}, at::kFloat);
  }
  EXPECT_EQ(A.bytes(), 4000) << "temporaries are gone";
  at::Tensor View = X.slice(0, 0, 10);
  X = at::Tensor();
  EXPECT_EQ(A.bytes(), 4000) << "a view keeps the storage";
  // Handed over without a copy: both hold it.
  MemoryTracker::claim(View, &B);
  EXPECT_EQ(B.bytes(), 4000);
  EXPECT_EQ(Rank.bytes(), 8000);
  MemoryTracker::release(&A);
  EXPECT_EQ(A.bytes(), 0);
  EXPECT_EQ(Rank.bytes(), 4000) << "B still holds it: not leaked";
  MemoryTracker::release(&B);
  EXPECT_EQ(Rank.leaked.load(), 4000) << "alive, nobody's activation";
  View = at::Tensor();
  EXPECT_EQ(Rank.bytes(), 0);
  // Given away: not an activation of anyone.
  at::Tensor Y;
  Account C(&Rank);
  {
    ChargeScope S(&C);
    Y = ::torch::empty({16}, at::kDouble);
  }
  MemoryTracker::unclaim(Y, &C);
  EXPECT_EQ(C.bytes(), 0);
  MemoryTracker::release(&C);
  EXPECT_EQ(Rank.bytes(), 0);
}

//===----------------------------------------------------------------------===//
// StageKernels on rank threads
//===----------------------------------------------------------------------===//

/// A 4-stage MLP on 16 features; Fault injects errors.
struct Mlp {
  std::string fault; // "", "shape", "throw", "nan", "declared"
  int32_t faultStage = 1, faultMb = 2;

  Config config() const {
    Config C;
    std::string F = fault;
    int32_t FS = faultStage, FM = faultMb;
    C.module = [F, FS, FM](int32_t Stage) -> StageModule {
      auto L = ::torch::nn::Linear(16, 16);
      auto Calls = std::make_shared<int32_t>(0);
      auto Mod = std::make_shared<::torch::nn::Module>();
      Mod->register_module("fc", L);
      StageModule M;
      M.module = Mod;
      M.forward = [L, Stage, F, FS, FM,
                   Calls](const at::Tensor &X) mutable -> at::Tensor {
        int32_t Mb = (*Calls)++;
        at::Tensor Y = ::torch::tanh(L->forward(X));
        if (Stage == FS && Mb == FM && F == "shape")
          return Y.slice(0, 0, 2);
        if (Stage == FS && Mb == FM && F == "throw")
          throw std::runtime_error("injected failure");
        return Y;
      };
      return M;
    };
    C.data = [F, FM](int Step, int32_t Mb) {
      Batch B;
      B.input = ::torch::sin(
          ::torch::arange(48, at::kFloat).view({3, 16}) * 0.1 + Mb + Step);
      B.target = ::torch::cos(
          ::torch::arange(48, at::kFloat).view({3, 16}) * 0.2 - Mb);
      if (F == "nan" && Mb == FM)
        B.target.fill_(std::nan(""));
      return B;
    };
    C.loss = [](const at::Tensor &Out, const at::Tensor &T) {
      return ::torch::mse_loss(Out, T);
    };
    C.optimizer = [](const std::vector<at::Tensor> &P, int32_t) {
      return std::make_unique<::torch::optim::SGD>(
          P, ::torch::optim::SGDOptions(0.1).momentum(0.9));
    };
    if (F == "declared")
      C.inputShape = [](int32_t) { return std::vector<int64_t>{4, 16}; };
    C.seed = 5;
    C.intraOpThreads = 1;
    C.strictActivationBytes = true;
    C.checkReference = true;
    return C;
  }
};

RunResult run(const std::string &Pps, Config C, int Steps,
              StageKernels **Out = nullptr) {
  auto T = pps::rttest::compile(Pps);
  EXPECT_TRUE(T);
  static std::vector<std::unique_ptr<pps::rttest::Tables>> Keep;
  Keep.push_back(std::move(T));
  StageKernels K(Keep.back()->Desc, std::move(C));
  RunOptions O;
  O.steps = Steps;
  O.watchdogSeconds = 30;
  O.quiet = true;
  RunResult R = ppsrt::runThreads(Keep.back()->Desc, K, O);
  if (R.exitCode == ExitOk)
    for (size_t Rk = 0; Rk < R.peakActivations.size(); ++Rk) {
      EXPECT_EQ(R.peakActivations[Rk], Keep.back()->Desc.predictedPeak[Rk]);
      const ActivationBytes &B = R.activationBytes[Rk];
      EXPECT_GT(B.peak, 0);
      EXPECT_EQ(B.peak, B.expected) << "rank " << Rk;
      if (B.minPerActivation == B.maxPerActivation) {
        EXPECT_EQ(B.peak, R.peakActivations[Rk] * B.maxPerActivation);
      }
    }
  return R;
}

const char *ZbH1 = "pipeline t { ranks 4; microbatches 6; schedule zb_h1(); }";
const char *ZbV = "pipeline t { ranks 2; stages 4 placement v; microbatches 4; "
                  "schedule zb_v(); }";
const char *DualV = "pipeline t { ranks 2; stages 4 placement v; microbatches "
                    "4; schedule dualpipe_v(); }";

TEST(StageKernels, SchedulesTrainLikeTheUnpipelinedReference) {
  for (const char *P : {ZbH1, ZbV, DualV}) {
    RunResult R = run(P, Mlp{}.config(), 3);
    EXPECT_EQ(R.exitCode, ExitOk) << P << "\n" << R.error;
  }
}

TEST(StageKernels, AnOutputShapeChangingIsAnErrorWithRankStageMicrobatch) {
  RunResult R = run(ZbH1, Mlp{"shape"}.config(), 1);
  EXPECT_EQ(R.exitCode, ExitError);
  EXPECT_NE(R.error.find("rank 1: action"), std::string::npos) << R.error;
  EXPECT_NE(R.error.find("`F2@1` threw: stage 1, microbatch 2: the module's "
                         "output is float32 [2, 16], but microbatch 0's was "
                         "float32 [3, 16]"),
            std::string::npos)
      << R.error;
}

TEST(StageKernels, AReceivedShapeTheStageDoesNotExpectNamesBothRanks) {
  RunResult R = run(ZbH1, Mlp{"declared"}.config(), 1);
  EXPECT_EQ(R.exitCode, ExitError);
  EXPECT_NE(R.error.find("rank 1: action"), std::string::npos) << R.error;
  EXPECT_NE(R.error.find("`F0@1` threw: stage 1, microbatch 0: the input "
                         "received from rank 0 (`recv F0@1 <- 0`) is float32 "
                         "[3, 16], but stage 1 expects shape [4, 16] "
                         "(Config::inputShape)"),
            std::string::npos)
      << R.error;
}

TEST(StageKernels, AShapeHandedOverOnTheSameRankNamesTheStage) {
  // V placement on 2 ranks: stages 1 and 2 are both on rank 1.
  Config C = Mlp{}.config();
  C.inputShape = [](int32_t Stage) {
    return Stage == 2 ? std::vector<int64_t>{4, 16} : std::vector<int64_t>{};
  };
  RunResult R = run(ZbV, std::move(C), 1);
  EXPECT_EQ(R.exitCode, ExitError);
  EXPECT_NE(R.error.find("`F0@2` threw: stage 2, microbatch 0: the input "
                         "handed over by stage 1 on this rank is float32 "
                         "[3, 16], but stage 2 expects shape [4, 16]"),
            std::string::npos)
      << R.error;
}

TEST(StageKernels, AThrowingModuleStopsTheRun) {
  Mlp M{"throw"};
  M.faultStage = 2;
  RunResult R = run(ZbH1, M.config(), 2);
  EXPECT_EQ(R.exitCode, ExitError);
  EXPECT_NE(R.error.find("rank 2: action"), std::string::npos) << R.error;
  EXPECT_NE(R.error.find("`F2@2` threw: stage 2, microbatch 2: the module's "
                         "forward threw: injected failure"),
            std::string::npos)
      << R.error;
}

TEST(StageKernels, ANaNLossStopsTheRun) {
  RunResult R = run(ZbH1, Mlp{"nan"}.config(), 1);
  EXPECT_EQ(R.exitCode, ExitError);
  EXPECT_NE(R.error.find("rank 3: action"), std::string::npos) << R.error;
  EXPECT_NE(
      R.error.find("`F2@3` threw: stage 3, microbatch 2: the loss is nan"),
      std::string::npos)
      << R.error;
}

} // namespace
