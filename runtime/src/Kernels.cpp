//===- Kernels.cpp - the built-in busy-wait workload and the kernel hook --===//
#include "ppsrt/Kernels.h"
#include "ppsrt/Executor.h"

#include <chrono>
#include <cstring>
#include <thread>

namespace ppsrt {

Kernels::~Kernels() = default;

void busyWait(double Seconds) {
  if (Seconds <= 0)
    return;
  using namespace std::chrono;
  auto End = steady_clock::now() +
             duration_cast<steady_clock::duration>(duration<double>(Seconds));
  while (steady_clock::now() < End) {
  }
}

// An overlap pair with an overlap cost spins for that cost in total: each
// half is scaled by overlap / (cost(a) + cost(b)). Per thread, because the
// threads transport runs every rank on its own thread.
static thread_local double OverlapFactor = 1.0;

void BusyWaitKernels::setup(const KernelContext &C, int32_t) { Ctx = C; }

size_t BusyWaitKernels::messageBytes(int32_t, bool) { return Ctx.messageBytes; }

void BusyWaitKernels::fill(Buffer &B) const {
  B.resizeBytes(Ctx.messageBytes);
  if (Ctx.messageBytes)
    std::memset(B.data(), 0, Ctx.messageBytes);
}

void BusyWaitKernels::spin(double Units) const {
  double Seconds = Units * OverlapFactor * Ctx.secondsPerUnit;
  if (Ctx.sleep && Seconds > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(Seconds));
    return;
  }
  busyWait(Seconds);
}

void BusyWaitKernels::forward(StageIO &IO) {
  spin(Ctx.schedule->stageCost[IO.stage].F);
  if (IO.stage < lastStage(*Ctx.schedule, IO.microbatch))
    fill(IO.output);
}

void BusyWaitKernels::loss(StageIO &IO) { IO.loss = 0; }

void BusyWaitKernels::backwardInput(StageIO &IO) {
  spin(Ctx.schedule->stageCost[IO.stage].I);
  if (IO.stage > firstStage(*Ctx.schedule, IO.microbatch))
    fill(IO.gradInput);
}

void BusyWaitKernels::backwardWeight(StageIO &IO) {
  spin(Ctx.schedule->stageCost[IO.stage].W);
}

void BusyWaitKernels::backward(StageIO &IO) {
  spin(Ctx.schedule->stageCost[IO.stage].B);
  if (IO.stage > firstStage(*Ctx.schedule, IO.microbatch))
    fill(IO.gradInput);
}

void BusyWaitKernels::installHandlers(Executor &E) {
  const ScheduleDesc &S = *Ctx.schedule;
  if (S.overlapCost < 0 && !S.stageOverlapCost)
    return;
  E.setOverlapHandler([&S](const Action &A, const Action &B, Executor &X) {
    double Sum = computeCost(S, A) + computeCost(S, B);
    OverlapFactor = Sum > 0 ? overlapCostOf(S, A, B) / Sum : 1.0;
    try {
      X.runDefault(A);
      X.runDefault(B);
    } catch (...) {
      OverlapFactor = 1.0;
      throw;
    }
    OverlapFactor = 1.0;
  });
}

__attribute__((weak)) std::unique_ptr<Kernels>
makeKernels(const ScheduleDesc &) {
  return std::make_unique<BusyWaitKernels>();
}

} // namespace ppsrt
