//===- Analysis.h - one document through the compiler, for the server -----===//
//
// Runs what `ppsc lint` runs on an open document (parse, sema, evaluate
// every pipeline of the file, then the whole pass pipeline) and keeps what
// the editor features need: the diagnostics as LSP objects, the checked
// AST, an index of every name, declaration and action in the document, and
// each pipeline's lowered schedule with its simulated times. An Analysis is
// immutable once built, so the server's request thread reads it while the
// worker thread builds the next one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/frontend/CheckedUnit.h"
#include "pps/ir/Schedule.h"
#include "pps/lsp/Text.h"
#include "pps/passes/PassManager.h"
#include "pps/sim/Simulator.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace pps::lsp {

struct AnalysisOptions {
  /// Where `import std.x;` and implicit schedules are found; empty means
  /// the front end's stdlib search path (frontend::stdlibSearchPath()).
  std::string StdlibDir;
  /// Extra import directories (as -I).
  std::vector<std::string> ImportPaths;
  /// Most diagnostics published per document (errors past it are counted).
  unsigned MaxDiagnostics = 200;
  /// Evaluation step budget per pipeline (as --step-budget).
  uint64_t StepBudget = frontend::DefaultStepBudget;
};

/// What a span of the document is.
enum class RefKind : uint8_t {
  Local,    ///< a let, for variable or parameter (use or declaration)
  Builtin,  ///< P, S, M, V, D, rank_of, ...
  Function, ///< a call of a fn or schedule, or its declaration
  Import,   ///< the module path of an import
  Pipeline, ///< a pipeline's name
  Action,   ///< an action in a rank list or block
};

/// A span of the main document (1-based line, byte column and length).
struct Ref {
  uint32_t Line = 0, Col = 0, Length = 0;
  RefKind Kind = RefKind::Local;
  bool IsDecl = false;
  std::string Name;
  LocId Loc = NoLoc;                               ///< the span's own location
  LocId Decl = NoLoc;                              ///< Local: where it is bound
  const frontend::ast::FnDecl *Fn = nullptr;       ///< Function
  const frontend::ast::Module *Mod = nullptr;      ///< Import
  const frontend::ast::PipelineDecl *Pl = nullptr; ///< Pipeline
  frontend::ast::Builtin BuiltinId = frontend::ast::Builtin::None;
  /// Action: which IR actions it stands for (see actionClass).
  uint8_t ActionClass = 0;
};

/// Actions are looked up by location and class: 0 computes, 1 sends and
/// receives, 2 the rest. A compute's location is also on the comms that
/// insert-comms adds for it; the class keeps them apart.
uint8_t actionClass(ir::ActionKind K);
inline uint64_t actionKey(LocId Loc, uint8_t Class) {
  return (uint64_t(Loc) << 2) | Class;
}

/// A name bound in the document.
struct Binding {
  enum Kind : uint8_t { Param, Let, For, PipelineLet } K = Let;
  std::string Name;
  LocId Loc = NoLoc;
  uint32_t Line = 0, Col = 0;
  /// Index into Analysis::Decls of the declaration it belongs to.
  unsigned Owner = 0;
};

/// A top-level declaration of the document (for the outline and scopes).
struct DeclSpan {
  enum Kind : uint8_t { Pipeline, Schedule, Fn } K = Schedule;
  std::string Name;
  std::string Detail;        ///< the signature, e.g. "schedule zb_h1(m = M)"
  size_t Begin = 0, End = 0; ///< byte offsets of the whole declaration
  uint32_t NameLine = 0, NameCol = 0;
  /// Pipelines: the `schedule NAME(...)` item, if any.
  std::string ScheduleCall;
};

/// Where the IR actions of one source location ended up.
struct ActionSite {
  struct At {
    uint32_t Pipeline, Rank, Index;
  };
  uint64_t Count = 0;
  llvm::SmallVector<At, 4> First; ///< the first few, in rank order
};

/// One pipeline of the document, evaluated and checked.
struct PipelineResult {
  const frontend::ast::PipelineDecl *Decl = nullptr;
  /// The schedule after the passes (lowered if they succeeded); empty if
  /// evaluation failed.
  std::optional<ir::Schedule> Schedule;
  bool Checked = false; ///< every pass ran without error
  passes::AnalysisResults Results;
};

/// How long each phase took, in milliseconds.
struct AnalysisTimes {
  double Check = 0, Evaluate = 0, Passes = 0, Index = 0, Simulate = 0;
};

class Analysis {
public:
  std::string Uri;
  /// The buffer name the compiler saw (a path for file:// URIs).
  std::string Path;
  int64_t Version = 0;
  std::string Text;
  LineIndex Lines{""};

  std::unique_ptr<SourceManager> SM;
  frontend::CheckedUnit Unit;
  std::vector<PipelineResult> Pipelines;

  /// LSP Diagnostic objects, sorted by position.
  llvm::json::Array Diagnostics;
  /// Sorted by (Line, Col).
  std::vector<Ref> Refs;
  std::vector<Binding> Bindings;
  std::vector<DeclSpan> Decls;
  /// Keyed by actionKey().
  llvm::DenseMap<uint64_t, ActionSite> Actions;
  AnalysisTimes Times;

  /// True if the document parsed (its index is then current).
  bool parsed() const { return Unit.Main != nullptr; }
  /// The innermost span holding a 1-based line and byte column, or null.
  const Ref *refAt(uint32_t Line, uint32_t Col) const;
  /// The binding declared at Loc, or null.
  const Binding *bindingAt(LocId Loc) const;
  /// The LSP range of a location in any file the compile loaded.
  Range rangeOf(LocId Loc) const;
  /// The LSP range of a span of the main document.
  Range rangeOf(const Ref &R) const;
  /// The path of the file holding a location (absolute if it is a file).
  std::string fileOf(LocId Loc) const;

  /// The simulation of pipeline I, once simulate() has run it (it runs
  /// after the analysis is shared, hence the lock); null before, and for
  /// pipelines that did not check.
  std::shared_ptr<const sim::SimResult> simOf(size_t I) const;
  void setSim(size_t I, std::shared_ptr<const sim::SimResult> R);

private:
  mutable std::mutex SimMu;
  std::vector<std::shared_ptr<const sim::SimResult>> Sims;
};

/// Analyses one document. Cancelled is polled between phases; when it
/// returns true the work stops and the result is null.
std::shared_ptr<Analysis> analyze(std::string Uri, std::string Path,
                                  std::string Text, int64_t Version,
                                  const AnalysisOptions &Opts,
                                  const std::function<bool()> &Cancelled);

/// Fills A's index of the main document (Refs, Bindings, Decls, Actions)
/// from its checked AST and pipelines; analyze calls it last (Index.cpp).
void buildIndex(Analysis &A);

/// Simulates every checked pipeline of A (the times hover shows). Run after
/// the diagnostics are out; A may already be shared.
void simulate(Analysis &A, const std::function<bool()> &Cancelled);

/// LSP severity of ours: 1 error, 2 warning, 3 information.
int lspSeverity(Severity S);

} // namespace pps::lsp
