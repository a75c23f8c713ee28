//===- main.cpp - ppsc, the pps compiler driver ---------------------------===//
//
// Parses the command line and runs the chosen subcommand. Subcommands
// register themselves (see Command.h), so this file stays the same as
// commands are added.
//
//===----------------------------------------------------------------------===//
#include "pps/driver/Command.h"

#include "pps/driver/Heap.h"
#include "pps/driver/Pipeline.h"
#include "pps/support/Suggest.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <cstdio>
#include <unistd.h>
#include <vector>

namespace pps::driver {

namespace {
struct Entry {
  llvm::cl::SubCommand *Sub;
  CommandFn Fn;
  CommandInitFn Init;
};
std::vector<Entry> &registry() {
  static std::vector<Entry> R;
  return R;
}
} // namespace

CommandRegistration::CommandRegistration(llvm::cl::SubCommand &Sub,
                                         CommandFn Fn, CommandInitFn Init) {
  registry().push_back({&Sub, Fn, Init});
}

static void printVersion(llvm::raw_ostream &OS) {
  OS << "ppsc (pps) " PPS_VERSION "\n"
     << "pipeline-parallel schedule compiler\n";
}

/// Parses the command line, collecting llvm::cl's messages in Errors
/// instead of printing them, so that they are reported like every other
/// error (and reach --diagnostics-format=json). llvm::cl writes a malformed
/// option value ("'abc' value invalid for uint argument") straight to
/// errs(), whatever stream it is given, so stderr is captured too.
static bool parseCommandLine(int Argc, char **Argv, const char *Overview,
                             std::string &Errors) {
  llvm::raw_string_ostream ErrorStream(Errors);
  llvm::errs().flush();
  std::FILE *Capture = std::tmpfile();
  int SavedStderr = Capture ? ::dup(STDERR_FILENO) : -1;
  if (SavedStderr >= 0)
    ::dup2(::fileno(Capture), STDERR_FILENO);
  bool Parsed =
      llvm::cl::ParseCommandLineOptions(Argc, Argv, Overview, &ErrorStream);
  if (SavedStderr >= 0) {
    llvm::errs().flush();
    ::dup2(SavedStderr, STDERR_FILENO);
    ::close(SavedStderr);
    std::rewind(Capture);
    char Buf[512];
    size_t N;
    while ((N = std::fread(Buf, 1, sizeof(Buf), Capture)) > 0)
      ErrorStream << llvm::StringRef(Buf, N);
  }
  if (Capture)
    std::fclose(Capture);
  ErrorStream.flush();
  return Parsed;
}

/// Reports what llvm::cl printed about a malformed command line, one usage
/// error per problem ("ppsc: Unknown command line argument '--x'.  Try:
/// ..." and its "ppsc: Did you mean '--y'?" become "unknown command line
/// argument '--x'; did you mean '--y'?").
static void reportCommandLineErrors(DiagnosticEngine &Diags,
                                    llvm::StringRef Text,
                                    llvm::StringRef Program) {
  llvm::SmallVector<llvm::StringRef, 4> Lines;
  Text.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  std::vector<std::string> Messages;
  for (llvm::StringRef Line : Lines) {
    Line.consume_front(Program);
    Line.consume_front(":");
    Line = Line.trim();
    for (llvm::StringRef Tail : {"  Try: ", ": See: "})
      Line = Line.take_front(Line.find(Tail));
    Line = Line.rtrim(".!").trim();
    if (Line.empty())
      continue;
    std::string Msg = Line.str();
    Msg[0] = llvm::toLower(Msg[0]);
    if (llvm::StringRef(Msg).startswith("did you mean") && !Messages.empty())
      Messages.back() += "; " + Msg;
    else
      Messages.push_back(std::move(Msg));
  }
  if (Messages.empty())
    Messages.push_back("malformed command line (see ppsc --help)");
  for (std::string &M : Messages)
    Diags.report(DiagKind::Usage, NoLoc, std::move(M));
}

/// The registered subcommands' names, for messages.
static std::string subcommandNames() {
  std::string Names;
  for (const auto &E : registry())
    Names += (Names.empty() ? "" : ", ") + E.Sub->getName().str();
  return Names;
}

/// "unknown subcommand 'lnit'; did you mean 'lint'? (expected one of: ...)"
static std::string unknownSubcommand(llvm::StringRef Name) {
  std::vector<std::string> Names;
  for (const auto &E : registry())
    Names.push_back(E.Sub->getName().str());
  std::string Near = pps::nearestName(Name, Names);
  return fmt::format(
      "unknown subcommand '{}'{} (expected one of: {})", Name.str(),
      Near.empty() ? "" : fmt::format("; did you mean '{}'?", Near),
      subcommandNames());
}

/// True if Arg names a registered subcommand.
static bool isSubcommand(llvm::StringRef Arg) {
  for (const auto &E : registry())
    if (E.Sub->getName() == Arg)
      return true;
  return false;
}

/// Flushes the standard streams and turns a write error on them (stdout on
/// a full disk or a closed pipe, say) into a file-error and exit code 1,
/// instead of the "IO failure" abort llvm's raw_ostream would give at exit.
static int finishStandardStreams(int Code) {
  llvm::outs().flush();
  if (llvm::outs().has_error()) {
    std::error_code EC = llvm::outs().error();
    llvm::outs().clear_error();
    llvm::errs() << fmt::format(
        "{}: error: cannot write standard output: {} [file-error]\n",
        toolName(), EC.message());
    if (Code == ExitOk)
      Code = ExitDiagnostics;
  }
  llvm::errs().flush();
  if (llvm::errs().has_error()) {
    // Nowhere left to say it; the exit code still does.
    llvm::errs().clear_error();
    if (Code == ExitOk)
      Code = ExitDiagnostics;
  }
  return Code;
}

} // namespace pps::driver

