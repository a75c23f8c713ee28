//===- gpt.cpp - a small GPT trained by generated executors ---------------===//
//
// The model (gpt.h) and the kernels every GPT executor links: one libtorch
// translation unit, compiled once (an object library) and linked into the
// executor of each schedule (CMakeLists.txt). ppsrt::makeKernels returns
// GptKernels, a ppsrt::torch::StageKernels that reads the example's options
// after `--` on the executor's command line:
//
//   --text=FILE          training text (default /usr/share/common-licenses/
//                        GPL-3, from Debian's base-files package)
//   --reference=auto|on|off
//                        compare every stage's parameters and every step's
//                        loss with the unpipelined single-process run
//                        (auto: for runs of at most 5 steps)
//   --loss-below=X       fail unless the mean loss of the last 10 steps is
//                        below X
//   --print-every=N      print the loss every N steps (default: every step
//                        up to 20 steps, else every 10)
//   --threads=N          intra-op threads per rank (1)
//   --dim=N --heads=N --context=N --rows=N --blocks=N
//                        model and microbatch sizes (32, 2, 32, 4, 8)
//   --fault=KIND[:STAGE[:CALL]]
//                        inject a fault (tests): shape (stage STAGE's CALL-th
//                        forward, counting from 0, returns one token fewer),
//                        short (all its forwards do: the next stage receives
//                        a shape it does not expect), throw (the CALL-th
//                        forward throws), nan (the CALL-th loss is NaN)
//
//===----------------------------------------------------------------------===//
#include "gpt.h"

#include "ppsrt/Kernels.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>

namespace gpt {

Text loadText(const std::string &Path, int64_t Context) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    throw std::runtime_error(fmt::format(
        "cannot read the training text {} (Debian's base-files package ships "
        "/usr/share/common-licenses/GPL-3; pass another file with "
        "`-- --text=FILE`)",
        Path));
  std::string Bytes((std::istreambuf_iterator<char>(In)),
                    std::istreambuf_iterator<char>());
  if (int64_t(Bytes.size()) < 4 * (Context + 1))
    throw std::runtime_error(
        fmt::format("the training text {} has {} bytes; at least {} are "
                    "needed",
                    Path, Bytes.size(), 4 * (Context + 1)));
  Text T;
  T.path = Path;
  int16_t Index[256];
  std::fill(std::begin(Index), std::end(Index), int16_t(-1));
  for (unsigned char C : Bytes)
    Index[C] = 0;
  for (int C = 0; C < 256; ++C)
    if (Index[C] == 0) {
      Index[C] = int16_t(T.alphabet.size());
      T.alphabet.push_back((unsigned char)C);
    }
  T.tokens = torch::empty({int64_t(Bytes.size())}, torch::kLong);
  int64_t *P = T.tokens.data_ptr<int64_t>();
  for (size_t I = 0; I < Bytes.size(); ++I)
    P[I] = Index[(unsigned char)Bytes[I]];
  return T;
}

AttentionImpl::AttentionImpl(int64_t Dim, int64_t Heads, int64_t Context)
    : heads(Heads) {
  qkv = register_module("qkv", torch::nn::Linear(Dim, 3 * Dim));
  proj = register_module("proj", torch::nn::Linear(Dim, Dim));
  mask = register_buffer("mask",
                         torch::ones({Context, Context}, torch::kBool).tril());
}

torch::Tensor AttentionImpl::forward(const torch::Tensor &X) {
  int64_t B = X.size(0), T = X.size(1), C = X.size(2), H = heads;
  int64_t HeadDim = C / H; // the constructor's caller checks C % H == 0
  auto Parts = qkv(X).chunk(3, -1);
  auto split = [&](const torch::Tensor &Y) {
    return Y.view({B, T, H, HeadDim}).transpose(1, 2); // [B, H, T, HeadDim]
  };
  torch::Tensor Q = split(Parts[0]), K = split(Parts[1]), V = split(Parts[2]);
  torch::Tensor Att =
      torch::matmul(Q, K.transpose(-2, -1)) / std::sqrt(double(HeadDim));
  Att = Att.masked_fill(mask.slice(0, 0, T).slice(1, 0, T).logical_not(),
                        -std::numeric_limits<float>::infinity());
  torch::Tensor Y = torch::matmul(torch::softmax(Att, -1), V);
  return proj(Y.transpose(1, 2).contiguous().view({B, T, C}));
}

