"""PipelineRuntime: runs a compiled pps schedule with torch.distributed
point-to-point operations, action for action as the C++ executor does
(runtime/src/Executor.cpp, docs/runtime.md):

* F(m, s) runs the stage module and keeps its autograd graph in the state
  of (m, s) (+1 live activation); a received activation is a leaf that
  requires grad; the last stage of the microbatch's route applies the loss.
* I(m, s) computes the input gradient with the graph retained; W(m, s) the
  parameter gradients, accumulated into .grad; B(m, s) both in one pass
  (the split costs no second backward: pps.torch._split). The state of
  (m, s) is released at its last backward: B, or W, or I when the rank has
  no W(m, s), as the memory analysis counts, and the measured peak is
  checked against the analysis after every step.
* RECV posts an irecv where it stands; the compute that needs it waits
  (deferred wait). SEND posts an isend; under the rendezvous model the
  rank waits for it there, under eager at the end of the step, under
  batched a maximal run of consecutive comm actions is posted together
  (batch_isend_irecv) and completes together. A send of at most the
  eager threshold is waited on at the end of the step, as under eager.
  Each work is waited on exactly once (a second wait() on a completed gloo
  work blocks).
* The stream rule (comm_model='nccl', or stream='rank' / 'peer'): the
  rank issues its comms and goes on (sends are waited on at the end of the
  step, receives by their consumer); they complete in issue order on one
  in-order queue per rank (or per peer), each started once the one before
  it completed (a send under the eager threshold completes once posted),
  so a receive whose data is not there yet holds back the sends behind
  it, as NCCL's streams do (PyTorch #188833) and the C++ executor runs it. NCCL does this itself; on other backends (gloo)
  pps.torch emulates it with a thread per queue (_streams.py). Under
  batched every group completes before the rank goes on, so the queue
  never holds anything back.
* overlap pairs run in order (or through an overlap handler); UNSHARD,
  RESHARD, REDUCE_GRAD call handlers (no-ops by default); after the table,
  the optimizer steps and the gradients are zeroed.
* Before anything runs, the schedule must pass the proof `ppsc lint` runs
  under the comm model (dependencies, matching, deadlock, memory), unless
  verify=False.
* Weight sharing (Schedule.weight_groups, from the compiler): the stages
  of a group hold copies of one layer of the model (DualPipe's two
  directions). The first step starts every copy from the group's first
  stage's parameters; after each step's table, before the optimizer, the
  holders exchange their gradients (torch.distributed p2p, as the
  schedule's messages) and every copy gets the group's sum, added up in
  stage order, so the copies stay identical.

A message carries one or more tensors whose shapes and dtypes the
receiver must know before posting its irecv: the rank that computes the
first F of a stage publishes the shapes of its output in the rendezvous
store (or they are given as message_shapes), and every later message on
that stage boundary must have them (checked before sending, with both
ranks and the action named).

This file builds the runtime and runs the step loop (the table, handlers,
the end of the run); the actions live beside it: _compute.py (F, I, W, B
and the activation count), _messages.py (sends, receives and their
shapes), _streams.py (the stream rule where the backend does not run it),
_sharing.py (weight sharing), _memory.py (activation bytes), _schema.py
(the kinds and PipelineError), _trace.py (the trace close() writes),
_watchdog.py (the watchdog and the status lines).
"""

import itertools
import math
import numbers
import os
import time
import warnings
from typing import (Any, Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple)

import torch
from torch import Tensor

from .. import Action, CommStream, Findings, Schedule
from .._args import _comm
from ._compute import _Compute
from ._memory import _storage
from ._messages import Meta, _example_meta, _Messages, _Req
from ._schema import (_CODES, _IS_COMM, _IS_COMPUTE, _KINDS, _ROW, B, F, I,
                      W, PipelineError)
from ._sharing import _WeightSharing
from ._split import Stage, StageState
from ._trace import Event, _TraceWriter
from ._watchdog import (BETWEEN_STEPS, CLOSED, FAILED, RUNNING, WAIT_DRAIN,
                        WAIT_NONE, Keys, Status, Watchdog, _StatusLine)

