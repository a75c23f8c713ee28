//===- StageSupport.h - what the libtorch stage kernels' files share -----===//
//
// Private to runtime/src/torch: error wrapping, the deterministic module
// build and a module's trainable parameters, used by the stage kernels
// (StageKernels.cpp) and the unpipelined reference (StageGraph.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/torch/StageKernels.h"

#include <c10/util/Exception.h>
#include <torch/utils.h>

#include <fmt/format.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace ppsrt {
namespace torch {

/// Building modules seeds libtorch's global generator: one at a time.
inline std::mutex &buildMutex() {
  static std::mutex Mu;
  return Mu;
}

inline std::string what(const std::exception &E) {
  if (auto *C = dynamic_cast<const c10::Error *>(&E))
    return C->what_without_backtrace();
  return E.what();
}

/// Runs F, prefixing what it throws with the stage, the microbatch and
/// what was running.
template <class Fn>
auto guarded(int32_t Stage, int32_t Mb, const char *What, Fn &&F)
    -> decltype(F()) {
  try {
    return F();
  } catch (const std::exception &E) {
    throw std::runtime_error(fmt::format(
        "stage {}, microbatch {}: {} threw: {}", Stage, Mb, What, what(E)));
  }
}

inline std::runtime_error stageError(int32_t Stage, int32_t Mb,
                                     const std::string &Msg) {
  return std::runtime_error(
      fmt::format("stage {}, microbatch {}: {}", Stage, Mb, Msg));
}

/// Layer Layer's module, built the deterministic way: every copy of a
/// shared layer (and the reference's one) starts from the same weights.
inline StageModule buildModule(const Config &C, int32_t Layer) {
  std::lock_guard<std::mutex> L(buildMutex());
  ::torch::manual_seed(C.seed + uint64_t(Layer));
  StageModule M = C.module(Layer);
  if (!M.module || !M.forward)
    throw std::runtime_error(
        fmt::format("Config::module returned no module for layer {}", Layer));
  return M;
}

inline std::vector<at::Tensor> trainable(const StageModule &M) {
  std::vector<at::Tensor> Out;
  for (const at::Tensor &P : M.module->parameters())
    if (P.requires_grad())
      Out.push_back(P);
  return Out;
}

} // namespace torch
} // namespace ppsrt
