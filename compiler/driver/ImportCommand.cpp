//===- ImportCommand.cpp - ppsc import: PyTorch's schedule CSV to .pps ----===//
//
//   ppsc import --from=torch FILE.csv [--ranks P] [--stages S]
//               [--microbatches M] [--placement loop|v] [--name N]
//               [--keep-idle] -o out.pps
//
// Reads either flavour of PyTorch's schedule CSV (compute only, or compute
// plus comms) and prints the schedule as a .pps pipeline in the lowered
// (explicit action list) form, which `ppsc check/lint/sim` then accept.
//
//===----------------------------------------------------------------------===//
#include "pps/backends/PpsPrinter.h"
#include "pps/driver/Command.h"
#include "pps/import/TorchCsv.h"

#include <fmt/format.h>

namespace pps::driver {

static llvm::cl::SubCommand
    ImportCmd("import",
              "Read another framework's schedule (PyTorch CSV) and print it "
              "as .pps");

static llvm::cl::opt<std::string>
    From("from", llvm::cl::desc("Input format: torch (PyTorch pipelining CSV)"),
         llvm::cl::value_desc("format"), llvm::cl::init("torch"),
         llvm::cl::sub(ImportCmd), llvm::cl::cat(opts::Category));
static llvm::cl::opt<std::string> PlacementOpt(
    "placement",
    llvm::cl::desc("Stage placement the CSV must agree with, and that places "
                   "stages without actions: loop or v (default: inferred)"),
    llvm::cl::value_desc("loop|v"), llvm::cl::sub(ImportCmd),
    llvm::cl::cat(opts::Category));
static llvm::cl::opt<std::string>
    NameOpt("name",
            llvm::cl::desc("Name of the pipeline (default: the file name)"),
            llvm::cl::value_desc("name"), llvm::cl::sub(ImportCmd),
            llvm::cl::cat(opts::Category));

static llvm::cl::opt<bool> KeepIdle(
    "keep-idle",
    llvm::cl::desc("Keep empty cells as idle(k) slots (default: dropped, as "
                   "PyTorch's runtime does)"),
    llvm::cl::sub(ImportCmd), llvm::cl::cat(opts::Category));

static int runImport() {
  Session S;
  if (From != "torch")
    return S.usage(
        fmt::format("unknown format '{}' (expected: torch)", From.getValue()));
  if (opts::Input.empty())
    return S.usage("no input file (use - for stdin)");
  import::TorchImportOptions O;
  if (PlacementOpt == "loop")
    O.Place = ir::Placement::Loop;
  else if (PlacementOpt == "v")
    O.Place = ir::Placement::V;
  else if (!PlacementOpt.empty())
    return S.usage(fmt::format("--placement must be loop or v, got '{}'",
                               PlacementOpt.getValue()));
  if (opts::Ranks > 0)
    O.Ranks = opts::Ranks;
  if (opts::Stages > 0)
    O.Stages = opts::Stages;
  if (opts::Microbatches > 0)
    O.Microbatches = opts::Microbatches;
  O.Name = NameOpt;
  O.KeepIdle = KeepIdle;

  std::optional<ir::Schedule> Sched =
      import::importTorchCsvFile(opts::Input, S.SM, S.Diags, O);
  std::unique_ptr<OutputFile> OS;
  if (Sched)
    OS = S.openOutput();
  bool Written = false;
  if (OS) {
    backends::printPps(*Sched, *OS);
    Written = S.commitOutput(*OS);
  }
  S.flushDiagnostics();
  return Written ? ExitOk : ExitDiagnostics;
}

static CommandRegistration Reg(ImportCmd, runImport);

} // namespace pps::driver
