//===- profile_kernels.cpp - kernels whose times the schedule does not know
//===//
//
// The "hardware" of the profile-loop test (profile_loop.cmake): every kernel
// sleeps for a fixed time of its stage and kind, whatever cost model the
// executor was compiled with, so a schedule compiled for unit costs runs
// with these and only a profile can tell them. In units of --scale ms
// (after `--`, default 5): F 1, I 1, W 1 on every stage but the last, whose
// F and I take 1.5 (the loss); B is I then W. Sleeping, not spinning: four
// rank threads on a 2-core machine keep their times.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/Kernels.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

class SleepKernels : public ppsrt::Kernels {
public:
  void setup(const ppsrt::KernelContext &Ctx, int32_t) override {
    S = Ctx.schedule;
    for (const std::string &A : Ctx.args) {
      if (A.rfind("--scale=", 0) != 0)
        throw std::invalid_argument("unknown kernel option '" + A +
                                    "' (expected --scale=MS)");
      Scale = std::atof(A.c_str() + 8);
      if (!(Scale > 0 && Scale < 1000))
        throw std::invalid_argument("--scale must be a time in ms");
    }
  }
  size_t messageBytes(int32_t, bool) override { return 64; }
  void forward(ppsrt::StageIO &IO) override {
    sleep(last(IO) ? 1.5 : 1);
    if (!last(IO))
      fill(IO.output);
  }
  void backwardInput(ppsrt::StageIO &IO) override {
    sleep(last(IO) ? 1.5 : 1);
    if (IO.stage > ppsrt::firstStage(*S, IO.microbatch))
      fill(IO.gradInput);
  }
  void backwardWeight(ppsrt::StageIO &) override { sleep(1); }

private:
  bool last(const ppsrt::StageIO &IO) const {
    return IO.stage == ppsrt::lastStage(*S, IO.microbatch);
  }
  void sleep(double Units) const {
    std::this_thread::sleep_for(
        std::chrono::duration<double, std::milli>(Units * Scale));
  }
  static void fill(ppsrt::Buffer &B) {
    B.resizeBytes(64);
    std::memset(B.data(), 0, 64);
  }
  const ppsrt::ScheduleDesc *S = nullptr;
  double Scale = 5;
};

} // namespace

std::unique_ptr<ppsrt::Kernels> ppsrt::makeKernels(const ScheduleDesc &) {
  return std::make_unique<SleepKernels>();
}
