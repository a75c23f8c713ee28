//===- PassRegistryTest.cpp - pass names known before anything runs -------===//
//
// The registry must know every pass the pipeline can add (or the driver
// would reject a valid --disable-pass), in pipeline order, and suggest the
// nearest name for a misspelling.
//
//===----------------------------------------------------------------------===//
#include "pps/ir/Builder.h"
#include "pps/pipeline/PassPipeline.h"

#include <gtest/gtest.h>

using namespace pps;

namespace {

TEST(PassRegistry, KnowsEveryPassThePipelineAdds) {
  const passes::PassRegistry &R = pipeline::passRegistry();
  ir::ScheduleBuilder B(2, 2, 2);
  ir::Schedule S = B.build();
  S.Synth = ir::SynthRequest{};
  S.Fsdp.Enabled = true;
  for (pipeline::Goal G : {pipeline::Goal::Lower, pipeline::Goal::Check})
    for (bool Align : {false, true}) {
      passes::PassManager PM;
      pipeline::addPasses(PM, S, {G, Align});
      // The pipeline's order is the registry's order.
      size_t Last = 0;
      for (llvm::StringRef Name : PM.names()) {
        const passes::PassInfo *Info = R.lookup(Name);
        ASSERT_NE(Info, nullptr) << Name.str();
        size_t Index = size_t(Info - R.passes().data());
        EXPECT_GE(Index, Last) << Name.str();
        Last = Index;
      }
    }
  // With every option on, Check adds every registered pass.
  passes::PassManager PM;
  pipeline::addPasses(PM, S, {pipeline::Goal::Check, true});
  EXPECT_EQ(PM.names().size(), R.passes().size());
}

TEST(PassRegistry, ChecksSayWhatTheyLeaveUnchecked) {
  const passes::PassRegistry &R = pipeline::passRegistry();
  for (const char *Check : {"verify-deps", "deadlock", "memory"}) {
    const passes::PassInfo *Info = R.lookup(Check);
    ASSERT_NE(Info, nullptr) << Check;
    EXPECT_FALSE(Info->Unchecked.empty()) << Check;
    EXPECT_FALSE(Info->Description.empty()) << Check;
  }
  EXPECT_TRUE(R.lookup("fsdp")->Unchecked.empty());
}

TEST(PassRegistry, SuggestsTheNearestName) {
  const passes::PassRegistry &R = pipeline::passRegistry();
  EXPECT_EQ(R.suggest("deadlck"), "deadlock");
  EXPECT_EQ(R.suggest("memroy"), "memory");
  EXPECT_EQ(R.suggest("insert-coms"), "insert-comms");
  EXPECT_EQ(R.suggest("verifydeps"), "verify-deps");
  EXPECT_EQ(R.suggest("x"), "");
  EXPECT_EQ(R.suggest("optimise"), "");
  EXPECT_EQ(R.lookup("Deadlock"), nullptr);
}

} // namespace
