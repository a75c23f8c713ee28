//===- TorchCsvTest.cpp - PyTorch schedule CSV import/export --------------===//
//
// Parsing of both flavours, topology inference, every diagnostic the
// importer reports (with its location), the exporter's two flavours, and
// round trips of builder-made schedules (loop, V, zero bubble, overlap,
// comms, FSDP control actions).
//
//===----------------------------------------------------------------------===//
#include "pps/backends/TorchCsv.h"
#include "pps/import/TorchCsv.h"
#include "pps/import/TorchNames.h"
#include "pps/ir/Builder.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <random>

using namespace pps;
using namespace pps::ir;
using namespace pps::backends;
using namespace pps::import;

namespace {

/// Owns the source manager and engine one import needs.
struct Importer {
  SourceManager SM;
  DiagnosticEngine Diags{SM};

  std::optional<Schedule> run(llvm::StringRef Text,
                              const TorchImportOptions &Opts = {}) {
    FileId F = SM.addBuffer("test.csv", Text.str());
    return importTorchCsv(F, SM, Diags, Opts);
  }
  /// The first diagnostic as "line:col kind: message".
  std::string first() {
    if (Diags.diagnostics().empty())
      return "<none>";
    const Diagnostic &D = Diags.diagnostics().front();
    SourcePos P = SM.resolve(D.Loc);
    return std::to_string(P.Line) + ":" + std::to_string(P.Col) + " " +
           diagKindName(D.Kind).str() + ": " + D.Message;
  }
};

std::string csv(const Schedule &S, bool WithComms = false) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  emitTorchCsv(S, OS, TorchExportOptions{WithComms});
  OS.flush();
  return Out;
}

void expectEquivalent(const Schedule &A, const Schedule &B) {
  std::string Why;
  EXPECT_TRUE(A.equivalent(B, &Why)) << Why;
}

} // namespace

// --- parsing -------------------------------------------------------------

TEST(TorchImport, ComputeOnlyTwoByTwo) {
  Importer I;
  auto S = I.run("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n");
  ASSERT_TRUE(S) << I.first();
  ScheduleBuilder B(2, 2, 2);
  B.rank(0).F(0).F(1).B(0).B(1);
  B.rank(1).F(0).B(0).F(1).B(1);
  expectEquivalent(*S, B.build());
  EXPECT_EQ(S->Topo.Place, Placement::Loop);
  EXPECT_EQ(S->Name, "test");
  // Every action points at its cell.
  SourcePos P = I.SM.resolve(S->Ranks[1].Actions[2].Loc);
  EXPECT_EQ(P.Line, 2u);
  EXPECT_EQ(P.Col, 9u);
}

TEST(TorchImport, EmptyCellsAreDroppedByDefault) {
  Importer I;
  auto S = I.run(",,1F0,,1B0,,\n0F0,0B0,,,\n");
  ASSERT_TRUE(S) << I.first();
  ASSERT_EQ(S->Ranks[0].Actions.size(), 2u);
  EXPECT_EQ(S->Ranks[0].Actions[0].Kind, ActionKind::F);
  EXPECT_EQ(I.Diags.numWarnings(), 0u);
}

TEST(TorchImport, KeptIdleCellsMergeAndTrailingPaddingIsDropped) {
  Importer I;
  TorchImportOptions O;
  O.KeepIdle = true;
  auto S = I.run(",,1F0,,1B0,,\n0F0,0B0,,,\n", O);
  ASSERT_TRUE(S) << I.first();
  const auto &R0 = S->Ranks[0].Actions;
  ASSERT_EQ(R0.size(), 4u);
  EXPECT_EQ(R0[0].Kind, ActionKind::Idle);
  EXPECT_FLOAT_EQ(R0[0].idleTime(), 2.0f);
  EXPECT_EQ(R0[1].Kind, ActionKind::F);
  EXPECT_FLOAT_EQ(R0[2].idleTime(), 1.0f);
  EXPECT_EQ(S->Ranks[1].Actions.size(), 2u);
  // Stage 1 on rank 0, stage 0 on rank 1: an explicit map.
  EXPECT_EQ(S->Topo.Place, Placement::Explicit);
  EXPECT_EQ(S->Topo.rankOf(0), 1);
}

