//===- mlp_kernels.cpp - an MLP split across pipeline stages --------------===//
//
// The real example: each pipeline stage is one dense layer (tanh after it,
// except on the last stage, which feeds a mean-squared-error loss). The
// executor generated from a schedule calls these kernels for every F, I, W
// and B; activations and gradients travel between ranks as runtime buffers.
// Every step ends with an SGD update per stage.
//
// At the end each rank recomputes the same training run in one process,
// without pipelining (whole batch, microbatches in order), and checks that
// the gradients of its stages at every step and, on the last stage, the
// losses match to floating-point tolerance. A mismatch throws, so the
// executor exits non-zero.
//
// Link: pps_add_executor(mlp_1f1b one_f_one_b.pps mlp_kernels.cpp); this
// file's ppsrt::makeKernels replaces the built-in busy-wait workload.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/Kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace {

constexpr long Width = 16;    // features per layer
constexpr long Batch = 4;     // samples per microbatch
constexpr double Rate = 0.05; // SGD learning rate
constexpr double Tolerance = 1e-9;

using Vec = std::vector<double>;

/// One dense layer: W (Width x Width, row-major) and b.
struct Layer {
  Vec W, B;
};

/// Deterministic initial weights of a stage (same in every process).
static Layer initLayer(int Stage) {
  Layer L;
  L.W.resize(Width * Width);
  L.B.resize(Width);
  uint64_t X = 0x9E3779B97F4A7C15ull * uint64_t(Stage + 1);
  auto next = [&X] {
    X ^= X << 13;
    X ^= X >> 7;
    X ^= X << 17;
    return double(X % 2001) / 1000.0 - 1.0; // [-1, 1]
  };
  for (double &W : L.W)
    W = next() / std::sqrt(double(Width));
  for (double &B : L.B)
    B = 0.1 * next();
  return L;
}

/// The input and target of one sample.
static double inputAt(int Mb, int Sample, int J) {
  return std::sin(0.37 * (Mb * Batch + Sample + 1) + 0.11 * J);
}
static double targetAt(int Mb, int Sample, int J) {
  return 0.5 * std::cos(0.23 * (Mb * Batch + Sample) - 0.07 * J);
}

/// z = W x + b for Batch samples (x: Batch x Width).
static Vec affine(const Layer &L, const double *X) {
  Vec Z(Batch * Width);
  for (int S = 0; S < Batch; ++S)
    for (int I = 0; I < Width; ++I) {
      double Acc = L.B[I];
      for (int J = 0; J < Width; ++J)
        Acc += L.W[I * Width + J] * X[S * Width + J];
      Z[S * Width + I] = Acc;
    }
  return Z;
}

/// Forward of one stage: the activation out of the layer.
static Vec forwardLayer(const Layer &L, const double *X, bool Last) {
  Vec A = affine(L, X);
  if (!Last)
    for (double &V : A)
      V = std::tanh(V);
  return A;
}

/// dL/dz from dL/da (a = tanh(z), or a = z on the last stage).
static Vec preActivationGrad(const double *G, const double *A, bool Last) {
  Vec Dz(G, G + Batch * Width);
  if (!Last)
    for (int K = 0; K < Batch * Width; ++K)
      Dz[K] *= 1.0 - A[K] * A[K];
  return Dz;
}

/// dL/dx = W^T dz.
static Vec inputGrad(const Layer &L, const Vec &Dz) {
  Vec Dx(Batch * Width, 0.0);
  for (int S = 0; S < Batch; ++S)
    for (int I = 0; I < Width; ++I)
      for (int J = 0; J < Width; ++J)
        Dx[S * Width + J] += L.W[I * Width + J] * Dz[S * Width + I];
  return Dx;
}

/// dW += dz x^T, db += dz.
static void accumulateWeightGrad(Layer &G, const Vec &Dz, const double *X) {
  for (int S = 0; S < Batch; ++S)
    for (int I = 0; I < Width; ++I) {
      G.B[I] += Dz[S * Width + I];
      for (int J = 0; J < Width; ++J)
        G.W[I * Width + J] += Dz[S * Width + I] * X[S * Width + J];
    }
}

/// Loss of one microbatch (mean over the whole batch) and dL/da.
static double lossAndGrad(const double *Out, int Mb, int Microbatches, Vec &G) {
  double Scale = 1.0 / double(Batch * Microbatches);
  double Loss = 0;
  G.assign(Batch * Width, 0.0);
  for (int S = 0; S < Batch; ++S)
    for (int J = 0; J < Width; ++J) {
      double D = Out[S * Width + J] - targetAt(Mb, S, J);
      Loss += 0.5 * D * D * Scale;
      G[S * Width + J] = D * Scale;
    }
  return Loss;
}

