//===- LiteralList.cpp - the lowered layer's rank lists, read directly ----===//
//
// A byte-level reader for the plain action forms of LiteralList.h. Every
// check below mirrors a rule of the ANTLR lexer (maximal munch: a keyword
// or number must not run into a following name or digit) or of the
// grammar's `action` rule; whatever it is not sure of, it declines, and
// ANTLR reads that list as before.
//
//===----------------------------------------------------------------------===//
#include "pps/frontend/LiteralList.h"
#include "pps/frontend/Limits.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace pps::frontend {

using ast::ActionNodeKind;
using ast::LiteralAction;

namespace {

bool isWs(char C) {
  return C == ' ' || C == '\n' || C == '\t' || C == '\r' || C == '\f';
}
bool isDigit(char C) { return C >= '0' && C <= '9'; }
bool isIdentChar(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') || isDigit(C) ||
         C == '_';
}

/// Byte offsets of an action's parts (~0u when absent).
struct Offsets {
  uint32_t Compute = ~0u, Microbatch = ~0u, Stage = ~0u, Operand = ~0u;
};

class Reader {
public:
  Reader(llvm::StringRef Text, size_t Pos)
      : B(Text.data()), N(Text.size()), P(Pos) {}

  /// `rank DIGITS :`; leaves P just after the ':'.
  bool header() {
    if (!word("rank") || !ws())
      return false;
    int32_t Rank;
    if (!digits(Rank))
      return false;
    ws();
    if (P >= N || B[P] != ':')
      return false;
    ++P;
    return true;
  }

  /// One action at P (after any whitespace), appended to Out.
  bool action(std::vector<LiteralAction> &Out, Offsets *Parts = nullptr) {
    if (P >= N)
      return false;
    Start = uint32_t(P);
    LiteralAction A;
    switch (B[P]) {
    case 'F':
    case 'I':
    case 'W':
    case 'B': {
      if (Parts)
        Parts->Compute = Start;
      if (!compute(A, Parts))
        return false;
      A.Kind = ActionNodeKind::Compute;
      Out.push_back(A);
      return true;
    }
    case 's':
    case 'r':
      if (word("send"))
        return comm(ActionNodeKind::Send, '-', '>', Out, Parts);
      if (word("recv"))
        return comm(ActionNodeKind::Recv, '<', '-', Out, Parts);
      if (word("reshard"))
        return control(ir::ActionKind::Reshard, Out, Parts);
      if (word("reduce_grad"))
        return control(ir::ActionKind::ReduceGrad, Out, Parts);
      return false;
    case 'u':
      return word("unshard") && control(ir::ActionKind::Unshard, Out, Parts);
    case 'o':
      return word("overlap") && overlap(Out, Parts);
    case 'i':
      return word("idle") && idle(Out);
    default:
      return false;
    }
  }

  /// Skips whitespace; true if there was some.
  bool ws() {
    size_t From = P;
    while (P < N && isWs(B[P]))
      ++P;
    return P != From;
  }
  /// True if the next byte ends an action: whitespace or the list's ';'.
  bool atActionEnd() const { return P < N && (isWs(B[P]) || B[P] == ';'); }

  const char *B;
  size_t N, P;
  uint32_t Start = 0;
  bool Brackets = false;
  unsigned Signs = 0;

private:
  /// A keyword: the letters, not followed by a name character (else the
  /// lexer reads one longer ID).
  bool word(const char *W) {
    size_t L = std::strlen(W);
    if (P + L > N || std::memcmp(B + P, W, L) != 0 ||
        (P + L < N && isIdentChar(B[P + L])))
      return false;
    P += L;
    return true;
  }

  /// At most 9 digits (so the value fits 32 bits), not followed by another
  /// digit.
  bool digits(int32_t &V, uint32_t *At = nullptr) {
    if (P >= N || !isDigit(B[P]))
      return false;
    if (At)
      *At = uint32_t(P);
    int64_t X = 0;
    size_t E = P;
    while (E < N && isDigit(B[E]) && E - P < 10)
      X = X * 10 + (B[E++] - '0');
    if (E - P > 9)
      return false;
    P = E;
    V = int32_t(X);
    return true;
  }

