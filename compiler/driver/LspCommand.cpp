//===- LspCommand.cpp - ppsc lsp: the language server over stdio ----------===//
//
// Runs the pps language server (compiler/lsp) on stdin/stdout until the
// editor says exit or closes the pipe. Diagnostics and hover use the same
// front end and passes as `ppsc lint`; see docs/editors.md for editor
// set-up.
//
//===----------------------------------------------------------------------===//
#include "pps/driver/Command.h"
#include "pps/lsp/Server.h"

#include <csignal>
#include <cstdlib>
#include <unistd.h>

namespace pps::driver {

static llvm::cl::SubCommand
    LspCmd("lsp", "Run the language server (Language Server Protocol over "
                  "stdin/stdout) for editors");

static llvm::cl::opt<unsigned> DebounceMs(
    "debounce-ms",
    llvm::cl::desc("Quiet time after an edit before re-checking (default "
                   "150)"),
    llvm::cl::init(150), llvm::cl::sub(LspCmd), llvm::cl::cat(opts::Category));

static llvm::cl::opt<unsigned> LogLevel(
    "log-level",
    llvm::cl::desc("Log to stderr: 0 problems, 1 each check with timings, "
                   "2 every message"),
    llvm::cl::init(0), llvm::cl::sub(LspCmd), llvm::cl::cat(opts::Category));

static llvm::cl::opt<std::string>
    StdlibDir("stdlib",
              llvm::cl::desc("The stdlib directory (default: "
                             "$PPS_STDLIB_PATH, else the one next to ppsc)"),
              llvm::cl::value_desc("dir"), llvm::cl::sub(LspCmd),
              llvm::cl::cat(opts::Category));

static int runLsp() {
  if (!opts::Input.empty()) {
    llvm::errs() << "ppsc lsp: error: the server takes no input file; "
                    "editors send documents over stdin\n";
    return ExitUsage;
  }
  // A client that goes away must be a write error, not a fatal signal.
  std::signal(SIGPIPE, SIG_IGN);
  lsp::ServerOptions O;
  O.DebounceMs = DebounceMs;
  O.LogLevel = LogLevel;
  O.Version = PPS_VERSION;
  O.Analysis.StdlibDir = StdlibDir;
  O.Analysis.ImportPaths.assign(opts::ImportPaths.begin(),
                                opts::ImportPaths.end());
  O.Analysis.MaxDiagnostics = opts::ErrorLimit ? opts::ErrorLimit : 200;
  O.Analysis.StepBudget = opts::StepBudget;
  int Status;
  {
    lsp::Server S(STDIN_FILENO, STDOUT_FILENO, std::move(O));
    Status = S.run();
    // Do not wait for a check that is still running: nothing it could
    // publish is wanted any more, and everything was written with write(2).
    std::_Exit(Status);
  }
}

static CommandRegistration Reg(LspCmd, runLsp);

} // namespace pps::driver
