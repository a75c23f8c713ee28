//===- chain_kernels.cpp - the outside project's own kernels --------------===//
//
// A chain of scalar layers, y = w_s * x per stage, with the loss
// 0.5 * |y|^2 on the last stage. F saves its input, I sends back
// w_s * dL/dy, W accumulates <x, dL/dy> into the stage's weight gradient.
// At the end each rank recomputes the gradients of its stages without
// pipelining and fails the run (throws) unless they match: the executor
// proves that the kernels, the schedule's I/W split and the transport
// (threads or MPI) moved the right data.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/Kernels.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int Width = 8;

double weightOf(int Stage) { return 0.5 + 0.125 * Stage; }
double inputOf(int Mb, int I) { return 0.01 * (Mb + 1) * (I + 1); }

class ChainKernels : public ppsrt::Kernels {
public:
  explicit ChainKernels(const ppsrt::ScheduleDesc &S)
      : S(S), Grad(size_t(S.stages), 0.0) {}

  size_t messageBytes(int32_t, bool) override { return Width * sizeof(double); }
  void forward(ppsrt::StageIO &IO) override {
    if (IO.input.empty()) {
      IO.input.resize<double>(Width);
      for (int I = 0; I < Width; ++I)
        IO.input.as<double>()[I] = inputOf(IO.microbatch, I);
    }
    IO.saved.resize(2);
    IO.saved[0] = IO.input;
    IO.output.resize<double>(Width);
    for (int I = 0; I < Width; ++I)
      IO.output.as<double>()[I] = weightOf(IO.stage) * IO.input.as<double>()[I];
  }
  void loss(ppsrt::StageIO &IO) override {
    IO.gradOutput = IO.output;
    IO.loss = 0;
    for (int I = 0; I < Width; ++I)
      IO.loss += 0.5 * IO.output.as<double>()[I] * IO.output.as<double>()[I];
  }
  void backwardInput(ppsrt::StageIO &IO) override {
    IO.saved[1] = IO.gradOutput;
    IO.gradInput.resize<double>(Width);
    for (int I = 0; I < Width; ++I)
      IO.gradInput.as<double>()[I] =
          weightOf(IO.stage) * IO.gradOutput.as<double>()[I];
  }
  void backwardWeight(ppsrt::StageIO &IO) override {
    const double *X = IO.saved[0].as<double>();
    const double *G = IO.saved[1].as<double>();
    for (int I = 0; I < Width; ++I)
      Grad[size_t(IO.stage)] += X[I] * G[I];
  }
  void beginStep(int32_t Rank, int) override {
    for (int32_t St = 0; St < S.stages; ++St)
      if (S.stageToRank[St] == Rank)
        Grad[size_t(St)] = 0;
  }
  /// Checks the last step's gradients.
  void finish(int32_t Rank) override {
    for (int32_t St = 0; St < S.stages; ++St) {
      if (S.stageToRank[St] != Rank)
        continue;
      double Want = reference(St);
      double Got = Grad[size_t(St)];
      std::printf("consumer: rank %d stage %d: dL/dw = %.12f (reference "
                  "%.12f)\n",
                  Rank, St, Got, Want);
      if (std::fabs(Got - Want) > 1e-12 * std::fmax(1.0, std::fabs(Want)))
        throw std::runtime_error("stage " + std::to_string(St) +
                                 ": gradient differs from the reference");
    }
  }

private:
  /// dL/dw_s summed over the microbatches, computed without pipelining.
  double reference(int32_t Stage) const {
    double Sum = 0;
    for (int32_t Mb = 0; Mb < S.microbatches; ++Mb) {
      std::vector<double> X(Width), In;
      for (int I = 0; I < Width; ++I)
        X[I] = inputOf(Mb, I);
      for (int32_t St = 0; St < S.stages; ++St) {
        if (St == Stage)
          In = X;
        for (double &V : X)
          V *= weightOf(St);
      }
      std::vector<double> G = X; // dL/dy at the last stage
      for (int32_t St = S.stages - 1; St > Stage; --St)
        for (double &V : G)
          V *= weightOf(St);
      for (int I = 0; I < Width; ++I)
        Sum += In[I] * G[I];
    }
    return Sum;
  }

  const ppsrt::ScheduleDesc &S;
  std::vector<double> Grad; ///< per stage; a stage is touched by one rank
};

} // namespace

std::unique_ptr<ppsrt::Kernels>
ppsrt::makeKernels(const ppsrt::ScheduleDesc &S) {
  return std::make_unique<ChainKernels>(S);
}
