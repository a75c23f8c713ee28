//===- ReplayMain.cpp - a fuzz target over its corpus, without libFuzzer --===//
//
// Linked into the fuzz targets in builds without PPS_FUZZ (any compiler):
// calls LLVMFuzzerTestOneInput once per file of the directories and files
// given, so ctest replays the seed corpus and every input a fuzzer once
// found (a crash aborts; a sanitizer build reports).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size);

static bool readFile(const std::string &Path, std::vector<uint8_t> &Out) {
  std::FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F)
    return false;
  uint8_t Buf[1 << 16];
  size_t N;
  while ((N = std::fread(Buf, 1, sizeof(Buf), F)) > 0)
    Out.insert(Out.end(), Buf, Buf + N);
  bool Ok = !std::ferror(F);
  std::fclose(F);
  return Ok;
}

int main(int Argc, char **Argv) {
  namespace fs = std::filesystem;
  std::vector<std::string> Files;
  for (int I = 1; I < Argc; ++I) {
    std::error_code EC;
    if (!fs::is_directory(Argv[I], EC)) {
      Files.push_back(Argv[I]);
      continue;
    }
    for (const fs::directory_entry &E :
         fs::recursive_directory_iterator(Argv[I], EC))
      if (E.is_regular_file())
        Files.push_back(E.path().string());
  }
  std::sort(Files.begin(), Files.end());
  for (const std::string &F : Files) {
    std::vector<uint8_t> Data;
    if (!readFile(F, Data)) {
      std::fprintf(stderr, "replay: cannot read %s\n", F.c_str());
      return 1;
    }
    std::fprintf(stderr, "replay: %s\n", F.c_str());
    LLVMFuzzerTestOneInput(Data.data(), Data.size());
  }
  std::fprintf(stderr, "replay: %zu inputs, no crash\n", Files.size());
  return Files.empty() ? 1 : 0;
}
