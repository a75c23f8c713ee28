//===- TorchCsvImpl.h - the two phases of the CSV importer (private) ------===//
//
// Import runs in two linear phases: a strict cell parser (TorchCells.cpp)
// turns every row into IR actions carrying the location of their cell, then
// the topology is inferred (TorchTopology.cpp: sizes, stage -> rank map) and
// comm peers are filled in from it. TorchCsv.cpp runs them; the contract is
// in pps/import/TorchCsv.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/import/TorchCsv.h"

#include "llvm/ADT/StringRef.h"

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace pps::import {

/// Parses the cells of one file into per-row action lists. Every action
/// carries the location of the text it came from.
class CellParser {
public:
  CellParser(FileId File, SourceManager &SM, DiagnosticEngine &Diags,
             bool KeepIdle)
      : File(File), SM(SM), Diags(Diags), KeepIdle(KeepIdle) {}

  /// Splits the buffer into rows and cells; false if any cell was bad.
  bool run(std::vector<std::vector<ir::Action>> &Rows);
  /// Warns about a file that neither of PyTorch's loaders takes as is.
  void checkFlavour();

private:
  struct CellRef {
    llvm::StringRef Text; // trimmed, quotes removed
    uint32_t Line, Col;   // where Text starts
    uint32_t Rank, Index; // row (rank) and 1-based cell number
  };

  LocId locAt(const CellRef &C, size_t Offset) {
    return SM.getLoc(File, C.Line, C.Col + uint32_t(Offset));
  }
  void error(const CellRef &C, size_t Offset, llvm::StringRef Why) {
    Diags.report(DiagKind::CsvSyntax, locAt(C, Offset),
                 fmt::format("'{}' (rank {}, cell {}) is not one action: {}",
                             C.Text.str(), C.Rank, C.Index, Why.str()));
    Ok = false;
  }
  void parseRow(llvm::StringRef Row, uint32_t Rank,
                std::vector<ir::Action> &Out);
  void parseCell(const CellRef &C, std::vector<ir::Action> &Out);
  /// One `<stage><TYPE><microbatch>` starting at Begin, ending at End.
  std::optional<ir::Action> parseSimple(const CellRef &C, size_t Begin,
                                        size_t End);

  FileId File;
  SourceManager &SM;
  DiagnosticEngine &Diags;
  bool KeepIdle;
  uint32_t Line = 1;
  bool Ok = true;
  // The first cell of each sort, for checkFlavour.
  LocId FirstEmpty = NoLoc, FirstComm = NoLoc, FirstControl = NoLoc;
  // A leading `#` line (pps marks an unverified export with one).
  LocId Comment = NoLoc;
};

/// Infers the topology and fills in peers; the second phase of import.
class TopologyBuilder {
public:
  TopologyBuilder(std::vector<std::vector<ir::Action>> &Rows, LocId DeclLoc,
                  DiagnosticEngine &Diags, const TorchImportOptions &Opts)
      : Rows(Rows), DeclLoc(DeclLoc), Diags(Diags), Opts(Opts) {}

  bool run(ir::Topology &T);

private:
  bool sizes(ir::Topology &T);
  bool placeStages(ir::Topology &T);
  bool everyRankHoldsAStage(const ir::Topology &T);
  bool resolvePeers(const ir::Topology &T);

  std::vector<std::vector<ir::Action>> &Rows;
  LocId DeclLoc;
  DiagnosticEngine &Diags;
  const TorchImportOptions &Opts;
};

} // namespace pps::import
