//===- throwing_kernels.cpp - kernels that fail on purpose (tests/exec) ---===//
//
// The built-in busy-wait workload, except that the forward of microbatch 3
// at stage 2 throws. The executor must stop every rank and report the rank,
// the action and the message, with exit code 1, on threads and on MPI.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/Kernels.h"

#include <stdexcept>

namespace {
class ThrowingKernels : public ppsrt::BusyWaitKernels {
public:
  void forward(ppsrt::StageIO &IO) override {
    if (IO.microbatch == 3 && IO.stage == 2)
      throw std::runtime_error("injected failure in the forward kernel");
    BusyWaitKernels::forward(IO);
  }
};
} // namespace

std::unique_ptr<ppsrt::Kernels> ppsrt::makeKernels(const ScheduleDesc &) {
  return std::make_unique<ThrowingKernels>();
}
