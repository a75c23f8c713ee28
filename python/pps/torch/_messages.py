"""Messages between ranks: their shapes (published in the store by the rank
that computes a stage's first output, or given as message_shapes), posting
sends and receives as the comm model and stream rule say (rendezvous,
eager, batched; in order on a stream per rank or per peer, _streams.py;
sends under the eager threshold not waited for), waiting on them where the
schedule needs them, and recording them in the trace. A mixin of
PipelineRuntime (_runtime.py), whose state it uses."""

import time
from typing import Any, List, Optional, Sequence, Tuple

import torch
from torch import Tensor

from ._schema import _IS_FORWARD, _IS_SEND, PipelineError
from ._streams import CommQueue
from ._trace import flow_id
from ._watchdog import WAIT_NONE, WAIT_RECV, WAIT_SEND

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

class _Req:
    """One posted send or receive: its action and the works of its
    tensors."""

    __slots__ = ("index", "code", "mb", "stage", "peer", "tensors", "works",
                 "done", "post", "end", "seq", "ready", "error", "started",
                 "behind")

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
        # On an emulated stream (_streams.CommQueue): set once the
        # operation completed (or failed with error); started once its
        # works were posted; behind: the operation issued before it.
        self.ready = None
        self.error: Optional[BaseException] = None
        self.started = False
        self.behind = None


class _Messages:
    """PipelineRuntime's communication: SEND and RECV actions, the shapes
    of their messages, the waits."""

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
            if self._model == "batched":
                self._batch.append(req)
                return
            group = self._group
            eager = self._eager_f if fwd else self._eager_b
            stream = self._stream_to(peer)
            if stream is not None:
                stream.submit(req, lambda: [dist.isend(t, dst, group=group)
                                            for t in tensors], eager)
            else:
                req.works = [dist.isend(t, dst, group=group)
                             for t in tensors]
            # Under a stream rule the rank issues and goes on (the stream
            # orders the operations), as an eager send does.
            if eager or self.comm_stream.scope != "none":
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
        if self._model == "batched":
            self._batch.append(req)
            return
        group = self._group
        tensors = req.tensors
        stream = self._stream_to(peer)
        if stream is not None:
            stream.submit(req, lambda: [dist.irecv(t, dst, group=group)
                                        for t in tensors], False)
        else:
            req.works = [dist.irecv(t, dst, group=group) for t in tensors]
        if self._blocking_recv:
            self._wait(req, WAIT_RECV)

    def _stream_to(self, peer: int) -> Optional[CommQueue]:
        """The emulated stream of the comms with peer (None when the
        backend runs the stream rule itself, or there is none)."""
        if not self._emulate_streams:
            return None
        key = peer if self.comm_stream.scope == "peer" else -1
        stream = self._streams.get(key)
        if stream is None:
            stream = CommQueue("pps.torch rank %d comm stream%s" % (
                self.rank, "" if key < 0 else " to rank %d" % key))
            self._streams[key] = stream
            self._all_streams.append(stream)
        return stream

    def _close_streams(self) -> None:
        for stream in self._streams.values():
            stream.close()
        self._streams = {}

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
            self._waiting = req
            try:
                if req.ready is not None:
                    # On its stream: once the operations ahead of it have
                    # completed and it has (or, eager, started).
                    req.ready.wait()
                    if req.error is not None:
                        raise req.error
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
                self._waiting = None
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
