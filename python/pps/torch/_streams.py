"""The stream rule (comm_stream scope 'peer' or 'rank') on a backend that
does not run it itself, such as gloo: one in-order queue per rank (or per
peer), each served by a thread of its own that starts an operation once
the one before it has completed, as a stream of NCCL does.

The rule is the compiler's (runtime/include/ppsrt/Schema.h, CommStream;
docs/simulation.md "Streams"): a rank's comm operations complete in issue
order on their stream; a receive that cannot complete holds back every
operation behind it; a send of at most the eager threshold completes
without waiting for its receive (so the stream goes on once it is
started). On NCCL the backend orders the operations on its own streams and
pps.torch adds nothing (PipelineRuntime decides).

The main thread issues each operation (the tensors are allocated and the
message checked there) and goes on; it waits for a receive at its
consumer and for the sends at the end of the step. The queue's thread
calls isend / irecv and waits on each work exactly once (a second wait()
on a completed gloo work blocks), except for an eager send's works, which
the main thread waits on at the end of the step."""

import queue
import threading
import time
from typing import Callable, List, Optional


class CommQueue:
    """One in-order queue of comm operations and the thread serving it."""

    __slots__ = ("_queue", "_thread", "_last", "_failed", "held_ops",
                 "held_time")

    def __init__(self, name: str):
        self._queue: "queue.SimpleQueue" = queue.SimpleQueue()
        self._last = None
        self._failed: Optional[BaseException] = None
        # Operations issued while the one ahead of them had not completed,
        # and the seconds from their issue (req.post) to their start.
        self.held_ops = 0
        self.held_time = 0.0
        self._thread = threading.Thread(target=self._serve, name=name,
                                        daemon=True)
        self._thread.start()

    def submit(self, req, start: Callable[[], List], eager: bool) -> None:
        """Queues req behind the operations issued before it: start() posts
        its works once they have completed. eager: it completes once
        started (a send under the eager threshold); its works are left in
        req.works for the caller to wait on."""
        req.ready = threading.Event()
        ahead = self._last
        req.behind = ahead
        self._last = req
        busy = ahead is not None and not ahead.ready.is_set()
        self._queue.put((req, start, eager, busy))

    def held(self):
        """(op, holder): the first operation issued and not started, and
        the one ahead of it that has started and not completed; or None."""
        req = self._last
        if req is None or req.started:
            return None
        while req.behind is not None and not req.behind.started:
            req = req.behind
        ahead = req.behind
        if ahead is None or ahead.ready.is_set():
            return None
        return req, ahead

    def close(self) -> None:
        """Ends the thread once the operations queued so far are served."""
        self._queue.put(None)

    def _serve(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            req, start, eager, busy = item
            if self._failed is not None:
                req.error = self._failed
                req.ready.set()
                continue
            if busy:
                self.held_ops += 1
                self.held_time += max(0.0, time.perf_counter() - req.post)
            try:
                req.started = True
                works = start()
                if eager:
                    req.works = works
                else:
                    for w in works:
                        w.wait()
                    req.works = []
            except BaseException as e:  # handed to the waiting thread
                self._failed = e
                req.error = e
            # Completed: nothing ahead of it holds anything back any more.
            req.behind = None
            req.ready.set()


def holder(req) -> Optional[object]:
    """The operation ahead of req on its stream that holds it back (the
    one that has started but not completed), or None if req has started
    or is not on a stream."""
    if getattr(req, "ready", None) is None or req.started:
        return None
    ahead = req.behind
    while ahead is not None and not ahead.started:
        ahead = ahead.behind
    if ahead is None or ahead.ready.is_set():
        return None
    return ahead
