//===- PpsPrinter.cpp - the lowered .pps text form (the textual IR) -------===//
//
// Prints a Schedule so that parsing the text gives an equivalent Schedule:
// every number in its shortest round-trip form, comm settings in the base
// units the front end stores (time units, bytes, bytes per ms), the stage
// map as loop/v when it matches and explicitly otherwise, and every action
// with its stage unless it is the rank's only stage.
//
//===----------------------------------------------------------------------===//
#include "pps/backends/PpsPrinter.h"

#include "pps/frontend/Identifiers.h"

#include "llvm/ADT/StringRef.h"

#include <fmt/format.h>

namespace pps::backends {

namespace {

/// Shortest text that parses back to the same double.
std::string num(double V) { return fmt::format("{}", V); }

/// A name the grammar accepts as an identifier.
std::string identName(llvm::StringRef Name) {
  std::string Out = frontend::identifierChars(Name);
  if (!frontend::isIdentifier(Out))
    Out = "p_" + Out;
  return Out;
}

class Printer {
public:
  Printer(const ir::Schedule &S, llvm::raw_ostream &OS) : S(S), OS(OS) {
    OnlyStage.assign(S.Topo.Ranks, -1);
    llvm::SmallVector<int, 16> Count(S.Topo.Ranks, 0);
    for (int32_t St = 0; St < int32_t(S.Topo.StageToRank.size()); ++St) {
      int32_t R = S.Topo.StageToRank[St];
      if (R >= 0 && R < S.Topo.Ranks && Count[R]++ == 0)
        OnlyStage[R] = St;
    }
    for (int32_t R = 0; R < S.Topo.Ranks; ++R)
      if (Count[R] != 1)
        OnlyStage[R] = -1;
  }

  void print();

private:
  void printHeader();
  void printCost();
  void printComm();
  void printMemory();
  void printRank(int32_t R);
  std::string actionText(const ir::Action &A, int32_t Rank) const;
  /// True if Stage is Rank's only stage, so the text form may omit "@stage".
  bool isOnlyStage(int32_t Stage, int32_t Rank) const {
    return Rank >= 0 && Rank < int32_t(OnlyStage.size()) &&
           OnlyStage[Rank] == Stage;
  }

