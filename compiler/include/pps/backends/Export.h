//===- Export.h - what every executable export says and carries -----------===//
//
// The outputs a runtime executes (`ppsc emit --target=json|torch|cpp`, the
// Python module's to_json / to_torch_csv, what pps.torch runs) share:
//
//  * an ExportStatus: whether the schedule passed the same proof as `ppsc
//    lint` (dependencies, comm matching, freedom from deadlock under the
//    comm model, memory) before it was written. The driver decides it once
//    for every target (compiler/driver/EmitCommand.cpp); each format only
//    writes it down (JSON: "verification", CSV: a first line PyTorch's
//    loaders reject, C++: a comment and ScheduleDesc::verified).
//  * the actions as runtimes run them (exportActions): the lowered program
//    with a reduce_grad for every stage that has none, which is what
//    PyTorch's compute+comms CSV needs and what the JSON carries too, so the
//    two list the same actions.
//
// The export schema (fields per target, what a CSV consumer must infer) is
// documented in docs/interop.md; the JSON's is docs/export.schema.json.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace pps::backends {

/// The version of the JSON export's schema ("schema_version"), raised when
/// a field changes meaning or goes away (new fields keep it).
constexpr int ExportSchemaVersion = 1;

/// Whether the exported schedule passed the proof.
struct ExportStatus {
  /// True if every check of `ppsc lint` ran and passed.
  bool Verified = false;
  /// The comm model the deadlock proof used (the schedule's, or
  /// --comm-model).
  ir::CommModel Model = ir::CommModel::Rendezvous;
  /// Why the proof did not run, when unverified ("--no-verify", "the
  /// deadlock check was disabled (--disable-pass=deadlock)").
  std::string Why{};
  /// The stream rule the proof used.
  ir::CommStream Stream{};

  /// Verified (or not) under S's comm model and stream rule.
  static ExportStatus verified(const ir::Schedule &S) {
    return {true, S.Comm, {}, S.Stream};
  }
  static ExportStatus unverified(const ir::Schedule &S, std::string Why) {
    return {false, S.Comm, std::move(Why), S.Stream};
  }
  /// Under a comm model without a stream rule.
  static ExportStatus verified(ir::CommModel M) { return {true, M, {}, {}}; }
  static ExportStatus unverified(ir::CommModel M, std::string Why) {
    return {false, M, std::move(Why), {}};
  }
  /// One sentence for comments: "verified: free of deadlock under the
  /// rendezvous model ..." or "UNVERIFIED: ...".
  std::string sentence() const;
};

/// Rank's actions as the exports carry them: the program in order, plus a
/// reduce_grad for each stage of the rank that has none, right after the
/// stage's last backward (B or W; after the whole overlap pair) and the
/// sends right behind it, where PyTorch's _add_reduce_grad and
/// _add_send_recv put it. PyTorch's _PipelineScheduleRuntime reduces and
/// scales a stage's gradients only at its REDUCE_GRAD.
std::vector<ir::Action> exportActions(llvm::ArrayRef<ir::Action> Program);

} // namespace pps::backends
