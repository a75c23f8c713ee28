//===- runtime_mpi_pingpong.cpp - MPI transport vs plain MPI ping-pong ----===//
//
//   mpirun -n 2 build/bench/bench_runtime_mpi_pingpong [iterations]
//
// Round trip of one message between two processes, in the same run:
//  * plain MPI: MPI_Send / MPI_Recv, and MPI_Ssend / MPI_Recv (synchronous,
//    what rendezvous means);
//  * the runtime's MpiTransport: postSend / postRecv / wait, with eager
//    (MPI_Isend) and rendezvous (MPI_Issend) sends, FIFO tag check included.
// Prints the median microseconds per round trip over five alternating
// rounds and the ratio to plain MPI (target: within 1.2x). On a machine
// with fewer free cores than processes, add `--mca mpi_yield_when_idle 1`
// so plain MPI yields the core as the runtime's polling loop does. Not a Google
// Benchmark program: it needs mpirun.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/MpiTransport.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

using namespace ppsrt;

namespace {

double plain(int Me, size_t Bytes, int Iters, bool Sync) {
  std::vector<unsigned char> Buf(Bytes);
  MPI_Barrier(MPI_COMM_WORLD);
  double T0 = MPI_Wtime();
  for (int I = 0; I < Iters; ++I) {
    if (Me == 0) {
      if (Sync)
        MPI_Ssend(Buf.data(), int(Bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      else
        MPI_Send(Buf.data(), int(Bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(Buf.data(), int(Bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(Buf.data(), int(Bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      if (Sync)
        MPI_Ssend(Buf.data(), int(Bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      else
        MPI_Send(Buf.data(), int(Bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - T0) / Iters * 1e6;
}

double runtime(const ScheduleDesc &D, int Me, size_t Bytes, int Iters,
               bool Rendezvous) {
  RunState RS(D, Me, 1);
  MpiTransport T(RS, MPI_COMM_WORLD, Rendezvous);
  Buffer Payload(Bytes);
  MPI_Barrier(MPI_COMM_WORLD);
  double T0 = MPI_Wtime();
  // Rank 0 sends F(0, 0) to rank 1, which answers with B(0, 1).
  for (int I = 0; I < Iters; ++I) {
    if (Me == 0) {
      Request Back;
      Back.action = Action{Kind::RecvB, 0, 1, 0, 0};
      Back.peer = 1;
      Back.bytes = Bytes;
      T.postRecv(0, Back);
      Request S;
      S.action = Action{Kind::SendF, 0, 1, 0, 0};
      S.peer = 1;
      S.bytes = Bytes;
      S.buf = std::move(Payload);
      T.postSend(0, S);
      T.wait(0, S);
      T.wait(0, Back);
      Payload = std::move(Back.buf);
    } else {
      Request R;
      R.action = Action{Kind::RecvF, 0, 0, 0, 1};
      R.peer = 0;
      R.bytes = Bytes;
      T.postRecv(1, R);
      T.wait(1, R);
      Request S;
      S.action = Action{Kind::SendB, 0, 0, 0, 1};
      S.peer = 0;
      S.bytes = Bytes;
      S.buf = std::move(R.buf);
      T.postSend(1, S);
      T.wait(1, S);
    }
  }
  return (MPI_Wtime() - T0) / Iters * 1e6;
}

} // namespace

int main(int Argc, char **Argv) {
  int Provided;
  MPI_Init_thread(&Argc, &Argv, MPI_THREAD_FUNNELED, &Provided);
  int Me, Size;
  MPI_Comm_rank(MPI_COMM_WORLD, &Me);
  MPI_Comm_size(MPI_COMM_WORLD, &Size);
  if (Size != 2) {
    if (Me == 0)
      fmt::print(stderr, "run with mpirun -n 2\n");
    MPI_Finalize();
    return 2;
  }
  int Iters = Argc > 1 ? std::atoi(Argv[1]) : 20000;
  int32_t StageToRank[2] = {0, 1};
  StageCost Costs[2] = {{1, 1, 1, 2}, {1, 1, 1, 2}};
  RankTable Tabs[2] = {{nullptr, 0}, {nullptr, 0}};
  ScheduleDesc D{"pingpong", "pingpong", 2, 2, 1, StageToRank,           Costs,
                 -1,         0,          0, 0, 0, CommModel::Rendezvous, Tabs,
                 nullptr,    -1};
  if (Me == 0)
    fmt::print("{:>10} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8}\n", "bytes",
               "MPI_Send us", "runtime eager", "MPI_Ssend us", "runtime rdv",
               "ratio", "ratio");
  // Five rounds, alternating the four variants so they share the machine's
  // noise; the medians are printed.
  auto median = [](std::vector<double> V) {
    std::sort(V.begin(), V.end());
    return V[V.size() / 2];
  };
  for (size_t Bytes : {size_t(8), size_t(4096), size_t(1) << 20}) {
    int N = Bytes >= (1u << 20) ? std::max(Iters / 50, 50) : Iters / 5;
    plain(Me, Bytes, N / 10 + 1, false);
    runtime(D, Me, Bytes, N / 10 + 1, false);
    std::vector<double> P, E, PS, R;
    for (int Round = 0; Round < 5; ++Round) {
      P.push_back(plain(Me, Bytes, N, false));
      E.push_back(runtime(D, Me, Bytes, N, false));
      PS.push_back(plain(Me, Bytes, N, true));
      R.push_back(runtime(D, Me, Bytes, N, true));
    }
    double MP = median(P), ME = median(E), MPS = median(PS), MR = median(R);
    if (Me == 0)
      fmt::print("{:>10} {:>12.2f} {:>12.2f} {:>12.2f} {:>12.2f} {:>7.2f}x "
                 "{:>7.2f}x\n",
                 Bytes, MP, ME, MPS, MR, ME / MP, MR / MPS);
  }
  MPI_Finalize();
  return 0;
}