BlockImpl::BlockImpl(int64_t Dim, int64_t Heads, int64_t Context) {
  ln1 = register_module(
      "ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({Dim})));
  attn = register_module("attn", Attention(Dim, Heads, Context));
  ln2 = register_module(
      "ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({Dim})));
  fc1 = register_module("fc1", torch::nn::Linear(Dim, 4 * Dim));
  fc2 = register_module("fc2", torch::nn::Linear(4 * Dim, Dim));
}

torch::Tensor BlockImpl::forward(torch::Tensor X) {
  X = X + attn(ln1(X));
  return X + fc2(torch::gelu(fc1(ln2(X))));
}

std::pair<int64_t, int64_t> blockRange(const Options &O, int32_t Stage,
                                       int32_t Stages) {
  return {O.blocks * Stage / Stages, O.blocks * (Stage + 1) / Stages};
}

GptStageImpl::GptStageImpl(const Options &O, int64_t Vocab, int32_t Stage,
                           int32_t Stages) {
  if (Stage == 0) {
    tok = register_module("tok", torch::nn::Embedding(Vocab, O.dim));
    pos = register_module("pos", torch::nn::Embedding(O.context, O.dim));
  }
  auto [First, Last] = blockRange(O, Stage, Stages);
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int64_t B = First; B < Last; ++B)
    blocks->push_back(Block(O.dim, O.heads, O.context));
  if (Stage == Stages - 1) {
    lnf = register_module(
        "lnf", torch::nn::LayerNorm(torch::nn::LayerNormOptions({O.dim})));
    head = register_module("head", torch::nn::Linear(O.dim, Vocab));
  }
}

torch::Tensor GptStageImpl::forward(torch::Tensor X) {
  if (tok)
    X = tok(X) + pos(torch::arange(X.size(1), torch::kLong));
  for (const auto &B : *blocks)
    X = B->as<Block>()->forward(X);
  if (head)
    X = head(lnf(X));
  return X;
}

/// A 64-bit mix (splitmix64): the sampler's windows.
static uint64_t mix(uint64_t X) {
  X += 0x9E3779B97F4A7C15ull;
  X = (X ^ (X >> 30)) * 0xBF58476D1CE4E5B9ull;
  X = (X ^ (X >> 27)) * 0x94D049BB133111EBull;
  return X ^ (X >> 31);
}

ppsrt::torch::Config gptConfig(const Options &O, const Text &T,
                               int32_t Layers) {
  ppsrt::torch::Config C;
  int64_t Vocab = T.vocab();
  C.module = [O, Vocab, Layers](int32_t Layer) {
    return ppsrt::torch::StageModule(GptStage(O, Vocab, Layer, Layers));
  };
  torch::Tensor Tokens = T.tokens;
  C.data = [O, Tokens](int Step, int32_t Mb) {
    int64_t Windows = Tokens.size(0) - O.context - 1;
    std::vector<int64_t> Starts(size_t(O.rows * O.context));
    for (int64_t R = 0; R < O.rows; ++R) {
      uint64_t Key =
          (uint64_t(Step) << 40) ^ (uint64_t(Mb) << 20) ^ uint64_t(R) ^ O.seed;
      int64_t S = int64_t(mix(Key) % uint64_t(Windows));
      for (int64_t J = 0; J < O.context; ++J)
        Starts[size_t(R * O.context + J)] = S + J;
    }
    torch::Tensor Idx =
        torch::tensor(Starts, torch::kLong).view({O.rows, O.context});
    return ppsrt::torch::Batch{Tokens.index({Idx}), Tokens.index({Idx + 1})};
  };
  C.loss = [Vocab](const torch::Tensor &Logits, const torch::Tensor &Target) {
    return torch::nn::functional::cross_entropy(Logits.view({-1, Vocab}),
                                                Target.view({-1}));
  };
  C.optimizer = [O](const std::vector<torch::Tensor> &Params, int32_t) {
    return std::make_unique<torch::optim::AdamW>(
        Params, torch::optim::AdamWOptions(O.lr).weight_decay(0.0));
  };
  C.seed = O.seed;
  // Layers after the first receive [rows, context, dim] activations.
  C.inputShape = [O](int32_t Layer) {
    return Layer == 0 ? std::vector<int64_t>{}
                      : std::vector<int64_t>{O.rows, O.context, O.dim};
  };
  return C;
}

} // namespace gpt

