//===- CommStreams.cpp - a rank's in-order comm streams -------------------===//
#include "ppsrt/CommStreams.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace ppsrt {

CommStreams::CommStreams(int32_t Ranks, int32_t Rank, Transport &T,
                         RunState &RS, pps::schema::CommStream Rule)
    : Rank(Rank), T(T), RS(RS), Rule(Rule) {
  Streams.resize(Rule.Scope == pps::schema::StreamScope::Peer ? size_t(Ranks)
                                                              : 1);
  Thread = std::thread([this] { run(); });
}

CommStreams::~CommStreams() {
  {
    std::lock_guard<std::mutex> L(Mu);
    Stop = true;
  }
  NewWork.store(true, std::memory_order_release);
  Work.notify_all();
  T.interrupt(Rank);
  Thread.join();
}

size_t CommStreams::streamOf(const Request &R) const {
  return Rule.Scope == pps::schema::StreamScope::Peer ? size_t(R.peer) : 0;
}

void CommStreams::issue(std::vector<Request *> Group) {
  {
    std::lock_guard<std::mutex> L(Mu);
    for (Request *R : Group)
      R->completed = false;
    Stream &Sm = Streams[streamOf(*Group.front())];
    Sm.Ops.push_back(Op{std::move(Group), false});
  }
  NewWork.store(true, std::memory_order_release);
  Work.notify_one();
  T.interrupt(Rank);
}

bool CommStreams::completed(const Request &R) {
  std::lock_guard<std::mutex> L(Mu);
  return R.completed;
}

void CommStreams::wait(const Request &R, std::atomic<int64_t> &HeldBehind) {
  std::unique_lock<std::mutex> L(Mu);
  const Stream &Sm = Streams[streamOf(R)];
  while (!R.completed) {
    if (RS.aborted()) {
      HeldBehind.store(-1);
      throw Aborted();
    }
    int64_t Head = -1;
    if (!Sm.Ops.empty()) {
      const std::vector<Request *> &H = Sm.Ops.front().Reqs;
      if (std::find(H.begin(), H.end(), &R) == H.end())
        Head = H.front()->actionIndex;
    }
    HeldBehind.store(Head, std::memory_order_relaxed);
    Done.wait_for(L, std::chrono::milliseconds(10));
  }
  HeldBehind.store(-1, std::memory_order_relaxed);
}

void CommStreams::startHeads(std::vector<Request *> &Open) {
  std::vector<Op *> Post;
  Open.clear();
  {
    std::lock_guard<std::mutex> L(Mu);
    for (Stream &Sm : Streams) {
      if (Sm.Ops.empty())
        continue;
      Op &Head = Sm.Ops.front();
      if (!Head.Started) {
        Head.Started = true;
        Post.push_back(&Head);
      }
      // Elements of a deque stay where they are while others are added at
      // its back; only this thread removes them.
      for (Request *R : Head.Reqs)
        Open.push_back(R);
    }
  }
  // A batched group is posted as batch_isend_irecv posts it: every
  // operation, in the table's order.
  for (Op *O : Post)
    for (Request *R : O->Reqs) {
      if (R->sending())
        T.postSend(Rank, *R);
      else
        T.postRecv(Rank, *R);
    }
}

bool CommStreams::finishHeads() {
  std::vector<Stream *> Heads;
  {
    std::lock_guard<std::mutex> L(Mu);
    for (Stream &Sm : Streams)
      if (!Sm.Ops.empty() && Sm.Ops.front().Started)
        Heads.push_back(&Sm);
  }
  std::vector<Stream *> Finished;
  for (Stream *Sm : Heads) {
    bool All = true;
    // Only this thread pops, so the head is still the one seen above.
    for (Request *R : Sm->Ops.front().Reqs)
      All &= R->done || T.test(Rank, *R);
    if (All)
      Finished.push_back(Sm);
  }
  if (Finished.empty())
    return false;
  double Now = nowMicros();
  {
    std::lock_guard<std::mutex> L(Mu);
    for (Stream *Sm : Finished) {
      for (Request *R : Sm->Ops.front().Reqs) {
        R->doneMicros = Now;
        R->completed = true;
      }
      Sm->Ops.pop_front();
    }
  }
  Done.notify_all();
  RS.tick();
  return true;
}

void CommStreams::run() {
  std::vector<Request *> Open;
  try {
    while (true) {
      {
        std::unique_lock<std::mutex> L(Mu);
        Work.wait(L, [&] {
          if (Stop)
            return true;
          for (const Stream &Sm : Streams)
            if (!Sm.Ops.empty())
              return true;
          return false;
        });
        if (Stop)
          return;
        NewWork.store(false, std::memory_order_relaxed);
      }
      startHeads(Open);
      if (finishHeads())
        continue;
      T.waitAny(Rank, Open.data(), Open.size(), NewWork);
      finishHeads();
    }
  } catch (Aborted &) {
  } catch (std::exception &E) {
    RS.fail(ExitError, fmt::format("rank {}: comm stream: {}", Rank,
                                   std::string(E.what())));
  }
  // Whoever waits learns of the abort now rather than at its next look.
  Done.notify_all();
}

} // namespace ppsrt
