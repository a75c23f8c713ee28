//===- TorchCsv.cpp - PyTorch pipelining's schedule CSV: import and export ===//
//
// Import runs in two linear phases: a strict cell parser turns every row
// into IR actions carrying the location of their cell, then the topology is
// inferred (sizes, stage -> rank map) and comm peers are filled in from it.
// Export walks each rank's program once. See TorchCsv.h for the contract.
//
//===----------------------------------------------------------------------===//
#include "pps/backends/TorchCsv.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pps::backends {

using namespace ir;

namespace {

// Numbers in a cell above this are "too large" at the cell.
constexpr int64_t MaxIndex = 1 << 30;
// The front end's limits (frontend/Evaluator.cpp): no later stage should
// allocate per stage or microbatch for a number a short file made up.
constexpr int64_t MaxRanks = 1 << 16;
constexpr int64_t MaxStages = 1 << 20;
constexpr int64_t MaxMicrobatches = 1 << 24;
constexpr llvm::StringLiteral KindList =
    "F, I, W, B, SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, RESHARD, "
    "REDUCE_GRAD";

std::optional<ActionKind> kindFromTorchName(llvm::StringRef Name) {
  return llvm::StringSwitch<std::optional<ActionKind>>(Name)
      .Case("F", ActionKind::F)
      .Case("I", ActionKind::I)
      .Case("W", ActionKind::W)
      .Case("B", ActionKind::B)
      .Case("SEND_F", ActionKind::SendF)
      .Case("RECV_F", ActionKind::RecvF)
      .Case("SEND_B", ActionKind::SendB)
      .Case("RECV_B", ActionKind::RecvB)
      .Case("UNSHARD", ActionKind::Unshard)
      .Case("RESHARD", ActionKind::Reshard)
      .Case("REDUCE_GRAD", ActionKind::ReduceGrad)
      .Default(std::nullopt);
}

bool isTypeChar(char C) { return llvm::isAlpha(C) || C == '_'; }

/// Parses the cells of one file into per-row action lists. Every action
/// carries the location of the text it came from.
class CellParser {
public:
  CellParser(FileId File, SourceManager &SM, DiagnosticEngine &Diags,
             bool KeepIdle)
      : File(File), SM(SM), Diags(Diags), KeepIdle(KeepIdle) {}

  /// Splits the buffer into rows and cells; false if any cell was bad.
  bool run(std::vector<std::vector<Action>> &Rows);
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
  void parseRow(llvm::StringRef Row, uint32_t Rank, std::vector<Action> &Out);
  void parseCell(const CellRef &C, std::vector<Action> &Out);
  /// One `<stage><TYPE><microbatch>` starting at Begin, ending at End.
  std::optional<Action> parseSimple(const CellRef &C, size_t Begin, size_t End);