namespace {

/// The example's kernels: StageKernels configured from the command line.
class GptKernels : public ppsrt::torch::StageKernels {
public:
  explicit GptKernels(const ppsrt::ScheduleDesc &S)
      : StageKernels(S, ppsrt::torch::Config()) {}

  void setup(const ppsrt::KernelContext &Ctx, int32_t Rank) override {
    std::call_once(Configured, [&] { configure(Ctx); });
    StageKernels::setup(Ctx, Rank);
  }

  void finish(int32_t Rank) override {
    StageKernels::finish(Rank);
    checkControls(Rank);
    int32_t Last = schedule().stages - 1;
    if (schedule().stageToRank[Last] != Rank || !(LossBelow > 0))
      return;
    const std::vector<double> &L = stepLosses(Last);
    size_t N = std::min<size_t>(10, L.size());
    double Mean = 0;
    for (size_t I = L.size() - N; I < L.size(); ++I)
      Mean += L[I] / double(schedule().microbatches);
    Mean /= double(N);
    fmt::print("gpt: mean loss of the last {} steps {:.4f} (threshold "
               "{})\n",
               N, Mean, LossBelow);
    if (!(Mean < LossBelow))
      throw std::runtime_error(fmt::format(
          "the mean loss of the last {} steps is {:.4f}, not below {}", N, Mean,
          LossBelow));
  }

private:
  /// FSDP schedules (unshard / reshard / reduce_grad actions) reach the
  /// kernels: each stage is unsharded and resharded as often, at least once
  /// per step, and its gradients are reduced once per step.
  void checkControls(int32_t Rank) {
    std::lock_guard<std::mutex> L(ControlMu);
    for (int32_t St = 0; St < schedule().stages; ++St) {
      if (schedule().stageToRank[St] != Rank)
        continue;
      const int *N = Controls[size_t(St)].data();
      if (!N[0] && !N[1] && !N[2])
        continue;
      fmt::print("gpt: rank {} stage {}: unshard {}, reshard {}, reduce_grad "
                 "{}\n",
                 Rank, St, N[0], N[1], N[2]);
      if (N[0] != N[1] || N[2] != Steps || N[0] < Steps)
        throw std::runtime_error(
            fmt::format("stage {}: unshard {}, reshard {} and reduce_grad {} "
                        "times in {} steps",
                        St, N[0], N[1], N[2], Steps));
    }
  }