TEST(TorchImport, CrlfBlanksAndQuotes) {
  Importer I;
  auto S = I.run(" 0F0 , \"0B0\"\r\n1F0,\" 1B0 \"\r\n");
  ASSERT_TRUE(S) << I.first();
  ScheduleBuilder B(2, 2, 1);
  B.rank(0).F(0).B(0);
  B.rank(1).F(0).B(0);
  expectEquivalent(*S, B.build());
}

TEST(TorchImport, NoTrailingNewline) {
  Importer I;
  auto S = I.run("0F0,0B0\n1F0,1B0");
  ASSERT_TRUE(S) << I.first();
  EXPECT_EQ(S->Topo.Ranks, 2);
}

TEST(TorchImport, BlankLineIsARankWithNoActions) {
  // It holds stage 1 by the loop placement (a rank without a stage is
  // refused: tests/lit/reliability/fuzz_findings.test).
  Importer I;
  TorchImportOptions O;
  O.Stages = 3;
  O.Place = Placement::Loop;
  auto S = I.run("0F0,0B0\n\n2F0,2B0\n", O);
  ASSERT_TRUE(S) << I.first();
  EXPECT_EQ(S->Topo.Ranks, 3);
  EXPECT_TRUE(S->Ranks[1].Actions.empty());
  EXPECT_EQ(S->Topo.rankOf(2), 2);
}

