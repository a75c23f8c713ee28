//===- fuzz_run_options.cpp - libFuzzer target: the executor's options ----===//
//
// The input is an executor command line, one argument per line. It goes
// through ppsrt::parseRunOptions as a generated executor's main() does.
// Whatever it accepts must be in range (every later conversion of these
// values is defined): a finding aborts.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/Main.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

static void require(bool Ok, const char *What) {
  if (Ok)
    return;
  std::fprintf(stderr, "parseRunOptions accepted an option out of range: %s\n",
               What);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::vector<std::string> Args{"exec"};
  std::string Cur;
  for (size_t I = 0; I < Size; ++I) {
    char C = char(Data[I]);
    if (C == '\n') {
      Args.push_back(Cur);
      Cur.clear();
    } else {
      Cur += C;
    }
  }
  if (!Cur.empty())
    Args.push_back(Cur);
  std::vector<char *> Argv;
  Argv.reserve(Args.size() + 1);
  for (std::string &A : Args)
    Argv.push_back(A.data());
  Argv.push_back(nullptr);
  ppsrt::RunOptions O;
  std::string Error;
  if (!ppsrt::parseRunOptions(int(Args.size()), Argv.data(), O, Error))
    return 0;
  require(O.steps >= 1, "--steps");
  require(O.ranks == -1 || O.ranks >= 1, "--ranks");
  require(std::isfinite(O.watchdogSeconds) && O.watchdogSeconds >= 0,
          "--watchdog");
  require(std::isfinite(O.timeScale) && O.timeScale >= 0, "--time-scale");
  require(O.transport == "threads" || O.transport == "mpi", "--transport");
  return 0;
}
