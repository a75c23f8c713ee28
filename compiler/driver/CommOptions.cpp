//===- CommOptions.cpp - --comm-model, --stream, --eager-threshold --------===//
//
// The comm options lint, sim and emit share: they change the schedule's comm
// model and stream rule before any pass reads them, so an option gives the
// result of the same setting written in the file's `comm { }` block. Their
// values are read by pps/pipeline/CommOptions.h, as the Python module's
// keywords are.
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

bool Session::commOptions(CommOverrides &Out) {
  bool Ok = true;
  auto Bad = [&](std::string Message) {
    Diags.report(DiagKind::Usage, NoLoc, std::move(Message));
    Ok = false;
  };
  auto Check = [&](std::string Why) {
    if (!Why.empty())
      Bad(std::move(Why));
  };
  // The values are read as the Python module reads its keywords.
  if (!opts::CommModel.empty())
    Check(pipeline::parseCommModel(opts::CommModel, "--comm-model", Out));
  if (!opts::Stream.empty())
    Check(pipeline::parseStreamScope(opts::Stream, "--stream", Out));
  if (opts::EagerThreshold.getNumOccurrences())
    Check(pipeline::parseEagerThreshold(opts::EagerThreshold,
                                        "--eager-threshold", Out));
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
  std::string Why = pipeline::applyCommOverrides(O, S);
  if (Why.empty())
    return true;
  Diags.report(DiagKind::Usage, NoLoc, std::move(Why));
  return false;
}

} // namespace pps::driver
