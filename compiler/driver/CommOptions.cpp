//===- CommOptions.cpp - --comm-model, --stream, --eager-threshold --------===//
//
// The comm options lint, sim and emit share: they change the schedule's comm
// model and stream rule before any pass reads them, so an option gives the
// result of the same setting written in the file's `comm { }` block.
//
//===----------------------------------------------------------------------===//
#include "pps/driver/Command.h"
#include "pps/frontend/Limits.h"

#include <fmt/format.h>

namespace pps::driver {

namespace opts {
static llvm::cl::SubCommand &all() { return *llvm::cl::AllSubCommands; }

llvm::cl::opt<std::string> CommModel(
    "comm-model",
    llvm::cl::desc("Check, simulate or export under this comm model instead "
                   "of the schedule's: rendezvous, eager, batched, or nccl "
                   "(rendezvous on one in-order stream per rank, sends of up "
                   "to 64 KiB eager)"),
    llvm::cl::value_desc("rendezvous|eager|batched|nccl"), llvm::cl::sub(all()),
    llvm::cl::cat(Category));
llvm::cl::opt<std::string>
    Stream("stream",
           llvm::cl::desc("The stream rule: none (default), peer (one in-order "
                          "stream per rank pair) or rank (one per rank)"),
           llvm::cl::value_desc("none|peer|rank"), llvm::cl::sub(all()),
           llvm::cl::cat(Category));
llvm::cl::opt<std::string> EagerThreshold(
    "eager-threshold",
    llvm::cl::desc("Sends of at most this many bytes do not wait for their "
                   "receive (suffix K, M or G: KiB, MiB, GiB; 'none' for no "
                   "threshold)"),
    llvm::cl::value_desc("bytes"), llvm::cl::sub(all()),
    llvm::cl::cat(Category));
llvm::cl::opt<double> Latency("latency",
                              llvm::cl::desc("Override the per-message latency "
                                             "(time units)"),
                              llvm::cl::value_desc("time"),
                              llvm::cl::sub(all()), llvm::cl::cat(Category));
} // namespace opts

/// "65536", "64K", "1M", "none" (-1).
static std::optional<double> thresholdBytes(llvm::StringRef Text) {
  if (Text.trim() == "none")
    return -1.0;
  if (std::optional<uint64_t> N = byteCount(Text, uint64_t(1) << 40))
    return double(*N);
  return std::nullopt;
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

bool Session::commOptions(CommOverrides &Out) {
  bool Ok = true;
  auto Bad = [&](std::string Message) {
    Diags.report(DiagKind::Usage, NoLoc, std::move(Message));
    Ok = false;
  };
  if (!opts::CommModel.empty()) {
    llvm::StringRef Name = opts::CommModel.getValue();
    if (Name == "nccl") {
      Out.Model = ir::CommModel::Rendezvous;
      Out.Preset = schema::NcclStream;
    } else {
      for (unsigned M = 0; M < schema::NumCommModels; ++M)
        if (Name == ir::commModelName(ir::CommModel(M)))
          Out.Model = ir::CommModel(M);
      if (!Out.Model)
        Bad(fmt::format("--comm-model must be rendezvous, eager, batched or "
                        "nccl, got '{}'",
                        Name.str()));
    }
  }
  if (!opts::Stream.empty()) {
    for (unsigned K = 0; K < schema::NumStreamScopes; ++K)
      if (opts::Stream == ir::streamScopeName(ir::StreamScope(K)))
        Out.Scope = ir::StreamScope(K);
    if (!Out.Scope)
      Bad(fmt::format("--stream must be none, peer or rank, got '{}'",
                      opts::Stream.getValue()));
  }
  if (opts::EagerThreshold.getNumOccurrences()) {
    Out.Threshold = thresholdBytes(opts::EagerThreshold.getValue());
    if (!Out.Threshold)
      Bad(fmt::format("--eager-threshold must be a number of bytes (with an "
                      "optional K, M or G suffix) or 'none', got '{}'",
                      opts::EagerThreshold.getValue()));
  }
  if (opts::Latency.getNumOccurrences()) {
    if (!(opts::Latency >= 0) || opts::Latency > frontend::MaxTime)
      Bad(fmt::format("--latency must be a time from 0 to {:.10g}",
                      frontend::MaxTime));
    else
      Out.Latency = opts::Latency;
  }
  if (Ok)
    LoadComm = Out;
  return Ok;
}

bool Session::applyCommOptions(const CommOverrides &O, ir::Schedule &S) {
  if (!O.any())
    return true;
  O.apply(S);
  std::string Why = ir::commConfigProblem(S.Comm, S.Stream);
  if (Why.empty())
    return true;
  Diags.report(DiagKind::Usage, NoLoc, "the comm options say: " + Why);
  return false;
}

} // namespace pps::driver
