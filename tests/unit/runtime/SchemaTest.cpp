//===- SchemaTest.cpp - the action schema the compiler and runtime share --===//
#include "pps/backends/CppEmitter.h"
#include "pps/ir/Schedule.h"
#include "ppsrt/Schedule.h"
#include "ppsrt/Transport.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <type_traits>

using namespace pps;
using schema::Kind;

namespace {

// The compiler's and the runtime's kinds are one enum, so the numbering the
// emitter writes is the numbering the executor reads.
static_assert(std::is_same_v<ir::ActionKind, ppsrt::Kind>,
              "one kind enum for compiler and runtime");
static_assert(std::is_same_v<ir::CommModel, ppsrt::CommModel>,
              "one comm model enum for compiler and runtime");
static_assert(ir::NumActionKinds == ppsrt::NumKinds);

constexpr Kind AllKinds[] = {
#define PPS_ACTION_KIND(Id, ...) Kind::Id,
#include "ppsrt/ActionKinds.def"
};

TEST(Schema, NameTablesAreComplete) {
  std::set<std::string> Names, Torch;
  for (Kind K : AllKinds) {
    EXPECT_TRUE(Names.insert(schema::kindName(K)).second) << "duplicate name";
    EXPECT_EQ(ir::actionKindName(K), schema::kindName(K));
    EXPECT_EQ(ir::actionKindTorchName(K), schema::torchName(K));
    std::string T = schema::torchName(K);
    if (T.empty()) {
      EXPECT_EQ(K, Kind::Idle);
      continue;
    }
    EXPECT_TRUE(Torch.insert(T).second);
    EXPECT_EQ(schema::kindFromTorchName(T), K);
  }
  EXPECT_EQ(schema::kindFromTorchName(""), std::nullopt);
  EXPECT_EQ(schema::kindFromTorchName("send_f"), std::nullopt);
  EXPECT_EQ(schema::torchNameList(), "F, I, W, B, SEND_F, RECV_F, SEND_B, "
                                     "RECV_B, UNSHARD, RESHARD, REDUCE_GRAD");
}

TEST(Schema, ClassesPartitionTheKinds) {
  for (Kind K : AllKinds) {
    int Classes = schema::isCompute(K) + schema::isComm(K) +
                  schema::isControl(K) + schema::isIdle(K);
    EXPECT_EQ(Classes, 1) << schema::kindName(K);
    EXPECT_EQ(schema::isComm(K), schema::isSend(K) || schema::isRecv(K));
  }
  EXPECT_STREQ(schema::traceCategory(Kind::SendB), "send");
  EXPECT_STREQ(schema::traceCategory(Kind::RecvF), "recv");
  EXPECT_STREQ(schema::traceCategory(Kind::W), "W");
  EXPECT_STREQ(schema::traceCategory(Kind::ReduceGrad), "control");
}

TEST(Schema, ThePartnerRule) {
  // SEND_F(m, s) <-> RECV_F(m, s+1), SEND_B(m, s) <-> RECV_B(m, s-1).
  EXPECT_TRUE(schema::commsMatch(Kind::SendF, 3, 5, Kind::RecvF, 3, 6));
  EXPECT_TRUE(schema::commsMatch(Kind::SendB, 3, 6, Kind::RecvB, 3, 5));
  EXPECT_FALSE(schema::commsMatch(Kind::SendF, 3, 5, Kind::RecvF, 3, 5));
  EXPECT_FALSE(schema::commsMatch(Kind::SendF, 3, 5, Kind::RecvF, 4, 6));
  EXPECT_FALSE(schema::commsMatch(Kind::SendF, 3, 5, Kind::RecvB, 3, 6));
  EXPECT_FALSE(schema::commsMatch(Kind::RecvF, 3, 6, Kind::SendF, 3, 5));
  for (Kind K : AllKinds) {
    if (!schema::isComm(K))
      continue;
    schema::Action A{K, 0, 2, 3, 5};
    schema::Action M = schema::matchingComm(A, 1);
    schema::Action Back = schema::matchingComm(M, 2);
    EXPECT_EQ(Back.kind, A.kind);
    EXPECT_EQ(Back.stage, A.stage);
    const schema::Action &S = schema::isSend(K) ? A : M;
    const schema::Action &R = schema::isSend(K) ? M : A;
    EXPECT_TRUE(
        schema::commsMatch(S.kind, S.mb, S.stage, R.kind, R.mb, R.stage));
  }
}

TEST(Schema, TheProducerRuleFollowsRoutes) {
  schema::Route One{4, 8, 1};
  auto P = schema::producerOf(Kind::F, 2, 0, One);
  EXPECT_EQ(P.What, schema::Needs::Nothing);
  P = schema::producerOf(Kind::F, 2, 3, One);
  EXPECT_EQ(P.What, schema::Needs::F);
  EXPECT_EQ(P.Stage, 2);
  EXPECT_TRUE(P.CrossStage);
  P = schema::producerOf(Kind::I, 2, 3, One);
  EXPECT_EQ(P.What, schema::Needs::F); // last stage: its own F
  EXPECT_FALSE(P.CrossStage);
  P = schema::producerOf(Kind::B, 2, 1, One);
  EXPECT_EQ(P.What, schema::Needs::BorI);
  EXPECT_EQ(P.Stage, 2);
  P = schema::producerOf(Kind::W, 2, 1, One);
  EXPECT_EQ(P.What, schema::Needs::I);
  EXPECT_EQ(P.Stage, 1);
  // Bidirectional: microbatches 4..7 traverse stages 2..3.
  schema::Route Two{4, 8, 2};
  EXPECT_EQ(schema::producerOf(Kind::F, 5, 2, Two).What,
            schema::Needs::Nothing);
  EXPECT_EQ(schema::producerOf(Kind::B, 1, 1, Two).What, schema::Needs::F);
  EXPECT_EQ(schema::inputRecvKind(Kind::F, 5, 3, Two), Kind::RecvF);
  EXPECT_EQ(schema::inputRecvKind(Kind::B, 5, 3, Two), Kind::Idle);
  EXPECT_EQ(schema::outputSendKind(Kind::I, 5, 3, Two), Kind::SendB);
  EXPECT_EQ(schema::outputSendKind(Kind::I, 5, 2, Two), Kind::Idle);
  EXPECT_EQ(schema::outputSendKind(Kind::W, 5, 3, Two), Kind::Idle);
}

TEST(Schema, TheMemoryRule) {
  using schema::MemoryEffect;
  EXPECT_EQ(schema::memoryEffect(Kind::F, false), MemoryEffect::Acquire);
  EXPECT_EQ(schema::memoryEffect(Kind::B, true), MemoryEffect::Release);
  EXPECT_EQ(schema::memoryEffect(Kind::W, true), MemoryEffect::Release);
  EXPECT_EQ(schema::memoryEffect(Kind::I, true), MemoryEffect::ReleaseInput);
  EXPECT_EQ(schema::memoryEffect(Kind::I, false), MemoryEffect::Release);
  EXPECT_EQ(schema::memoryEffect(Kind::SendF, false), MemoryEffect::None);
}

TEST(Schema, RowsRoundTripThroughTheEmittersEncoding) {
  for (Kind K : AllKinds)
    for (int32_t Peer : {-1, 0, 7, (1 << 23) - 2}) {
      ir::Action A = schema::isComm(K)      ? ir::Action::comm(K, 3, 4, Peer)
                     : schema::isControl(K) ? ir::Action::control(K, 4)
                     : schema::isIdle(K)    ? ir::Action::idle(2.5f)
                                            : ir::Action::compute(K, 3, 4);
      if (schema::isCompute(K))
        A.Flags = ir::ActionFlags::OverlapNext;
      int32_t Row[ppsrt::RowWords];
      backends::encodeRow(A, Row);
      ppsrt::Action D = ppsrt::decodeRow(Row);
      EXPECT_EQ(D.kind, K);
      EXPECT_EQ(D.flags, A.Flags);
      EXPECT_EQ(D.peer, schema::isComm(K) ? Peer : -1);
      if (schema::isIdle(K))
        continue;
      EXPECT_EQ(D.mb, A.Microbatch);
      EXPECT_EQ(D.stage, A.Stage);
      // The runtime spells it as the compiler does.
      EXPECT_EQ(ppsrt::formatAction(D), ir::actionText(A));
    }
}

TEST(Schema, OneWordingOfAFifoMismatch) {
  ppsrt::Action Sent{Kind::SendF, 0, 1, 2, 0};
  ppsrt::Action Recv{Kind::RecvF, 0, 0, 3, 1};
  std::string Msg = ppsrt::checkMatch(0, Sent, 1, Recv, 1);
  EXPECT_EQ(Msg, schema::fifoMismatchMessage(1, 0, 1, "`send F2@0 -> 1`",
                                             "`recv F3@1 <- 0`") +
                     " (" + schema::FifoRule + ") [fifo-mismatch]");
  EXPECT_EQ(Msg.rfind("the 2nd send from rank 0 to rank 1 is `send F2@0 -> "
                      "1`, but the 2nd receive at rank 1 from rank 0 is "
                      "`recv F3@1 <- 0`",
                      0),
            0u);
  Recv.mb = 2;
  EXPECT_EQ(ppsrt::checkMatch(0, Sent, 1, Recv, 1), "");
}

} // namespace
