//===- RunState.cpp - progress, status reports and the watchdog -----------===//
#include "ppsrt/RunState.h"

#include <fmt/format.h>

namespace ppsrt {

RunState::RunState(const ScheduleDesc &S, int32_t FirstRank, int32_t NumRanks)
    : S(S), FirstRank(FirstRank), Status(size_t(NumRanks)) {}

KernelClock::KernelClock(RankStatus &St) : St(St) {
  St.kernelSince.store(nowMicros(), std::memory_order_relaxed);
}

void RunState::fail(int C, std::string Message) {
  {
    std::lock_guard<std::mutex> L(Mu);
    if (Code != ExitOk)
      return;
    Code = C;
    Error = std::move(Message);
  }
  Abort.store(true);
}

std::string RunState::errorMessage() const {
  std::lock_guard<std::mutex> L(Mu);
  return Error;
}

static Action actionAt(const ScheduleDesc &S, int32_t Rank, int64_t Index) {
  const RankTable &T = S.rankTables[Rank];
  if (Index < 0 || Index >= T.count)
    return Action{};
  return decodeRow(T.rows + Index * RowWords);
}

std::string RunState::describe(int32_t Rank) {
  RankStatus &St = status(Rank);
  int64_t Count = S.rankTables[Rank].count;
  int64_t Index = St.action.load();
  auto Ph = Phase(St.phase.load());
  auto W = WaitKind(St.waitKind.load());
  std::string StepNote;
  if (int Step = St.step.load())
    StepNote = fmt::format(" (step {})", Step);
  switch (Ph) {
  case Phase::NotStarted:
    return fmt::format("rank {} has not started", Rank);
  case Phase::Starting:
    return fmt::format("rank {} waits for every rank to start", Rank);
  case Phase::Finished:
    return fmt::format("rank {} finished all {} actions", Rank, Count);
  case Phase::Failed:
    return fmt::format("rank {} stopped at action {} of {}", Rank, Index,
                       Count);
  case Phase::Running:
    break;
  }
  Action Cur = actionAt(S, Rank, Index);
  if (W == WaitKind::None) {
    double Since = St.kernelSince.load(std::memory_order_relaxed);
    std::string For =
        Since > 0 ? fmt::format(" for {:.1f} s", (nowMicros() - Since) / 1e6)
                  : std::string();
    return fmt::format("rank {} is running `{}` (action {} of {}){}{}", Rank,
                       formatAction(Cur), Index, Count, For, StepNote);
  }
  Action Waited = actionAt(S, Rank, St.waitAction.load());
  Action Partner = matchingComm(Waited, Rank);
  const char *Verb =
      W == WaitKind::Drain ? "finished its actions and blocks at" : "blocks at";
  // The action the rank stands at: the comm itself, or the compute that
  // consumes a receive posted earlier (deferred wait).
  std::string At = formatAction(W == WaitKind::Drain ? Waited : Cur);
  int64_t Behind = St.heldBehind.load();
  if (Behind >= 0 && Behind != St.waitAction.load()) {
    // Under a stream rule: queued behind an operation that cannot finish.
    Action Head = actionAt(S, Rank, Behind);
    return fmt::format("rank {} {} `{}`: its `{}` is held on its comm stream "
                       "behind `{}`, which waits for rank {} to post `{}`{}",
                       Rank, Verb, At, formatAction(Waited), formatAction(Head),
                       Head.peer, formatAction(matchingComm(Head, Rank)),
                       StepNote);
  }
  std::string Line =
      fmt::format("rank {} {} `{}` waiting for rank {} to post `{}`", Rank,
                  Verb, At, Waited.peer, formatAction(Partner));
  if (W == WaitKind::RecvData && St.waitAction.load() != Index)
    Line += fmt::format(" (for `{}`, action {})", formatAction(Waited),
                        St.waitAction.load());
  return Line + StepNote;
}

std::string RunState::describeAll() {
  std::string Out;
  for (int32_t R = FirstRank; R < FirstRank + numRanks(); ++R)
    Out += "  " + describe(R) + "\n";
  return Out;
}

void Watchdog::start(std::function<void(const Stall &)> Fn) {
  if (Timeout <= 0 && KernelTimeout <= 0)
    return;
  OnStall = std::move(Fn);
  Thread = std::thread([this] {
    using namespace std::chrono;
    uint64_t Last = RS.progress();
    auto Since = steady_clock::now();
    std::unique_lock<std::mutex> L(Mu);
    while (!Stop.load()) {
      Cv.wait_for(L, milliseconds(20));
      if (Stop.load() || RS.aborted())
        return;
      uint64_t Now = RS.progress();
      double NowMicros = nowMicros();
      // A rank inside a kernel can still make progress: only a run where
      // every unfinished rank waits on communication can be stuck, unless
      // the kernel itself runs past the kernel timeout.
      bool Computing = false;
      Stall Found;
      for (int32_t R = RS.firstRank(); R < RS.firstRank() + RS.numRanks();
           ++R) {
        RankStatus &St = RS.status(R);
        Phase Ph = Phase(St.phase.load());
        if (Ph == Phase::Finished || Ph == Phase::Starting ||
            WaitKind(St.waitKind.load()) != WaitKind::None)
          continue;
        Computing = true;
        double In = St.kernelSince.load(std::memory_order_relaxed);
        double Seconds = In > 0 ? (NowMicros - In) / 1e6 : 0;
        if (KernelTimeout > 0 && Seconds >= KernelTimeout &&
            Found.KernelRank < 0) {
          Action A = actionAt(RS.schedule(), R, St.action.load());
          Found.KernelRank = R;
          Found.Why = fmt::format(
              "rank {} has been running `{}` for {:.1f} s, past the kernel "
              "timeout of {} s (--kernel-timeout): the kernel does not "
              "return",
              R, formatAction(A), Seconds, KernelTimeout);
        }
      }
      if (Found.KernelRank < 0) {
        if (Now != Last || Computing || Timeout <= 0) {
          Last = Now;
          Since = steady_clock::now();
          continue;
        }
        double Idle = duration<double>(steady_clock::now() - Since).count();
        if (Idle < Timeout)
          continue;
        Found.Why = fmt::format("no rank made progress for {} s", Timeout);
      }
      Fired.store(true);
      L.unlock();
      OnStall(Found);
      return;
    }
  });
}

void Watchdog::stop() {
  {
    std::lock_guard<std::mutex> L(Mu);
    Stop.store(true);
  }
  Cv.notify_all();
  if (Thread.joinable())
    Thread.join();
}

} // namespace ppsrt