  /// `F3` or `F3@5` as one COMPUTE_LIT token: after it no name character
  /// and no '@' or '.' may follow (the lexer would read something else).
  bool compute(LiteralAction &A, Offsets *Parts) {
    switch (B[P]) {
    case 'F':
      A.Op = ir::ActionKind::F;
      break;
    case 'I':
      A.Op = ir::ActionKind::I;
      break;
    case 'W':
      A.Op = ir::ActionKind::W;
      break;
    case 'B':
      A.Op = ir::ActionKind::B;
      break;
    default:
      return false;
    }
    A.Loc = P; // the offset for now; located by the caller
    ++P;
    if (!digits(A.Microbatch, Parts ? &Parts->Microbatch : nullptr))
      return false;
    if (P < N && B[P] == '@') {
      ++P;
      if (!digits(A.Stage, Parts ? &Parts->Stage : nullptr))
        return false;
      A.Flags |= LiteralAction::HasStage;
    }
    return !(P < N && (isIdentChar(B[P]) || B[P] == '@' || B[P] == '.'));
  }

  bool comm(ActionNodeKind K, char A1, char A2, std::vector<LiteralAction> &Out,
            Offsets *Parts) {
    ws();
    if (P >= N)
      return false;
    if (Parts)
      Parts->Compute = uint32_t(P);
    LiteralAction A;
    // A W serves no message: sema says so, through the grammar's path.
    if (!compute(A, Parts) || A.Op == ir::ActionKind::W)
      return false;
    A.Kind = K;
    size_t After = P;
    ws();
    if (P + 1 < N && B[P] == A1 && B[P + 1] == A2) {
      P += 2;
      ws();
      if (!digits(A.Peer, Parts ? &Parts->Operand : nullptr))
        return false;
      A.Flags |= LiteralAction::HasPeer;
    } else {
      P = After;
    }
    A.Loc = Start;
    Out.push_back(A);
    return true;
  }

  bool control(ir::ActionKind K, std::vector<LiteralAction> &Out,
               Offsets *Parts) {
    if (!ws())
      return false;
    LiteralAction A;
    A.Kind = ActionNodeKind::Control;
    A.Op = K;
    if (!digits(A.Stage, Parts ? &Parts->Operand : nullptr))
      return false;
    A.Loc = Start;
    Out.push_back(A);
    return true;
  }

  bool overlap(std::vector<LiteralAction> &Out, Offsets *Parts) {
    ws();
    if (P >= N || B[P] != '(')
      return false;
    ++P;
    ws();
    LiteralAction First, Second;
    if (P >= N)
      return false;
    if (Parts)
      Parts->Compute = uint32_t(P);
    if (!compute(First, Parts))
      return false;
    ws();
    if (P >= N || B[P] != ',')
      return false;
    ++P;
    ws();
    if (P >= N || !compute(Second, nullptr))
      return false;
    ws();
    if (P >= N || B[P] != ')')
      return false;
    ++P;
    Brackets = true;
    First.Kind = ActionNodeKind::Overlap;
    First.Loc = Start;
    Second.Kind = ActionNodeKind::Compute;
    Second.Flags |= LiteralAction::OverlapSecond;
    // Second.Loc holds its offset, as compute() left it.
    Out.push_back(First);
    Out.push_back(Second);
    return true;
  }