static Layer zeroLayer() {
  return Layer{Vec(Width * Width, 0.0), Vec(Width, 0.0)};
}

static void sgd(Layer &L, const Layer &G) {
  for (size_t K = 0; K < L.W.size(); ++K)
    L.W[K] -= Rate * G.W[K];
  for (size_t K = 0; K < L.B.size(); ++K)
    L.B[K] -= Rate * G.B[K];
}

static double maxDiff(const Layer &A, const Layer &B) {
  double D = 0;
  for (size_t K = 0; K < A.W.size(); ++K)
    D = std::max(D, std::fabs(A.W[K] - B.W[K]));
  for (size_t K = 0; K < A.B.size(); ++K)
    D = std::max(D, std::fabs(A.B[K] - B.B[K]));
  return D;
}

/// The unpipelined reference: the whole model in one process, microbatches
/// in order. Returns per step the gradients of every stage and the loss.
struct Reference {
  std::vector<std::vector<Layer>> Grads; // [step][stage]
  std::vector<double> Loss;              // [step]
};

static Reference referenceRun(int Stages, int Microbatches, int Steps) {
  std::vector<Layer> Layers;
  Layers.reserve(size_t(Stages));
  for (int S = 0; S < Stages; ++S)
    Layers.push_back(initLayer(S));
  Reference R;
  for (int Step = 0; Step < Steps; ++Step) {
    std::vector<Layer> G(size_t(Stages), zeroLayer());
    double Loss = 0;
    for (int M = 0; M < Microbatches; ++M) {
      std::vector<Vec> Xs(size_t(Stages) + 1);
      Xs[0].resize(Batch * Width);
      for (int S = 0; S < Batch; ++S)
        for (int J = 0; J < Width; ++J)
          Xs[0][S * Width + J] = inputAt(M, S, J);
      for (int S = 0; S < Stages; ++S)
        Xs[size_t(S) + 1] = forwardLayer(Layers[size_t(S)],
                                         Xs[size_t(S)].data(), S == Stages - 1);
      Vec Grad;
      Loss += lossAndGrad(Xs[size_t(Stages)].data(), M, Microbatches, Grad);
      for (int S = Stages - 1; S >= 0; --S) {
        Vec Dz = preActivationGrad(Grad.data(), Xs[size_t(S) + 1].data(),
                                   S == Stages - 1);
        accumulateWeightGrad(G[size_t(S)], Dz, Xs[size_t(S)].data());
        Grad = inputGrad(Layers[size_t(S)], Dz);
      }
    }
    for (int S = 0; S < Stages; ++S)
      sgd(Layers[size_t(S)], G[size_t(S)]);
    R.Grads.push_back(std::move(G));
    R.Loss.push_back(Loss);
  }
  return R;
}

class MlpKernels : public ppsrt::Kernels {
public:
  explicit MlpKernels(const ppsrt::ScheduleDesc &S)
      : Sched(S), Layers(size_t(S.stages)), Grads(size_t(S.stages)),
        GradHistory(size_t(S.stages)), Losses(size_t(S.stages)),
        StageStep(size_t(S.stages), 0) {}

  void setup(const ppsrt::KernelContext &, int32_t Rank) override {
    for (int S = 0; S < Sched.stages; ++S)
      if (Sched.stageToRank[S] == Rank) {
        Layers[size_t(S)] = initLayer(S);
        Grads[size_t(S)] = zeroLayer();
      }
  }

  size_t messageBytes(int32_t, bool) override {
    return Batch * Width * sizeof(double);
  }

  void forward(ppsrt::StageIO &IO) override {
    int S = IO.stage;
    bool Last = S == Sched.stages - 1;
    if (S == 0) {
      // The first stage makes the microbatch's input; keep it for W.
      IO.input.resize<double>(Batch * Width);
      for (int K = 0; K < Batch; ++K)
        for (int J = 0; J < Width; ++J)
          IO.input.as<double>()[K * Width + J] = inputAt(IO.microbatch, K, J);
    }
    Vec A = forwardLayer(Layers[size_t(S)], IO.input.as<double>(), Last);
    IO.output.resize<double>(A.size());
    std::copy(A.begin(), A.end(), IO.output.as<double>());
    // The activation is needed for tanh' (the runtime moves `output` away
    // when it sends it).
    IO.saved.resize(2);
    IO.saved[0] = IO.output;
  }

