//===- EvaluateCode.h - schedule bodies as register code (private) --------===//
//
// The evaluator runs a schedule or fn body as a flat array of register
// operations instead of walking its tree (EvaluateCode.cpp compiles a
// resolved FnDecl once per evaluation, EvaluateRun.cpp runs it). Registers
// are the frame's Values: the Sema slots first, then temporaries, then the
// constants of the body (copied in at each call).
//
// The code means exactly what the tree walker (EvaluateExpr/Stmt.cpp)
// does, step for step:
//  * Every node the walker enters costs one step there; here each op
//    carries the steps of the nodes entered since the op before it
//    (Charge), with their locations in entry order (ChargeLocs), so the
//    budget runs out at the same node, with the same error, and a schedule
//    that fits the budget one way fits it the other.
//  * Each op checks what the walker checks at that point of its walk (a
//    type, a range, an overflow) and reports the same diagnostic; the first
//    error ends the run (the walker only unwinds after it).
//  * Rare constructs (sends and receives in schedule code, literal rank
//    lists, defaults of parameters) are handed to the walker itself by the
//    Walk* ops.
// tests/unit/frontend/EvaluateCodeTest.cpp runs both on every stdlib
// schedule, example and lit input and compares IR and diagnostics.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/frontend/AST.h"

#include <cstdint>
#include <vector>

