//===- TorchCsv.cpp - import PyTorch pipelining's schedule CSV ------------===//
//
// Runs the two phases (TorchCsvImpl.h) over one buffer and assembles the
// schedule. See pps/import/TorchCsv.h for the contract.
//
//===----------------------------------------------------------------------===//
#include "TorchCsvImpl.h"

#include "pps/frontend/Identifiers.h"

#include "llvm/Support/Path.h"

#include <fmt/format.h>

namespace pps::import {

using namespace ir;

std::string pipelineNameFromPath(llvm::StringRef Path) {
  if (Path == "-" || Path.empty())
    return "stdin";
  std::string Name = frontend::identifierChars(llvm::sys::path::stem(Path));
  if (!frontend::isIdentifier(Name))
    Name += "_csv";
  return Name;
}

std::optional<Schedule> importTorchCsv(FileId File, SourceManager &SM,
                                       DiagnosticEngine &Diags,
                                       const TorchImportOptions &Opts) {
  std::vector<std::vector<Action>> Rows;
  CellParser Parser(File, SM, Diags, Opts.KeepIdle);
  if (!Parser.run(Rows))
    return std::nullopt;
  // With -Werror the flavour warning is an error and stops the import.
  uint64_t Errors = Diags.numErrors();
  Parser.checkFlavour();
  if (Diags.numErrors() > Errors)
    return std::nullopt;

  Schedule S;
  S.DeclLoc = SM.getLoc(File, 1, 1);
  S.Name =
      Opts.Name.empty() ? pipelineNameFromPath(SM.fileName(File)) : Opts.Name;
  TopologyBuilder Topo(Rows, S.DeclLoc, Diags, Opts);
  if (!Topo.run(S.Topo))
    return std::nullopt;
  S.resetRanks();
  for (size_t R = 0; R < Rows.size(); ++R)
    S.Ranks[R].Actions = std::move(Rows[R]);
  return S;
}

std::optional<Schedule> importTorchCsvFile(llvm::StringRef Path,
                                           SourceManager &SM,
                                           DiagnosticEngine &Diags,
                                           const TorchImportOptions &Opts) {
  FileId Id;
  std::string Error;
  if (!SM.addFile(Path, Id, Error)) {
    Diags.report(DiagKind::FileError, NoLoc,
                 fmt::format("cannot read '{}': {}", Path.str(), Error));
    return std::nullopt;
  }
  TorchImportOptions O = Opts;
  if (O.Name.empty())
    O.Name = pipelineNameFromPath(Path);
  return importTorchCsv(Id, SM, Diags, O);
}

} // namespace pps::import