TEST(TorchImport, CommsTakePeersFromTheTopology) {
  Importer I;
  auto S = I.run("0F0,0SEND_F0,0RECV_B0,0B0\n"
                 "1RECV_F0,1F0,1B0,1SEND_B0\n");
  ASSERT_TRUE(S) << I.first();
  ScheduleBuilder B(2, 2, 1);
  B.rank(0)
      .F(0)
      .comm(ActionKind::SendF, 0, 0, 1)
      .comm(ActionKind::RecvB, 0, 0, 1)
      .B(0);
  B.rank(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .B(0)
      .comm(ActionKind::SendB, 0, 1, 0);
  expectEquivalent(*S, B.build());
  EXPECT_TRUE(S->hasComms());
}

TEST(TorchImport, ControlActions) {
  Importer I;
  auto S = I.run("0UNSHARD,0F0,0B0,0REDUCE_GRAD,0RESHARD\n");
  ASSERT_TRUE(S) << I.first();
  const auto &R = S->Ranks[0].Actions;
  ASSERT_EQ(R.size(), 5u);
  EXPECT_EQ(R[0].Kind, ActionKind::Unshard);
  EXPECT_EQ(R[0].Microbatch, -1);
  EXPECT_EQ(R[3].Kind, ActionKind::ReduceGrad);
  EXPECT_EQ(R[4].Kind, ActionKind::Reshard);
}

TEST(TorchImport, VPlacementWithOverlap) {
  // Two ranks, four stages: rank 0 holds 0 and 3, rank 1 holds 1 and 2.
  Importer I;
  auto S =
      I.run("0F0,0F1,3F0,(0F2;3B0)OVERLAP_F_B,3B1,0B0,0B1,0B2,3F1,3F2,3B2\n"
            "1F0,2F0,1F1,2F1,2B0,1F2,2F2,2B1,2B2,1B0,1B1,1B2\n");
  ASSERT_TRUE(S) << I.first();
  EXPECT_EQ(S->Topo.Place, Placement::V);
  EXPECT_EQ(S->Topo.Stages, 4);
  EXPECT_EQ(S->Topo.Microbatches, 3);
  const Action &Pair = S->Ranks[0].Actions[3];
  EXPECT_TRUE(Pair.overlapsNext());
  EXPECT_EQ(Pair.Kind, ActionKind::F);
  EXPECT_EQ(Pair.Stage, 0);
  EXPECT_EQ(S->Ranks[0].Actions[4].Kind, ActionKind::B);
  EXPECT_EQ(S->Ranks[0].Actions[4].Stage, 3);
  EXPECT_FALSE(S->Ranks[0].Actions[4].overlapsNext());
}

TEST(TorchImport, OverlapSubActionsMayHaveBlanks) {
  Importer I;
  auto S = I.run("( 0F1 ; 0B0 )OVERLAP_F_B,0F0\n");
  ASSERT_TRUE(S) << I.first();
  EXPECT_EQ(S->Ranks[0].Actions.size(), 3u);
}

TEST(TorchImport, OptionsOverrideSizesAndPlacement) {
  Importer I;
  TorchImportOptions O;
  O.Stages = 4;
  O.Microbatches = 5;
  O.Place = Placement::Loop;
  O.Name = "mine";
  // Stages 2 and 3 have no action: --placement places them.
  auto S = I.run("0F0\n1F0\n", O);
  ASSERT_TRUE(S) << I.first();
  EXPECT_EQ(S->Topo.Stages, 4);
  EXPECT_EQ(S->Topo.Microbatches, 5);
  EXPECT_EQ(S->Topo.rankOf(3), 1);
  EXPECT_EQ(S->Name, "mine");
}

TEST(TorchImport, LoopPreferredWhenLoopAndVCoincide) {
  Importer I;
  TorchImportOptions O;
  O.Place = Placement::V;
  auto S = I.run("0F0,0B0\n1F0,1B0\n", O);
  ASSERT_TRUE(S) << I.first();
  EXPECT_EQ(S->Topo.Place, Placement::V);
  Importer J;
  auto T = J.run("0F0,0B0\n1F0,1B0\n");
  ASSERT_TRUE(T);
  EXPECT_EQ(T->Topo.Place, Placement::Loop);
}

TEST(TorchImport, PipelineNames) {
  EXPECT_EQ(pipelineNameFromPath("dir/zb-v.csv"), "zb_v");
  EXPECT_EQ(pipelineNameFromPath("2x2.csv"), "p_2x2");
  EXPECT_EQ(pipelineNameFromPath("rank.csv"), "rank_csv");
  EXPECT_EQ(pipelineNameFromPath("F3.csv"), "F3_csv");
  EXPECT_EQ(pipelineNameFromPath("-"), "stdin");
}

// --- diagnostics -----------------------------------------------------------

struct BadCell {
  const char *Text;
  const char *Expected; // "line:col kind: message" prefix
};

class TorchImportBadCells : public ::testing::TestWithParam<BadCell> {};

TEST_P(TorchImportBadCells, LocatedDiagnostic) {
  Importer I;
  auto S = I.run(GetParam().Text);
  EXPECT_FALSE(S);
  std::string First = I.first();
  EXPECT_EQ(First.rfind(GetParam().Expected, 0), 0u)
      << "got: " << First << "\nwant prefix: " << GetParam().Expected;
}

INSTANTIATE_TEST_SUITE_P(
    Cells, TorchImportBadCells,
    ::testing::Values(
        // PyTorch's regex takes 2BW0 as 2B with no microbatch; we do not.
        BadCell{"0F0,2BW0\n",
                "1:6 csv-syntax: '2BW0' (rank 0, cell 2) is not one action: "
                "unknown action type 'BW'"},
        BadCell{"0F0\n0F1,1B0x\n",
                "2:8 csv-syntax: '1B0x' (rank 1, cell 2) is not one action: "
                "unexpected 'x' after '1B0'"},
        BadCell{"F0\n", "1:1 csv-syntax: 'F0' (rank 0, cell 1) is not one "
                        "action: it must start with the stage number"},
        BadCell{"0f0\n", "1:2 csv-syntax: '0f0' (rank 0, cell 1) is not one "
                         "action: unknown action type 'f' (types are upper "
                         "case: F)"},
        BadCell{"0F\n", "1:3 csv-syntax: '0F' (rank 0, cell 1) is not one "
                        "action: F needs a microbatch"},
        BadCell{"0\n", "1:2 csv-syntax: '0' (rank 0, cell 1) is not one "
                       "action: expected an action type"},
        BadCell{"0UNSHARD1\n", "1:9 csv-syntax: '0UNSHARD1' (rank 0, cell 1) "
                               "is not one action: UNSHARD takes no "
                               "microbatch"},
        BadCell{"0F0,-1F0\n", "1:5 csv-syntax: '-1F0' (rank 0, cell 2) is not "
                              "one action: expected a stage number, found '-'"},
        BadCell{"0 F0\n", "1:2 csv-syntax: '0 F0' (rank 0, cell 1) is not one "
                          "action: expected an action type"},
        BadCell{"99999999999F0\n", "1:1 csv-syntax: '99999999999F0' (rank 0, "
                                   "cell 1) is not one action: the number is "
                                   "too large"},
        BadCell{"(0F0;1B0\n", "1:9 csv-syntax: '(0F0;1B0' (rank 0, cell 1) is "
                              "not one action: '(' is not closed"},
        BadCell{"(0F0;1B0)\n", "1:10 csv-syntax: '(0F0;1B0)' (rank 0, cell 1) "
                               "is not one action: expected OVERLAP_F_B"},
        BadCell{"(0F0;1B0)OVERLAP\n",
                "1:10 csv-syntax: '(0F0;1B0)OVERLAP' (rank 0, cell 1) is not "
                "one action: expected OVERLAP_F_B after ')', found 'OVERLAP'"},
        BadCell{"(0F0;1B0;2B0)OVERLAP_F_B\n",
                "1:2 csv-syntax: '(0F0;1B0;2B0)OVERLAP_F_B' (rank 0, cell 1) "
                "is not one action: an overlapped pair holds exactly two"},
        BadCell{"(0F0)OVERLAP_F_B\n",
                "1:2 csv-syntax: '(0F0)OVERLAP_F_B' (rank 0, cell 1) is not "
                "one action: an overlapped pair holds exactly two"},
        BadCell{"(0F0;)OVERLAP_F_B\n",
                "1:6 csv-syntax: '(0F0;)OVERLAP_F_B' (rank 0, cell 1) is not "
                "one action: an overlapped pair needs an action"},
        BadCell{"(0F0;0SEND_F0)OVERLAP_F_B\n",
                "1:6 csv-syntax: '(0F0;0SEND_F0)OVERLAP_F_B' (rank 0, cell 1) "
                "is not one action: only computes can overlap, not SEND_F"},
        BadCell{"0OVERLAP_F_B0\n", "1:2 csv-syntax: '0OVERLAP_F_B0' (rank 0, "
                                   "cell 1) is not one action: unknown action "
                                   "type 'OVERLAP_F_B'"},
        BadCell{"0F0,\"0B0\n", "1:5 csv-syntax: '\"0B0' (rank 0, cell 2) is "
                               "not one action: the quoted cell is not closed"},
        BadCell{"\"0F0\"x,0B0\n", "1:6 csv-syntax: '\"0F0\"x' (rank 0, cell 1) "
                                  "is not one action: unexpected text after "
                                  "the closing quote"},
        // Topology errors.
        BadCell{"0F0,0B0\n1F0,0F1\n",
                "2:5 stage-placement: stage 0 appears on rank 1 here and on "
                "rank 0 elsewhere"},
        BadCell{"0F0,1SEND_F0\n1F0\n",
                "1:5 stage-placement: stage 1 appears on rank 0 here and on "
                "rank 1 elsewhere"},
        BadCell{"0F0,0SEND_F0\n",
                "1:5 out-of-range: 0SEND_F0 has no partner: stage 1 does not "
                "exist (1 stages)"},
        BadCell{"0RECV_F0,0F0\n",
                "1:1 out-of-range: 0RECV_F0 has no partner: stage -1 does not "
                "exist"},
        BadCell{"", "1:1 no-pipeline: the file holds no action"},
        // A short file must not make later stages allocate a billion slots.
        BadCell{"0F0,1000000000F0\n", "1:5 out-of-range: 1000000001 stages "
                                      "are too many (at most 1048576)"},
        BadCell{"0F0,0F999999999\n", "1:5 out-of-range: 1000000000 "
                                     "microbatches are too many (at most "
                                     "16777216)"},
        BadCell{"\xEF\xBB\xBF"
                "0F0\n",
                "1:1 csv-syntax: the file starts with a "
                "UTF-8 byte-order mark"},
        BadCell{",,\n\n", "1:1 no-pipeline: the file holds no action"}));

TEST(TorchImportErrors, StagePlacementHasANoteAtTheFirstPlace) {
  Importer I;
  EXPECT_FALSE(I.run("0F0,0B0\n1F0,0F1\n"));
  ASSERT_EQ(I.Diags.diagnostics().size(), 1u);
  const Diagnostic &D = I.Diags.diagnostics().front();
  ASSERT_EQ(D.Notes.size(), 1u);
  SourcePos P = I.SM.resolve(D.Notes[0].Loc);
  EXPECT_EQ(P.Line, 1u);
  EXPECT_EQ(P.Col, 1u);
}

TEST(TorchImportErrors, EveryBadCellIsReported) {
  Importer I;
  EXPECT_FALSE(I.run("0F0,0X0,0F1\n1Y0,1F0\n"));
  EXPECT_EQ(I.Diags.numErrors(), 2u);
}

TEST(TorchImportErrors, SizesSmallerThanTheFile) {
  {
    Importer I;
    TorchImportOptions O;
    O.Stages = 1;
    EXPECT_FALSE(I.run("0F0\n1F0\n", O));
    EXPECT_EQ(I.first(), "2:1 out-of-range: stage 1 is out of range: the "
                         "pipeline has 1 stages (--stages)");
  }
  {
    Importer I;
    TorchImportOptions O;
    O.Microbatches = 2;
    EXPECT_FALSE(I.run("0F0,0F1,0F2\n", O));
    EXPECT_EQ(I.first(), "1:9 out-of-range: microbatch 2 is out of range: the "
                         "pipeline has 2 microbatches (--microbatches)");
  }
  {
    Importer I;
    TorchImportOptions O;
    O.Ranks = 1;
    EXPECT_FALSE(I.run("0F0\n1F0\n", O));
    EXPECT_TRUE(I.Diags.has(DiagKind::OutOfRange));
  }
}

TEST(TorchImportErrors, PlacementDisagreement) {
  Importer I;
  TorchImportOptions O;
  O.Place = Placement::V;
  // Loop placement of 4 stages on 2 ranks, but --placement v.
  EXPECT_FALSE(I.run("0F0,2F0\n1F0,3F0\n", O));
  EXPECT_EQ(I.first(), "1:5 stage-placement: stage 2 is on rank 0, but v "
                       "placement puts it on rank 1");
}

TEST(TorchImportErrors, VNeedsAMultipleOfRanks) {
  Importer I;
  TorchImportOptions O;
  O.Place = Placement::V;
  EXPECT_FALSE(I.run("0F0,2F0\n1F0\n", O));
  EXPECT_TRUE(I.Diags.has(DiagKind::InvalidValue));
}

TEST(TorchImportErrors, UnplacedStageWithoutPlacement) {
  Importer I;
  TorchImportOptions O;
  O.Stages = 3;
  EXPECT_FALSE(I.run("0F0\n1F0\n", O));
  EXPECT_EQ(I.first(), "1:1 stage-placement: stage 2 has no action on any "
                       "rank; give --placement loop or v to place it");
  Importer J;
  O.Stages = 5;
  EXPECT_FALSE(J.run("0F0\n1F0\n", O));
  EXPECT_EQ(J.Diags.numErrors(), 1u);
  EXPECT_EQ(J.first(), "1:1 stage-placement: stage 2 (and 2 more stages) has "
                       "no action on any rank; give --placement loop or v to "
                       "place it");
}

TEST(TorchImportErrors, MissingFile) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  EXPECT_FALSE(importTorchCsvFile("/nonexistent/x.csv", SM, Diags, {}));
  EXPECT_TRUE(Diags.has(DiagKind::FileError));
}

