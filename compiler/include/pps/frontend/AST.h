//===- AST.h - the pps abstract syntax tree -------------------------------===//
//
// Our own tree, produced by the transformer from the ANTLR parse tree (no
// parser types past the transformer). Every node carries the LocId of its
// first token. Sema fills in the resolution fields (slots, callees, ordered
// arguments) so the evaluator never looks a name up by string.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/ir/Schedule.h"
#include "pps/support/SourceManager.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pps::frontend::ast {

struct FnDecl;

// ---------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------

enum class ExprKind : uint8_t { Int, Bool, Name, Call, Index, Unary, Binary };
enum class UnOp : uint8_t { Neg, Not };
enum class BinOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or
};
/// The spelling of an operator, for messages.
const char *binOpSpelling(BinOp Op);

/// Built-in names and functions (resolved by sema).
enum class Builtin : uint8_t {
  None,
  // constants
  P,
  S,
  M,
  V,
  D, // directions
  // functions
  RankOf,
  StageOf,
  Min,
  Max,
  Div,
  Mod,
  Abs,
  Array,
  Len,
  // the cost and memory models, in thousandths (EvaluateExpr.cpp)
  CostF,
  CostI,
  CostW,
  CostB,
  CommTime,
  MemF,
  MemI,
  MemW,
};

/// How a name was resolved.
enum class NameRes : uint8_t { Unresolved, Local, Builtin };

