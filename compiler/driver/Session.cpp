//===- Session.cpp - one compilation: input, diagnostics, output ----------===//
#include "pps/driver/Command.h"
#include "pps/import/TorchCsv.h"
#include "pps/support/Suggest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"

#include <fmt/format.h>

#include <cstdlib>

namespace pps::driver {

static std::string &toolNameStorage() {
  static std::string Name = "ppsc";
  return Name;
}
const std::string &toolName() { return toolNameStorage(); }
void setToolName(std::string Name) { toolNameStorage() = std::move(Name); }

/// The value of --max-input-size in bytes ("16M", "1G", "65536"), if it is
/// one SourceManager can hold (offsets are 32-bit).
static std::optional<uint64_t> maxInputBytes() {
  std::optional<uint64_t> N =
      byteCount(opts::MaxInputSize, (uint64_t(1) << 32) - 1);
  if (!N || *N == 0)
    return std::nullopt;
  return N;
}

Session::Session() : Diags(SM) {
  SM.setMaxFileSize(maxInputBytes().value_or(DefaultMaxInputBytes));
  Diags.setToolName(toolName());
  Diags.setErrorLimit(opts::ErrorLimit);
  // main() checked the -W flags (warningOptions with a reporting engine);
  // here they only take effect.
  warningOptions(/*Report=*/false);
  bool Tty = llvm::sys::Process::StandardErrIsDisplayed();
  // NO_COLOR (no-color.org) turns off automatic colour; an explicit
  // --diagnostics-color=always still wins.
  Diags.setColor(opts::Color == "always" ||
                 (opts::Color == "auto" && Tty && !std::getenv("NO_COLOR")));
}

bool Session::warningOptions(bool Report) {
  bool Ok = true;
  for (const std::string &Flag : opts::WarningFlags) {
    llvm::StringRef F = Flag;
    if (F == "error") {
      Diags.setWarningsAsErrors(true);
      continue;
    }
    if (F == "no-error") {
      Diags.setWarningsAsErrors(false);
      continue;
    }
    // -WKIND alone sets KIND back to the default (after a -Wno-KIND, say).
    WarningPolicy P = WarningPolicy::Default;
    if (F.consume_front("error="))
      P = WarningPolicy::Error;
    else if (F.consume_front("no-error="))
      P = WarningPolicy::Warning;
    else if (F.consume_front("no-"))
      P = WarningPolicy::Ignore;
    llvm::StringRef Name = F;
    std::vector<std::string> Warnings;
    std::optional<DiagKind> Kind;
    for (unsigned K = 0; K < unsigned(DiagKind::NumKinds); ++K) {
      if (diagKindSeverity(DiagKind(K)) == Severity::Warning)
        Warnings.push_back(diagKindName(DiagKind(K)).str());
      if (diagKindName(DiagKind(K)) == Name)
        Kind = DiagKind(K);
    }
    auto Known = [&] {
      std::string L;
      for (const std::string &W : Warnings)
        L += (L.empty() ? "" : ", ") + W;
      return L;
    };
    if (!Kind) {
      std::string Near = nearestName(Name, Warnings);
      if (Report)
        Diags.report(DiagKind::Usage, NoLoc,
                     fmt::format("-W{}: unknown warning '{}'{}; the warnings "
                                 "are {}",
                                 Flag, Name.str(),
                                 Near.empty() ? ""
                                              : fmt::format(" (did you mean "
                                                            "'{}'?)",
                                                            Near),
                                 Known()));
      Ok = false;
      continue;
    }
    if (diagKindSeverity(*Kind) != Severity::Warning) {
      if (Report)
        Diags.report(DiagKind::Usage, NoLoc,
                     fmt::format("-W{}: '{}' is an error, not a warning; only "
                                 "warnings can be silenced or made errors (the "
                                 "warnings are {})",
                                 Flag, Name.str(), Known()));
      Ok = false;
      continue;
    }
    Diags.setWarningPolicy(*Kind, P);
  }
  return Ok;
}

bool Session::frontendOptions(frontend::FrontendOptions &Out) {
  // The stdlib comes after these (frontend::stdlibSearchPath).
  Out.ImportPaths.assign(opts::ImportPaths.begin(), opts::ImportPaths.end());
  Out.PipelineName = opts::PipelineName;
  Out.StepBudget = opts::StepBudget;
  Out.MaxActions = opts::MaxActions;
  bool Ok = true;
  auto Bad = [&](std::string Message) {
    Diags.report(DiagKind::Usage, NoLoc, std::move(Message));
    Ok = false;
  };
  for (const llvm::cl::opt<int> *O :
       {&opts::Ranks, &opts::Microbatches, &opts::Stages})
    if (O->getNumOccurrences() && *O < 1)
      Bad(fmt::format("--{} must be at least 1, got {}", O->ArgStr.str(),
                      O->getValue()));
  if (opts::MaxActions < 1 || opts::MaxActions > (uint64_t(1) << 31))
    Bad(fmt::format("--max-actions must be between 1 and {}, got {}",
                    uint64_t(1) << 31, opts::MaxActions.getValue()));
  if (!maxInputBytes())
    Bad(fmt::format("--max-input-size must be a number of bytes from 1 to "
                    "4294967295, with an optional K, M or G suffix, got "
                    "'{}'",
                    opts::MaxInputSize.getValue()));
  if (!opts::ImportRoot.empty()) {
    llvm::SmallString<256> Root;
    if (llvm::sys::fs::real_path(opts::ImportRoot, Root) ||
        !llvm::sys::fs::is_directory(Root))
      Bad(fmt::format("--import-root '{}' is not a directory",
                      opts::ImportRoot.getValue()));
    else
      Out.ImportRoot = std::string(Root.str());
  }
  if (!Ok)
    return false;
  if (opts::Ranks > 0)
    Out.Overrides["ranks"] = opts::Ranks;
  if (opts::Microbatches > 0)
    Out.Overrides["microbatches"] = opts::Microbatches;
  if (opts::Stages > 0)
    Out.Overrides["stages"] = opts::Stages;
  for (const std::string &D : opts::Defines) {
    llvm::StringRef Name, Value;
    std::tie(Name, Value) = llvm::StringRef(D).split('=');
    int64_t V;
    if (Name.empty() || Value.getAsInteger(10, V)) {
      Diags.report(DiagKind::Usage, NoLoc,
                   fmt::format("-D expects name=integer, got '{}'", D));
      return false;
    }
    Out.Overrides[Name.str()] = V;
  }
  return true;
}

bool Session::loadCostsFile(std::optional<frontend::CostsFile> &Out) {
  Out.reset();
  if (opts::CostsFile.empty())
    return true;
  frontend::FrontendOptions FO;
  if (!frontendOptions(FO))
    return false;
  Out = frontend::readCostsFile(opts::CostsFile, SM, Diags, FO);
  return Out.has_value();
}

std::optional<ir::Schedule> Session::load() {
  std::optional<frontend::CostsFile> Costs;
  if (!loadCostsFile(Costs))
    return std::nullopt;
  // A schedule body that reads its costs sees the costs file's and the
  // command's, as every pass will (a mismatch is reported below).
  LoadOverrides = [this, &Costs](ir::Schedule &Sc) {
    if (Costs && Costs->Stages == Sc.Topo.Stages) {
      DiagnosticEngine Quiet(SM);
      frontend::applyCostsFile(*Costs, Sc, Quiet);
    }
    if (ModelOverrides)
      ModelOverrides(Sc);
    if (LoadComm)
      LoadComm->apply(Sc);
  };
  std::optional<ir::Schedule> S = loadInput();
  LoadOverrides = nullptr;
  if (!S || !Costs)
    return S;
  if (!frontend::applyCostsFile(*Costs, *S, Diags))
    return std::nullopt;
  return S;
}

std::optional<ir::Schedule> Session::loadInput() {
  if (llvm::StringRef(opts::Input).endswith(".csv")) {
    // PyTorch's schedule CSV (see docs/interop.md).
    import::TorchImportOptions TO;
    if (opts::Ranks > 0)
      TO.Ranks = opts::Ranks;
    if (opts::Stages > 0)
      TO.Stages = opts::Stages;
    if (opts::Microbatches > 0)
      TO.Microbatches = opts::Microbatches;
    return import::importTorchCsvFile(opts::Input, SM, Diags, TO);
  }
  frontend::FrontendOptions FO;
  if (!frontendOptions(FO))
    return std::nullopt;
  FO.ModelOverrides = LoadOverrides ? LoadOverrides : ModelOverrides;
  llvm::StringRef Path = opts::Input;
  return frontend::compileFile(Path, SM, Diags, FO);
}

int Session::usage(std::string Message) {
  Diags.report(DiagKind::Usage, NoLoc, std::move(Message));
  return finish(ExitUsage);
}

void Session::flushDiagnostics() {
  if (opts::DiagnosticsFormat == "json") {
    Diags.print(llvm::outs(), DiagFormat::Json);
    return;
  }
  Diags.print(llvm::errs(), DiagFormat::Text);
}

std::unique_ptr<OutputFile> Session::openOutput(llvm::StringRef Path) {
  std::string Error;
  std::unique_ptr<OutputFile> OS = OutputFile::create(
      Path.empty() ? "-" : Path.str(), Error, SM.inputIdentities());
  if (!OS)
    Diags.report(DiagKind::FileError, NoLoc, std::move(Error));
  return OS;
}

bool Session::commitOutput(OutputFile &OS) {
  std::string Error;
  if (OS.commit(Error))
    return true;
  Diags.report(DiagKind::FileError, NoLoc, std::move(Error));
  return false;
}

} // namespace pps::driver