TEST(TorchImportErrors, RandomTextNeverCrashes) {
  // Cells built from the characters that matter to the parser.
  const std::string Alphabet = "0123456789FIWBSENDRCV_UHAOLPG();,\"\n\r \t";
  std::mt19937 Rng(42);
  for (int Round = 0; Round < 3000; ++Round) {
    std::string Text;
    size_t Len = Rng() % 40;
    for (size_t K = 0; K < Len; ++K)
      Text += Alphabet[Rng() % Alphabet.size()];
    Importer I;
    auto S = I.run(Text);
    if (S) {
      // Whatever parses exports and parses back to the same actions.
      Importer J;
      auto T = J.run(csv(*S, /*WithComms=*/true));
      ASSERT_TRUE(T) << "text: " << Text << "\n" << J.first();
    } else {
      EXPECT_TRUE(I.Diags.hasErrors()) << Text;
    }
  }
}

// --- export -----------------------------------------------------------------

TEST(TorchExport, ComputeOnlyDropsCommsAndControl) {
  ScheduleBuilder B(2, 2, 1);
  B.rank(0)
      .unshard(0)
      .F(0)
      .comm(ActionKind::SendF, 0, 0, 1)
      .idle(2)
      .B(0)
      .reduceGrad(0);
  B.rank(1).idle(1).F(0).B(0);
  Schedule S = B.build();
  EXPECT_EQ(csv(S), "0F0,,,0B0\n,1F0,1B0\n");
}

