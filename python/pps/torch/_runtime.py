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
  (batch_isend_irecv) and completes together. Each work is waited on
  exactly once (a second wait() on a completed gloo work blocks).
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
"""

import itertools
import json
import math
import numbers
import os
import time
import warnings
from typing import (Any, Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple)

import torch
from torch import Tensor

from .. import Action, Schedule, _pps
from ._split import Stage, StageState, as_tensors
from ._trace import Event, flow_id, write_chrome_trace
from ._watchdog import (BETWEEN_STEPS, CLOSED, FAILED, NOT_STARTED, RUNNING,
                        WAIT_DRAIN, WAIT_NONE, WAIT_RECV, WAIT_SEND, Keys,
                        Status, Watchdog)

# The action schema (runtime/include/ppsrt/Schema.h), from the compiler:
# kind numbers, classes and names; the rules themselves (partners, memory
# effects, producers, FIFO matching, text forms) come per action from
# Schedule's runtime tables, so the C++ and the Python runtime apply one
# definition of each.
_KINDS = _pps.runtime_kinds()
_CODES = {k[0]: i for i, k in enumerate(_KINDS)}
F, I, W, B = (_CODES[k] for k in ("F", "I", "W", "B"))
RECV_F, RECV_B = _CODES["RECV_F"], _CODES["RECV_B"]
_IS_COMPUTE = tuple(k[1] == "compute" for k in _KINDS)
_IS_COMM = tuple(k[1] == "comm" for k in _KINDS)
_IS_SEND = tuple(k[2] == "send" for k in _KINDS)
_IS_FORWARD = tuple(bool(k[3]) for k in _KINDS)
_EFFECTS = {name: i for i, name in enumerate(_pps.MEMORY_EFFECTS)}
_RELEASE_INPUT = _EFFECTS["release_input"]
_RELEASE = _EFFECTS["release"]
_COMM_MODELS = ("rendezvous", "eager", "batched")

# A row of a runtime table (Unit.runtime_table): kind, microbatch, stage,
# peer, overlap_next, memory effect, producer stage, consumer stage, partner
# stage (the texts are kept apart).
_ROW = 9


class PipelineError(RuntimeError):
    """A schedule or a stage failed while running; the message names the
    rank, the action (index and text form) and what went wrong, in the
    words of the C++ runtime and the lint."""


PipelineError.__module__ = "pps.torch"


def action_text(kind: str, microbatch: int, stage: int, peer: int = -1) -> str:
    """The text form of an action, as the lint writes it (the schema's):
    action_text("SEND_F", 3, 5, 2) == "send F3@5 -> 2"."""
    code = _CODES.get(kind)
    if code is None:
        raise ValueError("not an action kind: %r" % (kind,))
    return _pps.action_text(code, microbatch, stage, peer)


def _text(code: int, mb: int, stage: int, peer: int) -> str:
    return _pps.action_text(code, mb, stage, peer)


# --- message shapes ------------------------------------------------------------

Meta = List[Tuple[Tuple[int, ...], torch.dtype]]


def _meta_of(tensors: Sequence[Tensor]) -> Meta:
    return [(tuple(t.shape), t.dtype) for t in tensors]


def _dtype_name(dt: torch.dtype) -> str:
    return str(dt).replace("torch.", "")


def _encode_meta(meta: Meta) -> str:
    return ";".join("%s:%s" % (_dtype_name(dt), "x".join(map(str, shape)))
                    for shape, dt in meta)


def _decode_meta(text: str) -> Meta:
    out = []
    for part in text.split(";"):
        name, _, dims = part.partition(":")
        dt = getattr(torch, name, None)
        if not isinstance(dt, torch.dtype):
            raise ValueError("bad dtype %r in a message header" % name)
        out.append((tuple(int(d) for d in dims.split("x")) if dims else (), dt))
    return out


def format_meta(meta: Meta) -> str:
    """float32[4, 8, 16], or (float32[4, 8], int64[4]) for several."""
    parts = ["%s[%s]" % (_dtype_name(dt), ", ".join(map(str, shape)))
             for shape, dt in meta]
    return parts[0] if len(parts) == 1 else "(%s)" % ", ".join(parts)


def _float_meta(meta: Meta) -> Meta:
    return [(s, dt) for s, dt in meta if dt.is_floating_point]


def _example_meta(stage: int, value: Any) -> Meta:
    """message_shapes[stage]: example tensors (any device, meta included),
    or (shape, dtype) pairs."""
    if isinstance(value, Tensor):
        return [(tuple(value.shape), value.dtype)]
    if isinstance(value, (tuple, list)) and value:
        if (len(value) == 2 and isinstance(value[1], torch.dtype)
                and isinstance(value[0], (tuple, list, torch.Size))):
            return [(tuple(int(d) for d in value[0]), value[1])]
        out: Meta = []
        for v in value:
            out.extend(_example_meta(stage, v))
        return out
    raise TypeError("message_shapes[%d] must be a tensor, a (shape, dtype) "
                    "pair or a tuple of them, got %s"
                    % (stage, type(value).__name__))


# --- activation bytes ----------------------------------------------------------

_SAVED_NAMES: Dict[type, Tuple[str, ...]] = {}


def _storage(t: Tensor):
    us = getattr(t, "untyped_storage", None)
    return us() if us is not None else t.storage()


def _graph_bytes(roots: Sequence[Tensor], extra: Sequence[Tensor],
                 exclude: set) -> int:
    """Bytes of the distinct storages the autograd graph under roots saved
    for its backward (plus `extra`), without those in `exclude` (the
    parameters): the activation memory one F keeps alive."""
    seen_storage = set(exclude)
    total = 0

    def add(t: Any) -> None:
        nonlocal total
        if isinstance(t, Tensor):
            try:
                s = _storage(t)
                key = s.data_ptr()
            except Exception:
                return
            if key in seen_storage:
                return
            seen_storage.add(key)
            total += s.nbytes()
        elif isinstance(t, (tuple, list)):
            for x in t:
                add(x)

    for t in extra:
        add(t)
    keep = []
    seen = set()
    stack = [t.grad_fn for t in roots if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        keep.append(node)
        if hasattr(node, "variable"):
            continue
        names = _SAVED_NAMES.get(type(node))
        if names is None:
            names = tuple(a for a in dir(node) if a.startswith("_saved_")
                          and not a.endswith(("_sizes", "_strides")))
            if hasattr(node, "saved_tensors"):
                names += ("saved_tensors",)
            _SAVED_NAMES[type(node)] = names
        for a in names:
            try:
                add(getattr(node, a))
            except Exception:
                pass
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)
    return total


class _Req:
    """One posted send or receive: its action and the works of its
    tensors."""

    __slots__ = ("index", "code", "mb", "stage", "peer", "tensors", "works",
                 "done", "post", "end", "seq")

    def __init__(self, index, code, mb, stage, peer):
        self.index = index
        self.code = code
        self.mb = mb
        self.stage = stage
        self.peer = peer
        self.tensors: List[Tensor] = []
        self.works: Optional[list] = None
        self.done = False
        self.post = 0.0
        self.end = 0.0
        self.seq = 0


_runtime_ids = itertools.count()


class PipelineRuntime:
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
    comm_model: 'rendezvous', 'eager' or 'batched' (default: the
      schedule's).
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
    verify: prove the schedule first as `ppsc lint` does, under comm_model
      (PipelineError with lint's findings if it fails); False runs it
      unverified, with a warning (the `verified` attribute says which).
    """

    def __init__(self, schedule: Schedule, rank: Optional[int],
                 stages: Mapping[int, torch.nn.Module],
                 loss_fn: Optional[Callable[[Any, Any], Tensor]] = None,
                 optimizer: Optional[torch.optim.Optimizer] = None, *,
                 comm_model: Optional[str] = None, watchdog: float = 10.0,
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
        # The proof every executable export runs (one check, the
        # compiler's), under the comm model this run uses.
        model = comm_model or schedule.comm_model
        if model not in _COMM_MODELS:
            raise ValueError("comm_model must be 'rendezvous', 'eager' or "
                             "'batched', got %r" % (model,))
        self.verified = False
        if verify:
            found = schedule.prove(model)
            if found.errors:
                raise PipelineError(
                    "the schedule is not proved free of deadlock under the %s "
                    "model (what `ppsc lint` checks); verify=False runs it "
                    "anyway:\n%s" % (model, found.text.rstrip("\n")))
            self.verified = True
        else:
            warnings.warn("pps.torch: running schedule %r unverified "
                          "(verify=False): it was not checked for deadlock "
                          "under the %s model" % (schedule.name, model),
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
        comm_model = comm_model or schedule.comm_model
        if comm_model not in _COMM_MODELS:
            raise ValueError("comm_model must be 'rendezvous', 'eager' or "
                             "'batched', got %r" % (comm_model,))
        if not isinstance(watchdog, numbers.Real) or not watchdog >= 0:
            raise ValueError("watchdog must be a number of seconds >= 0")
        self.schedule = schedule
        self.rank = rank
        self.ranks = ranks
        self.comm_model = comm_model
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
        self._predicted = schedule.peak_memory_per_rank[rank]
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

    def describe(self) -> str:
        """This rank's status line, as the watchdog reports it."""
        st = self._status
        r = self.rank
        n = len(self._acts)
        i = st.action
        note = " (step %d)" % st.step if st.step else ""
        if st.phase == NOT_STARTED:
            return "rank %d has not started" % r
        if st.phase in (BETWEEN_STEPS, CLOSED):
            return "rank %d finished all %d actions" % (r, n)
        if st.phase == FAILED:
            return "rank %d stopped at action %d of %d" % (r, i, n)
        cur = self._acts_text[i] if 0 <= i < n else "?"
        kind = st.wait_kind
        if kind == WAIT_NONE:
            return "rank %d is running `%s` (action %d of %d)%s" % (
                r, cur, i, n, note)
        w = st.wait_action
        peer = self._acts[w][3]
        waited = self._acts_text[w]
        other = self._acts_partner[w]
        verb = ("finished its actions and blocks at" if kind == WAIT_DRAIN
                else "blocks at")
        at = waited if kind == WAIT_DRAIN else cur
        line = "rank %d %s `%s` waiting for rank %d to post `%s`" % (
            r, verb, at, peer, other)
        if kind == WAIT_RECV and w != i:
            line += " (for `%s`, action %d)" % (waited, w)
        return line + note

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
        batched = self.comm_model == "batched"
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

    # --- compute --------------------------------------------------------------
    # A row: kind, microbatch, stage, peer, overlap_next, memory effect,
    # producer stage, consumer stage, partner stage (the schema's, per
    # action: Unit.runtime_table).

    def _stage(self, s: int) -> Stage:
        st = self._stages.get(s)
        if st is None:
            raise self._err("stage %d is not held by rank %d" % (s, self.rank))
        return st

    def _forward(self, a: Tuple) -> None:
        index = self._cur
        t0 = time.perf_counter()
        mb, s, producer, consumer = a[1], a[2], a[6], a[7]
        key = (mb, s)
        stage = self._stage(s)
        if not 0 <= mb < self._microbatches:
            raise self._err("microbatch %d is out of range" % mb)
        if key in self._states:
            raise self._err("F%d@%d runs again while its activations are live"
                            % (mb, s))
        state = StageState()
        if producer >= 0:
            args = self._take_input(mb, s, producer, False)
            state.inputs = args
        else:
            x = self._inputs[mb]
            args = tuple(x) if isinstance(x, (tuple, list)) else (x,)
        self._states[key] = state  # F acquires (the schema)
        self._live += 1
        if self._live > self._peak:
            self._peak = self._live
        out = stage.forward(state, args)
        if consumer < 0:
            loss = self._loss_fn(out, self._targets[mb])
            if not isinstance(loss, Tensor) or loss.numel() != 1:
                raise self._err("loss_fn must return a tensor with one "
                                "element, got %s" % (
                                    type(loss).__name__ if not isinstance(
                                        loss, Tensor) else
                                    "shape %s" % list(loss.shape)))
            state.loss = loss.detach()
            self._losses[mb] = state.loss
            if loss.requires_grad:
                state.roots = [loss * self._loss_scale
                               if self._loss_scale != 1.0 else loss]
            outs: Tuple[Tensor, ...] = ()
        else:
            outs = as_tensors(out, "the output of stage %d" % s)
            state.outputs = outs
            state.roots = [t for t in outs if t.requires_grad]
            self._out_f[key] = outs
            if (s not in self._published and s not in self._meta_given
                    and self._stage_rank[consumer] != self.rank):
                self._publish_meta(s, outs)
        stage.plan(state)
        sig = (s, tuple((tuple(x.shape), x.dtype) for x in args
                        if isinstance(x, Tensor)),
               len(state.records) if state.records is not None else -1)
        nbytes = self._bytes_cache.get(sig)
        if nbytes is None:
            nbytes = _graph_bytes(state.roots,
                                  [x for x in args if isinstance(x, Tensor)]
                                  + list(outs), self._param_storages)
            self._bytes_cache[sig] = nbytes
        state.nbytes = nbytes
        self._live_bytes += nbytes
        if self._live_bytes > self._peak_bytes:
            self._peak_bytes = self._live_bytes
        if self._events is not None:
            self._record(index, 0, t0, time.perf_counter())

    def _backward(self, a: Tuple) -> None:
        index = self._cur
        t0 = time.perf_counter()
        code, mb, s, effect, producer, consumer = (a[0], a[1], a[2], a[5],
                                                   a[6], a[7])
        key = (mb, s)
        stage = self._stage(s)
        state = self._states.get(key)
        if state is None:
            raise self._err("runs before `F%d@%d` (no live activations)"
                            % (mb, s))
        if producer >= 0:
            grads = self._take_input(mb, s, producer, True)
            floats = [t for t in state.outputs if t.is_floating_point()]
            if len(grads) != len(floats):
                raise self._err("received %d gradients for %d floating-point "
                                "outputs" % (len(grads), len(floats)))
            state.root_grads = [g for t, g in zip(floats, grads)
                                if t.requires_grad]
        if code == B:
            gin = stage.backward(state)
        else:
            # I keeps what W needs when W(m, s) follows on this rank.
            keep = effect == _RELEASE_INPUT
            gin = stage.backward_input(state, keep)
            if keep and state.captured:
                extra = sum(g.numel() * g.element_size()
                            for g in state.captured if g is not None)
                state.nbytes += extra
                self._live_bytes += extra
                if self._live_bytes > self._peak_bytes:
                    self._peak_bytes = self._live_bytes
        if consumer >= 0:
            xs = [x for x in state.inputs if x.requires_grad]
            self._out_b[key] = tuple(
                g if g is not None else torch.zeros_like(x)
                for x, g in zip(xs, gin))
        if effect == _RELEASE:
            self._release(key)
        if self._events is not None:
            self._record(index, 0, t0, time.perf_counter())

    def _weight(self, a: Tuple) -> None:
        index = self._cur
        t0 = time.perf_counter()
        mb, s = a[1], a[2]
        key = (mb, s)
        stage = self._stage(s)
        state = self._states.get(key)
        if state is None:
            raise self._err("runs before `F%d@%d` (no live activations)"
                            % (mb, s))
        if state.captured is None:
            raise self._err("runs before `I%d@%d` (its output gradient is not "
                            "there yet)" % (mb, s))
        stage.backward_weight(state)
        if a[5] == _RELEASE:
            self._release(key)
        if self._events is not None:
            self._record(index, 0, t0, time.perf_counter())

    def _release(self, key: Tuple[int, int]) -> None:
        state = self._states.pop(key)
        self._live -= 1
        self._live_bytes -= state.nbytes

    def _take_input(self, mb: int, s: int, frm: int,
                    grad: bool) -> Tuple[Tensor, ...]:
        """The input of F(mb, s) (leaves) or the output gradient of
        B/I(mb, s), produced on stage frm: from the local producer, or the
        posted receive (waited on here: deferred wait)."""
        if self._stage_rank[frm] == self.rank:
            got = (self._out_b if grad else self._out_f).pop((mb, frm), None)
            if got is None:
                raise self._err(
                    "needs the %s of `%s%d@%d`, which has not run on this "
                    "rank before it" % ("input gradient" if grad else "output",
                                        "B" if grad else "F", mb, frm))
            if grad:
                return got
            return tuple(t.detach().requires_grad_() if t.is_floating_point()
                         else t.detach() for t in got)
        req = (self._recv_b if grad else self._recv_f).pop((mb, s), None)
        if req is None:
            need = _text(RECV_B if grad else RECV_F, mb, s,
                         self._stage_rank[frm])
            raise self._err("needs `%s` before it, but no such receive was "
                            "posted" % need)
        self._wait(req, WAIT_RECV)
        if self._events is not None:
            self._record(req.index, 1, req.post, req.end, 2,
                         flow_id(req.peer, self.rank, self.ranks, req.seq))
        got = tuple(req.tensors)
        req.tensors = []
        if grad:
            return got
        return tuple(t.requires_grad_() if t.is_floating_point() else t
                     for t in got)

    # --- communication --------------------------------------------------------
    # A message carries the output of F(., b) (forward) or its gradient
    # (backward) across the boundary after stage b: for a comm on stage s
    # whose partner is on stage s', b = min(s, s').

    def _publish_meta(self, s: int, outs: Sequence[Tensor]) -> None:
        meta = _meta_of(outs)
        self._meta[s] = meta
        self._published.add(s)
        if self._store is None:
            raise self._err("no store to publish the shapes of stage %d's "
                            "output in: give message_shapes" % s)
        self._store.put("meta/%d" % s, _encode_meta(meta))

    def _recv_meta(self, fwd: bool, boundary: int) -> Meta:
        meta = self._meta.get(boundary)
        if fwd:
            return meta if meta is not None else self._fetch_meta(boundary)
        if meta is None:
            raise self._err("comes before any forward of stage %d ran on this "
                            "rank, so the shapes of its message are unknown "
                            "(give message_shapes)" % boundary)
        return _float_meta(meta)

    def _fetch_meta(self, boundary: int) -> Meta:
        """Waits (as for the message itself) until the rank of stage
        `boundary` has published the shapes of its output."""
        if self._store is None:
            raise self._err("no store to read the shapes of stage %d's output "
                            "from: give message_shapes" % boundary)
        key = "meta/%d" % boundary
        st = self._status
        st.wait_action = self._cur
        st.wait_kind = WAIT_RECV
        try:
            pause = 0.0005
            while not self._store.has(key):
                time.sleep(pause)
                pause = min(pause * 2, 0.01)
            text = self._store.get(key)
        except PipelineError:
            raise
        except Exception as e:
            raise self._err("cannot read the shapes of stage %d's output "
                            "from the store: %s" % (boundary, e)) from e
        finally:
            st.wait_kind = WAIT_NONE
        meta = _decode_meta(text)
        self._meta[boundary] = meta
        return meta

    def _post(self, a: Tuple) -> None:
        code, mb, s, peer = a[0], a[1], a[2], a[3]
        send = _IS_SEND[code]
        fwd = _IS_FORWARD[code]
        boundary = min(s, a[8])
        if not 0 <= peer < self.ranks or peer == self.rank:
            raise self._err("bad peer rank %d" % peer)
        self._stage(s)
        if not 0 <= mb < self._microbatches:
            raise self._err("microbatch %d is out of range" % mb)
        req = _Req(self._cur, code, mb, s, peer)
        dist = self._dist
        dst = self._global[peer]
        if send:
            got = (self._out_f if fwd else self._out_b).pop((mb, s), None)
            if got is None:
                raise self._err("has no data to send: `%s%d@%d` has not run "
                                "before it" % ("F" if fwd else "B", mb, s))
            tensors = [t.detach().contiguous() for t in got]
            self._check_send(fwd, boundary, peer, tensors)
            req.tensors = tensors
            req.seq = self._send_seq[peer]
            self._send_seq[peer] += 1
            req.post = time.perf_counter()
            if self.comm_model == "batched":
                self._batch.append(req)
                return
            req.works = [dist.isend(t, dst, group=self._group)
                         for t in tensors]
            if self.comm_model == "eager":
                self._open_sends.append(req)
                return
            self._wait(req, WAIT_SEND)
            self._record_send(req)
            return
        posted = self._recv_f if fwd else self._recv_b
        if (mb, s) in posted:
            raise self._err("the same receive is posted twice")
        meta = self._recv_meta(fwd, boundary)
        req.tensors = [torch.empty(shape, dtype=dt, device=self.device)
                       for shape, dt in meta]
        req.seq = self._recv_seq[peer]
        self._recv_seq[peer] += 1
        req.post = time.perf_counter()
        posted[(mb, s)] = req
        if self.comm_model == "batched":
            self._batch.append(req)
            return
        req.works = [dist.irecv(t, dst, group=self._group)
                     for t in req.tensors]
        if self._blocking_recv:
            self._wait(req, WAIT_RECV)

    def _check_send(self, fwd: bool, boundary: int, peer: int,
                    tensors: Sequence[Tensor]) -> None:
        expect = self._meta.get(boundary)
        if expect is None:
            raise self._err("the shapes of the messages of stage %d are "
                            "unknown on rank %d" % (boundary, self.rank))
        if not fwd:
            expect = _float_meta(expect)
        actual = _meta_of(tensors)
        if actual == expect:
            return
        where = ("as given in message_shapes" if boundary in self._meta_given
                 else "the shapes of stage %d's first %s" % (
                     boundary, "output" if fwd else "input gradient"))
        raise self._err(
            "the message is %s, but rank %d receives `%s` into %s (%s; a "
            "stage boundary carries the same shapes for every microbatch)"
            % (format_meta(actual), peer, self._acts_partner[self._cur],
               format_meta(expect), where))

    def _wait(self, req: _Req, kind: int) -> None:
        st = self._status
        if not req.done:
            st.wait_action = req.index
            st.wait_kind = kind
            try:
                if self._host_poll:
                    # NCCL's wait() only makes the current stream wait: the
                    # host goes on, and a hang would surface at some later
                    # synchronisation. Block the host until the message is
                    # complete, as the C++ runtime's waits do, so the
                    # watchdog sees where each rank waits.
                    pause = 1e-5
                    while not all(w.is_completed() for w in req.works):
                        time.sleep(pause)
                        pause = min(pause * 2, 1e-3)
                for w in req.works:
                    w.wait()
            except Exception as e:
                raise PipelineError(
                    "rank %d: `%s` failed in the transport: %s"
                    % (self.rank, self._acts_text[req.index], e)) from e
            finally:
                st.wait_kind = WAIT_NONE
            req.done = True
            req.works = None
            req.end = time.perf_counter()
        st.progress += 1

    def _record_send(self, req: _Req) -> None:
        req.tensors = []
        if self._events is not None:
            self._record(req.index, 1, req.post, req.end, 1,
                         flow_id(self.rank, req.peer, self.ranks, req.seq))

    def _drain_batch(self) -> None:
        dist = self._dist
        ops = []
        for req in self._batch:
            op = dist.isend if _IS_SEND[req.code] else dist.irecv
            dst = self._global[req.peer]
            for t in req.tensors:
                ops.append(dist.P2POp(op, t, dst, self._group))
        works = dist.batch_isend_irecv(ops) if ops else []
        k = 0
        for req in self._batch:
            req.works = works[k:k + len(req.tensors)]
            k += len(req.tensors)
        st = self._status
        for req in self._batch:
            self._cur = req.index
            st.action = req.index
            send = _IS_SEND[req.code]
            self._wait(req, WAIT_SEND if send else WAIT_RECV)
            if send:
                self._record_send(req)
        self._batch = []

    # --- weight sharing -------------------------------------------------------
    # Messages outside the table travel the channels the schedule's messages
    # use, after them (the table has drained its sends and receives), each
    # pair of ranks posting them in the same order: groups ascending, stages
    # ascending, parameters in module order.

    def _exchange(self, sends, recvs) -> None:
        """Posts every (tensor, peer) receive, then every send, then waits
        for all of them."""
        dist = self._dist
        works = [dist.irecv(t, self._global[q], group=self._group)
                 for t, q in recvs]
        works += [dist.isend(t, self._global[q], group=self._group)
                  for t, q in sends]
        for w in works:
            w.wait()
        self._status.progress += 1

    def _start_copies_alike(self) -> None:
        """Every copy of a shared layer takes the parameters of its group's
        first stage."""
        sends, recvs, local = [], [], []
        for g in self._shared:
            src = g[0]
            src_rank = self._stage_rank[src]
            for st in g[1:]:
                dst = self._stage_rank[st]
                if src_rank == self.rank and dst == self.rank:
                    local.append((src, st))
                elif src_rank == self.rank:
                    sends += [(p.detach().contiguous(), dst) for p in
                              self._stages[src].module.parameters()]
                elif dst == self.rank:
                    recvs += [(p, src_rank) for p in
                              self._stages[st].module.parameters()]
        with torch.no_grad():
            got = [(torch.empty_like(p), q) for p, q in recvs]
            self._exchange(sends, got)
            for (p, _), (t, _) in zip(recvs, got):
                p.copy_(t)
            for src, st in local:
                for p, q in zip(self._stages[st].module.parameters(),
                                self._stages[src].module.parameters()):
                    p.copy_(q)

    def _sum_shared_gradients(self) -> None:
        """Every copy's gradients become the sum over its group, added up in
        stage order (so every copy gets the same numbers)."""
        def grads(st):
            return [p.grad.detach().clone() if p.grad is not None
                    else torch.zeros_like(p)
                    for p in self._stages[st].module.parameters()]

        sends, recvs, parts = [], [], {}
        for g in self._shared:
            peers = sorted({self._stage_rank[st] for st in g} - {self.rank})
            for st in g:
                if self._stage_rank[st] == self.rank:
                    parts[st] = grads(st)
            for q in peers:
                for st in g:
                    if self._stage_rank[st] == self.rank:
                        sends += [(t, q) for t in parts[st]]
                    elif self._stage_rank[st] == q:
                        mine = next(x for x in g
                                    if self._stage_rank[x] == self.rank)
                        parts[st] = [torch.empty_like(t) for t in parts[mine]]
                        recvs += [(t, q) for t in parts[st]]
        self._exchange(sends, recvs)
        for g in self._shared:
            total = parts[g[0]]
            for st in g[1:]:
                if len(parts[st]) != len(total):
                    raise PipelineError(
                        "rank %d: stage %d has %d parameters, stage %d (a copy "
                        "of the same layer) %d" % (self.rank, st,
                                                   len(parts[st]), g[0],
                                                   len(total)))
                total = [a + b for a, b in zip(total, parts[st])]
            for st in g:
                if self._stage_rank[st] != self.rank:
                    continue
                for p, t in zip(self._stages[st].module.parameters(), total):
                    p.grad = t.clone()

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
        for st in self._stages.values():
            st.remove_hooks()
        if self._trace_path is not None and self._status.phase != FAILED:
            self._write_trace(timeout)

    def __enter__(self) -> "PipelineRuntime":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _write_trace(self, timeout: float) -> None:
        epoch = self._epoch
        start = (self._start + epoch) if self._start is not None else None
        mine = {"start": start,
                "events": [list(e[:6]) + [e[6] + epoch, e[7] + epoch]
                           for e in (self._events or [])]}
        store = self._store
        if store is None:
            raise RuntimeError("no store to gather the trace through")
        store.put("trace/%d" % self.rank, json.dumps(mine))
        if self.rank != 0:
            return
        deadline = time.monotonic() + timeout
        parts: Dict[int, Any] = {}
        while len(parts) < self.ranks:
            for r in range(self.ranks):
                if r not in parts and store.has("trace/%d" % r):
                    parts[r] = json.loads(store.get("trace/%d" % r))
            if (len(parts) == self.ranks or time.monotonic() > deadline
                    or self._watchdog.failed_elsewhere()):
                break
            time.sleep(0.01)
        starts = [p["start"] for p in parts.values() if p["start"] is not None]
        t0 = min(starts) if starts else 0.0
        events: List[Event] = []
        for p in parts.values():
            for e in p["events"]:
                events.append((int(e[0]), int(e[1]), int(e[2]), int(e[3]),
                               int(e[4]), int(e[5]), (e[6] - t0) * 1e6,
                               (e[7] - t0) * 1e6))
        write_chrome_trace(self._trace_path, self.schedule.name, self.ranks,
                           _KINDS, self._tables, self._texts, events,
                           self._us_per_unit)
        if len(parts) < self.ranks:
            missing = sorted(set(range(self.ranks)) - set(parts))
            raise PipelineError("the trace lacks ranks %s: they did not "
                                "close() (within %g s)" % (missing, timeout))
