//===- EvaluateCodeImpl.h - the compiler of register code (private) -------===//
//
// CodeCompiler turns one Sema-resolved schedule or fn body into FnCode
// (EvaluateCode.h), in one pass. Expressions return the register holding
// their value: a local's own slot, a constant, or a temporary; temporaries
// are a stack reset at each statement (a loop's and a rank block's
// registers stay below the statements inside them). Register numbers are
// symbolic while compiling (locals, temporaries and constants in three
// ranges) and laid out at the end. Steps: each node the walker enters adds
// its location to the pending charges, which the next op takes; a label
// (a jump target) first gets a Nop for whatever is pending, so a jump back
// never charges a node twice.
//
// The registers and ops are here; expressions in EvaluateCodeExpr.cpp;
// statements, fused comparisons and the layout in EvaluateCode.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "EvaluateCode.h"
#include "EvaluatorImpl.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace pps::frontend::eval {

constexpr int32_t TempTag = 0x10000000, ConstTag = 0x20000000,
                  BuiltinTag = 0x30000000, TagMask = 0x30000000;

/// What a CheckInt says the value should be ("expected an index, ...").
enum What : uint8_t { WInteger, WIndex, WMicrobatch, WStage, WRank };

/// Compiles one body (compileFn).
class CodeCompiler {
public:
  CodeCompiler(FnDecl &F, bool ConstRegs, uint32_t IntParams)
      : F(F), ConstRegs(ConstRegs), IntParams(IntParams) {
    Locals = int32_t(std::max<size_t>(size_t(F.NumSlots), F.Params.size()));
    Code.IntParams = IntParams;
    findIntSlots();
  }

  FnCode run();

private:
  // --- registers ------------------------------------------------------------
  int32_t temp() {
    int32_t T = TempTag | TempTop++;
    MaxTemps = std::max(MaxTemps, TempTop);
    return T;
  }
  int32_t constant(int64_t V, VT T) {
    auto Key = std::make_pair(V, uint8_t(T));
    auto It = ConstIds.find(Key);
    if (It != ConstIds.end())
      return It->second;
    int32_t Id = ConstTag | int32_t(Code.Consts.size());
    Code.Consts.push_back({V, T});
    ConstIds[Key] = Id;
    return Id;
  }
  bool isReg(int32_t R) const { return R >= 0; }
  /// With ConstRegs: P, S, M, V and D are registers after the constants,
  /// filled at each call (the schedule call's sizes cannot change).
  int32_t builtinReg(Builtin B) {
    Code.BuiltinsUsed |= uint8_t(1u << unsigned(B));
    return BuiltinTag | int32_t(B);
  }
  int32_t resolve(int32_t R) const {
    if (R < 0)
      return R;
    switch (R & TagMask) {
    case TempTag:
      return Locals + (R & ~TagMask);
    case ConstTag:
      return Locals + MaxTemps + (R & ~TagMask);
    case BuiltinTag:
      return Locals + MaxTemps + int32_t(Code.Consts.size()) + (R & ~TagMask);
    default:
      return R;
    }
  }

  // --- ops ------------------------------------------------------------------
  void charge(LocId L) { Pending.push_back(L); }
  size_t emit(OpCode C, int32_t A = 0, int32_t B = 0, int32_t Cc = 0,
              const void *Node = nullptr, uint8_t Sub = 0) {
    // An op takes the pending charges (a Nop first if they overflow).
    while (Pending.size() > 0xffff) {
      Op N;
      N.Code = OpCode::Nop;
      N.Charge = 0xffff;
      N.ChargeAt = uint32_t(Code.ChargeLocs.size());
      Code.ChargeLocs.insert(Code.ChargeLocs.end(), Pending.begin(),
                             Pending.begin() + 0xffff);
      Pending.erase(Pending.begin(), Pending.begin() + 0xffff);
      Code.Ops.push_back(N);
    }
    Op O;
    O.Code = C;
    O.Sub = Sub;
    O.A = A;
    O.B = B;
    O.C = Cc;
    O.Node = Node;
    O.Charge = uint16_t(Pending.size());
    O.ChargeAt = uint32_t(Code.ChargeLocs.size());
    Code.ChargeLocs.insert(Code.ChargeLocs.end(), Pending.begin(),
                           Pending.end());
    Pending.clear();
    Code.Ops.push_back(O);
    return Code.Ops.size() - 1;
  }
  /// The position a jump may target; pending charges are taken first.
  int32_t label() {
    if (!Pending.empty())
      emit(OpCode::Nop);
    return int32_t(Code.Ops.size());
  }