  const ir::Schedule &S;
  llvm::raw_ostream &OS;
  llvm::SmallVector<int32_t, 16> OnlyStage;
};

void Printer::print() {
  OS << "pipeline " << identName(S.Name) << " {\n";
  printHeader();
  printCost();
  printComm();
  printMemory();
  if (S.Fsdp.Enabled)
    OS << fmt::format("  fsdp prefetch {};\n", S.Fsdp.Prefetch);
  bool Empty = S.numActions() == 0;
  if (S.Synth && Empty) {
    OS << fmt::format("  schedule synth(memory: {}", S.Synth->MemoryLimit);
    for (auto &[Name, Value] : S.Synth->Args)
      OS << fmt::format(", {}: {}", Name, Value);
    OS << ");\n";
  } else {
    for (int32_t R = 0; R < int32_t(S.Ranks.size()); ++R)
      printRank(R);
  }
  OS << "}\n";
}

void Printer::printHeader() {
  const ir::Topology &T = S.Topo;
  OS << fmt::format("  ranks {};\n", T.Ranks);
  ir::Topology Probe;
  Probe.Ranks = T.Ranks;
  Probe.Stages = T.Stages;
  std::string Place;
  if (Probe.place(ir::Placement::Loop) && Probe.StageToRank == T.StageToRank) {
    Place = "loop";
  } else if (Probe.place(ir::Placement::V) &&
             Probe.StageToRank == T.StageToRank) {
    Place = "v";
  } else {
    Place = "{";
    for (size_t St = 0; St < T.StageToRank.size(); ++St)
      Place += fmt::format("{} {} -> {}", St ? "," : "", St, T.StageToRank[St]);
    Place += " }";
  }
  OS << fmt::format("  stages {} placement {};\n", T.Stages, Place);
  OS << fmt::format("  microbatches {};\n", T.Microbatches);
  if (T.Directions != 1)
    OS << fmt::format("  directions {};\n", T.Directions);
}

void Printer::printCost() {
  const ir::CostModel &C = S.Cost;
  OS << fmt::format("  cost {{ F = {}; I = {}; W = {}; B = {};",
                    num(C.Default.F), num(C.Default.I), num(C.Default.W),
                    num(C.Default.B));
  if (C.Overlap)
    OS << fmt::format(" overlap = {};", num(*C.Overlap));
  bool AnyStage = false;
  for (size_t St = 0; St < C.PerStage.size(); ++St) {
    const ir::StageCost &P = C.PerStage[St];
    const char *Keys = "FIWB";
    double Vals[4] = {P.F, P.I, P.W, P.B};
    double Defs[4] = {C.Default.F, C.Default.I, C.Default.W, C.Default.B};
    for (int K = 0; K < 4; ++K) {
      // One entry is needed even if every stage equals the default, so the
      // parsed schedule has per-stage costs too.
      bool Force = !AnyStage && St + 1 == C.PerStage.size() && K == 0;
      if (Vals[K] == Defs[K] && !Force)
        continue;
      AnyStage = true;
      OS << fmt::format("\n    {}[stage {}] = {};", Keys[K], St, num(Vals[K]));
    }
  }
  for (size_t St = 0; St < C.StageOverlap.size(); ++St)
    if (C.StageOverlap[St]) {
      AnyStage = true;
      OS << fmt::format("\n    overlap[stage {}] = {};", St,
                        num(*C.StageOverlap[St]));
    }
  OS << (AnyStage ? "\n  }\n" : " }\n");
}

void Printer::printMemory() {
  const ir::MemorySpec &M = S.Memory;
  if (M.isChunks()) {
    if (S.MemoryLimit)
      OS << fmt::format("  memory limit {};\n", *S.MemoryLimit);
    return;
  }
  // Bytes are written as bytes, so they parse back bit for bit.
  const char *Unit = M.Bytes ? " B" : "";
  auto Amount = [&](double V) {
    return (V == 0 ? std::string("0") : num(V)) + Unit;
  };
  std::string Limit =
      S.MemoryLimit ? fmt::format(" limit {}{};", *S.MemoryLimit, Unit) : "";
  if (M.Stages.empty()) {
    // W is the rest of F after I (a check when parsed back), written so the
    // block reads as the three amounts.
    const schema::MemoryModel &D = M.Default;
    OS << fmt::format("  memory {{ F = {}; I = {}; W = {};{} }}\n",
                      Amount(D.Forward), Amount(D.inputAmount()),
                      Amount(D.weightAmount()), Limit);
    return;
  }
  // Per stage: F, and I where it frees part (W, the rest, follows).
  OS << "  memory {";
  for (size_t St = 0; St < M.Stages.size(); ++St) {
    const schema::MemoryModel &X = M.Stages[St];
    OS << fmt::format("\n    F[stage {}] = {};", St, Amount(X.Forward));
    if (X.InputGrad != 0)
      OS << fmt::format(" I[stage {}] = {};", St, Amount(X.inputAmount()));
  }
  OS << (Limit.empty() ? "" : "\n   ") << Limit << "\n  }\n";
}

void Printer::printComm() {
  const ir::CostModel &C = S.Cost;
  ir::CostModel D;
  std::string Body;
  if (S.Comm != ir::CommModel::Rendezvous)
    Body += fmt::format(" model {};", ir::commModelName(S.Comm).str());
  if (S.Stream.Scope != ir::StreamScope::None)
    Body +=
        fmt::format(" stream {};", ir::streamScopeName(S.Stream.Scope).str());
  if (S.Stream.EagerThreshold >= 0)
    Body += fmt::format(" eager threshold {} B;", num(S.Stream.EagerThreshold));
  if (C.Latency != D.Latency)
    Body += fmt::format(" latency {};", num(C.Latency));
  if (C.BandwidthBytesPerMs != D.BandwidthBytesPerMs)
    Body += fmt::format(" bandwidth {} B/ms;", num(C.BandwidthBytesPerMs));
  if (C.ActivationBytes != D.ActivationBytes)
    Body += fmt::format(" activation {} B;", num(C.ActivationBytes));
  if (C.GradientBytes >= 0)
    Body += fmt::format(" gradient {} B;", num(C.GradientBytes));
  if (!C.AsyncComm)
    Body += " blocking;";
  if (!Body.empty())
    OS << "  comm {" << Body << " }\n";
}

std::string Printer::actionText(const ir::Action &A, int32_t Rank) const {
  return ir::actionText(A, /*WithStage=*/!isOnlyStage(A.Stage, Rank));
}

void Printer::printRank(int32_t R) {
  const auto &Acts = S.Ranks[R].Actions;
  std::string Line = fmt::format("  rank {}:", R);
  constexpr size_t Width = 100;
  for (size_t I = 0; I < Acts.size(); ++I) {
    std::string Text;
    if (Acts[I].overlapsNext() && I + 1 < Acts.size()) {
      ir::Action First = Acts[I];
      First.Flags &= ~ir::ActionFlags::OverlapNext;
      Text = fmt::format("overlap({}, {})", actionText(First, R),
                         actionText(Acts[I + 1], R));
      ++I;
    } else {
      Text = actionText(Acts[I], R);
    }
    if (Line.size() + 1 + Text.size() > Width && Line.size() > 4) {
      OS << Line << "\n";
      Line = "   ";
    }
    Line += ' ';
    Line += Text;
  }
  OS << Line << ";\n";
}

} // namespace

void printPps(const ir::Schedule &S, llvm::raw_ostream &OS) {
  Printer(S, OS).print();
}

void printAction(const ir::Action &A, llvm::raw_ostream &OS) {
  OS << ir::actionText(A);
}

} // namespace pps::backends