TEST(TorchExport, IdleRoundsToSlots) {
  ScheduleBuilder B(1, 1, 1);
  B.rank(0).idle(0.2f).F(0).idle(2.6f).B(0);
  EXPECT_EQ(csv(B.build()), ",0F0,,,,0B0\n");
}

TEST(TorchExport, WithCommsKeepsEverythingButIdle) {
  ScheduleBuilder B(2, 2, 1);
  B.rank(0)
      .unshard(0)
      .F(0)
      .comm(ActionKind::SendF, 0, 0, 1)
      .idle(1)
      .comm(ActionKind::RecvB, 0, 0, 1)
      .B(0)
      .reduceGrad(0)
      .reshard(0);
  B.rank(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .B(0)
      .comm(ActionKind::SendB, 0, 1, 0);
  EXPECT_EQ(csv(B.build(), true),
            "0UNSHARD,0F0,0SEND_F0,0RECV_B0,0B0,0REDUCE_GRAD,0RESHARD\n"
            // Stage 1 had no reduce_grad: it gets one after its last
            // backward and that backward's send.
            "1RECV_F0,1F0,1B0,1SEND_B0,1REDUCE_GRAD\n");
}

TEST(TorchExport, ReduceGradAfterLastWeightGradient) {
  ScheduleBuilder B(1, 2, 2);
  B.rank(0)
      .F(0, 0)
      .F(0, 1)
      .I(0, 1)
      .I(0, 0)
      .F(1, 0)
      .F(1, 1)
      .I(1, 1)
      .W(0, 1)
      .I(1, 0)
      .W(1, 1)
      .W(0, 0)
      .W(1, 0);
  EXPECT_EQ(csv(B.build(), true),
            "0F0,1F0,1I0,0I0,0F1,1F1,1I1,1W0,0I1,1W1,1REDUCE_GRAD,0W0,0W1,"
            "0REDUCE_GRAD\n");
}

TEST(TorchExport, ReduceGradAfterAnOverlapPairAndItsSends) {
  // Rank 1 of a V placement: stages 1 and 2; B0@1 overlapped with B1@2.
  ScheduleBuilder B(2, 4, 2, Placement::V);
  B.rank(1)
      .B(0, 2)
      .overlap(Action::compute(ActionKind::B, 0, 1),
               Action::compute(ActionKind::B, 1, 2))
      .comm(ActionKind::SendB, 0, 1, 0)
      .comm(ActionKind::RecvB, 1, 1, 0) // a receive ends the run of sends
      .B(1, 1);
  EXPECT_EQ(csv(B.build(), true),
            "\n2B0,(1B0;2B1)OVERLAP_F_B,1SEND_B0,2REDUCE_GRAD,1RECV_B1,1B1,"
            "1REDUCE_GRAD\n");
}

TEST(TorchExport, OverlapPair) {
  ScheduleBuilder B(2, 4, 2, Placement::V);
  B.rank(0).F(0, 0).overlap(Action::compute(ActionKind::F, 1, 0),
                            Action::compute(ActionKind::B, 0, 3));
  EXPECT_EQ(csv(B.build()), "0F0,(0F1;3B0)OVERLAP_F_B\n\n");
  EXPECT_EQ(torchActionName(Action::comm(ActionKind::RecvB, 2, 3, 1)),
            "3RECV_B2");
  EXPECT_EQ(torchActionName(Action::control(ActionKind::ReduceGrad, 3)),
            "3REDUCE_GRAD");
  EXPECT_EQ(torchActionName(Action::idle(1)), "");
}

// --- round trips of builder-made schedules ---------------------------------

namespace {

/// 1F1B on P ranks, M microbatches, with PyTorch-style warmup idles.
Schedule oneFOneB(int P, int M) {
  ScheduleBuilder B(P, P, M);
  for (int R = 0; R < P; ++R) {
    RankBuilder RB = B.rank(R);
    if (R)
      RB.idle(float(R));
    int Warm = std::min(P - R - 1, M), F = 0, Bw = 0;
    for (; F < Warm; ++F)
      RB.F(F);
    while (F < M) {
      RB.F(F++);
      RB.B(Bw++);
    }
    while (Bw < M)
      RB.B(Bw++);
  }
  return B.build();
}

/// ZB-H1-like order with split I and W.
Schedule zeroBubble(int P, int M) {
  ScheduleBuilder B(P, P, M);
  for (int R = 0; R < P; ++R) {
    RankBuilder RB = B.rank(R);
    int Warm = std::min(P - R - 1, M), F = 0, I = 0, W = 0;
    for (; F < Warm; ++F)
      RB.F(F);
    while (F < M) {
      RB.F(F++);
      RB.I(I++);
      if (I - W > R)
        RB.W(W++);
    }
    while (I < M)
      RB.I(I++);
    while (W < M)
      RB.W(W++);
  }
  return B.build();
}

/// V placement, two stages per rank, with overlapped pairs.
Schedule vOverlap(int P, int M) {
  ScheduleBuilder B(P, 2 * P, M, Placement::V);
  for (int R = 0; R < P; ++R) {
    RankBuilder RB = B.rank(R);
    int Lo = R, Hi = 2 * P - 1 - R;
    for (int Mb = 0; Mb < M; ++Mb)
      RB.F(Mb, Lo);
    RB.F(0, Hi);
    for (int Mb = 1; Mb < M; ++Mb)
      RB.overlap(Action::compute(ActionKind::F, Mb, Hi),
                 Action::compute(ActionKind::B, Mb - 1, Hi));
    RB.B(M - 1, Hi);
    for (int Mb = 0; Mb < M; ++Mb)
      RB.B(Mb, Lo);
  }
  return B.build();
}

/// 2 ranks, 2 stages, comms and FSDP control actions.
Schedule withComms() {
  ScheduleBuilder B(2, 2, 2);
  B.rank(0)
      .unshard(0)
      .F(0)
      .comm(ActionKind::SendF, 0, 0, 1)
      .F(1)
      .comm(ActionKind::SendF, 1, 0, 1)
      .comm(ActionKind::RecvB, 0, 0, 1)
      .B(0)
      .comm(ActionKind::RecvB, 1, 0, 1)
      .B(1)
      .reduceGrad(0)
      .reshard(0);
  B.rank(1)
      .unshard(1)
      .comm(ActionKind::RecvF, 0, 1, 0)
      .F(0)
      .B(0)
      .comm(ActionKind::SendB, 0, 1, 0)
      .comm(ActionKind::RecvF, 1, 1, 0)
      .F(1)
      .B(1)
      .comm(ActionKind::SendB, 1, 1, 0)
      .reduceGrad(1)
      .reshard(1);
  return B.build();
}

Schedule roundTrip(const Schedule &S, bool WithComms) {
  Importer I;
  TorchImportOptions O;
  O.KeepIdle = true;
  auto T = I.run(csv(S, WithComms), O);
  EXPECT_TRUE(T) << I.first();
  return T ? std::move(*T) : Schedule();
}

} // namespace

TEST(TorchRoundTrip, ComputeOnlySchedules) {
  for (int P : {2, 4, 8})
    for (int M : {1, P, 2 * P + 1}) {
      SCOPED_TRACE(testing::Message() << "P=" << P << " M=" << M);
      expectEquivalent(roundTrip(oneFOneB(P, M), false), oneFOneB(P, M));
      expectEquivalent(roundTrip(zeroBubble(P, M), false), zeroBubble(P, M));
      expectEquivalent(roundTrip(vOverlap(P, M), false), vOverlap(P, M));
    }
}

TEST(TorchRoundTrip, WithComms) {
  Schedule S = withComms();
  expectEquivalent(roundTrip(S, true), S);
  // The compute-only flavour keeps the computes only.
  Schedule C = roundTrip(S, false);
  EXPECT_FALSE(C.hasComms());
  EXPECT_EQ(C.numActions(), 8u);
}

TEST(TorchRoundTrip, CsvToCsvIsStable) {
  const char *Text = ",1F0,,1B0\n0F0,0B0\n";
  Importer I;
  TorchImportOptions O;
  O.KeepIdle = true;
  auto S = I.run(Text, O);
  ASSERT_TRUE(S) << I.first();
  EXPECT_EQ(csv(*S), Text);
}

// --- flavour warnings --------------------------------------------------------

TEST(TorchImportFlavour, EmptyCellInACommsFile) {
  Importer I;
  // Padding counts too: csv.reader gives '' and PyTorch asserts on None.
  auto S = I.run("0F0,0SEND_F0,\n1RECV_F0,1F0\n");
  ASSERT_TRUE(S);
  EXPECT_EQ(I.Diags.numWarnings(), 1u);
  EXPECT_EQ(I.first(), "1:14 csv-flavour: empty cell in a compute+comms file: "
                       "PyTorch's loader for that flavour rejects empty cells "
                       "(pps reads it as an idle slot)");
  ASSERT_EQ(I.Diags.diagnostics().front().Notes.size(), 1u);
}

TEST(TorchImportFlavour, ControlInAComputeOnlyFile) {
  Importer I;
  auto S = I.run("0UNSHARD,0F0,0B0\n");
  ASSERT_TRUE(S);
  EXPECT_EQ(I.first().rfind("1:1 csv-flavour: control action in a "
                            "compute-only file",
                            0),
            0u);
}

TEST(TorchImportFlavour, CleanFilesDoNotWarn) {
  TorchImportOptions Loop3; // the blank line's rank holds stage 1
  Loop3.Stages = 3;
  Loop3.Place = Placement::Loop;
  for (auto [Text, O] : {std::pair{",0F0,,0B0\n", TorchImportOptions{}},
                         {"0UNSHARD,0F0,0SEND_F0\n1RECV_F0,1F0\n", {}},
                         {"0F0\n\n2F0\n", Loop3}}) {
    Importer I;
    ASSERT_TRUE(I.run(Text, O)) << Text;
    EXPECT_EQ(I.Diags.numWarnings(), 0u) << Text;
  }
}

TEST(TorchImportFlavour, WarningsAsErrorsFailsTheImport) {
  Importer I;
  I.Diags.setWarningsAsErrors(true);
  EXPECT_FALSE(I.run("0UNSHARD,0F0,0B0\n"));
}
