//===- LintCommand.cpp - ppsc lint: prove schedules free of deadlock ------===//
//
// Runs the whole pass pipeline (verify-deps, insert-comms, deadlock,
// align-bubbles analysis, memory) on each input and prints the findings
// like the front end does (text or --diagnostics-format=json). Inputs are
// files (.pps, .csv, - for stdin) and directories, whose .pps and .csv files
// are linted recursively in name order; a file there that declares no
// pipeline is a module that others import and is skipped with a note. With
// several inputs each is compiled on its own, a last line counts them, and
// JSON output is one document for all. lint writes no file: -o is refused.
// Exit 0 when no input has a finding, 1 when any has an error or warning,
// 2 on a usage error (the worst wins).
//
//===----------------------------------------------------------------------===//
#include "pps/backends/TorchCsv.h"
#include "pps/driver/Pipeline.h"
#include "pps/pipeline/PassPipeline.h"
#include "pps/support/Printable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace pps::driver {

static llvm::cl::SubCommand
    LintCmd("lint",
            "Check schedules: dependencies, comms, deadlock (with the cycle), "
            "memory; files and directories");

static llvm::cl::opt<bool> Fix(
    "fix",
    llvm::cl::desc("Reorder the sends and receives of a schedule that has "
                   "them (--comm-placement=optimize under its comm model) and "
                   "say what it gains; a .csv input is rewritten in place "
                   "when the new order is faster (a .pps is not: write it "
                   "with `ppsc emit --reorder-comms`)"),
    llvm::cl::sub(LintCmd), llvm::cl::cat(opts::Category));

// Inputs after the first (which the shared positional opts::Input takes
// when it reaches lint): made by main after the static options, so that it
// comes after opts::Input; both are read, in command-line order.
static llvm::cl::list<std::string> *MoreInputs = nullptr;
static void declareMoreInputs() {
  static llvm::cl::list<std::string> List(
      llvm::cl::Positional, llvm::cl::desc("<more inputs or directories>"),
      llvm::cl::sub(LintCmd), llvm::cl::cat(opts::Category));
  MoreInputs = std::addressof(List);
}

namespace {

/// A file's result: Findings means errors; warnings alone leave it Clean
/// (exit 0, as a compiler's warnings do; -Werror makes them errors).
enum class Outcome { Clean, Warnings, Findings, Skipped, Usage };

struct Lint {
  CommOverrides Comm;
  bool Many = false;     // several files: count them at the end
  bool FromDir = false;  // this file was found in a directory
  llvm::json::Array All; // JSON diagnostics of every file (several files)
};

/// lint --fix once the pipeline ran with ReorderComms: says what the
/// reordering gained and, when it did and the input is a PyTorch CSV,
/// rewrites the input with the new order (whole or not at all). False on a
/// write error (reported).
bool fixInPlace(Session &S, const ir::Schedule &Sched,
                const passes::AnalysisResults &Results) {
  noteReordered(S, Sched, Results);
  if (!Results.Reordered ||
      !(Results.Reordered->second < Results.Reordered->first))
    return true;
  llvm::StringRef Path = opts::Input.getValue();
  if (!Path.endswith(".csv") || Path == "-") {
    S.Diags.report(DiagKind::CommsReordered, Sched.DeclLoc,
                   fmt::format("{} was not rewritten: lint --fix rewrites CSV "
                               "files only; write the new order with `ppsc "
                               "emit --reorder-comms --target=pps` (or torch, "
                               "json, cpp)",
                               Path == "-" ? "the input" : Path.str()));
    return true;
  }
  std::string Error;
  std::unique_ptr<OutputFile> OS = OutputFile::create(Path, Error);
  if (!OS) {
    S.Diags.report(DiagKind::FileError, NoLoc, std::move(Error));
    return false;
  }
  backends::emitTorchCsv(
      Sched, *OS,
      {/*WithComms=*/true, pipeline::proved(Results)
                               ? backends::ExportStatus::verified(Sched)
                               : backends::ExportStatus::unverified(
                                     Sched, "rewritten by lint --fix")});
  return S.commitOutput(*OS);
}

/// Lints opts::Input.
Outcome lintOne(Lint &L) {
  Session S;
  S.LoadComm = L.Comm;
  std::optional<ir::Schedule> Sched = S.load();
  auto Flush = [&] {
    if (!L.Many || opts::DiagnosticsFormat == "text") {
      S.flushDiagnostics();
      return;
    }
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    S.Diags.print(OS, DiagFormat::Json);
    OS.flush();
    llvm::Expected<llvm::json::Value> V = llvm::json::parse(Text);
    if (!V) {
      llvm::consumeError(V.takeError());
      return;
    }
    if (llvm::json::Array *D = V->getAsObject()->getArray("diagnostics"))
      for (llvm::json::Value &X : *D)
        L.All.push_back(std::move(X));
  };
  if (!Sched) {
    // In a directory, a file with only schedules and fns is a module.
    bool Module = L.FromDir && S.Diags.numErrors() == 1 &&
                  S.Diags.has(DiagKind::NoPipeline) &&
                  llvm::any_of(S.Diags.diagnostics(), [](const Diagnostic &D) {
                    return D.Message == "the file declares no pipeline";
                  });
    if (Module) {
      if (opts::DiagnosticsFormat == "text")
        llvm::errs() << fmt::format(
            "{}: skipped: declares no pipeline (a module)\n",
            opts::Input.getValue());
      return Outcome::Skipped;
    }
    Flush();
    return Outcome::Findings;
  }
  if (!S.applyCommOptions(L.Comm, *Sched)) {
    Flush();
    return Outcome::Usage;
  }
  passes::AnalysisResults Results;
  bool HadComms = Sched->hasComms();
  bool Ok = runPipeline(S, *Sched, PipelineGoal::Check, Results, Fix);
  if (Fix && Ok && HadComms)
    Ok = fixInPlace(S, *Sched, Results);
  bool Findings = !Ok || S.Diags.numErrors() > 0;
  unsigned Warnings = S.Diags.numWarnings();
  // Say what was not checked rather than claim it below.
  noteSkippedChecks(S.Diags);
  Flush();
  if (Findings)
    return Outcome::Findings;
  if (opts::DiagnosticsFormat == "text") {
    // Claim only what the passes established.
    std::string Claim =
        Results.DeadlockFree
            ? fmt::format(" is free of deadlock under the {}",
                          ir::commDescription(Sched->Comm, Sched->Stream))
            : std::string();
    std::string Peak;
    if (!Results.PeakMemory.empty())
      Peak = fmt::format(", peak {} activations per rank",
                         *std::max_element(Results.PeakMemory.begin(),
                                           Results.PeakMemory.end()));
    llvm::errs() << fmt::format(
        "{}: ok: pipeline '{}'{}; {} actions on {} ranks{}{}\n",
        printable(opts::Input.getValue()), Sched->Name, Claim,
        Sched->numActions(), Sched->Topo.Ranks, Peak,
        Warnings
            ? fmt::format("; {} warning{}", Warnings, Warnings == 1 ? "" : "s")
            : std::string());
  }
  return Warnings ? Outcome::Warnings : Outcome::Clean;
}

/// The .pps and .csv files under Dir, recursively, sorted by path.
bool filesUnder(llvm::StringRef Dir, std::vector<std::string> &Out,
                std::string &Error) {
  std::error_code EC;
  std::vector<std::string> Found;
  for (llvm::sys::fs::recursive_directory_iterator It(Dir, EC), End;
       It != End && !EC; It.increment(EC)) {
    llvm::StringRef Ext = llvm::sys::path::extension(It->path());
    if ((Ext == ".pps" || Ext == ".csv") &&
        It->type() != llvm::sys::fs::file_type::directory_file)
      Found.push_back(It->path());
  }
  if (EC) {
    Error =
        fmt::format("cannot read directory '{}': {}", Dir.str(), EC.message());
    return false;
  }
  llvm::sort(Found);
  Out.insert(Out.end(), Found.begin(), Found.end());
  return true;
}

} // namespace