namespace pps::frontend::eval {

/// A value: an integer, a bool (0 or 1) or an array (its index).
enum class VT : uint8_t { Int, Bool, Array };
struct Value {
  int64_t I = 0;
  VT T = VT::Int;
};

/// An op's register fields (and ArgRegs) hold the register's byte offset
/// in the frame, its index times RegBytes, so the loop adds them to the
/// frame pointer as they are; -1 (no register) stays -1.
constexpr int32_t RegBytes = int32_t(sizeof(Value));

enum class OpCode : uint8_t {
  Nop,     ///< only charges steps
  Move,    ///< R[A] = R[B]
  Builtin, ///< R[A] = P, S, M, V or D (Node: NameExpr)
  // R[A] = R[B] op R[C] (Node: BinaryExpr). The comparisons may also
  // branch (Sub: see Fused, and JumpWhen once specialised): what a comparison
  // followed by BranchFalse, AndOr or ToBool does, in one op.
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
  // The same, for operands known to be integers (no type check).
  AddI,
  SubI,
  MulI,
  DivI,
  ModI,
  LtI,
  LeI,
  GtI,
  GeI,
  EqI,
  NeI,
  // The same again, when the result only decides a jump (the test of an
  // if or a while, in a temporary nothing else reads): not stored. Made
  // from LtI .. NeI (same order) after fusing.
  LtIJ,
  LeIJ,
  GtIJ,
  GeIJ,
  EqIJ,
  NeIJ,
  AndOr,        ///< R[A] = bool R[B] (checked, Node: the left Expr); jump to
                ///< C when it decides (Sub: 1 for &&, 0 for ||)
  ToBool,       ///< R[A] = bool R[B] (checked, Node: the right Expr)
  Unary,        ///< R[A] = !R[B] or -R[B] (Node: UnaryExpr)
  Index,        ///< R[A] = R[B][R[C]] (Node: IndexExpr)
  IndexSum,     ///< R[A] = R[B][R[C] op R[D]] (Node: IndexExpr, whose index
                ///< is the BinaryExpr; Sub: IndexSumKind): the op that
                ///< computes an index fused with the Index that reads it
  CheckInt,     ///< R[A] must be an integer (Node: Expr; Sub: what)
  MinMax,       ///< R[A] = min/max(R[B], R[C]) (Node: the arg Expr; Sub: 1 =
                ///< min), R[C] checked
  DivMod,       ///< R[A] = div/mod(R[B], R[C]) (Node: CallExpr)
  Abs,          ///< R[A] = abs(R[B]) (Node: CallExpr)
  RankOf,       ///< R[A] = rank_of(R[B]) (Node: CallExpr)
  Model,        ///< R[A] = cost_f(R[B]) .. mem_w() (Node: CallExpr; Sub: the
                ///< Builtin; B < 0: no argument)
  StageOf,      ///< R[A] = stage_of(R[B], R[C]) (Node: CallExpr)
  Array,        ///< R[A] = array(R[B], R[C]) (Node: CallExpr)
  Len,          ///< R[A] = len(R[B]) (Node: CallExpr)
  CallEnter,    ///< recursion limit and the call's own step (Node: CallExpr)
  CallInvoke,   ///< R[A] = call with the args of ArgRegs[B..] (Node:
                ///< CallExpr; Sub: 1 = as a statement)
  Jump,         ///< to A
  BranchFalse,  ///< unless bool R[A] (checked, Node: Expr), to B
  ForInit,      ///< loop registers A (index), A+1 (end), A+2 (step) from
                ///< R[B], R[C] and the step (Sub: 1 = given, in A+2)
  ForIter,      ///< if the loop ends, to B; else a step and the loop
                ///< variable (slot C) from R[A] (Node: ForStmt)
  ForNext,      ///< R[A] += R[A+2]; to B, or to C on overflow
  ForNext1,     ///< a ForNext of a loop without a step whose ForIter (at B)
                ///< charges nothing, with the ForIter in it: R[A] += 1; to
                ///< D at R[A+1], else a step, R[C] = R[A] and to B + 1
  ForNextStep,  ///< ForNext1 with the loop's step R[A+2] (to D on overflow)
  IndexStore,   ///< R[A][R[B]] = R[C] (Node: AssignStmt)
  Assert,       ///< R[A] must be true (Node: AssertStmt)
  Return,       ///< returns R[A] (A < 0: no value)
  RankEnter,    ///< R[A] = current rank; the rank is R[B] (Node: RankStmt)
  RankEmit,     ///< a RankEnter followed by an EmitCompute and the RankExit
                ///< (charging nothing) of a block holding one compute: runs
                ///< the three at once when the compute takes the fast path
  RankExit,     ///< current rank = R[A]
  EmitCompute,  ///< an F/I/W/B from R[A] (microbatch) and R[B] (stage, or
                ///< B < 0) (Node: ActionNode)
  EmitSum,      ///< the same with microbatch R[A] + R[C] (integers, Node's
                ///< microbatch expression; then D more steps): an AddI
                ///< fused with the EmitCompute that reads it
  OverlapFirst, ///< checks an overlap's first compute, R[A]@R[B] (B < 0:
                ///< no stage) (Node: ActionNode)
  EmitOverlap,  ///< overlap(R[A]@R[B], R[C]@R[D]) (Node: ActionNode; a
                ///< register < 0: no stage)
  WalkExpr,     ///< R[A] = the walker's eval of Node (an Expr)
  WalkStmt,     ///< the walker's exec of Node (a Stmt without break,
                ///< continue or return)
  WalkActions,  ///< the walker's actions of a rank list (Node: RankStmt)
  End,          ///< falls off the end of the body
};

/// The sum or difference an IndexSum computes, checked as Add, AddI, Sub
/// or SubI would: bit 0 set for integer operands, bit 1 for a difference.
enum IndexSumKind : uint8_t {
  SumAdd = 0,
  SumAddI = 1,
  SumSub = 2,
  SumSubI = 3
};

/// What a comparison op does with its result besides storing it in R[A].
enum Fused : uint8_t {
  FuseNone,
  FuseBranchFalse, ///< to D if false
  FuseAnd,         ///< to D if false (the left side of &&)
  FuseOr,          ///< to D if true (the left side of ||)
  FuseLoopTest,    ///< to D if true (a while loop's test at its end)
};

/// A comparison's Sub once the code is specialised: the result on which it
/// jumps to D (so the loop tests `Res == Sub`), or JumpNever.
enum JumpWhen : uint8_t { JumpIfFalse = 0, JumpIfTrue = 1, JumpNever = 2 };

struct Op {
  OpCode Code = OpCode::Nop;
  uint8_t Sub = 0;
  uint16_t Charge = 0;   ///< steps charged before the op runs
  uint32_t ChargeAt = 0; ///< their locations: ChargeLocs[ChargeAt ...]
  int32_t A = 0, B = 0, C = 0;
  int32_t D = 0; ///< a fused comparison's jump target
  const void *Node = nullptr;
};
static_assert(sizeof(Op) == 32, "ops stay half a cache line");

/// The code of one schedule or fn.
struct FnCode {
  std::vector<Op> Ops;
  std::vector<LocId> ChargeLocs;
  /// CallInvoke arguments: a register per parameter, -1 for its default.
  std::vector<int32_t> ArgRegs;
  /// Constants, copied to registers ConstBase.. at each call.
  std::vector<Value> Consts;
  /// Compiled with the sizes as registers: P, S, M, V and D (by Builtin)
  /// from BuiltinBase; bit b set if builtin b is read, and then filled at
  /// each call.
  uint8_t BuiltinsUsed = 0;
  int32_t BuiltinBase = 0;
  /// Each CallInvoke's callee code, found on its first run (and found
  /// again when the call's integer arguments change, see IntParams).
  mutable std::vector<FnCode *> Callees;
  /// Bit i set: compiled for calls whose i-th argument (i < 32) is an
  /// integer, so parameter i is an integer slot like a local that is only
  /// ever assigned integers (typed ops, no CheckInt on it).
  uint32_t IntParams = 0;
  int32_t ConstBase = 0;
  /// Registers in all.
  int32_t FrameSize = 0;
};

/// Compiles a Sema-resolved schedule or fn body. With ConstRegs the
/// built-in sizes are read from registers (for the pipeline's schedule
/// call, when they are fixed); without, each use is checked as the walker
/// checks it. IntParams: the parameters the caller guarantees are integers
/// on entry (FnCode::IntParams).
FnCode compileFn(ast::FnDecl &F, bool ConstRegs, uint32_t IntParams = 0);

} // namespace pps::frontend::eval
