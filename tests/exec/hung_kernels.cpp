//===- hung_kernels.cpp - a kernel that never returns (tests/exec) --------===//
//
// The built-in busy-wait workload, except that the forward of microbatch 3
// at stage 2 never returns. The kernel timeout must turn that into a stall
// report naming the rank, the action and how long it has run (exit code 3),
// with the run's banner not lost, on threads and on MPI.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/Kernels.h"

#include <chrono>
#include <thread>

namespace {
class HungKernels : public ppsrt::BusyWaitKernels {
public:
  void forward(ppsrt::StageIO &IO) override {
    if (IO.microbatch == 3 && IO.stage == 2)
      for (;;)
        std::this_thread::sleep_for(std::chrono::seconds(1));
    BusyWaitKernels::forward(IO);
  }
};
} // namespace

std::unique_ptr<ppsrt::Kernels> ppsrt::makeKernels(const ScheduleDesc &) {
  return std::make_unique<HungKernels>();
}