  FileId File;
  SourceManager &SM;
  DiagnosticEngine &Diags;
  bool KeepIdle;
  uint32_t Line = 1;
  bool Ok = true;
  // The first cell of each sort, for checkFlavour.
  LocId FirstEmpty = NoLoc, FirstComm = NoLoc, FirstControl = NoLoc;
};

void CellParser::checkFlavour() {
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
                      KindList.str()));
    return std::nullopt;
  }
  std::optional<ActionKind> Kind = kindFromTorchName(TypeName);
  if (!Kind) {
    std::string Upper = TypeName.upper();
    std::string Hint =
        Upper != TypeName && kindFromTorchName(Upper)
            ? fmt::format(" (types are upper case: {})", Upper)
            : fmt::format(" (expected one of {})", KindList.str());
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

/// The stage whose rank is the other end of a comm action, as in PyTorch's
/// _add_send_recv: SEND_F(s) -> s+1, RECV_F(s) <- s-1, SEND_B(s) -> s-1,
/// RECV_B(s) <- s+1.
int32_t partnerStage(const Action &A) {
  bool Up = A.Kind == ActionKind::SendF || A.Kind == ActionKind::RecvB;
  return Up ? A.Stage + 1 : A.Stage - 1;
}

/// Infers the topology and fills in peers; the second phase of import.
class TopologyBuilder {
public:
  TopologyBuilder(std::vector<std::vector<Action>> &Rows, LocId DeclLoc,
                  DiagnosticEngine &Diags, const TorchImportOptions &Opts)
      : Rows(Rows), DeclLoc(DeclLoc), Diags(Diags), Opts(Opts) {}

  bool run(Topology &T);

private:
  bool sizes(Topology &T);
  bool placeStages(Topology &T);
  bool resolvePeers(const Topology &T);

  std::vector<std::vector<Action>> &Rows;
  LocId DeclLoc;
  DiagnosticEngine &Diags;
  const TorchImportOptions &Opts;
};

bool TopologyBuilder::run(Topology &T) {
  return sizes(T) && placeStages(T) && resolvePeers(T);
}

bool TopologyBuilder::sizes(Topology &T) {
  int32_t MaxStage = -1, MaxMb = -1;
  LocId MaxStageLoc = NoLoc, MaxMbLoc = NoLoc;
  for (const auto &Row : Rows)
    for (const Action &A : Row) {
      if (A.Stage > MaxStage) {
        MaxStage = A.Stage;
        MaxStageLoc = A.Loc;
      }
      if (A.Microbatch > MaxMb) {
        MaxMb = A.Microbatch;
        MaxMbLoc = A.Loc;
      }
    }
  if (MaxStage < 0) {
    Diags.report(DiagKind::NoPipeline, DeclLoc,
                 "the file holds no action; a schedule CSV has one row of "
                 "actions per rank, such as 0F0,0F1,0B0,0B1");
    return false;
  }
  bool Ok = true;
  T.Ranks = int32_t(Rows.size());
  if (Opts.Ranks) {
    if (*Opts.Ranks < T.Ranks) {
      Diags.report(DiagKind::OutOfRange, DeclLoc,
                   fmt::format("the file has {} rows (one per rank) but "
                               "--ranks is {}",
                               T.Ranks, *Opts.Ranks));
      Ok = false;
    }
    T.Ranks = std::max(T.Ranks, *Opts.Ranks);
  }
  T.Stages = Opts.Stages ? *Opts.Stages : MaxStage + 1;
  // A file of control actions alone still has one microbatch.
  T.Microbatches =
      Opts.Microbatches ? *Opts.Microbatches : std::max(MaxMb + 1, 1);
  if (T.Stages <= 0 || T.Microbatches <= 0) {
    Diags.report(DiagKind::InvalidValue, DeclLoc,
                 "--stages and --microbatches must be positive");
    return false;
  }
  auto TooMany = [&](int64_t N, int64_t Max, const char *What, LocId Loc) {
    if (N <= Max)
      return false;
    Diags.report(DiagKind::OutOfRange, Loc,
                 fmt::format("{} {} are too many (at most {})", N, What, Max));
    return true;
  };
  if (TooMany(T.Ranks, MaxRanks, "ranks", DeclLoc) ||
      TooMany(T.Stages, MaxStages, "stages",
              Opts.Stages ? DeclLoc : MaxStageLoc) ||
      TooMany(T.Microbatches, MaxMicrobatches, "microbatches",
              Opts.Microbatches ? DeclLoc : MaxMbLoc))
    return false;
  // Report each out-of-range index once per kind of overflow.
  bool StageReported = false, MbReported = false;
  for (const auto &Row : Rows)
    for (const Action &A : Row) {
      if (A.Stage >= T.Stages && !StageReported) {
        Diags.report(DiagKind::OutOfRange, A.Loc,
                     fmt::format("stage {} is out of range: the pipeline has "
                                 "{} stages (--stages)",
                                 A.Stage, T.Stages));
        StageReported = true;
        Ok = false;
      }
      if (A.Microbatch >= T.Microbatches && !MbReported) {
        Diags.report(DiagKind::OutOfRange, A.Loc,
                     fmt::format("microbatch {} is out of range: the pipeline "
                                 "has {} microbatches (--microbatches)",
                                 A.Microbatch, T.Microbatches));
        MbReported = true;
        Ok = false;
      }
    }
  return Ok;
}

bool TopologyBuilder::placeStages(Topology &T) {
  // Where each stage was first seen, from computes first (they decide),
  // then from comm and control actions (which name a local stage too).
  llvm::SmallVector<int32_t, 16> RankOf(T.Stages, -1);
  llvm::SmallVector<LocId, 16> FirstLoc(T.Stages, NoLoc);
  llvm::SmallVector<bool, 16> Reported(T.Stages, false);
  bool Ok = true;
  for (bool ComputePass : {true, false})
    for (int32_t R = 0; R < int32_t(Rows.size()); ++R)
      for (const Action &A : Rows[R]) {
        if (A.Kind == ActionKind::Idle || isCompute(A.Kind) != ComputePass)
          continue;
        int32_t S = A.Stage;
        if (RankOf[S] < 0) {
          RankOf[S] = R;
          FirstLoc[S] = A.Loc;
          continue;
        }
        if (RankOf[S] == R || Reported[S])
          continue;
        Reported[S] = true;
        Ok = false;
        Diags
            .report(DiagKind::StagePlacement, A.Loc,
                    fmt::format("stage {} appears on rank {} here and on rank "
                                "{} elsewhere; a stage lives on one rank",
                                S, R, RankOf[S]))
            .note(FirstLoc[S],
                  fmt::format("stage {} is placed on rank {} by this action", S,
                              RankOf[S]));
      }
  if (!Ok)
    return false;

  if (Opts.Place) {
    Topology Want = T;
    if (!Want.place(*Opts.Place)) {
      Diags.report(DiagKind::InvalidValue, DeclLoc,
                   fmt::format("{} placement needs the stages ({}) to be a "
                               "multiple of the ranks ({})",
                               placementName(*Opts.Place).str(), T.Stages,
                               T.Ranks));
      return false;
    }
    for (int32_t S = 0; S < T.Stages; ++S) {
      if (RankOf[S] < 0 || RankOf[S] == Want.StageToRank[S])
        continue;
      Diags.report(DiagKind::StagePlacement, FirstLoc[S],
                   fmt::format("stage {} is on rank {}, but {} placement puts "
                               "it on rank {}",
                               S, RankOf[S], placementName(*Opts.Place).str(),
                               Want.StageToRank[S]));
      Ok = false;
    }
    if (Ok)
      T = Want;
    return Ok;
  }

  // One diagnostic for all unplaced stages (there may be many).
  int32_t Unplaced = llvm::count(RankOf, -1);
  if (Unplaced) {
    int32_t First = int32_t(llvm::find(RankOf, -1) - RankOf.begin());
    Diags.report(DiagKind::StagePlacement, DeclLoc,
                 fmt::format("stage {}{} has no action on any rank; give "
                             "--placement loop or v to place it",
                             First,
                             Unplaced > 1 ? fmt::format(" (and {} more stages)",
                                                        Unplaced - 1)
                                          : ""));
    return false;
  }
  // Name the placement when it is a standard one (loop wins when both fit,
  // e.g. one stage per rank).
  for (Placement P : {Placement::Loop, Placement::V}) {
    Topology Candidate = T;
    if (Candidate.place(P) && llvm::equal(Candidate.StageToRank, RankOf)) {
      T = Candidate;
      return true;
    }
  }
  T.Place = Placement::Explicit;
  T.StageToRank.assign(RankOf.begin(), RankOf.end());
  return true;
}

bool TopologyBuilder::resolvePeers(const Topology &T) {
  bool Ok = true;
  for (auto &Row : Rows)
    for (Action &A : Row) {
      if (!isComm(A.Kind))
        continue;
      int32_t Partner = partnerStage(A);
      if (Partner < 0 || Partner >= T.Stages) {
        Diags.report(DiagKind::OutOfRange, A.Loc,
                     fmt::format("{} has no partner: stage {} does not exist "
                                 "({} stages)",
                                 torchActionName(A), Partner, T.Stages));
        Ok = false;
        continue;
      }
      A.Peer = T.StageToRank[Partner];
    }
  return Ok;
}

bool isReservedWord(llvm::StringRef W) {
  static const char *const Words[] = {
      "import", "schedule", "fn",       "pipeline", "let",         "for",
      "while",  "break",    "continue", "in",       "if",          "else",
      "rank",   "return",   "assert",   "true",     "false",       "overlap",
      "send",   "recv",     "unshard",  "reshard",  "reduce_grad", "idle"};
  for (const char *K : Words)
    if (W == K)
      return true;
  // F, F3, I12, ... lex as actions.
  return !W.empty() && llvm::StringRef("FIWB").contains(W[0]) &&
         llvm::all_of(W.drop_front(), llvm::isDigit);
}

/// Where to add REDUCE_GRAD for stages that have none, so PyTorch's
/// compute+comms runtime reduces and scales gradients: after the stage's
/// last B or W (and after the sends right behind it), as PyTorch's
/// _add_reduce_grad + _add_send_recv place it.
std::vector<Action> withReduceGrad(llvm::ArrayRef<Action> Actions) {
  struct Last {
    int32_t Stage;
    size_t After; // insert before this index
  };
  llvm::SmallVector<int32_t, 4> HasReduce;
  llvm::SmallVector<Last, 4> Lasts;
  for (size_t I = 0; I < Actions.size(); ++I) {
    const Action &A = Actions[I];
    if (A.Kind == ActionKind::ReduceGrad) {
      HasReduce.push_back(A.Stage);
      continue;
    }
    if (A.Kind != ActionKind::B && A.Kind != ActionKind::W)
      continue;
    size_t After = I + 1;
    if (A.overlapsNext() && After < Actions.size())
      ++After; // after the whole overlap pair
    // After the sends that follow it (its gradient, and the pair's).
    while (After < Actions.size() && isSend(Actions[After].Kind))
      ++After;
    auto It =
        llvm::find_if(Lasts, [&](const Last &L) { return L.Stage == A.Stage; });
    if (It == Lasts.end())
      Lasts.push_back({A.Stage, After});
    else
      It->After = After;
  }
  llvm::erase_if(Lasts, [&](const Last &L) {
    return llvm::is_contained(HasReduce, L.Stage);
  });
  if (Lasts.empty())
    return std::vector<Action>(Actions.begin(), Actions.end());
  llvm::sort(Lasts, [](const Last &X, const Last &Y) {
    return std::tie(X.After, X.Stage) < std::tie(Y.After, Y.Stage);
  });
  std::vector<Action> Out;
  Out.reserve(Actions.size() + Lasts.size());
  size_t Next = 0;
  for (size_t I = 0; I <= Actions.size(); ++I) {
    while (Next < Lasts.size() && Lasts[Next].After == I)
      Out.push_back(
          Action::control(ActionKind::ReduceGrad, Lasts[Next++].Stage));
    if (I < Actions.size())
      Out.push_back(Actions[I]);
  }
  return Out;
}

} // namespace

