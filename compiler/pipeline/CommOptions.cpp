//===- CommOptions.cpp - the comm options of ppsc and Python --------------===//
#include "pps/pipeline/CommOptions.h"

#include "pps/support/Figures.h"
#include "ppsrt/ByteCount.h"

#include <fmt/format.h>

#include <cmath>

namespace pps::pipeline {

std::optional<uint64_t> byteCount(llvm::StringRef Text, uint64_t Max) {
  Text = Text.trim();
  uint64_t N;
  if (!schema::parseByteCount({Text.data(), Text.size()}, Max, N))
    return std::nullopt;
  return N;
}

bool CommOverrides::any() const {
  return Model || Preset || Scope || Threshold || Latency;
}

void CommOverrides::apply(ir::Schedule &S) const {
  if (Model)
    S.Comm = *Model;
  if (Preset)
    S.Stream = *Preset;
  if (Scope)
    S.Stream.Scope = *Scope;
  if (Threshold)
    S.Stream.EagerThreshold = *Threshold;
  if (Latency)
    S.Cost.Latency = *Latency;
}

std::string parseCommModel(llvm::StringRef Name, llvm::StringRef Option,
                           CommOverrides &Out) {
  if (Name == "nccl") {
    Out.Model = ir::CommModel::Rendezvous;
    Out.Preset = schema::NcclStream;
    return "";
  }
  for (unsigned M = 0; M < schema::NumCommModels; ++M)
    if (Name == ir::commModelName(ir::CommModel(M))) {
      Out.Model = ir::CommModel(M);
      return "";
    }
  return fmt::format("{} must be rendezvous, eager, batched or nccl, got '{}'",
                     Option.str(), Name.str());
}

std::string parseStreamScope(llvm::StringRef Name, llvm::StringRef Option,
                             CommOverrides &Out) {
  for (unsigned K = 0; K < schema::NumStreamScopes; ++K)
    if (Name == ir::streamScopeName(ir::StreamScope(K))) {
      Out.Scope = ir::StreamScope(K);
      return "";
    }
  return fmt::format("{} must be none, peer or rank, got '{}'", Option.str(),
                     Name.str());
}

std::string parseEagerThreshold(llvm::StringRef Text, llvm::StringRef Option,
                                CommOverrides &Out) {
  if (Text.trim() == "none") {
    Out.Threshold = -1.0;
    return "";
  }
  if (std::optional<uint64_t> N = byteCount(Text, uint64_t(1) << 40)) {
    Out.Threshold = double(*N);
    return "";
  }
  return fmt::format("{} must be a number of bytes (with an optional K, M or "
                     "G suffix) or 'none', got '{}'",
                     Option.str(), Text.str());
}

std::string parseCommPlacement(llvm::StringRef Name, llvm::StringRef Option,
                               std::optional<passes::CommPlacement> &Out) {
  Out = passes::commPlacementNamed(Name);
  if (Out)
    return "";
  return fmt::format(
      "{} must be consumer, producer, optimize or pytorch, got '{}'",
      Option.str(), Name.str());
}

std::string applyCommOverrides(const CommOverrides &O, ir::Schedule &S) {
  if (!O.any())
    return "";
  O.apply(S);
  std::string Why = ir::commConfigProblem(S.Comm, S.Stream);
  return Why.empty() ? Why : "the comm options say: " + Why;
}

std::string reorderedText(const ir::Schedule &S, double Before, double After) {
  std::string Model = ir::commDescription(S.Comm, S.Stream);
  if (!std::isfinite(Before))
    return fmt::format("reordered the comms: the schedule's own order does "
                       "not finish under the {}; the new one takes {}",
                       Model, figureText(After));
  if (After < Before)
    return fmt::format("reordered the comms: makespan {} -> {} (-{}, "
                       "{:.1f}%) under the {}",
                       figureText(Before), figureText(After),
                       figureText(Before - After),
                       100.0 * (Before - After) / Before, Model);
  return fmt::format("kept the comm order: none faster was found under the "
                     "{} (makespan {})",
                     Model, figureText(Before));
}

} // namespace pps::pipeline
