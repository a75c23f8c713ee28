//===- fuzz_torch_csv.cpp - libFuzzer target: the PyTorch CSV importer ----===//
//
// The input is a PyTorch schedule CSV (either flavour). The first byte
// picks the import options (placement, idle cells, given sizes), the rest
// is the file. What imports goes through the lint pipeline, the simulator
// and every emitter (FuzzBackEnd.h), as `ppsc lint/sim FILE.csv` do.
//
//===----------------------------------------------------------------------===//
#include "FuzzBackEnd.h"

#include "pps/import/TorchCsv.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  using namespace pps;
  if (Size == 0)
    return 0;
  uint8_t Flags = Data[0];
  import::TorchImportOptions O;
  if (Flags & 1)
    O.Place = ir::Placement::Loop;
  else if (Flags & 2)
    O.Place = ir::Placement::V;
  O.KeepIdle = Flags & 4;
  if (Flags & 8)
    O.Ranks = 1 + (Flags >> 4);
  if (Flags & 16)
    O.Microbatches = 1 + (Flags >> 5);
  SourceManager SM;
  DiagnosticEngine Diags(SM);
  Diags.setErrorLimit(20);
  FileId File = SM.addBuffer(
      "fuzz.csv",
      std::string(reinterpret_cast<const char *>(Data + 1), Size - 1));
  std::optional<ir::Schedule> S = import::importTorchCsv(File, SM, Diags, O);
  // Imports build from the cells alone: bound the back end's work by the
  // same action limit as .pps inputs.
  if (S && S->numActions() <= fuzz::FuzzMaxActions)
    fuzz::runBackEnd(*S, Diags);
  fuzz::flushDiagnostics(Diags);
  return 0;
}
