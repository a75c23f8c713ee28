//===- FuzzBackEnd.h - what the fuzz targets run after a front end --------===//
//
// Everything ppsc does with a schedule once a front end (.pps, PyTorch CSV)
// has built it: the lint pipeline (every check), the simulator, and every
// emitter and timeline writer, into a null stream; the diagnostics in text
// and JSON. Inputs that pass the lowering pipeline must round-trip through
// the lowered .pps form (docs/architecture.md): a failure there aborts, so
// libFuzzer reports it as a crash.
//
// Limits are set low (step budget, actions, input size) so one execution
// takes milliseconds: the fuzzer explores shapes, not sizes; the size
// limits have their own lit tests (tests/lit/reliability).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/backends/CppEmitter.h"
#include "pps/backends/JsonEmitter.h"
#include "pps/backends/PpsPrinter.h"
#include "pps/backends/TorchCsv.h"
#include "pps/backends/Trace.h"
#include "pps/frontend/Frontend.h"
#include "pps/passes/PassManager.h"
#include "pps/pipeline/PassPipeline.h"
#include "pps/sim/CommVolume.h"
#include "pps/sim/Simulator.h"
#include "pps/support/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace pps::fuzz {

/// Small limits: a fuzz execution must stay fast whatever the input says.
constexpr uint64_t FuzzMaxActions = 20000;
constexpr uint64_t FuzzStepBudget = 200000;

inline frontend::FrontendOptions fuzzFrontendOptions() {
  frontend::FrontendOptions O;
  O.StepBudget = FuzzStepBudget;
  O.MaxActions = FuzzMaxActions;
  O.StdlibDir = PPS_FUZZ_STDLIB;
  // Imports stay inside the stdlib: a generated `import "/dev/stdin"` must
  // not read the fuzzer's own input stream.
  O.ImportRoot = PPS_FUZZ_STDLIB;
  return O;
}

/// Prints the diagnostics both ways (escaping and sorting are exercised).
inline void flushDiagnostics(DiagnosticEngine &Diags) {
  llvm::raw_null_ostream Null;
  DiagnosticEngine Copy = Diags;
  Copy.print(Null, DiagFormat::Json);
  Diags.print(Null, DiagFormat::Text);
}

/// Runs the pass pipeline to Goal on S; true if no pass reported an error.
inline bool runPasses(ir::Schedule &S, DiagnosticEngine &Diags,
                      pipeline::Goal Goal, passes::AnalysisResults &Out,
                      bool AlignBubbles = false) {
  passes::PassManager PM;
  pipeline::PipelineConfig Config;
  Config.Until = Goal;
  Config.AlignBubbles = AlignBubbles;
  pipeline::addPasses(PM, S, Config);
  passes::PassContext Ctx{Diags, {}};
  Ctx.MaxActions = FuzzMaxActions;
  bool Ok = PM.run(S, Ctx);
  Out = std::move(Ctx.Results);
  return Ok;
}

/// The lowered form of S must parse back to as many actions per rank.
inline void checkRoundTrip(const ir::Schedule &S) {
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  backends::printPps(S, OS);
  OS.flush();
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  frontend::FrontendOptions O = fuzzFrontendOptions();
  // The printed form may be longer than the input: no tighter limit than
  // what it holds.
  O.MaxActions = S.numActions() + 1;
  std::optional<ir::Schedule> Back =
      frontend::compileBuffer("roundtrip.pps", Text, SM, Diags, O);
  bool Same = Back && Back->Ranks.size() == S.Ranks.size();
  for (size_t R = 0; Same && R < S.Ranks.size(); ++R)
    Same = Back->Ranks[R].Actions.size() == S.Ranks[R].Actions.size();
  if (Same)
    return;
  Diags.print(llvm::errs());
  std::fprintf(stderr, "round trip failed; the printed form was:\n%s\n",
               Text.c_str());
  std::abort();
}

/// Lint, simulate and emit S (a schedule a front end accepted).
inline void runBackEnd(const ir::Schedule &Input, DiagnosticEngine &Diags) {
  llvm::raw_null_ostream Null;
  // Lowering only (emit --target=pps|json|torch), then the round trip.
  {
    ir::Schedule S = Input;
    passes::AnalysisResults R;
    if (runPasses(S, Diags, pipeline::Goal::Lower, R)) {
      backends::printPps(S, Null);
      backends::emitJson(
          S, Null,
          backends::ExportStatus::unverified(S.Comm, "lowered only (fuzzing)"));
      if (backends::checkTorchExport(S, Diags)) {
        backends::emitTorchCsv(S, Null, {false});
        backends::emitTorchCsv(S, Null, {true});
      }
      checkRoundTrip(S);
    }
  }
  // Every check (lint, sim, emit --target=cpp|trace), with idle slots.
  for (bool Align : {false, true}) {
    ir::Schedule S = Input;
    passes::AnalysisResults R;
    if (!runPasses(S, Diags, pipeline::Goal::Check, R, Align))
      continue;
    sim::SimOptions SO;
    SO.Deadlock = R.Deadlock ? &*R.Deadlock : nullptr;
    sim::SimResult Sim = sim::simulate(S, SO, &Diags);
    sim::CommVolumeOptions VO;
    sim::CommVolumeReport Vol = sim::computeCommVolume(S, VO, &Sim);
    backends::writeGantt(S, Sim, Null, {});
    backends::writeSummary(S, Sim, Null, &Vol, &VO);
    backends::writeChromeTrace(S, Sim, Null);
    backends::writeSvg(S, Sim, Null);
    backends::writeHtml(S, Sim, Null, &Vol);
    backends::writeFiguresJson(S, Sim, Null, &Vol, &VO);
    backends::writeActionCsv(S, Sim, Null);
    if (!Align)
      backends::emitCpp(S, {"fuzz.pps", true}, Null);
  }
}

} // namespace pps::fuzz
