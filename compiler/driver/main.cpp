//===- main.cpp - ppsc, the pps compiler driver ---------------------------===//
//
// Parses the command line and runs the chosen subcommand. Subcommands
// register themselves (see Command.h), so this file stays the same as
// commands are added.
//
//===----------------------------------------------------------------------===//
#include "pps/driver/Command.h"

#include "llvm/Support/InitLLVM.h"

#include <fmt/format.h>

#include <vector>

namespace pps::driver {

namespace {
struct Entry {
  llvm::cl::SubCommand *Sub;
  CommandFn Fn;
};
std::vector<Entry> &registry() {
  static std::vector<Entry> R;
  return R;
}
} // namespace

CommandRegistration::CommandRegistration(llvm::cl::SubCommand &Sub,
                                         CommandFn Fn) {
  registry().push_back({&Sub, Fn});
}

static void printVersion(llvm::raw_ostream &OS) {
  OS << "ppsc (pps) " PPS_VERSION "\n"
     << "pipeline-parallel schedule compiler\n";
}

} // namespace pps::driver

int main(int argc, char **argv) {
  using namespace pps::driver;
  llvm::InitLLVM X(argc, argv);
  llvm::cl::SetVersionPrinter(printVersion);
  llvm::cl::HideUnrelatedOptions(opts::Category);
  const char *Overview =
      "ppsc: the pps compiler for pipeline-parallel training schedules\n\n"
      "  ppsc check FILE          parse, check and build the IR\n"
      "  ppsc emit --target=T FILE  print the compiled schedule (pps, json, "
      "...)\n"
      "  ppsc lint FILE           prove the schedule free of deadlock\n"
      "  ppsc sim FILE            simulate: timeline, bubble, memory, bytes\n"
      "  ppsc synth ...           synthesise a schedule under a memory limit\n"
      "  ppsc import --from=torch FILE.csv   read PyTorch's schedule CSV\n"
      "  ppsc lsp                 the language server for editors (stdio)\n\n"
      "  'ppsc SUBCOMMAND --help' lists a subcommand's options.\n\n"
      "  Schedule names a file does not define (schedule zb_v();) and\n"
      "  'import std.x;' are looked for in the -I directories, then in the\n"
      "  standard library: $PPS_STDLIB_PATH (a ':'-separated list; an empty\n"
      "  entry is the default) or, by default, ../share/pps/stdlib from\n"
      "  the directory of the ppsc executable.\n";
  if (!llvm::cl::ParseCommandLineOptions(argc, argv, Overview, &llvm::errs()))
    return ExitUsage;
  if (opts::DiagnosticsFormat != "text" && opts::DiagnosticsFormat != "json") {
    llvm::errs() << "ppsc: error: --diagnostics-format must be text or json\n";
    return ExitUsage;
  }
  for (const auto &E : registry())
    if (*E.Sub)
      return E.Fn();
  llvm::errs() << "ppsc: error: no subcommand given (see ppsc --help)\n";
  return ExitUsage;
}