static int runLint() {
  Session Usage;
  if (opts::Output.getNumOccurrences())
    return Usage.usage("ppsc lint writes no file, so -o has nothing to write "
                       "(findings go to stderr, or stdout with "
                       "--diagnostics-format=json)");
  // The inputs in command-line order.
  std::vector<std::pair<unsigned, std::string>> Args;
  if (!opts::Input.empty())
    Args.push_back({opts::Input.getPosition(), opts::Input.getValue()});
  for (size_t I = 0; I < MoreInputs->size(); ++I)
    Args.push_back({MoreInputs->getPosition(unsigned(I)), (*MoreInputs)[I]});
  llvm::sort(Args);
  if (Args.empty())
    return Usage.usage("no input file (use - for stdin)");
  Lint L;
  if (!Usage.commOptions(L.Comm))
    return Usage.finish(ExitUsage);
  // Expand directories; a missing path is linted (and reported) as a file.
  std::vector<std::pair<std::string, bool>> Files; // path, from a directory
  for (const auto &[Pos, Path] : Args) {
    if (Path != "-" && llvm::sys::fs::is_directory(Path)) {
      std::vector<std::string> Under;
      std::string Error;
      if (!filesUnder(Path, Under, Error))
        return Usage.usage(Error);
      if (Under.empty())
        return Usage.usage(
            fmt::format("directory '{}' holds no .pps or .csv file", Path));
      for (std::string &F : Under)
        Files.push_back({std::move(F), true});
      continue;
    }
    Files.push_back({Path, false});
  }
  L.Many = Files.size() > 1;
  unsigned Clean = 0, Warned = 0, Findings = 0, Skipped = 0;
  for (const auto &[Path, FromDir] : Files) {
    opts::Input.setValue(Path);
    L.FromDir = FromDir;
    switch (lintOne(L)) {
    case Outcome::Clean:
      ++Clean;
      break;
    case Outcome::Warnings:
      ++Clean;
      ++Warned;
      break;
    case Outcome::Findings:
      ++Findings;
      break;
    case Outcome::Skipped:
      ++Skipped;
      break;
    case Outcome::Usage:
      return ExitUsage;
    }
  }
  if (L.Many && opts::DiagnosticsFormat == "json") {
    int64_t Errors = 0, Warnings = 0;
    for (const llvm::json::Value &D : L.All) {
      llvm::StringRef Sev =
          D.getAsObject()->getString("severity").getValueOr("");
      Errors += Sev == "error";
      Warnings += Sev == "warning";
    }
    llvm::json::Object Root{
        {"diagnostics", std::move(L.All)},
        {"errors", Errors},
        {"warnings", Warnings},
        {"files", int64_t(Files.size())},
        {"files_with_errors", int64_t(Findings)},
        {"files_with_findings", int64_t(Findings + Warned)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(Root)))
                 << "\n";
  }
  if (L.Many && opts::DiagnosticsFormat == "text")
    llvm::errs() << fmt::format(
        "{}: {} files: {} ok{}, {} with errors{}\n", toolName(), Files.size(),
        Clean,
        Warned ? fmt::format(" ({} with warnings)", Warned) : std::string(),
        Findings,
        Skipped ? fmt::format(", {} skipped (no pipeline)", Skipped) : "");
  return Findings ? ExitDiagnostics : ExitOk;
}

static CommandRegistration Reg(LintCmd, runLint, declareMoreInputs);

} // namespace pps::driver
