//===- TorchCells.cpp - the cells of a PyTorch schedule CSV ---------------===//
//
// Phase one of the import: rows and cells as Python's csv.reader splits
// them, each cell parsed strictly into one action (or an overlapped pair)
// located at its text. Linear in the file's size.
//
//===----------------------------------------------------------------------===//
#include "TorchCsvImpl.h"

#include "pps/import/TorchNames.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <algorithm>

namespace pps::import {

using namespace ir;

namespace {
// Numbers in a cell above this are "too large" at the cell.
constexpr int64_t MaxIndex = 1 << 30;

bool isTypeChar(char C) { return llvm::isAlpha(C) || C == '_'; }
} // namespace

void CellParser::checkFlavour() {
  if (Comment != NoLoc)
    Diags.report(DiagKind::CsvFlavour, Comment,
                 "a comment line, which PyTorch's loaders reject (it is no "
                 "action; pps reads it as a comment): `ppsc emit --no-verify` "
                 "starts a schedule exported without its proof with one");
  if (FirstComm != NoLoc && FirstEmpty != NoLoc) {
    Diags
        .report(DiagKind::CsvFlavour, FirstEmpty,
                "empty cell in a compute+comms file: PyTorch's loader for "
                "that flavour rejects empty cells (pps reads it as an idle "
                "slot)")
        .note(FirstComm, "this comm cell makes it a compute+comms file");
    return;
  }
  if (FirstComm == NoLoc && FirstControl != NoLoc)
    Diags.report(DiagKind::CsvFlavour, FirstControl,
                 "control action in a compute-only file: PyTorch's "
                 "compute-only loader rejects UNSHARD, RESHARD and "
                 "REDUCE_GRAD (it inserts its own); keep them only in a file "
                 "that has its comms too");
}

bool CellParser::run(std::vector<std::vector<Action>> &Rows) {
  llvm::StringRef Buf = SM.contents(File);
  if (Buf.startswith("\xEF\xBB\xBF")) {
    // Python's csv.reader (as _load_csv opens the file) keeps the mark as
    // part of the first cell, which then fails to parse.
    Diags.report(DiagKind::CsvSyntax, SM.getLoc(File, 1, 1),
                 "the file starts with a UTF-8 byte-order mark, which "
                 "PyTorch's loader reads as part of the first cell; save it "
                 "without one");
    return false;
  }
  size_t Pos = 0;
  // Leading `#` lines are comments (an unverified export's marker).
  while (Pos < Buf.size() && Buf[Pos] == '#') {
    if (Comment == NoLoc)
      Comment = SM.getLoc(File, Line, 1);
    size_t Eol = Buf.find('\n', Pos);
    Pos = Eol == llvm::StringRef::npos ? Buf.size() : Eol + 1;
    ++Line;
  }
  // Like Python's csv.reader: every line is a row (a blank line is a rank
  // with no actions); the text after the last newline is a row if not empty.
  while (Pos < Buf.size()) {
    size_t Eol = Buf.find('\n', Pos);
    if (Eol == llvm::StringRef::npos)
      Eol = Buf.size();
    llvm::StringRef Row = Buf.slice(Pos, Eol);
    if (Row.endswith("\r"))
      Row = Row.drop_back();
    Rows.emplace_back();
    parseRow(Row, uint32_t(Rows.size() - 1), Rows.back());
    Pos = Eol + 1;
    ++Line;
  }
  return Ok;
}

void CellParser::parseRow(llvm::StringRef Row, uint32_t Rank,
                          std::vector<Action> &Out) {
  if (Row.empty())
    return;
  uint32_t PendingIdle = 0;
  LocId IdleLoc = NoLoc;
  size_t I = 0;
  for (uint32_t Index = 1;; ++Index) {
    size_t J = I;
    while (J < Row.size() && (Row[J] == ' ' || Row[J] == '\t'))
      ++J;
    CellRef C{{}, Line, uint32_t(J + 1), Rank, Index};
    size_t Next; // position of the ',' ending the cell, or npos
    if (J < Row.size() && Row[J] == '"') {
      size_t K = Row.find('"', J + 1);
      if (K == llvm::StringRef::npos) {
        C.Text = Row.substr(J);
        error(C, 0, "the quoted cell is not closed on this line");
        return;
      }
      llvm::StringRef Inner = Row.slice(J + 1, K);
      llvm::StringRef Trimmed = Inner.ltrim(" \t");
      C.Text = Trimmed.rtrim(" \t");
      C.Col = uint32_t(J + 2 + (Inner.size() - Trimmed.size()));
      size_t After = K + 1;
      while (After < Row.size() && (Row[After] == ' ' || Row[After] == '\t'))
        ++After;
      if (After < Row.size() && Row[After] != ',') {
        CellRef Tail{Row.substr(J, Row.find(',', J) - J), Line, uint32_t(J + 1),
                     Rank, Index};
        error(Tail, After - J, "unexpected text after the closing quote");
        return;
      }
      Next = After < Row.size() ? After : llvm::StringRef::npos;
    } else {
      Next = Row.find(',', J);
      C.Text = Row.slice(J, Next).rtrim(" \t");
    }

    if (C.Text.empty()) {
      if (PendingIdle++ == 0)
        IdleLoc = SM.getLoc(File, Line, uint32_t(J + 1));
      if (FirstEmpty == NoLoc)
        FirstEmpty = IdleLoc;
    } else {
      if (PendingIdle && KeepIdle)
        Out.push_back(Action::idle(float(PendingIdle), IdleLoc));
      PendingIdle = 0;
      parseCell(C, Out);
    }
    if (Next == llvm::StringRef::npos)
      break;
    I = Next + 1;
  }
  // Empty cells at the end of a row are padding (spreadsheets write them).
}

void CellParser::parseCell(const CellRef &C, std::vector<Action> &Out) {
  llvm::StringRef T = C.Text;
  if (!T.startswith("(")) {
    std::optional<Action> A = parseSimple(C, 0, T.size());
    if (!A)
      return;
    if (isComm(A->Kind) && FirstComm == NoLoc)
      FirstComm = A->Loc;
    if (isControl(A->Kind) && FirstControl == NoLoc)
      FirstControl = A->Loc;
    Out.push_back(*A);
    return;
  }
  // (0F7;7B3)OVERLAP_F_B: two computes that run together.
  size_t Close = T.find(')');
  if (Close == llvm::StringRef::npos)
    return error(C, T.size(),
                 "'(' is not closed; an overlapped pair is "
                 "written (0F7;7B3)OVERLAP_F_B");
  llvm::StringRef Suffix = T.substr(Close + 1);
  if (Suffix != "OVERLAP_F_B")
    return error(C, Close + 1,
                 Suffix.empty()
                     ? "expected OVERLAP_F_B after ')'"
                     : fmt::format("expected OVERLAP_F_B after ')', found '{}'",
                                   Suffix.str()));
  llvm::SmallVector<Action, 2> Subs;
  size_t Begin = 1;
  while (true) {
    size_t Semi = T.find(';', Begin);
    size_t End = std::min(Semi, Close);
    // Trim blanks around the sub-action.
    size_t B = Begin, E = End;
    while (B < E && (T[B] == ' ' || T[B] == '\t'))
      ++B;
    while (E > B && (T[E - 1] == ' ' || T[E - 1] == '\t'))
      --E;
    if (B == E)
      return error(C, B,
                   "an overlapped pair needs an action on both sides "
                   "of ';'");
    std::optional<Action> A = parseSimple(C, B, E);
    if (!A)
      return;
    if (!isCompute(A->Kind))
      return error(C, B,
                   fmt::format("only computes can overlap, not {}",
                               actionKindTorchName(A->Kind).str()));
    Subs.push_back(*A);
    if (Semi == llvm::StringRef::npos || Semi > Close)
      break;
    Begin = Semi + 1;
  }
  if (Subs.size() != 2)
    return error(C, 1,
                 fmt::format("an overlapped pair holds exactly two "
                             "computes, found {}",
                             Subs.size()));
  Subs[0].Flags |= ActionFlags::OverlapNext;
  Out.push_back(Subs[0]);
  Out.push_back(Subs[1]);
}

std::optional<Action> CellParser::parseSimple(const CellRef &C, size_t Begin,
                                              size_t End) {
  llvm::StringRef T = C.Text;
  size_t I = Begin;
  auto ReadNumber = [&](int64_t &V) {
    V = 0;
    size_t Start = I;
    while (I < End && llvm::isDigit(T[I])) {
      V = std::min<int64_t>(V * 10 + (T[I] - '0'), MaxIndex);
      ++I;
    }
    return I > Start;
  };
  int64_t Stage, Mb;
  if (!ReadNumber(Stage)) {
    error(C, I,
          I < End && isTypeChar(T[I])
              ? "it must start with the stage number, as in 2F0"
              : fmt::format("expected a stage number, found '{}'",
                            T.substr(I, 1).str()));
    return std::nullopt;
  }
  size_t TypeBegin = I;
  while (I < End && isTypeChar(T[I]))
    ++I;
  llvm::StringRef TypeName = T.slice(TypeBegin, I);
  if (TypeName.empty()) {
    error(C, I,
          fmt::format("expected an action type after the stage ({})",
                      torchKindList().str()));
    return std::nullopt;
  }
  std::optional<ActionKind> Kind = torchKindFromName(TypeName);
  if (!Kind) {
    std::string Upper = TypeName.upper();
    std::string Hint =
        Upper != TypeName && torchKindFromName(Upper)
            ? fmt::format(" (types are upper case: {})", Upper)
            : fmt::format(" (expected one of {})", torchKindList().str());
    error(C, TypeBegin,
          fmt::format("unknown action type '{}'{}", TypeName.str(), Hint));
    return std::nullopt;
  }
  size_t MbBegin = I;
  bool HasMb = ReadNumber(Mb);
  if (I < End) {
    error(C, I,
          fmt::format("unexpected '{}' after '{}'", T.slice(I, End).str(),
                      T.slice(Begin, I).str()));
    return std::nullopt;
  }
  if (Stage >= MaxIndex || (HasMb && Mb >= MaxIndex)) {
    error(C, Stage >= MaxIndex ? Begin : MbBegin, "the number is too large");
    return std::nullopt;
  }
  LocId Loc = locAt(C, Begin);
  if (isControl(*Kind)) {
    if (HasMb) {
      error(C, MbBegin, fmt::format("{} takes no microbatch", TypeName.str()));
      return std::nullopt;
    }
    return Action::control(*Kind, int32_t(Stage), Loc);
  }
  if (!HasMb) {
    error(C, MbBegin,
          fmt::format("{} needs a microbatch, as in {}{}0", TypeName.str(),
                      Stage, TypeName.str()));
    return std::nullopt;
  }
  if (isComm(*Kind))
    return Action::comm(*Kind, int32_t(Mb), int32_t(Stage), -1, Loc);
  return Action::compute(*Kind, int32_t(Mb), int32_t(Stage), Loc);
}

} // namespace pps::import
