"""Run status, stall reports and the watchdog of pps.torch.

Each rank publishes what it is doing in a few plain attributes (no lock:
single writes, read by the watchdog thread). The watchdog thread of each
rank meets the others through the rendezvous store (the TCPStore of
torch.distributed), never through the process group: a p2p operation on
gloo cannot be cancelled and its wait() cannot be interrupted, so a stuck
run is ended by terminating the processes, after every rank has said where
it stands, in the words the lint (deadlock pass) and the C++ runtime use:

    rank 1 blocks at `send B0@1 -> 0` waiting for rank 0 to post `recv B0@0 <- 1`

Protocol (keys under the runtime's own prefix in the store):
  progress     a counter every rank adds to while it makes progress or is
               busy (computing, or outside step() running the user's code);
               no change for `timeout` seconds while this rank waits on a
               message is a stall
  alarm        +1 per rank that detected the stall (the first is the
               reporter), +FAILED when a rank failed with an error
  line/<r>     rank r's status line, written once the alarm is up
  fail/<r>     the error a rank failed with
  reported     the reporter printed the report; the others may exit
  closed/<r>   rank r closed its runtime (its last status line)

A rank that cannot reach the store any more (the process holding it
ended) watches only itself, as the C++ MPI runtime does.
"""

import os
import sys
import threading
import time
from typing import Callable, List, Optional

from ._streams import holder

# What a rank waits on (RankStatus::waitKind in the C++ runtime).
WAIT_NONE = 0
WAIT_SEND = 1   # a send waits for the peer to post the matching receive
WAIT_RECV = 2   # a receive waits for the peer's matching send
WAIT_DRAIN = 3  # all actions done; waits for outstanding messages

# Where a rank is.
NOT_STARTED = 0
RUNNING = 1
BETWEEN_STEPS = 2
FAILED = 3
CLOSED = 4

EXIT_ERROR = 1
EXIT_STALL = 3

_FAILED = 1 << 20  # added to `alarm` by a rank that failed


class Keys:
    """Non-blocking use of a torch.distributed Store. PyTorch 1.13's Store
    has no check(), and its get() and wait() block the store's one
    connection (so another thread's calls wait behind them): a value is
    published with put(), which also counts a flag up, and has() reads the
    flag with add(flag, 0), which never blocks."""

    __slots__ = ("store",)

    def __init__(self, store):
        self.store = store

    def put(self, key: str, value: str) -> None:
        self.store.set(key, value)
        self.store.add(key + "#", 1)

    def has(self, key: str) -> bool:
        return self.store.add(key + "#", 0) > 0

    def get(self, key: str) -> str:
        return self.store.get(key).decode("utf-8", "replace")

    def add(self, key: str, amount: int) -> int:
        return self.store.add(key, amount)


class Status:
    """What one rank is doing; written by the rank's main thread only."""

    __slots__ = ("phase", "action", "wait_kind", "wait_action", "step",
                 "progress")

    def __init__(self):
        self.phase = NOT_STARTED
        self.action = -1
        self.wait_kind = WAIT_NONE
        self.wait_action = -1
        self.step = 0
        self.progress = 0


def format_seconds(x: float) -> str:
    """Seconds as the C++ runtime prints them (10 -> "10", 0.5 -> "0.5")."""
    return ("%g" % x) if x != int(x) else "%d" % int(x)


def _write_stderr(text: str) -> None:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    data = text.encode("utf-8", "replace")
    while data:
        try:
            n = os.write(2, data)
        except OSError:
            return
        data = data[n:]