struct Expr {
  ExprKind Kind;
  LocId Loc;
  explicit Expr(ExprKind K, LocId L) : Kind(K), Loc(L) {}
  virtual ~Expr() = default;
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntLit : Expr {
  int64_t Value;
  IntLit(LocId L, int64_t V) : Expr(ExprKind::Int, L), Value(V) {}
};

struct BoolLit : Expr {
  bool Value;
  BoolLit(LocId L, bool V) : Expr(ExprKind::Bool, L), Value(V) {}
};

struct NameExpr : Expr {
  std::string Name;
  NameRes Res = NameRes::Unresolved;
  Builtin BuiltinId = Builtin::None;
  int32_t Slot = -1;
  /// Sema: where the local it names was declared (tools jump there).
  LocId DeclLoc = NoLoc;
  NameExpr(LocId L, std::string N)
      : Expr(ExprKind::Name, L), Name(std::move(N)) {}
};

struct Arg {
  std::string Name; // empty for a positional argument
  LocId NameLoc = NoLoc;
  ExprPtr Value;
};

struct CallExpr : Expr {
  std::string Callee;
  std::vector<Arg> Args;
  // Sema: a builtin, or a user fn/schedule with one entry per parameter
  // (null = use the default).
  Builtin BuiltinId = Builtin::None;
  FnDecl *Target = nullptr;
  llvm::SmallVector<Expr *, 4> Ordered;
  CallExpr(LocId L, std::string C)
      : Expr(ExprKind::Call, L), Callee(std::move(C)) {}
};

struct IndexExpr : Expr {
  std::unique_ptr<NameExpr> Base;
  ExprPtr Index;
  IndexExpr(LocId L) : Expr(ExprKind::Index, L) {}
};

struct UnaryExpr : Expr {
  UnOp Op;
  ExprPtr Operand;
  UnaryExpr(LocId L, UnOp O, ExprPtr E)
      : Expr(ExprKind::Unary, L), Op(O), Operand(std::move(E)) {}
};

struct BinaryExpr : Expr {
  BinOp Op;
  ExprPtr LHS, RHS;
  BinaryExpr(LocId L, BinOp O, ExprPtr A, ExprPtr B)
      : Expr(ExprKind::Binary, L), Op(O), LHS(std::move(A)), RHS(std::move(B)) {
  }
};

// ---------------------------------------------------------------------------
// Quantities (costs, comm settings, idle lengths): a number with a unit
// ---------------------------------------------------------------------------

struct Quantity {
  LocId Loc = NoLoc;
  double Value = 0;     // parsed from the exact text (strtod)
  float FloatValue = 0; // parsed from the exact text (strtof), for idle
  bool IsInt = false;
  int64_t IntValue = 0;
  std::string Unit; // "" or e.g. "GB/s", "MiB", "ms"
  LocId UnitLoc = NoLoc;
};

// ---------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------

/// F3, F3@5, F(i)@s: a compute kind, a microbatch and an optional stage.
struct ComputeRef {
  LocId Loc = NoLoc;
  ir::ActionKind Kind = ir::ActionKind::F;
  ExprPtr Microbatch;
  ExprPtr Stage; // null = the rank's only stage
};

enum class ActionNodeKind : uint8_t {
  Compute,
  Overlap,
  Send,
  Recv,
  Control,
  Idle
};

struct ActionNode {
  ActionNodeKind Kind;
  LocId Loc = NoLoc;
  ComputeRef First, Second; // Second only for Overlap
  ExprPtr Operand;          // Send/Recv peer (may be null), Control stage
  ir::ActionKind ControlKind = ir::ActionKind::Unshard;
  std::optional<Quantity> IdleTime;
};

/// One action of a literal rank list: `rank N: ...;` whose every action is
/// spelled with literal numbers (`F3`, `F3@5`, `send F3@5 -> 2`, `recv
/// B3@6`, `overlap(B0@1, F4@0)`, `unshard 5`, `idle`, `idle(2.5)`), which
/// is what the lowered layer (`ppsc emit --target=pps`) writes. The
/// parser's literal-list reader (pps/frontend/LiteralList.h) keeps such a
/// list in 20 bytes an action instead of ActionNodes with expression
/// nodes; it stands for exactly the ActionNodes the grammar gives for the
/// same text. The locations of an action's parts (microbatch, stage, peer)
/// are read again from the text when a diagnostic needs them
/// (literalParts).
struct LiteralAction {
  enum Flag : uint8_t {
    HasStage = 1, ///< `F3@5` (else the rank's only stage)
    HasPeer = 2,  ///< `-> 2` / `<- 2` (else the topology's)
    /// The second compute of `overlap(a, b)`; the entry before it is the
    /// Overlap entry holding the first.
    OverlapSecond = 4,
  };
  ActionNodeKind Kind = ActionNodeKind::Compute;
  /// The compute kind (F, I, W, B); for Control the control kind.
  ir::ActionKind Op = ir::ActionKind::F;
  uint8_t Flags = 0;
  uint8_t Reserved = 0;
  int32_t Microbatch = 0;
  /// The stage of a compute, send or receive, or a control's operand.
  int32_t Stage = 0;
  /// Send/Recv: the peer; Idle: the bits of its float length.
  int32_t Peer = 0;
  /// The action's first character; for OverlapSecond, the second compute's.
  LocId Loc = NoLoc;
};
static_assert(sizeof(LiteralAction) == 20, "literal actions stay compact");

// ---------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------

enum class StmtKind : uint8_t {
  Let,
  Assign,
  IndexAssign,
  For,
  While,
  Break,
  Continue,
  If,
  RankBlock,
  RankList,
  Return,
  Assert,
  Call,
  Actions,
  Empty
};

struct Stmt {
  StmtKind Kind;
  LocId Loc;
  explicit Stmt(StmtKind K, LocId L) : Kind(K), Loc(L) {}
  virtual ~Stmt() = default;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

/// A name being bound (let, for, param).
struct Binder {
  std::string Name;
  LocId Loc = NoLoc;
  bool Reserved = false; // an action name such as F or F3
  int32_t Slot = -1;     // sema
};

struct LetStmt : Stmt {
  Binder Var;
  ExprPtr Init;
  LetStmt(LocId L) : Stmt(StmtKind::Let, L) {}
};

struct AssignStmt : Stmt {
  std::unique_ptr<NameExpr> Target;
  ExprPtr Index; // IndexAssign only
  ExprPtr Value;
  AssignStmt(StmtKind K, LocId L) : Stmt(K, L) {}
};

struct ForStmt : Stmt {
  Binder Var;
  ExprPtr From, To, Step;
  Block Body;
  ForStmt(LocId L) : Stmt(StmtKind::For, L) {}
};

struct WhileStmt : Stmt {
  ExprPtr Cond;
  Block Body;
  WhileStmt(LocId L) : Stmt(StmtKind::While, L) {}
};

struct IfStmt : Stmt {
  ExprPtr Cond;
  Block Then;
  Block Else; // an `else if` is an IfStmt alone in Else
  IfStmt(LocId L) : Stmt(StmtKind::If, L) {}
};

struct RankStmt : Stmt {
  ExprPtr Rank;
  Block Body;                      // RankBlock
  std::vector<ActionNode> Actions; // RankList
  /// RankList read by the literal-list reader (then Actions is empty).
  std::vector<LiteralAction> Literal;
  RankStmt(StmtKind K, LocId L) : Stmt(K, L) {}
};

struct ReturnStmt : Stmt {
  ExprPtr Value; // may be null
  ReturnStmt(LocId L) : Stmt(StmtKind::Return, L) {}
};

struct AssertStmt : Stmt {
  ExprPtr Cond;
  std::string Message;
  AssertStmt(LocId L) : Stmt(StmtKind::Assert, L) {}
};

struct CallStmt : Stmt {
  std::unique_ptr<CallExpr> Call;
  CallStmt(LocId L) : Stmt(StmtKind::Call, L) {}
};

struct ActionStmt : Stmt {
  std::vector<ActionNode> Actions;
  ActionStmt(LocId L) : Stmt(StmtKind::Actions, L) {}
};

struct SimpleStmt : Stmt { // break, continue, empty
  SimpleStmt(StmtKind K, LocId L) : Stmt(K, L) {}
};

// ---------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------

struct Param {
  Binder Var;
  ExprPtr Default; // may be null
};

struct Module;

/// `schedule name(params) { ... }` or `fn name(params) { ... }`.
struct FnDecl {
  bool IsSchedule = false;
  std::string Name;
  LocId Loc = NoLoc;
  std::vector<Param> Params;
  Block Body;
  Module *Owner = nullptr;
  int32_t NumSlots = 0; // sema: frame size
  bool Checked = false;
};

enum class PipelineItemKind : uint8_t {
  Ranks,
  Stages,
  Microbatches,
  Directions,
  Cost,
  Comm,
  Memory,
  Fsdp,
  Schedule,
  Let,
  Rank
};

struct CostEntry {
  LocId Loc = NoLoc;
  std::string Key; // F I W B overlap, or something unknown
  LocId KeyLoc = NoLoc;
  ExprPtr Stage; // F[stage 7]
  Quantity Value;
};

struct CommEntry {
  LocId Loc = NoLoc;
  std::string Key;
  std::optional<Quantity> Value; // `latency 0.05;`
  /// `model eager;`, `eager threshold 64 KiB;` (empty for `async;`)
  std::string Word;
  LocId WordLoc = NoLoc;
};

struct PipelineItem {
  PipelineItemKind Kind;
  LocId Loc = NoLoc;
  ExprPtr Value; // ranks/stages/microbatches/memory/fsdp prefetch/let init
  // stages
  std::string PlacementName; // "" = default (loop)
  LocId PlacementLoc = NoLoc;
  std::vector<std::pair<ExprPtr, ExprPtr>> PlacementMap;
  bool ExplicitPlacement = false;
  // cost, comm; the memory block's amounts (`F = 1;`) in Costs
  std::vector<CostEntry> Costs;
  /// memory: the block form `memory { ... }` (its limit, if any, in Value).
  bool MemoryBlock = false;
  LocId LimitLoc = NoLoc;
  /// memory: the limit's unit as written ("" or e.g. "GiB": bytes).
  std::string LimitUnit;
  LocId LimitUnitLoc = NoLoc;
  std::vector<CommEntry> Comms;
  // schedule
  std::unique_ptr<CallExpr> Call;
  // let
  Binder Var;
  // rank blocks and lists
  std::unique_ptr<RankStmt> Rank;
};

struct PipelineDecl {
  std::string Name;
  LocId Loc = NoLoc;
  std::vector<PipelineItem> Items;
  Module *Owner = nullptr;
  int32_t NumSlots = 0; // sema: frame size for lets
};

struct ImportDecl {
  LocId Loc = NoLoc;
  std::string Path; // "std.common" style or a quoted relative path
  bool IsString = false;
  Module *Resolved = nullptr;
};

/// One parsed file.
struct Module {
  FileId File = 0;
  std::string Path; // as opened, for relative imports
  std::vector<ImportDecl> Imports;
  std::vector<std::unique_ptr<FnDecl>> Fns; // schedules and fns, in order
  std::vector<std::unique_ptr<PipelineDecl>> Pipelines;
  bool SemaDone = false;
};

} // namespace pps::frontend::ast
