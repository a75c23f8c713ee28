//===- gpt.h - a small decoder-only transformer split into pipeline stages ===//
//
// The GPT example's model and data, shared by its executors (gpt.cpp) and
// the benchmark (tests/bench/torch/gpt_split.cpp):
//
//  * GptStage: token and position embeddings (on stage 0), a contiguous run
//    of transformer blocks (causal self-attention and a GELU MLP, each
//    behind a LayerNorm and a residual), and the final LayerNorm and the
//    untied head (on the last stage). The model has `blocks` blocks in all,
//    spread evenly over the stages.
//  * Text: character-level tokens of a text a Debian package ships, by
//    default /usr/share/common-licenses/GPL-3 (package base-files).
//  * gptConfig(): the ppsrt::torch::Config that trains it (AdamW, a
//    deterministic sampler of (step, microbatch) windows of the text).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/torch/StageKernels.h"

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpt {

/// Model and training sizes.
struct Options {
  int64_t dim = 32;     ///< embedding width
  int64_t heads = 2;    ///< attention heads
  int64_t context = 32; ///< tokens per sequence
  int64_t blocks = 8;   ///< transformer blocks in the whole model
  int64_t rows = 4;     ///< sequences per microbatch
  double lr = 3e-3;     ///< AdamW learning rate
  uint64_t seed = 1234; ///< weights and data
  std::string text = "/usr/share/common-licenses/GPL-3";
};

/// The training text as tokens, and its alphabet.
struct Text {
  std::string path;
  std::vector<unsigned char> alphabet; ///< token -> byte
  torch::Tensor tokens;                ///< int64 [N]
  int64_t vocab() const { return int64_t(alphabet.size()); }
};
/// Reads and tokenises Path; throws std::runtime_error (naming the file and
/// where it comes from) if it is missing or too short.
Text loadText(const std::string &Path, int64_t Context);

/// Causal self-attention over [rows, context, dim].
struct AttentionImpl : torch::nn::Module {
  AttentionImpl(int64_t Dim, int64_t Heads, int64_t Context);
  torch::Tensor forward(const torch::Tensor &X);
  int64_t heads;
  torch::nn::Linear qkv{nullptr}, proj{nullptr};
  torch::Tensor mask; ///< buffer: lower triangle
};
TORCH_MODULE(Attention);

/// One transformer block (pre-LayerNorm).
struct BlockImpl : torch::nn::Module {
  BlockImpl(int64_t Dim, int64_t Heads, int64_t Context);
  torch::Tensor forward(torch::Tensor X);
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  Attention attn{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Block);

/// Stage Stage of Stages: [embeddings] blocks [final norm and head].
struct GptStageImpl : torch::nn::Module {
  GptStageImpl(const Options &O, int64_t Vocab, int32_t Stage, int32_t Stages);
  torch::Tensor forward(torch::Tensor X);
  torch::nn::Embedding tok{nullptr}, pos{nullptr};
  torch::nn::ModuleList blocks;
  torch::nn::LayerNorm lnf{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(GptStage);

/// Blocks [first, last) of stage Stage of Stages.
std::pair<int64_t, int64_t> blockRange(const Options &O, int32_t Stage,
                                       int32_t Stages);

/// The training run: the model's Layers layers built by GptStage (one per
/// stage, or one per weight-sharing group when the schedule replicates
/// stages), windows of the text sampled deterministically per (step,
/// microbatch, row), cross-entropy, AdamW per stage.
ppsrt::torch::Config gptConfig(const Options &O, const Text &T, int32_t Layers);

} // namespace gpt
