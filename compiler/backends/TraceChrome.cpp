//===- TraceChrome.cpp - Chrome trace JSON of a simulated schedule --------===//
//
// The format is the one in docs/architecture.md, shared with the runtime's
// run trace: pid = rank ("rank N"), tid 0 = compute, tid 1 = comm; complete
// events in microseconds of trace time (one unit = 1000 us); flow events
// from each send to its receive. Everything goes through OutBuf: numbers
// are formatted into its buffer, names are written piecewise, so the loop
// over actions neither allocates nor concatenates strings.
//
//===----------------------------------------------------------------------===//
#include "TraceCommon.h"

#include "llvm/ADT/STLExtras.h"

#include <vector>

namespace pps::backends {

using detail::OutBuf;

namespace detail {

OutBuf &OutBuf::action(const ir::Action &A, bool Xml) {
  const char *To = Xml ? " -&gt; " : " -> ";
  const char *From = Xml ? " &lt;- " : " <- ";
  using ir::ActionKind;
  auto Comp = [&](const char *K) {
    put(K).num(A.Microbatch).put('@').num(A.Stage);
  };
  switch (A.Kind) {
  case ActionKind::F:
    Comp("F");
    break;
  case ActionKind::I:
    Comp("I");
    break;
  case ActionKind::W:
    Comp("W");
    break;
  case ActionKind::B:
    Comp("B");
    break;
  case ActionKind::SendF:
    Comp("send F");
    put(To).num(A.Peer);
    break;
  case ActionKind::SendB:
    Comp("send B");
    put(To).num(A.Peer);
    break;
  case ActionKind::RecvF:
    Comp("recv F");
    put(From).num(A.Peer);
    break;
  case ActionKind::RecvB:
    Comp("recv B");
    put(From).num(A.Peer);
    break;
  case ActionKind::Unshard:
    put("unshard ").num(A.Stage);
    break;
  case ActionKind::Reshard:
    put("reshard ").num(A.Stage);
    break;
  case ActionKind::ReduceGrad:
    put("reduce_grad ").num(A.Stage);
    break;
  case ActionKind::Idle:
    put("idle");
    break;
  }
  return *this;
}

} // namespace detail

void appendActionName(const ir::Action &A, std::string &Out) {
  llvm::raw_string_ostream SOS(Out);
  {
    OutBuf B(SOS);
    B.action(A);
  }
  SOS.flush();
}

std::string actionName(const ir::Action &A) {
  std::string S;
  appendActionName(A, S);
  return S;
}

static const char *kindCategory(ir::ActionKind K) {
  switch (K) {
  case ir::ActionKind::F:
    return "F";
  case ir::ActionKind::I:
    return "I";
  case ir::ActionKind::W:
    return "W";
  case ir::ActionKind::B:
    return "B";
  case ir::ActionKind::SendF:
  case ir::ActionKind::SendB:
    return "send";
  case ir::ActionKind::RecvF:
  case ir::ActionKind::RecvB:
    return "recv";
  default:
    return "control";
  }
}

void writeChromeTrace(const ir::Schedule &S, const sim::SimResult &R,
                      llvm::raw_ostream &OS) {
  OutBuf B(OS);
  constexpr double Us = 1000.0; // trace microseconds per time unit
  B.put("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"pipeline\":");
  B.jsonStr(S.Name).put(",\"makespan\":").dbl(R.Makespan);
  B.put(",\"comm_model\":").jsonStr(ir::commModelName(R.Comm));
  B.put(",\"blocking\":").put(R.Blocking ? "true" : "false");
  B.put("},\n\"traceEvents\":[\n");
  bool First = true;
  auto Sep = [&] {
    if (!First)
      B.put(",\n");
    First = false;
  };
  int32_t P = int32_t(S.Ranks.size());
  for (int32_t Rk = 0; Rk < P; ++Rk) {
    Sep();
    B.put("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":").num(Rk);
    B.put(",\"args\":{\"name\":\"rank ").num(Rk).put("\"}},\n");
    B.put("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":").num(Rk);
    B.put(",\"args\":{\"sort_index\":").num(Rk).put("}},\n");
    B.put("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":").num(Rk);
    B.put(",\"tid\":0,\"args\":{\"name\":\"compute\"}},\n");
    B.put("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":").num(Rk);
    B.put(",\"tid\":1,\"args\":{\"name\":\"comm\"}}");
  }
  if (R.Times.size() != S.Ranks.size()) {
    B.put("\n]}\n");
    return;
  }
  detail::MessageIds Ids;
  // Comm slices of one rank can overlap (transfers to different peers, a
  // message still in flight when the next begins, receives posted early), and
  // a trace thread must hold properly nested slices. So each slice goes to
  // the first lane free at its start: lane k of transfers is tid 1 + 2k,
  // lane k of receive waits is tid 2 + 2k. The scratch vectors are reused
  // across ranks.
  std::vector<std::pair<double, uint32_t>> Order;
  std::vector<uint16_t> XferLane, WaitLane, HeldLane;
  llvm::SmallVector<double, 4> LaneEnd;
  // Threads of the lanes of comms held back on their stream.
  constexpr int64_t HeldTid = 100000;
  auto Assign = [&](std::vector<uint16_t> &Lane, auto End) {
    llvm::sort(Order);
    LaneEnd.clear();
    for (const auto &[T0, I] : Order) {
      double T1 = End(I);
      size_t K = 0;
      while (K < LaneEnd.size() && LaneEnd[K] > T0)
        ++K;
      if (K == LaneEnd.size())
        LaneEnd.push_back(T1);
      else
        LaneEnd[K] = T1;
      Lane[I] = uint16_t(std::min<size_t>(K, 4095));
    }
    return LaneEnd.size();
  };
  for (int32_t Rk = 0; Rk < P; ++Rk) {
    const auto &Acts = S.Ranks[Rk].Actions;
    const sim::RankTimeline &T = R.Times[Rk];
    size_t N = Acts.size();
    XferLane.assign(N, 0);
    WaitLane.assign(N, 0);
    Order.clear();
    for (uint32_t I = 0; I < N; ++I)
      if (ir::isComm(Acts[I].Kind) && std::isfinite(T.End[I]))
        Order.push_back({T.TransferStart[I], I});
    size_t XLanes = Assign(XferLane, [&](uint32_t I) { return T.End[I]; });
    Order.clear();
    for (uint32_t I = 0; I < N; ++I)
      if (ir::isRecv(Acts[I].Kind) && std::isfinite(T.End[I]) &&
          T.TransferStart[I] > T.Start[I])
        Order.push_back({T.Start[I], I});
    size_t WLanes =
        Assign(WaitLane, [&](uint32_t I) { return T.TransferStart[I]; });
    // Comms held back on their stream (the stream rule): lanes of their
    // own, tid HeldTid + k.
    HeldLane.assign(N, 0);
    Order.clear();
    bool AnyHeld = !T.Held.empty();
    if (AnyHeld)
      for (uint32_t I = 0; I < N; ++I)
        if (T.Held[I] > 0 && T.HeldBy[I] != ~uint64_t(0) &&
            std::isfinite(T.Start[I]))
          Order.push_back({T.Start[I] - T.Held[I], I});
    size_t HLanes = Order.empty() ? 0 : Assign(HeldLane, [&](uint32_t I) {
      return T.Start[I];
    });
    for (size_t K = 0; K < HLanes; ++K) {
      Sep();
      B.put("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":").num(Rk);
      B.put(",\"tid\":").num(int64_t(HeldTid + K));
      B.put(",\"args\":{\"name\":\"comm held (stream)");
      if (K)
        B.put(' ').num(int64_t(K + 1));
      B.put("\"}}");
    }
    for (const auto &[T0, I] : Order) {
      const ir::Action &A = Acts[I];
      const ir::Action &By =
          S.Ranks[T.HeldBy[I] >> 32].Actions[uint32_t(T.HeldBy[I])];
      Sep();
      B.put("{\"name\":\"held ").action(A);
      B.put("\",\"cat\":\"held\",\"ph\":\"X\",\"pid\":").num(Rk);
      B.put(",\"tid\":").num(int64_t(HeldTid + HeldLane[I]));
      B.put(",\"ts\":").us(T0 * Us).put(",\"dur\":").us(T.Held[I] * Us);
      B.put(",\"args\":{\"held_by\":\"").action(By);
      B.put("\",\"kind\":\"held\"}}");
    }
    for (size_t K = 0; K < std::max(XLanes, WLanes); ++K) {
      for (int Wait = 0; Wait < 2; ++Wait) {
        if (K == 0 && Wait == 0)
          continue; // "comm" is named above
        if (K >= (Wait ? WLanes : XLanes))
          continue;
        Sep();
        B.put("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":").num(Rk);
        B.put(",\"tid\":").num(int64_t(1 + Wait + 2 * K));
        B.put(",\"args\":{\"name\":\"").put(Wait ? "comm wait" : "comm");
        if (K)
          B.put(' ').num(int64_t(K + 1));
        B.put("\"}}");
      }
    }
    for (size_t I = 0; I < N; ++I) {
      const ir::Action &A = Acts[I];
      if (A.Kind == ir::ActionKind::Idle)
        continue;
      double St = T.Start[I], X = T.TransferStart[I], En = T.End[I];
      if (!std::isfinite(En))
        continue; // never ran (deadlock)
      bool Comm = ir::isComm(A.Kind);
      int64_t Tid = Comm ? 1 + 2 * int64_t(XferLane[I]) : 0;
      if (Comm && ir::isRecv(A.Kind) && X > St) {
        Sep();
        B.put("{\"name\":\"wait ").action(A);
        B.put("\",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":").num(Rk);
        B.put(",\"tid\":").num(2 + 2 * int64_t(WaitLane[I]));
        B.put(",\"ts\":").us(St * Us).put(",\"dur\":").us((X - St) * Us);
        B.put(",\"args\":{\"microbatch\":").num(A.Microbatch);
        B.put(",\"stage\":").num(A.Stage).put(",\"kind\":\"wait\"}}");
      }
      double Begin = Comm ? X : St;
      Sep();
      B.put("{\"name\":\"")
          .action(A)
          .put("\",\"cat\":\"")
          .put(kindCategory(A.Kind));
      B.put("\",\"ph\":\"X\",\"pid\":").num(Rk).put(",\"tid\":").num(Tid);
      B.put(",\"ts\":").us(Begin * Us).put(",\"dur\":").us((En - Begin) * Us);
      B.put(",\"args\":{\"microbatch\":").num(A.Microbatch);
      B.put(",\"stage\":").num(A.Stage).put(",\"kind\":\"");
      B.put(ir::actionKindName(A.Kind)).put('"');
      if (Comm)
        B.put(",\"peer\":").num(A.Peer);
      if (A.overlapsNext())
        B.put(",\"overlap\":true");
      B.put("}}");
      if (Comm && A.Peer >= 0 && A.Peer < P && A.Peer != Rk) {
        bool Send = ir::isSend(A.Kind);
        uint64_t Id =
            Send ? Ids.next(Rk, A.Peer, true) : Ids.next(A.Peer, Rk, false);
        Sep();
        // The arrow goes from the start of the send's transfer slice to the
        // start of the receive's (the same instant under rendezvous).
        B.put("{\"name\":\"message\",\"cat\":\"flow\",\"ph\":\"");
        B.put(Send ? "s" : "f").put('"');
        if (!Send)
          B.put(",\"bp\":\"e\"");
        B.put(",\"id\":").num(int64_t(Id)).put(",\"pid\":").num(Rk);
        B.put(",\"tid\":").num(Tid).put(",\"ts\":").us(Begin * Us).put('}');
      }
    }
  }
  B.put("\n]}\n");
}

} // namespace pps::backends