_runtime_ids = itertools.count()



def _memory_text(models: Sequence[Tuple[float, float]]) -> str:
    """The memory model as errors say it: "F = 2, I = 1", or per stage."""
    if all(m == models[0] for m in models):
        return "F = %g, I = %g" % (models[0][0], -models[0][1])
    return "per stage " + "; ".join("%d: F = %g, I = %g" % (s, f, -i)
                                    for s, (f, i) in enumerate(models))

class PipelineRuntime(_Compute, _Messages, _WeightSharing, _TraceWriter,
                      _StatusLine):
    """Runs one rank of a compiled schedule (pps.compile & co.) on the stage
    modules this rank holds. One per process, on the default process group
    (or `group`) of torch.distributed, initialised by the caller with any
    backend (gloo on CPU, NCCL on GPU).

        dist.init_process_group("gloo")
        rt = pps.torch.PipelineRuntime(schedule, dist.get_rank(),
                                       {s: make_stage(s) for s in
                                        schedule.stages_of(dist.get_rank())},
                                       loss_fn, optimizer)
        for step in range(steps):
            losses = rt.step(inputs=microbatches, targets=labels)
        rt.close()

    schedule: a pps.Schedule whose ranks equal the process group's size.
    rank: this process's rank in the schedule (= its rank in the group).
    stages: {stage: torch.nn.Module}, exactly the stages the schedule puts
      on this rank (schedule.stages_of(rank)). A stage takes the previous
      stage's output (a tensor or a tuple of tensors, as *args) and returns
      a tensor or a tuple of tensors; the first stage of a microbatch's
      route takes inputs[m] (a tensor or a tuple).
    loss_fn: loss_fn(output, target) -> scalar tensor, applied at the last
      stage of each microbatch's route (needed on the ranks holding one).
    optimizer: stepped after each step's table, then its gradients zeroed;
      None leaves the accumulated gradients in .grad for the caller.
    comm_model: 'rendezvous', 'eager', 'batched' or 'nccl' (rendezvous on
      one in-order stream per rank, sends of up to 64 KiB eager); default:
      the schedule's.
    stream: 'none', 'peer' or 'rank': the stream rule instead of the
      schedule's (emulated where the backend is not NCCL: see above).
    eager_threshold: bytes (an int, '64K', 'none') up to which a send
      completes without its receive, by the message sizes the schedule
      declares (`comm { activation ...; }`; undeclared: larger than any),
      as the proof and the C++ executor decide it. The three mean what
      ppsc's --comm-model, --stream and --eager-threshold mean.
    watchdog: seconds without progress on any rank before the run is
      stopped with a report of every rank's blocked action (0: off; errors
      still stop the other ranks).
    trace: a path: close() writes the measured timeline there as Chrome
      trace JSON (rank 0 gathers every rank's events through the store).
    trace_us_per_unit: wall-clock microseconds per trace time unit.
    group: the process group (default: the default group).
    store: the store for shapes, status and trace (default: the default
      group's rendezvous store).
    device: where received tensors are allocated (default: the device of
      this rank's first parameter, else CPU).
    loss_scale: each microbatch's loss is multiplied by this before its
      backward (default 1 / microbatches: the gradient of the mean loss).
    message_shapes: {stage: example output} to give a boundary's shapes
      instead of exchanging them (tensors, meta tensors or (shape, dtype)).
    handlers: {kind: fn(action, runtime)} replacing the built-in behaviour
      of a kind (e.g. 'UNSHARD', 'REDUCE_GRAD' for FSDP; inside, call
      runtime.run_default(action) to keep it).
    overlap_handler: fn(first, second, runtime) running an overlap pair.
    blocking_recv: wait for each receive at the RECV action (the lint's
      model) instead of at its consumer.
    name: the prefix of this runtime's keys in the store (default: the
      schedule's name and how many runtimes this process made before; every
      rank must arrive at the same name).
    verify: prove the schedule first as `ppsc lint` does, under the comm
      model and stream rule of the run (PipelineError with lint's findings
      if it fails); False runs it unverified, with a warning (the
      `verified` attribute says which).
    Attributes comm_model and comm_stream: the run's (pps.CommStream).
    """

    def __init__(self, schedule: Schedule, rank: Optional[int],
                 stages: Mapping[int, torch.nn.Module],
                 loss_fn: Optional[Callable[[Any, Any], Tensor]] = None,
                 optimizer: Optional[torch.optim.Optimizer] = None, *,
                 comm_model: Optional[str] = None,
                 stream: Optional[str] = None, eager_threshold: Any = None,
                 watchdog: float = 10.0,
                 trace: Optional[str] = None,
                 trace_us_per_unit: float = 1000.0, group=None, store=None,
                 device: Optional[torch.device] = None,
                 loss_scale: Optional[float] = None,
                 message_shapes: Optional[Mapping[int, Any]] = None,
                 handlers: Optional[Mapping[str, Callable]] = None,
                 overlap_handler: Optional[Callable] = None,
                 blocking_recv: bool = False, name: Optional[str] = None,
                 verify: bool = True):
        import torch.distributed as dist
        self._dist = dist
        if not isinstance(schedule, Schedule):
            raise TypeError("schedule must be a pps.Schedule (from "
                            "pps.compile and co.), got %s"
                            % type(schedule).__name__)
        ranks = schedule.ranks
        # A schedule whose messages would meet the wrong receives (the
        # analysis layer's FIFO matching) is refused before anything is
        # sent, in the C++ runtime's words.
        mismatch = schedule._unit.fifo_mismatch()
        if mismatch:
            raise PipelineError("error: " + mismatch)
        # The comm model and stream rule of this run, read by the compiler
        # as ppsc reads --comm-model, --stream and --eager-threshold.
        comm = _comm(comm_model, stream, eager_threshold)
        model, base, rule, words, eager_f, eager_b = \
            schedule._unit.comm_config(comm)
        # The proof every executable export runs (one check, the
        # compiler's), under the comm model this run uses.
        self.verified = False
        if verify:
            # The comms as placed, which is what runs (a comm model given
            # here could make the lowering place others).
            report = schedule._unit.prove(comm, lowered=True)
            found = Findings() if report is None else \
                Findings._from_report(report)
            if found.errors:
                raise PipelineError(
                    "the schedule is not proved free of deadlock under the %s "
                    "(what `ppsc lint` checks); verify=False runs it "
                    "anyway:\n%s" % (words, found.text.rstrip("\n")))
            self.verified = True
        else:
            warnings.warn("pps.torch: running schedule %r unverified "
                          "(verify=False): it was not checked for deadlock "
                          "under the %s" % (schedule.name, words),
                          stacklevel=2)
        # Every rank's table, by the schema (rank 0 names every rank's
        # events in the trace).
        self._tables: List[List[Tuple]] = []
        self._texts: List[List[str]] = []
        self._partners: List[List[str]] = []
        for r in range(ranks):
            rows = schedule._unit.runtime_table(r)
            self._tables.append([t[:_ROW] for t in rows])
            self._texts.append([t[_ROW] for t in rows])
            self._partners.append([t[_ROW + 1] for t in rows])
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("torch.distributed is not initialised: call "
                               "torch.distributed.init_process_group first")
        size = dist.get_world_size(group)
        me = dist.get_rank(group)
        if size != ranks:
            raise ValueError("the schedule has %d ranks but the process group "
                             "has %d processes" % (ranks, size))
        if rank is None:
            rank = me
        if (isinstance(rank, bool) or not isinstance(rank, numbers.Integral)
                or rank != me):
            raise ValueError("rank must be this process's rank in the process "
                             "group (%d), got %r" % (me, rank))
        rank = int(rank)
        if not isinstance(watchdog, numbers.Real) or not watchdog >= 0:
            raise ValueError("watchdog must be a number of seconds >= 0")
        self.schedule = schedule
        self.rank = rank
        self.ranks = ranks
        self.comm_model = model
        self.comm_stream = CommStream(rule["scope"], rule["eager_threshold"])
        self._model = base
        # Whether a send of a forward / backward message is eager, by the
        # sizes the schedule declares (schema::sendIsEager, as the proof
        # and the C++ executor decide it).
        self._eager_f, self._eager_b = eager_f, eager_b
        self._group = group
        M = schedule.microbatches
        self._microbatches = M

        self._actions: List[Action] = schedule.actions(rank)
        self._acts = self._tables[rank]
        self._acts_text = self._texts[rank]
        self._acts_partner = self._partners[rank]

        # Stages.
        local = list(schedule.stages_of(rank))
        if not isinstance(stages, Mapping):
            raise TypeError("stages must be a mapping {stage: torch.nn.Module}")
        given = set(stages)
        if given != set(local):
            raise ValueError("rank %d holds stages %s; stages gives %s"
                             % (rank, local, sorted(given, key=str)))
        self._stage_rank = list(schedule.stage_to_rank)
        split = {a[2] for a in self._acts if a[0] == I}
        self._stages: Dict[int, Stage] = {
            s: Stage(s, stages[s], split=s in split) for s in local}
        # The ranks that read inputs and compute losses, as the compiler
        # exports them (Schedule.routes).
        self._first_here = rank in schedule.data_ranks
        self._last_here = rank in schedule.loss_ranks
        # Weight-sharing groups with a stage here and a copy elsewhere or
        # here (Schedule.weight_groups).
        self._shared = [g for g in schedule.weight_groups if len(g) > 1 and
                        any(self._stage_rank[st] == rank for st in g)]
        self._synced = False
        if self._last_here and not callable(loss_fn):
            raise TypeError("rank %d holds the last stage of a microbatch's "
                            "route: loss_fn(output, target) is needed" % rank)
        self._loss_fn = loss_fn
        self._optimizer = optimizer
        if loss_scale is None:
            loss_scale = 1.0 / M
        if not isinstance(loss_scale, numbers.Real) or not math.isfinite(
                loss_scale):
            raise ValueError("loss_scale must be a finite number")
        self._loss_scale = float(loss_scale)
        self._blocking_recv = bool(blocking_recv)
        if device is None:
            device = torch.device("cpu")
            for s in local:
                for t in itertools.chain(stages[s].parameters(),
                                         stages[s].buffers()):
                    device = t.device
                    break
                else:
                    continue
                break
        self.device = torch.device(device)
        self._param_storages = set()
        for st in self._stages.values():
            for p in st.module.parameters():
                self._param_storages.add(_storage(p).data_ptr())

        # Handlers.
        self._handlers: List[Optional[Callable]] = [None] * len(_KINDS)
        for kind, fn in (handlers or {}).items():
            code = _CODES.get(str(kind).upper())
            if code is None:
                raise ValueError("handlers: unknown action kind %r (kinds: %s)"
                                 % (kind, ", ".join(_CODES)))
            if not callable(fn):
                raise TypeError("handlers[%r] must be callable" % kind)
            self._handlers[code] = fn
        if overlap_handler is not None and not callable(overlap_handler):
            raise TypeError("overlap_handler must be callable")
        self._overlap_handler = overlap_handler

        try:
            backend = str(dist.get_backend(group)).lower()
        except Exception:
            backend = ""
        # Waits block the host by polling on NCCL (not on gloo, where a
        # work's is_completed() stays False until wait() is called).
        self._host_poll = backend == "nccl"
        self.backend = backend
        # The stream rule: NCCL runs it on its own streams; elsewhere one
        # thread per queue (made on first use) emulates it. Under batched
        # every group completes before the rank goes on: nothing to hold.
        self._emulate_streams = (self.comm_stream.scope != "none"
                                 and backend != "nccl" and base != "batched")
        self._streams: Dict[int, Any] = {}
        self._all_streams: List[Any] = []
        self._waiting: Optional[_Req] = None
        # Peers as global ranks (p2p calls take global ranks).
        if group is None:
            self._global = list(range(ranks))
        else:
            get = getattr(dist, "get_global_rank", None) or getattr(
                dist.distributed_c10d, "_get_global_rank")
            self._global = [get(group, r) for r in range(ranks)]

        # Message shapes: boundary s = the output of F(., s).
        self._meta: Dict[int, Meta] = {}
        self._meta_given = set()
        for s, v in (message_shapes or {}).items():
            if not isinstance(s, numbers.Integral) or not 0 <= s < schedule.stages:
                raise ValueError("message_shapes: %r is not a stage" % (s,))
            self._meta[int(s)] = _example_meta(int(s), v)
            self._meta_given.add(int(s))
        self._published = set()

        # The store, under a prefix of this runtime's own.
        if store is None:
            try:
                store = dist.distributed_c10d._get_default_store()
            except Exception:
                store = None
        if name is None:
            name = "%s/%d" % (schedule.name, next(_runtime_ids))
        self._store = (Keys(dist.PrefixStore("pps.torch/%s/" % name, store))
                       if store is not None else None)

        # Run state.
        self._status = Status()
        self._cur = -1
        self._step_no = 0
        self._states: Dict[Tuple[int, int], StageState] = {}
        self._out_f: Dict[Tuple[int, int], Tuple[Tensor, ...]] = {}
        self._out_b: Dict[Tuple[int, int], Tuple[Tensor, ...]] = {}
        self._recv_f: Dict[Tuple[int, int], _Req] = {}
        self._recv_b: Dict[Tuple[int, int], _Req] = {}
        self._open_sends: List[_Req] = []
        self._batch: List[_Req] = []
        self._send_seq = [0] * ranks
        self._recv_seq = [0] * ranks
        self._bytes_cache: Dict[Tuple, int] = {}
        self._live = 0
        self._peak = 0
        self._live_bytes = 0
        self._peak_bytes = 0
        self._predicted = schedule.peak_activations_per_rank[rank]
        # Memory in the schedule's memory model (the schema's arithmetic,
        # _pps.memory_delta, on this rank's own (m, s) states).
        model = schedule.memory_model
        # Per stage (F allocates, I frees), as the schedule counts them.
        stages = model.get("stages") or [model] * schedule.stages
        self._mem_models = [(float(m["F"]), -float(m["I"])) for m in stages]
        self._mem_chunks = model == {"F": 1, "I": 0, "W": -1}
        self._mem_live = 0.0
        self._mem_peak = 0.0
        self._input_done = set()
        self._predicted_mem = schedule.peak_memory_per_rank[rank]
        self._losses: Dict[int, Tensor] = {}
        self._inputs = None
        self._targets = None
        self._closed = False
        if trace is not None:
            trace = os.fspath(trace)
            folder = os.path.dirname(os.path.abspath(trace))
            if rank == 0 and not os.access(folder, os.W_OK):
                raise ValueError("trace: cannot write into %r" % folder)
        self._trace_path = trace
        self._us_per_unit = float(trace_us_per_unit)
        self._events: Optional[List[Event]] = [] if trace is not None else None
        self._start: Optional[float] = None
        self._epoch = time.time() - time.perf_counter()
        self._watchdog = Watchdog(self._store, rank, ranks, float(watchdog),
                                  self._status, self.describe)
        self._watchdog.start()

    # --- public state ---------------------------------------------------------

    @property
    def live_activations(self) -> int:
        """(microbatch, stage) states alive now on this rank."""
        return self._live

    @property
    def peak_activations(self) -> int:
        """The most states alive at once on this rank so far."""
        return self._peak

    @property
    def predicted_peak_activations(self) -> int:
        """The memory analysis' peak for this rank."""
        return self._predicted

    @property
    def peak_memory(self) -> float:
        """The most memory this rank held at once so far, in the schedule's
        memory model's units (Schedule.memory_model; with the default chunk
        model the same as peak_activations)."""
        return self._mem_peak

    @property
    def predicted_peak_memory(self) -> float:
        """The memory analysis' peak for this rank, in the model's units."""
        return self._predicted_mem

    @property
    def live_activation_bytes(self) -> int:
        """Bytes the live states keep: the storages their autograd graphs
        saved for the backward, their inputs and outputs, and the gradients
        I keeps for W (measured on the first F of each stage and input
        shape)."""
        return self._live_bytes

    @property
    def peak_activation_bytes(self) -> int:
        return self._peak_bytes

    @property
    def stream_held(self) -> Tuple[int, float]:
        """Under an emulated stream rule: (operations, seconds): how many
        comms this rank issued while the one ahead of them on their stream
        had not completed, and how long they waited to start (the measured
        side of SimResult.stream_held); (0, 0.0) otherwise."""
        ops = sum(st.held_ops for st in self._all_streams)
        return ops, sum(st.held_time for st in self._all_streams)

    @property
    def steps(self) -> int:
        """Steps run so far."""
        return self._step_no

    @property
    def stage_modules(self) -> Dict[int, torch.nn.Module]:
        return {s: st.module for s, st in self._stages.items()}

    def trace_events(self) -> List[Event]:
        """This rank's recorded events (action index, rank, step, lane,
        flow, flow id, start, end), times in seconds of time.perf_counter()."""
        return list(self._events or [])

    # --- running --------------------------------------------------------------

    def step(self, inputs: Optional[Sequence[Any]] = None,
             targets: Optional[Sequence[Any]] = None) -> Dict[int, Tensor]:
        """Runs this rank's whole table once (one training step), then the
        optimizer. inputs[m] is microbatch m's input (needed on ranks
        holding a route's first stage), targets[m] its target (on ranks
        holding a route's last stage). Returns {microbatch: loss} (detached,
        unscaled) for the microbatches whose loss this rank computed.
        Raises PipelineError naming the rank and the action if anything
        fails; the other ranks are then stopped."""
        if self._closed:
            raise RuntimeError("step() after close()")
        if self._status.phase == FAILED:
            raise RuntimeError("step() after a failed step: the run is broken")
        M = self._microbatches
        for what, seq, needed in (("inputs", inputs, self._first_here),
                                  ("targets", targets, self._last_here)):
            if not needed:
                continue
            if seq is None or not hasattr(seq, "__len__") or not hasattr(
                    seq, "__getitem__"):
                raise TypeError("rank %d: %s must be a sequence of %d "
                                "microbatches" % (self.rank, what, M))
            if len(seq) != M:
                raise ValueError("rank %d: %s has %d microbatches, the "
                                 "schedule %d" % (self.rank, what, len(seq), M))
        self._inputs = inputs
        self._targets = targets
        self._losses = {}
        st = self._status
        st.step = self._step_no
        st.wait_kind = WAIT_NONE
        st.phase = RUNNING
        if self._start is None:
            self._start = time.perf_counter()
        try:
            if self._shared and not self._synced:
                self._start_copies_alike()
                self._synced = True
            self._run_table()
            if self._shared:
                self._sum_shared_gradients()
            if self._optimizer is not None:
                self._cur = len(self._acts) - 1
                try:
                    self._optimizer.step()
                    self._optimizer.zero_grad(set_to_none=True)
                except Exception as e:
                    raise PipelineError("rank %d: the optimizer step threw: "
                                        "%s: %s" % (self.rank,
                                                    type(e).__name__, e)) from e
            if self._peak != self._predicted:
                raise PipelineError(
                    "rank %d: measured peak activations %d differ from the "
                    "memory analysis (%d)" % (self.rank, self._peak,
                                              self._predicted))
            if (not self._mem_chunks
                    and abs(self._mem_peak - self._predicted_mem) > 1e-6):
                raise PipelineError(
                    "rank %d: measured peak memory %g differs from the "
                    "memory analysis (%g) under the memory model %s"
                    % (self.rank, self._mem_peak, self._predicted_mem,
                       _memory_text(self._mem_models)))
        except BaseException as e:
            st.phase = FAILED
            self._watchdog.announce_failure(
                str(e) if isinstance(e, PipelineError) else
                "rank %d failed: %s: %s" % (self.rank, type(e).__name__, e))
            raise
        finally:
            self._inputs = None
            self._targets = None
        st.phase = BETWEEN_STEPS
        self._step_no += 1
        return self._losses

    def _run_table(self) -> None:
        acts = self._acts
        n = len(acts)
        st = self._status
        handlers = self._handlers
        batched = self._model == "batched"
        i = 0
        try:
            while i < n:
                a = acts[i]
                self._cur = i
                st.action = i
                code = a[0]
                if _IS_COMPUTE[code] and a[4] and i + 1 < n:
                    if self._overlap_handler is not None:
                        self._overlap_handler(self._actions[i],
                                              self._actions[i + 1], self)
                    else:
                        self._run_action(i, a, handlers)
                        self._cur = i + 1
                        st.action = i + 1
                        self._run_action(i + 1, acts[i + 1], handlers)
                    i += 2
                    st.progress += 1
                    continue
                self._run_action(i, a, handlers)
                st.progress += 1
                if batched and self._batch and (
                        i + 1 == n or not _IS_COMM[acts[i + 1][0]]):
                    self._drain_batch()
                i += 1
            self._cur = n - 1
            for req in self._open_sends:
                self._wait(req, WAIT_DRAIN)
                self._record_send(req)
            self._open_sends = []
            # Receives nothing consumed still have to complete (their
            # senders wait for them); their data is dropped.
            for posted in (self._recv_f, self._recv_b):
                for req in posted.values():
                    self._wait(req, WAIT_DRAIN)
                posted.clear()
        except PipelineError:
            raise
        except Exception as e:
            i = self._cur
            text = self._acts_text[i] if 0 <= i < n else "?"
            raise PipelineError("rank %d: action %d `%s` threw: %s: %s"
                                % (self.rank, i, text, type(e).__name__,
                                   e)) from e

    def _run_action(self, i: int, a: Tuple, handlers) -> None:
        h = handlers[a[0]]
        if h is not None:
            h(self._actions[i], self)
        else:
            self._default(a)

    def run_default(self, action: Action) -> None:
        """The built-in behaviour of the action being run (from inside a
        handler; in an overlap handler, either action of the pair)."""
        for i in (self._cur, self._cur + 1):
            if 0 <= i < len(self._acts) and self._actions[i] == action:
                cur = self._cur
                self._cur = i
                self._status.action = i
                try:
                    self._default(self._acts[i])
                finally:
                    self._cur = cur
                    self._status.action = cur
                return
        raise ValueError("run_default(%r): not the action being run"
                         % (action,))

    def _default(self, a: Tuple) -> None:
        code = a[0]
        if code == F:
            self._forward(a)
        elif code == I or code == B:
            self._backward(a)
        elif code == W:
            self._weight(a)
        elif _IS_COMM[code]:
            self._post(a)
        # UNSHARD, RESHARD, REDUCE_GRAD, IDLE: nothing unless handled.

    def _err(self, message: str) -> PipelineError:
        i = self._cur
        text = self._acts_text[i] if 0 <= i < len(self._acts) else "?"
        return PipelineError("rank %d: action %d `%s`: %s"
                             % (self.rank, i, text, message))

    def _record(self, index: int, lane: int, t0: float, t1: float,
                flow: int = 0, fid: int = 0) -> None:
        self._events.append((index, self.rank, self._step_no, lane, flow, fid,
                             t0, t1))

    # --- the end --------------------------------------------------------------

    def close(self, timeout: float = 300.0) -> None:
        """Ends this rank's part of the run: stops the watchdog and, with
        trace=path, gathers every rank's events and writes the trace (rank 0
        waits up to `timeout` seconds for the other ranks' close()). Also
        called when the runtime is used as a context manager."""
        if self._closed:
            return
        self._closed = True
        if self._status.phase != FAILED:
            self._status.phase = CLOSED
        self._watchdog.announce_closed()
        self._watchdog.stop()
        self._close_streams()
        for st in self._stages.values():
            st.remove_hooks()
        if self._trace_path is not None and self._status.phase != FAILED:
            self._write_trace(timeout)

    def __enter__(self) -> "PipelineRuntime":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