  void configure(const ppsrt::KernelContext &Ctx) {
    gpt::Options O;
    std::string Reference = "auto", Fault;
    int Every = 0, Threads = 1;
    for (const std::string &A : Ctx.args) {
      size_t Eq = A.find('=');
      std::string Name = A.substr(0, Eq),
                  Value = Eq == std::string::npos ? "" : A.substr(Eq + 1);
      if (Name == "--text")
        O.text = Value;
      else if (Name == "--reference")
        Reference = Value;
      else if (Name == "--loss-below")
        LossBelow = std::stod(Value);
      else if (Name == "--print-every")
        Every = std::stoi(Value);
      else if (Name == "--threads")
        Threads = std::stoi(Value);
      else if (Name == "--fault")
        Fault = Value;
      else if (Name == "--dim")
        O.dim = std::stoll(Value);
      else if (Name == "--heads")
        O.heads = std::stoll(Value);
      else if (Name == "--context")
        O.context = std::stoll(Value);
      else if (Name == "--rows")
        O.rows = std::stoll(Value);
      else if (Name == "--blocks")
        O.blocks = std::stoll(Value);
      else
        throw std::runtime_error(fmt::format(
            "unknown example option '{}' (after `--`: --text, --reference, "
            "--loss-below, --print-every, --threads, --fault, --dim, --heads, "
            "--context, --rows, --blocks)",
            A));
    }
    // The model's layers: one per stage, or one per weight-sharing group
    // when the schedule replicates stages (dualpipe's two directions).
    int32_t Layers = ppsrt::numWeightGroups(schedule());
    if (O.dim < 1 || O.heads < 1 || O.dim % O.heads || O.context < 1 ||
        O.rows < 1 || O.blocks < Layers)
      throw std::runtime_error(
          fmt::format("bad model size: width {} ({} heads), context {}, {} "
                      "rows, {} blocks for {} layers",
                      O.dim, O.heads, O.context, O.rows, O.blocks, Layers));
    if (Reference != "auto" && Reference != "on" && Reference != "off")
      throw std::runtime_error("--reference takes auto, on or off");
    Corpus = gpt::loadText(O.text, O.context);
    ppsrt::torch::Config &C = config();
    C = gpt::gptConfig(O, Corpus, Layers);
    C.intraOpThreads = Threads;
    C.strictActivationBytes = true;
    C.checkReference =
        Reference == "on" || (Reference == "auto" && Ctx.steps <= 5);
    if (Every <= 0)
      Every = Ctx.steps <= 20 ? 1 : 10;
    int Last = Ctx.steps - 1;
    C.onStepLoss = [Every, Last](int32_t, int Step, int32_t, double Sum,
                                 int32_t Count) {
      if (Step % Every == 0 || Step == Last)
        fmt::print("gpt: step {} loss {:.4f}\n", Step, Sum / double(Count));
      std::fflush(stdout);
    };
    Steps = Ctx.steps;
    Controls.assign(size_t(schedule().stages), {0, 0, 0});
    C.control = [this](ppsrt::Kind K, int32_t, int32_t Stage,
                       torch::nn::Module &) {
      std::lock_guard<std::mutex> L(ControlMu);
      int I = K == ppsrt::Kind::Unshard ? 0 : K == ppsrt::Kind::Reshard ? 1 : 2;
      ++Controls[size_t(Stage)][size_t(I)];
    };
    if (!Fault.empty())
      injectFault(C, Fault);
    fmt::print("gpt: {} ({} tokens, {} symbols), {} blocks of width {} over "
               "{} stages ({} layers), {} x {} tokens per microbatch\n",
               Corpus.path, Corpus.tokens.size(0), Corpus.vocab(), O.blocks,
               O.dim, schedule().stages, Layers, O.rows, O.context);
  }

  /// --fault=KIND[:STAGE[:CALL]] (see the file comment).
  void injectFault(ppsrt::torch::Config &C, const std::string &Spec) {
    std::string Kind = Spec.substr(0, Spec.find(':'));
    int32_t Stage = 1;
    int Call = 2;
    if (size_t P = Spec.find(':'); P != std::string::npos) {
      Stage = std::stoi(Spec.substr(P + 1));
      if (size_t Q = Spec.find(':', P + 1); Q != std::string::npos)
        Call = std::stoi(Spec.substr(Q + 1));
    }
    if (Kind == "shape" || Kind == "short" || Kind == "throw") {
      auto Make = C.module;
      C.module = [Make, Kind, Stage, Call](int32_t S) {
        ppsrt::torch::StageModule M = Make(S);
        if (S != Stage)
          return M;
        auto Calls = std::make_shared<int>(0);
        auto Inner = M.forward;
        M.forward = [Inner, Kind, Calls, Call](const torch::Tensor &X) {
          torch::Tensor Y = Inner(X);
          if ((*Calls)++ != Call && Kind != "short")
            return Y;
          if (Kind == "throw")
            throw std::runtime_error("injected failure (--fault=throw)");
          return Y.slice(1, 0, Y.size(1) - 1);
        };
        return M;
      };
    } else if (Kind == "nan") {
      auto Loss = C.loss;
      auto Calls = std::make_shared<int>(0);
      C.loss = [Loss, Calls, Call](const torch::Tensor &O,
                                   const torch::Tensor &T) {
        torch::Tensor L = Loss(O, T);
        return (*Calls)++ == Call ? L * std::nan("") : L;
      };
    } else {
      throw std::runtime_error(
          fmt::format("unknown fault '{}' (shape, short, throw or nan)", Kind));
    }
  }

  std::once_flag Configured;
  std::mutex ControlMu;
  std::vector<std::array<int, 3>> Controls; ///< per stage: un/re/reduce
  int Steps = 1;
  gpt::Text Corpus;
  double LossBelow = 0;
};

} // namespace

std::unique_ptr<ppsrt::Kernels> ppsrt::makeKernels(const ScheduleDesc &S) {
  return std::make_unique<GptKernels>(S);
}
