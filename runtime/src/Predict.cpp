//===- Predict.cpp - makespan of one step as the executor would run it ----===//
//
// A small event simulation of exactly what Executor does with the cost
// model's times: computes take their cost, receives are posted without
// blocking and waited on by the consuming compute, rendezvous sends complete
// when the matching receive is posted (plus the message time), eager sends at
// once, a batched run of comms completes when all of it has matched. Used to
// print "predicted vs measured" next to every run.
//
//===----------------------------------------------------------------------===//
#include "ppsrt/Main.h"

#include <algorithm>
#include <vector>

namespace ppsrt {

namespace {
struct Chan {
  std::vector<double> SendPost, Arrival, RecvPost;
};
struct RankState {
  int64_t I = 0;
  double T = 0;
  // Pending rendezvous send or batched comms, with their channel seq.
  std::vector<std::pair<Action, uint64_t>> Batch;
};
} // namespace

double predictMakespan(const ScheduleDesc &S, CommModel Comm,
                       bool BlockingRecv) {
  int32_t R = S.ranks;
  std::vector<Chan> Chans(size_t(R) * size_t(R));
  auto chan = [&](int32_t From, int32_t To) -> Chan & {
    return Chans[size_t(From) * size_t(R) + size_t(To)];
  };
  // (direction, microbatch, stage) -> receive ticket on its channel.
  size_t N = size_t(S.microbatches) * size_t(S.stages);
  std::vector<int64_t> Ticket(2 * N, -1);
  auto ticketOf = [&](bool Grad, int32_t Mb, int32_t St) -> int64_t & {
    return Ticket[(Grad ? N : 0) + size_t(Mb) * size_t(S.stages) + size_t(St)];
  };
  auto msgTime = [&](Kind K) {
    double Bytes = K == Kind::SendB && S.gradientBytes >= 0 ? S.gradientBytes
                                                            : S.activationBytes;
    double T = S.latency;
    if (S.bandwidthBytesPerMs > 0)
      T += Bytes / S.bandwidthBytesPerMs;
    return T;
  };
  auto inRange = [&](const Action &A) {
    return A.mb >= 0 && A.mb < S.microbatches && A.stage >= 0 &&
           A.stage < S.stages && A.peer >= 0 && A.peer < R;
  };
  std::vector<RankState> St(static_cast<size_t>(R));

  // The time the input of compute A is available on rank Me, or -1 if not
  // known yet.
  auto inputReady = [&](int32_t Me, const Action &A) -> double {
    Action Need = inputRecvOf(S, A);
    if (Need.kind == Kind::Idle || Need.peer == Me)
      return 0;
    int64_t Tk = ticketOf(Need.kind == Kind::RecvB, A.mb, A.stage);
    if (Tk < 0)
      return 0; // not received: the executor reports the error
    Chan &C = chan(Need.peer, Me);
    if (int64_t(C.Arrival.size()) <= Tk || C.Arrival[size_t(Tk)] < 0)
      return -1;
    return C.Arrival[size_t(Tk)];
  };

  // A send is complete once its receive was posted (rendezvous).
  auto completeSend = [&](int32_t Me, const Action &A, uint64_t Seq,
                          double &T) {
    Chan &C = chan(Me, A.peer);
    if (C.RecvPost.size() <= Seq)
      return false;
    T = std::max(T, C.Arrival[Seq]);
    return true;
  };

  // Completes the rank's pending sends/receives (a rendezvous send, or a
  // batch); false if one of them has not matched yet.
  auto completeBatch = [&](int32_t Me, RankState &RS) {
    double T = RS.T;
    for (auto &[A, Seq] : RS.Batch) {
      if (isSend(A.kind)) {
        if (!completeSend(Me, A, Seq, T))
          return false;
        continue;
      }
      Chan &C = chan(A.peer, Me);
      if (C.Arrival.size() <= Seq || C.Arrival[Seq] < 0)
        return false;
      T = std::max(T, C.Arrival[Seq]);
    }
    RS.T = T;
    RS.Batch.clear();
    return true;
  };

  // Advances one rank as far as it can go; true if it moved.
  auto advance = [&](int32_t Me) {
    RankState &RS = St[size_t(Me)];
    const RankTable &Tab = S.rankTables[Me];
    bool Moved = false;
    while (true) {
      if (!RS.Batch.empty()) {
        bool EndOfRun = Comm != CommModel::Batched || RS.I >= Tab.count ||
                        !isComm(decodeRow(Tab.rows + RS.I * RowWords).kind);
        if (EndOfRun) {
          if (!completeBatch(Me, RS))
            return Moved;
          Moved = true;
        }
      }
      if (RS.I >= Tab.count)
        return Moved;
      Action A = decodeRow(Tab.rows + RS.I * RowWords);
      if (isCompute(A.kind)) {
        bool Pair = A.overlapsNext() && RS.I + 1 < Tab.count;
        Action B = Pair ? decodeRow(Tab.rows + (RS.I + 1) * RowWords) : A;
        double Ra = inputReady(Me, A);
        double Rb = Pair ? inputReady(Me, B) : 0;
        if (Ra < 0 || Rb < 0)
          return Moved;
        double Cost = computeCost(S, A);
        if (Pair)
          Cost = S.overlapCost >= 0 ? S.overlapCost : Cost + computeCost(S, B);
        RS.T = std::max({RS.T, Ra, Rb}) + Cost;
        RS.I += Pair ? 2 : 1;
        Moved = true;
        continue;
      }
      ++RS.I;
      Moved = true;
      if (!isComm(A.kind) || !inRange(A))
        continue;
      if (isRecv(A.kind)) {
        Chan &C = chan(A.peer, Me);
        int64_t &Tk = ticketOf(A.kind == Kind::RecvB, A.mb, A.stage);
        Tk = int64_t(C.RecvPost.size());
        C.RecvPost.push_back(RS.T);
        if (C.Arrival.size() < C.RecvPost.size())
          C.Arrival.resize(C.RecvPost.size(), -1);
        // A rendezvous message lands when both sides have posted.
        size_t Seq = size_t(Tk);
        if (Comm != CommModel::Eager && C.SendPost.size() > Seq)
          C.Arrival[Seq] =
              std::max(C.SendPost[Seq], RS.T) +
              msgTime(A.kind == Kind::RecvB ? Kind::SendB : Kind::SendF);
        if (Comm == CommModel::Batched || BlockingRecv)
          RS.Batch.push_back({A, uint64_t(Tk)});
        continue;
      }
      Chan &C = chan(Me, A.peer);
      uint64_t Seq = C.SendPost.size();
      C.SendPost.push_back(RS.T);
      if (C.Arrival.size() < C.SendPost.size())
        C.Arrival.resize(C.SendPost.size(), -1);
      if (Comm == CommModel::Eager) {
        C.Arrival[Seq] = RS.T + msgTime(A.kind);
        continue;
      }
      if (C.RecvPost.size() > Seq)
        C.Arrival[Seq] = std::max(C.RecvPost[Seq], RS.T) + msgTime(A.kind);
      RS.Batch.push_back({A, Seq});
    }
  };

  bool Progress = true;
  while (Progress) {
    Progress = false;
    for (int32_t Me = 0; Me < R; ++Me)
      Progress |= advance(Me);
  }
  double Makespan = 0;
  for (int32_t Me = 0; Me < R; ++Me) {
    if (St[size_t(Me)].I < S.rankTables[Me].count ||
        !St[size_t(Me)].Batch.empty())
      return -1;
    Makespan = std::max(Makespan, St[size_t(Me)].T);
  }
  return Makespan;
}

} // namespace ppsrt
