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
from typing import List, Sequence, Tuple

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