int main(int argc, char **argv) {
  using namespace pps::driver;
  if (!(argc > 1 && llvm::StringRef(argv[1]) == "lsp"))
    tuneHeapForBatchRun();
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
  // The first word is the subcommand: a misspelt one is named (with the
  // nearest) before llvm::cl reads it as an input file and complains about
  // the positional arguments instead.
  if (argc > 1 && argv[1][0] != '-' && !isSubcommand(argv[1]) &&
      llvm::StringRef(argv[1]).find_first_of("./") == llvm::StringRef::npos) {
    Session S;
    return S.usage(unknownSubcommand(argv[1]));
  }
  for (const auto &E : registry())
    if (E.Init)
      E.Init();
  std::string ParseErrors;
  bool Parsed = parseCommandLine(argc, argv, Overview, ParseErrors);
  const Entry *Active = nullptr;
  for (const auto &E : registry())
    if (*E.Sub)
      Active = &E;
  setToolName(Active ? "ppsc " + Active->Sub->getName().str() : "ppsc");
  if (!Parsed) {
    Session S;
    reportCommandLineErrors(S.Diags, ParseErrors,
                            llvm::sys::path::filename(argv[0]));
    return S.finish(ExitUsage);
  }
  if (opts::DiagnosticsFormat != "text" && opts::DiagnosticsFormat != "json") {
    std::string Given = opts::DiagnosticsFormat;
    opts::DiagnosticsFormat = "text"; // report this one as text
    Session S;
    return S.usage(fmt::format(
        "--diagnostics-format must be text or json, got '{}'", Given));
  }
  if (!Active) {
    Session S;
    if (!opts::Input.empty())
      return S.usage(unknownSubcommand(opts::Input.getValue()));
    return S.usage("no subcommand given (see ppsc --help)");
  }
  {
    // Options every subcommand shares are checked before any work.
    Session S;
    pps::frontend::FrontendOptions FO;
    bool Ok = S.warningOptions();
    Ok &= S.frontendOptions(FO);
    Ok &= checkPipelineOptions(S.Diags);
    if (!Ok)
      return S.finish(ExitUsage);
  }
  return finishStandardStreams(Active->Fn());
}