std::string torchActionName(const Action &A) {
  if (A.Kind == ActionKind::Idle)
    return {};
  llvm::StringRef Type = actionKindTorchName(A.Kind);
  if (isControl(A.Kind))
    return fmt::format("{}{}", A.Stage, Type.str());
  return fmt::format("{}{}{}", A.Stage, Type.str(), A.Microbatch);
}

std::string pipelineNameFromPath(llvm::StringRef Path) {
  if (Path == "-" || Path.empty())
    return "stdin";
  std::string Name;
  for (char C : llvm::sys::path::stem(Path))
    Name += llvm::isAlnum(C) || C == '_' ? C : '_';
  if (Name.empty() || llvm::isDigit(Name[0]))
    Name = "p_" + Name;
  if (isReservedWord(Name))
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
  unsigned Errors = Diags.numErrors();
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

void emitTorchCsv(const Schedule &S, llvm::raw_ostream &OS,
                  const TorchExportOptions &Opts) {
  assert(S.Topo.Directions == 1 && "PyTorch's CSV has one direction");
  for (const RankProgram &Program : S.Ranks) {
    std::vector<Action> WithReduce;
    llvm::ArrayRef<Action> Actions = Program.Actions;
    if (Opts.WithComms) {
      WithReduce = withReduceGrad(Actions);
      Actions = WithReduce;
    }
    bool First = true;
    auto Cell = [&]() -> llvm::raw_ostream & {
      if (!First)
        OS << ',';
      First = false;
      return OS;
    };
    for (size_t I = 0; I < Actions.size(); ++I) {
      const Action &A = Actions[I];
      if (A.Kind == ActionKind::Idle) {
        if (Opts.WithComms)
          continue; // the compute+comms loader rejects empty cells
        long Slots = std::max(1L, std::lround(A.idleTime()));
        for (long K = 0; K < Slots; ++K)
          Cell();
        continue;
      }
      if (!isCompute(A.Kind)) {
        if (Opts.WithComms)
          Cell() << torchActionName(A);
        continue;
      }
      if (A.overlapsNext() && I + 1 < Actions.size()) {
        Cell() << '(' << torchActionName(A) << ';'
               << torchActionName(Actions[I + 1]) << ")OVERLAP_F_B";
        ++I;
        continue;
      }
      Cell() << torchActionName(A);
    }
    OS << '\n';
  }
}

} // namespace pps::backends
