//===- EvaluateSynth.cpp - the `schedule synth(...)` request --------------===//
//
// `schedule synth(memory: N, name: value, ...)` names no schedule: it asks
// the synth pass for one. The request's arguments are evaluated here (with
// command-line overrides), the memory limit taken from the call, -D, or the
// pipeline's `memory limit`, and the arguments sorted so the request is the
// same whatever order they were written in.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorImpl.h"

#include <algorithm>

namespace pps::frontend::eval {

void Evaluator::buildSynthRequest(CallExpr &C) {
  ir::SynthRequest R;
  R.Loc = C.Loc;
  bool HaveMemory = false;
  for (Arg &A : C.Args) {
    if (A.Name.empty()) {
      fail(DiagKind::InvalidValue, A.Value->Loc,
           "synth takes named arguments, e.g. synth(memory: 4)");
      return;
    }
    std::optional<int64_t> V = override(A.Name);
    if (!V)
      V = evalInt(*A.Value);
    if (Failed)
      return;
    if (A.Name == "memory") {
      R.MemoryLimit = *V;
      HaveMemory = true;
    } else {
      R.Args.emplace_back(A.Name, *V);
    }
  }
  if (Failed)
    return;
  if (!HaveMemory) {
    if (auto O = override("memory"))
      R.MemoryLimit = *O, HaveMemory = true;
    else if (auto O = override("memory_limit"))
      R.MemoryLimit = *O, HaveMemory = true;
    else if (Out.MemoryLimit)
      R.MemoryLimit = *Out.MemoryLimit, HaveMemory = true;
  }
  if (!HaveMemory) {
    fail(DiagKind::MissingField, C.Loc,
         "synth needs a memory limit: synth(memory: N) or 'memory limit "
         "N;'");
    return;
  }
  if (R.MemoryLimit <= 0) {
    fail(DiagKind::OutOfRange, C.Loc,
         fmt::format("synth memory limit must be positive, got {}",
                     R.MemoryLimit));
    return;
  }
  std::sort(R.Args.begin(), R.Args.end());
  Out.Synth = std::move(R);
}

} // namespace pps::frontend::eval