  void loss(ppsrt::StageIO &IO) override {
    Vec G;
    IO.loss = lossAndGrad(IO.output.as<double>(), IO.microbatch,
                          Sched.microbatches, G);
    Losses[size_t(IO.stage)] += IO.loss;
    IO.gradOutput.resize<double>(G.size());
    std::copy(G.begin(), G.end(), IO.gradOutput.as<double>());
  }

  void backwardInput(ppsrt::StageIO &IO) override {
    int S = IO.stage;
    Vec Dz = preActivationGrad(IO.gradOutput.as<double>(),
                               IO.saved[0].as<double>(), S == Sched.stages - 1);
    if (S > 0) {
      Vec Dx = inputGrad(Layers[size_t(S)], Dz);
      IO.gradInput.resize<double>(Dx.size());
      std::copy(Dx.begin(), Dx.end(), IO.gradInput.as<double>());
    }
    IO.saved[1].resize<double>(Dz.size());
    std::copy(Dz.begin(), Dz.end(), IO.saved[1].as<double>());
  }

  void backwardWeight(ppsrt::StageIO &IO) override {
    const double *Dz = IO.saved[1].as<double>();
    accumulateWeightGrad(Grads[size_t(IO.stage)], Vec(Dz, Dz + Batch * Width),
                         IO.input.as<double>());
  }

  void endStep(int32_t Rank, int Step) override {
    for (int S = 0; S < Sched.stages; ++S) {
      if (Sched.stageToRank[S] != Rank)
        continue;
      GradHistory[size_t(S)].push_back(Grads[size_t(S)]);
      sgd(Layers[size_t(S)], Grads[size_t(S)]);
      Grads[size_t(S)] = zeroLayer();
      if (S == Sched.stages - 1) {
        StepLoss.push_back(Losses[size_t(S)]);
        Losses[size_t(S)] = 0;
      }
    }
  }

  void finish(int32_t Rank) override {
    int Steps = 0;
    for (int S = 0; S < Sched.stages; ++S)
      if (Sched.stageToRank[S] == Rank)
        Steps = int(GradHistory[size_t(S)].size());
    Reference Ref = referenceRun(Sched.stages, Sched.microbatches, Steps);
    std::string Report;
    for (int S = 0; S < Sched.stages; ++S) {
      if (Sched.stageToRank[S] != Rank)
        continue;
      double Worst = 0;
      for (int Step = 0; Step < Steps; ++Step)
        Worst = std::max(Worst, maxDiff(GradHistory[size_t(S)][size_t(Step)],
                                        Ref.Grads[size_t(Step)][size_t(S)]));
      Report += fmt::format("mlp: rank {} stage {}: {} steps, max |grad - "
                            "reference| = {:.3g}\n",
                            Rank, S, Steps, Worst);
      if (!(Worst <= Tolerance))
        throw std::runtime_error(
            fmt::format("stage {} gradients differ from the unpipelined "
                        "reference by {:.3g}",
                        S, Worst));
      if (S != Sched.stages - 1)
        continue;
      for (int Step = 0; Step < Steps; ++Step) {
        double D = std::fabs(StepLoss[size_t(Step)] - Ref.Loss[size_t(Step)]);
        Report +=
            fmt::format("mlp: step {} loss {:.12f} (reference {:.12f})\n", Step,
                        StepLoss[size_t(Step)], Ref.Loss[size_t(Step)]);
        if (!(D <= Tolerance))
          throw std::runtime_error(
              fmt::format("step {} loss {} differs from the reference {}", Step,
                          StepLoss[size_t(Step)], Ref.Loss[size_t(Step)]));
      }
    }
    std::lock_guard<std::mutex> L(PrintMu);
    fmt::print("{}", Report);
    std::fflush(stdout);
  }

private:
  const ppsrt::ScheduleDesc &Sched;
  std::vector<Layer> Layers, Grads;            // per stage
  std::vector<std::vector<Layer>> GradHistory; // per stage, per step
  std::vector<double> Losses;                  // per stage (last one used)
  std::vector<double> StepLoss;
  std::vector<int> StageStep;
  std::mutex PrintMu;
};

} // namespace

std::unique_ptr<ppsrt::Kernels> ppsrt::makeKernels(const ScheduleDesc &S) {
  return std::make_unique<MlpKernels>(S);
}