  // --- expressions ----------------------------------------------------------
  /// The register holding E's value. Dst, if given, is where the final op
  /// should write (the caller copies if the result lands elsewhere).
  int32_t expr(Expr &E, int32_t Dst = -1);
  static OpCode binaryOp(BinOp Op);
  /// True if E's value is an integer whenever it has one (so the walker's
  /// evalInt check cannot fail on it).
  bool alwaysInt(Expr &E) const;
  /// The slots that only ever hold integers: every write to them (let,
  /// assignment, loop variable; a parameter only if it is in IntParams,
  /// since the caller decides its first value) is an integer expression,
  /// given the others (the largest such set: a value in a slot comes from
  /// some write, or is the initial 0 or the argument).
  void findIntSlots();
  /// An expression checked to be an integer right after it runs (the
  /// walker's evalInt).
  int32_t intExpr(Expr &E, What W);
  int32_t call(CallExpr &C, int32_t Dst, bool AsStatement);

  // --- statements -----------------------------------------------------------
  void block(Block &B);
  /// Copies R into Dst when the expression did not land there.
  void into(int32_t Dst, int32_t R);
  void stmt(Stmt &S);
  /// The plain computes and overlaps of an action statement run as ops;
  /// a statement with anything else goes to the walker whole.
  void actions(ActionStmt &S);
  struct Loop {
    std::vector<size_t> Breaks, Continues;
    int32_t RankDepth;
  };
  void patch(Loop &L, int32_t Continue, int32_t Break);
  /// Restores the current rank of every rank block left by a jump out.
  void leaveRanks(int32_t Depth);

  // --- after the walk -------------------------------------------------------
  static bool isComparison(OpCode C);
  /// A comparison followed by the op that tests its result (BranchFalse,
  /// AndOr, ToBool), where that op charges no step and is no jump target,
  /// becomes one op: the test of a comparison's result cannot fail, and
  /// nothing observable happens between the two.
  void fuse();
  /// True if O (an Add, AddI, Sub or SubI) computes the index the Index N
  /// right after it reads, and only that: the two become an IndexSum.
  static bool fusesWithIndex(const Op &O, const Op &N);
  /// True if O (an AddI) computes the microbatch of the EmitCompute N right
  /// after it, and only that: the two become an EmitSum.
  static bool fusesWithEmit(const Op &O, const Op &N);
  /// A jump to a jump goes to the last one's target; a jump to a loop's
  /// step or to the end of the body becomes a copy of that op.
  void threadJumps();
  /// After fuse (the registers still symbolic, the Fused kinds still
  /// there): the ops that need only a look at their neighbours: RankEmit,
  /// the jump-only comparisons (LtIJ .. NeIJ), and every comparison's Sub
  /// from Fused to JumpWhen (nothing after this reads Fused).
  void specialize();
  /// Calls F on every jump target field of the ops.
  template <typename Fn> void forEachTarget(Fn F);
  /// Symbolic registers -> frame indices.
  void layout();

  FnDecl &F;
  bool ConstRegs;
  uint32_t IntParams;
  FnCode Code;
  std::vector<uint8_t> IntSlot;
  int32_t Locals = 0, TempTop = 0, MaxTemps = 0, RankDepth = 0;
  std::vector<LocId> Pending;
  std::vector<Loop> Loops;
  std::vector<int32_t> RankSaves;
  llvm::DenseMap<std::pair<int64_t, uint8_t>, int32_t> ConstIds;
};

} // namespace pps::frontend::eval
