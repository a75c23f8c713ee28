//===- PassManager.h - named passes over the IR ---------------------------===//
//
// Every pass has a stable name so the driver can --print-after=NAME,
// --disable-pass=NAME and --time-passes. A pass reports problems through the
// diagnostics engine; the manager stops after a pass that reported an error.
// Passes that compute facts for later stages (memory peaks, simulated
// times) leave them in the PassContext's analysis slots.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/analysis/Deadlock.h"
#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pps::passes {

/// Results that analysis passes leave for the driver and later passes.
struct AnalysisResults {
  /// Peak activation memory per rank (memory pass) in the schedule's
  /// memory model's units, empty if not run.
  std::vector<double> PeakMemory;
  /// True once the deadlock pass has proved the schedule deadlock-free.
  bool DeadlockFree = false;
  /// The deadlock pass's result (the model it checked under, where ranks
  /// block), empty if it did not run. Later stages reuse it.
  std::optional<analysis::DeadlockResult> Deadlock;
  /// True once verify-deps ran without errors.
  bool DepsVerified = false;
  /// Send/recv actions insert-comms added (0 if the user wrote them).
  uint64_t CommsInserted = 0;
  /// insert-comms with ReorderComms: the makespan under the schedule's
  /// comm model before and after it replaced the schedule's own comms
  /// (equal when it kept them: no faster order was found); unset when it
  /// did not try.
  std::optional<std::pair<double, double>> Reordered;
  /// Makespan of the dependency timeline (align-bubbles), 0 if not run.
  double Makespan = 0;
  /// The makespan of the dependency timeline of the current compute order,
  /// when a pass already timed it (insert-comms does), so align-bubbles
  /// need not time it again. The pass manager drops it after a pass that
  /// may change the compute order (Pass::preservesComputeOrder).
  std::optional<double> ComputeMakespan;
};

struct PassContext {
  DiagnosticEngine &Diags;
  AnalysisResults Results;
  /// The most actions a pass may leave in the schedule (--max-actions).
  uint64_t MaxActions = ir::DefaultMaxActions;
};

/// Checks that adding Added actions to S stays within Ctx.MaxActions;
/// otherwise reports a limit-exceeded error at the pipeline and returns
/// false. What says what the pass would add ("sends and receives"); with
/// Added = 0 it names the pass that already added them. Passes that add
/// actions call it before allocating them; the pass manager calls it after
/// every pass.
bool checkActionLimit(const ir::Schedule &S, uint64_t Added,
                      llvm::StringRef What, PassContext &Ctx);

class Pass {
public:
  virtual ~Pass() = default;
  /// Stable name used on the command line, e.g. "insert-comms".
  virtual llvm::StringRef name() const = 0;
  /// One line for --help and --list-passes.
  virtual llvm::StringRef description() const = 0;
  virtual void run(ir::Schedule &S, PassContext &Ctx) = 0;
  /// True for a check that trusts nothing an earlier pass established (the
  /// deadlock pass): it still runs after an earlier pass reported an error,
  /// so a lint shows every independent finding at once.
  virtual bool runsAfterErrors() const { return false; }
  /// True if the pass keeps every rank's computes, their order and the
  /// costs (it adds or removes only comm, control and idle actions), so
  /// what is known about the compute order (ComputeMakespan) stays true.
  virtual bool preservesComputeOrder() const { return false; }
};

/// A pass that only reads the schedule (verification and analysis): it
/// implements analyze(), which takes the schedule const.
class AnalysisPass : public Pass {
public:
  virtual void analyze(const ir::Schedule &S, PassContext &Ctx) = 0;
  void run(ir::Schedule &S, PassContext &Ctx) final { analyze(S, Ctx); }
  bool preservesComputeOrder() const final { return true; }
};

struct PassManagerOptions {
  std::vector<std::string> PrintAfter; // pass names, or "all"
  std::vector<std::string> DisabledPasses;
  bool TimePasses = false;
  /// With TimePasses: the passes to report (empty = all).
  std::vector<std::string> TimedPasses;
  /// Prints the IR after a pass (the driver supplies the .pps printer).
  std::function<void(const ir::Schedule &, llvm::raw_ostream &)> Printer;
  llvm::raw_ostream *DumpStream = nullptr; // defaults to errs()
};

class PassManager {
public:
  explicit PassManager(PassManagerOptions Opts = {}) : Opts(std::move(Opts)) {}
  void add(std::unique_ptr<Pass> P) { Passes.push_back(std::move(P)); }
  /// Runs the passes in order; false if one reported an error (the rest are
  /// skipped, except those that run after errors).
  bool run(ir::Schedule &S, PassContext &Ctx);
  /// Every pass name known to the manager, in order.
  std::vector<llvm::StringRef> names() const;

private:
  bool isDisabled(llvm::StringRef Name) const;
  bool shouldPrintAfter(llvm::StringRef Name) const;
  PassManagerOptions Opts;
  std::vector<std::unique_ptr<Pass>> Passes;
};

} // namespace pps::passes
