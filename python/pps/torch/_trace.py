"""The measured timeline of a pps.torch run as Chrome trace JSON, in the
layout of `ppsc sim --format=chrome` and of the C++ executors' --trace
(runtime/src/Trace.cpp, docs/runtime.md "Run trace"): pid = rank, tid 0
compute, tid 1 communication, complete events named in the text form with
microbatch, stage, kind (and peer, step, measured_us) in args, flow events
from each send to the completion of its receive. Timestamps are in trace
time: one cost unit = 1000 us, with `us_per_unit` wall-clock microseconds
per unit (1000 by default, so trace time is wall time).
"""

import json
import os
import tempfile
import time
from typing import Any, Dict, List, Sequence, Tuple

from ._schema import _KINDS, PipelineError

# An event: (action index, rank, step, lane, flow, flow id, start us, end us)
# with times in microseconds since the common start of the run; flow is 0
# (none), 1 (a send: flow start) or 2 (a receive: flow end).
Event = Tuple[int, int, int, int, int, int, float, float]

def flow_id(src: int, dst: int, ranks: int, seq: int) -> int:
    """The id of the seq-th message on channel src -> dst (as ppsrt::flowId)."""
    return ((src * ranks + dst) << 40) | (seq & ((1 << 40) - 1))


def write_chrome_trace(path: str, name: str, ranks: int,
                       kinds: Sequence[Tuple],
                       tables: Sequence[Sequence[Tuple]],
                       texts: Sequence[Sequence[str]], events: List[Event],
                       us_per_unit: float = 1000.0) -> None:
    """Writes the events of all ranks to path (a temporary file renamed into
    place). kinds[code] is the schema's row of a kind (pps._pps.
    runtime_kinds(): name, class, role, forward, trace kind, trace
    category); tables[r][i] = (kind code, microbatch, stage, peer, ...) and
    texts[r][i] the text form of rank r's i-th action."""
    scale = 1000.0 / us_per_unit if us_per_unit > 0 else 1.0
    parts = []
    for r in range(ranks):
        parts.append(
            '{"name": "process_name", "ph": "M", "pid": %d, "args": '
            '{"name": "rank %d"}},\n'
            '{"name": "thread_name", "ph": "M", "pid": %d, "tid": 0, '
            '"args": {"name": "compute"}},\n'
            '{"name": "thread_name", "ph": "M", "pid": %d, "tid": 1, '
            '"args": {"name": "comm"}}' % (r, r, r, r))
    for (index, rank, step, lane, flow, fid, t0, t1) in sorted(
            events, key=lambda e: (e[1], e[6])):
        if not 0 <= rank < ranks or not 0 <= index < len(tables[rank]):
            continue
        code, mb, stage, peer = tables[rank][index][:4]
        ts = t0 * scale
        dur = max(0.0, (t1 - t0) * scale)
        row = kinds[code]
        parts.append(
            '{"name": %s, "cat": "%s", "ph": "X", "pid": %d, "tid": %d, '
            '"ts": %.3f, "dur": %.3f, "args": {"microbatch": %d, "stage": %d, '
            '"kind": "%s"%s, "step": %d, "measured_us": %.3f}}'
            % (json.dumps(texts[rank][index]), row[5], rank, lane, ts, dur, mb,
               stage, row[4], (', "peer": %d' % peer) if row[1] == "comm"
               else "", step, t1 - t0))
        if flow == 0:
            continue
        parts.append(
            '{"name": "message", "cat": "flow", "ph": "%s", "id": "%x-%d", '
            '"pid": %d, "tid": 1, "ts": %.3f%s}'
            % ("s" if flow == 1 else "f", fid, step, rank,
               ts if flow == 1 else ts + dur,
               ', "bp": "e"' if flow == 2 else ""))
    text = ('{"traceEvents": [\n' + ",\n".join(parts) +
            '\n], "displayTimeUnit": "ms", "otherData": {"pipeline": %s, '
            '"source": "measured", "us_per_unit": %.6f}}\n'
            % (json.dumps(name), us_per_unit))
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".pps-trace-", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class _TraceWriter:
    """PipelineRuntime's close(): every rank's events gathered through the
    store, written by rank 0. A mixin of PipelineRuntime (_runtime.py),
    whose state it uses."""

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