  /// `idle`, or `idle(NUMBER)` with NUMBER as the lexer's INT or FLOAT and
  /// no sign or unit. Declines a length that is not a finite number (the
  /// evaluator reports it, through the grammar's path).
  bool idle(std::vector<LiteralAction> &Out) {
    LiteralAction A;
    A.Kind = ActionNodeKind::Idle;
    A.Loc = Start;
    float T = 1.0f;
    size_t After = P;
    ws();
    if (P < N && B[P] == '(') {
      ++P;
      ws();
      size_t From = P;
      if (P >= N || !isDigit(B[P]))
        return false;
      while (P < N && isDigit(B[P]))
        ++P;
      // FLOAT: digits '.' digits exponent? | digits exponent.
      if (P < N && B[P] == '.') {
        ++P;
        if (P >= N || !isDigit(B[P]))
          return false;
        while (P < N && isDigit(B[P]))
          ++P;
      }
      if (P < N && (B[P] == 'e' || B[P] == 'E')) {
        ++P;
        if (P < N && (B[P] == '+' || B[P] == '-')) {
          ++P;
          ++Signs;
        }
        if (P >= N || !isDigit(B[P]))
          return false;
        while (P < N && isDigit(B[P]))
          ++P;
      }
      size_t Len = P - From;
      // A name or another number right after it is a unit or a syntax
      // error: the grammar's to say. Long spellings too.
      if (Len > 60 || (P < N && (isIdentChar(B[P]) || B[P] == '.')))
        return false;
      char Buf[64];
      std::memcpy(Buf, B + From, Len);
      Buf[Len] = '\0';
      // An INT that does not fit 64 bits is the transformer's error.
      bool IsInt = true;
      for (size_t K = 0; K < Len; ++K)
        IsInt &= isDigit(Buf[K]);
      if (IsInt && Len > 18)
        return false;
      double V = std::strtod(Buf, nullptr);
      // Out of range (Limits.h): the evaluator's located error.
      if (!std::isfinite(V) || V < 0 || V > MaxTime)
        return false;
      T = std::strtof(Buf, nullptr);
      ws();
      if (P >= N || B[P] != ')')
        return false;
      ++P;
      Brackets = true;
    } else {
      P = After;
    }
    std::memcpy(&A.Peer, &T, sizeof(float));
    Out.push_back(A);
    return true;
  }
};

} // namespace

bool readLiteralList(llvm::StringRef Text, size_t Pos, FileId File,
                     const SourceManager &SM, LiteralSpan &Out) {
  Reader R(Text, Pos);
  if (!R.header())
    return false;
  Out.Begin = uint32_t(R.P);
  Out.Actions.clear();
  for (;;) {
    R.ws();
    if (R.P >= R.N)
      return false;
    if (R.B[R.P] == ';')
      break;
    size_t Before = Out.Actions.size();
    if (!R.action(Out.Actions) || !R.atActionEnd())
      return false;
    // Offsets to locations: the action's start, and an overlap's second
    // compute (its own start, kept in Loc by the reader).
    Out.Actions[Before].Loc = SM.locAtOffset(File, R.Start);
    if (Out.Actions.size() == Before + 2)
      Out.Actions[Before + 1].Loc =
          SM.locAtOffset(File, Out.Actions[Before + 1].Loc);
  }
  if (Out.Actions.empty())
    return false;
  Out.End = uint32_t(R.P);
  Out.Brackets = R.Brackets;
  Out.Signs = R.Signs;
  return true;
}

LiteralParts literalParts(const SourceManager &SM,
                          const ast::LiteralAction &A) {
  LiteralParts Out;
  FileId File;
  uint32_t Off;
  if (!SM.offsetOf(A.Loc, File, Off))
    return Out;
  llvm::StringRef Text = SM.contents(File);
  Reader R(Text, Off);
  Offsets O;
  std::vector<LiteralAction> Scratch;
  // (For OverlapSecond, Loc is the second compute itself.)
  R.action(Scratch, &O);
  auto L = [&](uint32_t X) {
    return X == ~0u ? NoLoc : SM.locAtOffset(File, X);
  };
  Out.Compute = L(O.Compute);
  Out.Microbatch = L(O.Microbatch);
  Out.Stage = L(O.Stage);
  Out.Operand = L(O.Operand);
  return Out;
}

} // namespace pps::frontend
