//===- PassPipeline.cpp - the compiler's passes, in order -----------------===//
#include "pps/pipeline/PassPipeline.h"

#include "pps/passes/AlignBubbles.h"
#include "pps/passes/CommStreams.h"
#include "pps/passes/Deadlock.h"
#include "pps/passes/Fsdp.h"
#include "pps/passes/InsertComms.h"
#include "pps/passes/Memory.h"
#include "pps/passes/VerifyDeps.h"
#include "pps/synth/SynthPass.h"

namespace pps::pipeline {

void addPasses(passes::PassManager &PM, const ir::Schedule &S,
               const PipelineConfig &Config) {
  bool Check = Config.Until == Goal::Check;

  // The passes, in order (see docs/passes.md for why this order).
  // A `schedule synth(...)` request becomes explicit rank lists first.
  if (S.Synth)
    PM.add(synth::createSynthPass());
  // Verification first: insert-comms trusts a complete, ordered compute set.
  PM.add(passes::createVerifyDepsPass());
  // Comms next (or a check of the user's), so later passes see what runs.
  PM.add(passes::createInsertCommsPass(Config.Comms));
  // The independent proof: matching and the happens-before graph.
  if (Check)
    PM.add(passes::createDeadlockPass());
  // Once proved: what the stream rule costs (early-recv).
  if (Check)
    PM.add(passes::createCommStreamsPass());
  // Timing after comms: idle slots go ahead of the receives that feed a
  // compute. Under Check it always analyses (idle-ready-work); it rewrites
  // only when asked.
  if (Check || Config.AlignBubbles)
    PM.add(passes::createAlignBubblesPass({/*Insert=*/Config.AlignBubbles}));
  if (Check)
    PM.add(passes::createMemoryPass());
  // FSDP last: its controls wrap the final compute order and move no comm.
  if (S.Fsdp.Enabled)
    PM.add(passes::createFsdpPass());
}

bool proved(const passes::AnalysisResults &R) {
  return R.DepsVerified && R.DeadlockFree && !R.PeakMemory.empty();
}

namespace {
void registerPass(passes::PassRegistry &R, std::unique_ptr<passes::Pass> P,
                  const char *Unchecked) {
  R.add({P->name().str(), P->description().str(), Unchecked});
}
} // namespace

const passes::PassRegistry &passRegistry() {
  static const passes::PassRegistry Registry = [] {
    passes::PassRegistry R;
    // In addPasses' order. The names come from the passes themselves.
    registerPass(R, synth::createSynthPass(), "");
    registerPass(R, passes::createVerifyDepsPass(),
                 "missing, duplicate and misplaced actions and the order of "
                 "dependencies were not checked");
    registerPass(R, passes::createInsertCommsPass(),
                 "no send/recv was inserted, and the schedule's own were not "
                 "checked against the dependencies they carry");
    registerPass(R, passes::createDeadlockPass(),
                 "the schedule was not checked for deadlock, FIFO mismatches "
                 "or unmatched sends and receives");
    registerPass(R, passes::createCommStreamsPass(),
                 "the comms were not timed under the stream rule, so "
                 "receives that hold back their stream were not looked for");
    registerPass(R, passes::createAlignBubblesPass({/*Insert=*/false}),
                 "the schedule was not timed, so idle time with ready work "
                 "was not looked for");
    registerPass(R, passes::createMemoryPass(),
                 "peak activation memory and the memory limit were not "
                 "checked");
    registerPass(R, passes::createFsdpPass(), "");
    return R;
  }();
  return Registry;
}

} // namespace pps::pipeline
