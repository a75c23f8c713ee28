"""The compute actions of PipelineRuntime: F runs a stage and keeps its
graph, I / W / B run its backward (pps.torch._split), each (m, s) state is
counted and released as the memory analysis says, and a compute takes its
input from a local producer or from a posted receive (deferred wait). A
mixin of PipelineRuntime (_runtime.py), whose state it uses."""

import time
from typing import Tuple

import torch
from torch import Tensor

from .. import _pps
from ._memory import _graph_bytes
from ._schema import B, RECV_B, RECV_F, _RELEASE, _RELEASE_INPUT, _text
from ._split import Stage, StageState, as_tensors
from ._trace import flow_id
from ._watchdog import WAIT_RECV


class _Compute:
    """PipelineRuntime's F, I, W and B."""

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
        self._count_memory(key, a[5], False)
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
        state = self._live_state(mb, s)
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
        else:
            self._count_memory(key, effect, True)
        if self._events is not None:
            self._record(index, 0, t0, time.perf_counter())

    def _weight(self, a: Tuple) -> None:
        index = self._cur
        t0 = time.perf_counter()
        mb, s = a[1], a[2]
        key = (mb, s)
        stage = self._stage(s)
        state = self._live_state(mb, s)
        if state.captured is None:
            raise self._err("runs before `I%d@%d` (its output gradient is not "
                            "there yet)" % (mb, s))
        stage.backward_weight(state)
        if a[5] == _RELEASE:
            self._release(key)
        if self._events is not None:
            self._record(index, 0, t0, time.perf_counter())

    def _live_state(self, mb: int, s: int) -> StageState:
        state = self._states.get((mb, s))
        if state is None:
            raise self._err("runs before `F%d@%d` (no live activations)"
                            % (mb, s))
        return state

    def _count_memory(self, key: Tuple[int, int], effect: int,
                      live: bool) -> None:
        """Memory in the schedule's memory model: the schema's arithmetic
        (F allocates, I frees its part, the last backward the rest) on this
        rank's own state of (m, s)."""
        done = key in self._input_done
        forward, input_grad = self._mem_models[key[1]]
        self._mem_live += _pps.memory_delta(forward, input_grad, effect, live,
                                            done)
        if effect == _RELEASE_INPUT and live:
            self._input_done.add(key)
        elif effect == _RELEASE:
            self._input_done.discard(key)
        if self._mem_live > self._mem_peak + 1e-9:
            self._mem_peak = self._mem_live

    def _release(self, key: Tuple[int, int]) -> None:
        self._count_memory(key, _RELEASE, True)
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