class Watchdog:
    """The watchdog thread of one rank. store is a Keys (or None);
    describe() returns the rank's status line; timeout <= 0 disables stall detection (errors are still
    announced to the other ranks)."""

    def __init__(self, store, rank: int, ranks: int, timeout: float,
                 status: Status, describe: Callable[[], str],
                 poll: Optional[float] = None):
        self.store = store
        self.rank = rank
        self.ranks = ranks
        self.timeout = timeout
        self.status = status
        self.describe = describe
        self.poll = poll if poll is not None else (
            min(0.05, timeout / 10) if timeout > 0 else 0.1)
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._store_ok = store is not None
        self._failed_here = False

    # --- called by the main thread ------------------------------------------

    def start(self) -> None:
        if self._thread is not None or not self._store_ok and self.timeout <= 0:
            return
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="pps.torch watchdog %d" % self.rank)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        self._thread = None

    def announce_failure(self, message: str) -> None:
        """Tells the other ranks this rank failed (they stop)."""
        self._failed_here = True
        if not self._store_ok:
            return
        try:
            self.store.put("fail/%d" % self.rank, message)
            self.store.add("alarm", _FAILED)
        except Exception:
            self._store_ok = False

    def failed_elsewhere(self) -> bool:
        """True if another rank announced a failure."""
        if not self._store_ok or self._failed_here:
            return False
        try:
            return self.store.add("alarm", 0) >= _FAILED
        except Exception:
            return False

    def announce_closed(self) -> None:
        if not self._store_ok:
            return
        try:
            self.store.put("closed/%d" % self.rank, self.describe())
        except Exception:
            self._store_ok = False

    # --- the thread ---------------------------------------------------------

    def _run(self) -> None:
        try:
            self._loop()
        except Exception as e:  # never a traceback from a daemon thread
            _write_stderr("pps.torch: rank %d: the watchdog stopped: %s\n"
                          % (self.rank, e))

    def _loop(self) -> None:
        st = self.status
        last_local = st.progress
        last_global = None
        since = time.monotonic()
        while not self._stop.wait(self.poll):
            progress = st.progress
            phase = st.phase
            waiting = phase == RUNNING and st.wait_kind != WAIT_NONE
            busy = phase in (NOT_STARTED, BETWEEN_STEPS) or (
                phase == RUNNING and st.wait_kind == WAIT_NONE)
            moved = progress != last_local
            last_local = progress
            now = time.monotonic()
            if self._store_ok:
                try:
                    g = self.store.add("progress", 1 if (moved or busy) else 0)
                    alarm = self.store.add("alarm", 0)
                except Exception:
                    self._store_ok = False  # watch this rank alone
                    since = now
                    continue
                if alarm >= _FAILED:
                    if self._on_failure():
                        return
                    continue
                if alarm > 0:
                    self._on_stall(reporter=False)
                    return
                if g != last_global:
                    last_global = g
                    since = now
                    continue
            elif moved or not waiting:
                since = now
                continue
            if self.timeout <= 0 or not waiting:
                continue
            if now - since < self.timeout:
                continue
            if not self._store_ok:
                self._stall_alone()
                return
            try:
                first = self.store.add("alarm", 1) == 1
            except Exception:
                self._stall_alone()
                return
            self._on_stall(reporter=first)
            return

    def _stall_alone(self) -> None:
        _write_stderr("error: watchdog: rank %d made no progress for %s s; "
                      "the schedule is stuck:\n  %s\n"
                      % (self.rank, format_seconds(self.timeout),
                         self.describe()))
        os._exit(EXIT_STALL)

    def _on_stall(self, reporter: bool) -> None:
        line = self.describe()
        try:
            self.store.put("line/%d" % self.rank, line)
        except Exception:
            self._stall_alone()
        if not reporter:
            # The reporter prints; the process holding the store must live
            # until it has the lines.
            deadline = time.monotonic() + 5.0
            while time.monotonic() < deadline:
                try:
                    if self.store.has("reported"):
                        break
                except Exception:
                    break
                time.sleep(0.02)
            os._exit(EXIT_STALL)
        lines: List[Optional[str]] = [None] * self.ranks
        lines[self.rank] = line
        deadline = time.monotonic() + 2.0
        while True:
            for r in range(self.ranks):
                if lines[r] is not None:
                    continue
                try:
                    for key in ("line/%d" % r, "closed/%d" % r):
                        if self.store.has(key):
                            lines[r] = self.store.get(key)
                            break
                except Exception:
                    pass
            if all(x is not None for x in lines) or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        text = ("error: watchdog: no rank made progress for %s s; the "
                "schedule is stuck:\n" % format_seconds(self.timeout))
        for r, x in enumerate(lines):
            text += "  %s\n" % (x if x is not None else
                                "rank %d did not answer (its process may "
                                "have ended)" % r)
        _write_stderr(text)
        try:
            self.store.put("reported", "1")
        except Exception:
            pass
        os._exit(EXIT_STALL)

    def _on_failure(self) -> bool:
        """Another rank failed: this one stops (exits). True when the
        watchdog has nothing more to do here."""
        if self._failed_here or self.status.phase == CLOSED:
            # This rank's own error (its main thread raises it), or this
            # rank is done.
            return True
        message = None
        for r in range(self.ranks):
            try:
                if self.store.has("fail/%d" % r):
                    message = self.store.get("fail/%d" % r)
                    break
            except Exception:
                break
        # Give the failing process a moment to end first, so a launcher
        # reports its error rather than this rank's exit.
        time.sleep(1.0)
        _write_stderr("error: rank %d stops: %s\n"
                      % (self.rank, message or "another rank failed"))
        os._exit(EXIT_ERROR)


class _StatusLine:
    """PipelineRuntime.describe(): the rank's status line in the lint's
    words, with what holds a comm back on its stream. A mixin of
    PipelineRuntime (_runtime.py), whose state it uses."""

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
        # Held back on its stream: what it waits for is the operation ahead.
        ahead = holder(self._waiting)
        if ahead is not None:
            line = ("rank %d %s `%s`, held back on its comm stream behind "
                    "`%s`, which waits for rank %d to post `%s`" % (
                        r, verb, at, self._acts_text[ahead.index], ahead.peer,
                        self._acts_partner[ahead.index]))
        if kind == WAIT_RECV and w != i:
            line += " (for `%s`, action %d)" % (waited, w)
        for stream in list(self._streams.values()):
            held = stream.held()
            if held is not None and held[0] is not self._waiting:
                line += ("; on its comm stream `%s` waits behind `%s`"
                         % (self._acts_text[held[0].index],
                            self._acts_text[held[1].index]))
        return line + note
