//===- Command.h - ppsc subcommands and their shared options --------------===//
//
// Each subcommand (check, emit, lint, sim, synth, import) lives in its own
// file under compiler/driver/, declares an llvm::cl::SubCommand and its own
// options, and registers a handler with a static CommandRegistration. main()
// parses the command line and runs the handler of the subcommand given.
//
// Exit codes: 0 success, 1 diagnostics (input errors or lint findings),
// 2 usage errors. Every error, usage errors included, goes through the
// session's DiagnosticEngine, so --diagnostics-format=json carries them all;
// one without a source location is attributed to "ppsc SUBCOMMAND".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/frontend/CostsFile.h"
#include "pps/frontend/Frontend.h"
#include "pps/ir/Schedule.h"
#include "pps/passes/PassManager.h"
#include "pps/pipeline/CommOptions.h"
#include "pps/support/Diagnostics.h"
#include "pps/support/OutputFile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace pps::driver {

enum ExitCode : int { ExitOk = 0, ExitDiagnostics = 1, ExitUsage = 2 };

using CommandFn = int (*)();
/// Declares options that must be made after every static one (main calls
/// it before parsing): a positional list placed after the shared positional
/// opts::Input, whose registration order across files is not fixed.
using CommandInitFn = void (*)();

/// Registers a subcommand's handler at static-initialisation time.
struct CommandRegistration {
  CommandRegistration(llvm::cl::SubCommand &Sub, CommandFn Fn,
                      CommandInitFn Init = nullptr);
};

/// "ppsc" or "ppsc SUBCOMMAND", set by main() once the command line is
/// parsed: what a diagnostic without a source location is attributed to.
const std::string &toolName();
void setToolName(std::string Name);

/// Options shared by every subcommand (defined in Options.cpp).
namespace opts {
extern llvm::cl::OptionCategory Category;
extern llvm::cl::opt<std::string> Input;
extern llvm::cl::opt<std::string> Output;
extern llvm::cl::opt<std::string> DiagnosticsFormat;
extern llvm::cl::opt<std::string> PipelineName;
extern llvm::cl::list<std::string> ImportPaths;
extern llvm::cl::opt<int> Ranks;
extern llvm::cl::opt<int> Microbatches;
extern llvm::cl::opt<int> Stages;
extern llvm::cl::list<std::string> Defines;
extern llvm::cl::opt<std::string> CostsFile;
extern llvm::cl::opt<uint64_t> StepBudget;
extern llvm::cl::opt<unsigned> ErrorLimit;
extern llvm::cl::list<std::string> WarningFlags;
extern llvm::cl::opt<uint64_t> MaxActions;
extern llvm::cl::opt<std::string> MaxInputSize;
extern llvm::cl::opt<std::string> ImportRoot;
extern llvm::cl::opt<std::string> Color;
extern llvm::cl::opt<std::string> CommModel;
extern llvm::cl::opt<std::string> Stream;
extern llvm::cl::opt<std::string> EagerThreshold;
extern llvm::cl::opt<double> Latency;
} // namespace opts

/// A number of bytes as options write it, and what --comm-model, --stream,
/// --eager-threshold and --latency change of a schedule: read as the Python
/// module reads them (pps/pipeline/CommOptions.h).
using pipeline::byteCount;
using pipeline::CommOverrides;

/// One compilation: sources, diagnostics and the options in force.
class Session {
public:
  Session();
  SourceManager SM;
  DiagnosticEngine Diags;

  /// Applies the -W flags (-Werror, -Werror=KIND, -Wno-error=KIND,
  /// -Wno-KIND) to Diags. Returns false after reporting a usage error for a
  /// malformed flag or a kind that is not a warning (with Report false,
  /// quietly: the constructor applies flags main() has already checked).
  bool warningOptions(bool Report = true);
  /// Frontend options from the shared command line options. Returns false
  /// (after reporting a usage error) on a malformed -D, a size override
  /// below 1, or a bad --max-actions, --max-input-size or --import-root.
  bool frontendOptions(frontend::FrontendOptions &Out);
  /// The comm options from the command line. Returns false (after
  /// reporting a usage error) if one is malformed.
  bool commOptions(CommOverrides &Out);
  /// Applies O to S; false (after a usage error) if the result is a
  /// combination that says two things (ir::commConfigProblem).
  bool applyCommOptions(const CommOverrides &O, ir::Schedule &S);
  /// Reports a usage error, prints the diagnostics and returns ExitUsage.
  int usage(std::string Message);
  /// Prints the diagnostics and returns Code.
  int finish(int Code) {
    flushDiagnostics();
    return Code;
  }
  /// Loads opts::Input: .pps through the front end, .csv through the torch
  /// importer; with --costs, the costs file's costs replace its own
  /// (pps/frontend/CostsFile.h) before anything reads them. Empty on error
  /// (diagnostics reported).
  std::optional<ir::Schedule> load();
  /// The command's own changes to the cost and memory models (sim's
  /// --latency, synth's --cost, ...), which the command applies after
  /// load() too: load() lets a schedule body that reads its costs see them,
  /// after --costs (FrontendOptions::ModelOverrides).
  std::function<void(ir::Schedule &)> ModelOverrides;
  /// The comm options commOptions() read: load() applies them while the
  /// front end compiles too, so a body that reads comm_time() sees them.
  std::optional<CommOverrides> LoadComm;
  /// Reads --costs (empty if not given); false on error (reported).
  bool loadCostsFile(std::optional<frontend::CostsFile> &Out);
  /// Loads opts::Input without --costs.
  std::optional<ir::Schedule> loadInput();
  /// Prints and clears diagnostics in the chosen format to stderr (text) or
  /// stdout (json).
  void flushDiagnostics();
  /// Opens Path (by default opts::Output; "-" or empty = stdout) as an
  /// OutputFile: a temporary file renamed into place by commitOutput, so a
  /// failed command leaves an existing file untouched. Refuses an output
  /// that is one of the files read (by identity, whatever the spelling).
  /// Null + file-error diagnostic on error.
  std::unique_ptr<OutputFile> openOutput(llvm::StringRef Path);
  std::unique_ptr<OutputFile> openOutput() { return openOutput(opts::Output); }
  /// Commits what openOutput returned; false + file-error diagnostic if it
  /// could not be written whole (a full disk, say).
  bool commitOutput(OutputFile &OS);

private:
  /// What load() passes the front end while it compiles.
  std::function<void(ir::Schedule &)> LoadOverrides;
};

} // namespace pps::driver
