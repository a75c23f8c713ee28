//===- SynthTestUtil.h - helpers shared by the synth unit tests -----------===//
#pragma once

#include "pps/synth/Algorithms.h"
#include "pps/synth/SynthPass.h"

#include "pps/passes/AlignBubbles.h"
#include "pps/passes/Deadlock.h"
#include "pps/passes/InsertComms.h"
#include "pps/passes/Memory.h"
#include "pps/passes/VerifyDeps.h"
#include "pps/support/SourceManager.h"

#include <string>

namespace pps::synth::test {

/// Lowers S (insert-comms) and lints it like `ppsc lint`: verify-deps,
/// insert-comms, deadlock, align-bubbles analysis, memory. Returns the
/// printed diagnostics; empty means lint clean.
inline std::string lowerAndLint(ir::Schedule &S) {
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  passes::PassManager PM;
  PM.add(passes::createVerifyDepsPass());
  PM.add(passes::createInsertCommsPass());
  PM.add(passes::createDeadlockPass());
  PM.add(passes::createAlignBubblesPass({/*Insert=*/false}));
  PM.add(passes::createMemoryPass());
  passes::PassContext Ctx{Diags, {}};
  bool Ok = PM.run(S, Ctx);
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  Diags.print(OS);
  OS.flush();
  if (!Ok && Out.empty())
    Out = "pass pipeline failed";
  return Out;
}

} // namespace pps::synth::test
