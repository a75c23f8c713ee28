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

namespace pps::backends {

using detail::OutBuf;

namespace detail {

OutBuf &OutBuf::action(const ir::Action &A) {
  using ir::ActionKind;
  auto Comp = [&](const char *K) {
    put(K).num(A.Microbatch).put('@').num(A.Stage);
  };
  switch (A.Kind) {
  case ActionKind::F: Comp("F"); break;
  case ActionKind::I: Comp("I"); break;
  case ActionKind::W: Comp("W"); break;
  case ActionKind::B: Comp("B"); break;
  case ActionKind::SendF:
    Comp("send F");
    put(" -> ").num(A.Peer);
    break;
  case ActionKind::SendB:
    Comp("send B");
    put(" -> ").num(A.Peer);
    break;
  case ActionKind::RecvF:
    Comp("recv F");
    put(" <- ").num(A.Peer);
    break;
  case ActionKind::RecvB:
    Comp("recv B");
    put(" <- ").num(A.Peer);
    break;
  case ActionKind::Unshard: put("unshard ").num(A.Stage); break;
  case ActionKind::Reshard: put("reshard ").num(A.Stage); break;
  case ActionKind::ReduceGrad: put("reduce_grad ").num(A.Stage); break;
  case ActionKind::Idle: put("idle"); break;
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
  case ir::ActionKind::F: return "F";
  case ir::ActionKind::I: return "I";
  case ir::ActionKind::W: return "W";
  case ir::ActionKind::B: return "B";
  case ir::ActionKind::SendF:
  case ir::ActionKind::SendB: return "send";
  case ir::ActionKind::RecvF:
  case ir::ActionKind::RecvB: return "recv";
  default: return "control";
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
  for (int32_t Rk = 0; Rk < P; ++Rk) {
    const auto &Acts = S.Ranks[Rk].Actions;
    const sim::RankTimeline &T = R.Times[Rk];
    for (size_t I = 0, N = Acts.size(); I < N; ++I) {
      const ir::Action &A = Acts[I];
      if (A.Kind == ir::ActionKind::Idle)
        continue;
      double St = T.Start[I], X = T.TransferStart[I], En = T.End[I];
      if (!std::isfinite(En))
        continue; // never ran (deadlock)
      bool Comm = ir::isComm(A.Kind);
      if (Comm && ir::isRecv(A.Kind) && X > St) {
        Sep();
        B.put("{\"name\":\"wait ").action(A);
        B.put("\",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":").num(Rk);
        B.put(",\"tid\":1,\"ts\":").dbl(St * Us).put(",\"dur\":").dbl((X - St) * Us);
        B.put(",\"args\":{\"microbatch\":").num(A.Microbatch);
        B.put(",\"stage\":").num(A.Stage).put(",\"kind\":\"wait\"}}");
      }
      double Begin = Comm ? X : St;
      Sep();
      B.put("{\"name\":\"").action(A).put("\",\"cat\":\"").put(kindCategory(A.Kind));
      B.put("\",\"ph\":\"X\",\"pid\":").num(Rk).put(",\"tid\":").put(Comm ? '1' : '0');
      B.put(",\"ts\":").dbl(Begin * Us).put(",\"dur\":").dbl((En - Begin) * Us);
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
        uint64_t Id = Send ? Ids.next(Rk, A.Peer, true) : Ids.next(A.Peer, Rk, false);
        Sep();
        // The arrow goes from the start of the send's transfer slice to the
        // start of the receive's (the same instant under rendezvous).
        B.put("{\"name\":\"message\",\"cat\":\"flow\",\"ph\":\"");
        B.put(Send ? "s" : "f").put('"');
        if (!Send)
          B.put(",\"bp\":\"e\"");
        B.put(",\"id\":").num(int64_t(Id)).put(",\"pid\":").num(Rk);
        B.put(",\"tid\":1,\"ts\":").dbl(Begin * Us).put('}');
      }
    }
  }
  B.put("\n]}\n");
}

} // namespace pps::backends
