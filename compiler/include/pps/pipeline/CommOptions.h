//===- CommOptions.h - the comm options of ppsc and Python ----------------===//
//
// One reading of the options that change a schedule's comm model and stream
// rule (ppsc's --comm-model, --stream, --eager-threshold, --comm-placement;
// the Python module's comm_model=, stream=, eager_threshold=,
// comm_placement=): the same values mean the same thing and a bad one gets
// the same words, with the option named as the caller spells it. An option
// gives the result of the same setting written in the file's `comm { }`
// block.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"
#include "pps/passes/InsertComms.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace pps::pipeline {

/// A number of bytes as options write it ("65536", "64K", "16M", "1G": K, M
/// and G are powers of 1024), at most Max; nullopt if malformed.
std::optional<uint64_t> byteCount(llvm::StringRef Text, uint64_t Max);

/// What the comm options change of a schedule.
struct CommOverrides {
  std::optional<ir::CommModel> Model;
  /// The stream rule the nccl preset sets.
  std::optional<ir::CommStream> Preset;
  std::optional<ir::StreamScope> Scope;
  /// Bytes; < 0: no threshold.
  std::optional<double> Threshold;
  /// The per-message latency (time units).
  std::optional<double> Latency;

  bool any() const;
  /// Writes them into S (the model, then the preset, then the others).
  void apply(ir::Schedule &S) const;
};

/// Each reads one option's value into Out and returns "" if it is well
/// formed, else the problem as a message naming the option Option (say
/// "--comm-model" or "comm_model"):
///   comm model: rendezvous, eager, batched, or nccl (rendezvous on one
///     in-order stream per rank, sends of up to 64 KiB eager);
///   stream: none, peer or rank;
///   eager threshold: a byteCount up to 1 TiB, or "none" (no threshold).
std::string parseCommModel(llvm::StringRef Name, llvm::StringRef Option,
                           CommOverrides &Out);
std::string parseStreamScope(llvm::StringRef Name, llvm::StringRef Option,
                             CommOverrides &Out);
std::string parseEagerThreshold(llvm::StringRef Text, llvm::StringRef Option,
                                CommOverrides &Out);
/// Comm placement: consumer, producer, optimize or pytorch
/// (pps/passes/InsertComms.h).
std::string parseCommPlacement(llvm::StringRef Name, llvm::StringRef Option,
                               std::optional<passes::CommPlacement> &Out);

/// Applies O to S; "" if the result is a combination the comm model allows,
/// else why not ("the comm options say: ...", ir::commConfigProblem).
std::string applyCommOverrides(const CommOverrides &O, ir::Schedule &S);

/// What emit --reorder-comms and lint --fix say about a reordering of S's
/// comms whose makespan went from Before (infinite: it did not finish) to
/// After under S's comm model (passes::AnalysisResults::Reordered).
std::string reorderedText(const ir::Schedule &S, double Before, double After);

} // namespace pps::pipeline
