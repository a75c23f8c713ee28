//===- fuzz_pps.cpp - libFuzzer target: the .pps front end and back end ---===//
//
// The input is a .pps file. It goes through the front end (lexer, parser,
// sema, evaluator) as `ppsc check` does, and, when it compiles, through the
// lint pipeline, the simulator and every emitter (FuzzBackEnd.h). Crashes,
// sanitizer reports, hangs past libFuzzer's -timeout and a failed round
// trip of the lowered form are findings.
//
//===----------------------------------------------------------------------===//
#include "FuzzBackEnd.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  using namespace pps;
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  Diags.setErrorLimit(20);
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  std::optional<ir::Schedule> S = frontend::compileBuffer(
      "fuzz.pps", Text, SM, Diags, fuzz::fuzzFrontendOptions());
  if (S)
    fuzz::runBackEnd(*S, Diags);
  fuzz::flushDiagnostics(Diags);
  return 0;
}
