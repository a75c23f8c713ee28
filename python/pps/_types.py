"""The value types of the pps module: actions, findings, the compile error,
simulation figures. Plain named tuples and small classes, so they print,
compare, unpack and pickle like any Python data (the runtime sends them
between processes)."""

from typing import Any, List, NamedTuple, Optional, Tuple

from . import _pps

# Every action kind: its name (PyTorch's spelling; "IDLE" for an idle slot),
# its class (compute, send, recv, control, idle) and its .pps spelling, as the
# compiler declares them.
ACTION_KINDS: Tuple[str, ...] = tuple(k for k, _, _ in _pps.action_kinds())
_KIND_CLASS = {k: c for k, c, _ in _pps.action_kinds()}
COMPUTE_KINDS = frozenset(k for k, c in _KIND_CLASS.items() if c == "compute")
SEND_KINDS = frozenset(k for k, c in _KIND_CLASS.items() if c == "send")
RECV_KINDS = frozenset(k for k, c in _KIND_CLASS.items() if c == "recv")
COMM_KINDS = SEND_KINDS | RECV_KINDS
CONTROL_KINDS = frozenset(k for k, c in _KIND_CLASS.items() if c == "control")


def _loc(file, line, column):
    """(file, line, column), or three Nones when there is no location."""
    if not file:
        return None, None, None
    return file, line, column


class Action(NamedTuple):
    """One action of a rank's program, in program order.

    kind: "F", "I", "W", "B" (computes), "SEND_F", "RECV_F", "SEND_B",
      "RECV_B" (comms), "UNSHARD", "RESHARD", "REDUCE_GRAD" (FSDP control),
      "IDLE" (an explicit bubble; a no-op).
    microbatch: the microbatch (-1 for control and idle).
    stage: the stage (-1 for idle). A comm names the local compute it serves:
      SEND_F(m, s) sends F(m, s)'s output, RECV_F(m, s) receives F(m, s)'s
      input, SEND_B(m, s) sends B/I(m, s)'s input gradient, RECV_B(m, s)
      receives the gradient B/I(m, s) needs.
    peer: the other rank of a send or receive, else -1.
    overlap_next: this compute runs overlapped with the next action.
    idle_time: the length of an IDLE slot in time units, else 0.
    text: the action in the .pps text form ("F3@5", "send F3@5 -> 2").
    file, line, column: where the schedule's source says it (None if
      nowhere, e.g. a comm the compiler inserted).
    """

    kind: str
    microbatch: int
    stage: int
    peer: int
    overlap_next: bool = False
    idle_time: float = 0.0
    text: str = ""
    file: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None

    @property
    def is_compute(self) -> bool:
        return self.kind in COMPUTE_KINDS

    @property
    def is_comm(self) -> bool:
        return self.kind in COMM_KINDS

    @property
    def is_send(self) -> bool:
        return self.kind in SEND_KINDS

    @property
    def is_recv(self) -> bool:
        return self.kind in RECV_KINDS

    @property
    def is_control(self) -> bool:
        return self.kind in CONTROL_KINDS

    def __str__(self) -> str:
        return self.text


class Note(NamedTuple):
    """A note attached to a finding (e.g. one step of a deadlock cycle)."""

    message: str
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]


class Finding(NamedTuple):
    """One diagnostic: a lint finding or a compile error.

    kind: the stable flag name ("deadlock", "missing-action", ...; see
      pps.diagnostic_kinds()). severity: "error" or "warning". file, line,
      column: where (None if nowhere). notes: Note tuples. text: the finding
      exactly as ppsc prints it (location, message, [kind], source line and
      caret, then the notes); str(finding) is this text.
    """

    kind: str
    severity: str
    message: str
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    notes: Tuple[Note, ...] = ()
    text: str = ""

    def __str__(self) -> str:
        return self.text

    @classmethod
    def _from_raw(cls, raw) -> "Finding":
        kind, sev, msg, file, line, col, notes, text = raw
        return cls(kind, sev, msg, *_loc(file, line, col),
                   tuple(Note(m, *_loc(f, l, c)) for m, f, l, c in notes),
                   text)


class Findings(list):
    """A list of Finding, in the order ppsc prints them, plus that printout.

    text: every finding as ppsc prints it (str(findings) is this text).
    errors, warnings: how many of each.
    ok: no finding at all (ppsc lint exits 0).
    """

    def __init__(self, items=(), text: str = "", errors: int = 0,
                 warnings: int = 0):
        super().__init__(items)
        self.text = text
        self.errors = errors
        self.warnings = warnings

    @property
    def ok(self) -> bool:
        return self.errors == 0 and self.warnings == 0

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return "Findings(%s)" % list.__repr__(self)

    @classmethod
    def _from_report(cls, report) -> "Findings":
        text, findings, errors, warnings = report
        return cls([Finding._from_raw(f) for f in findings], text, errors,
                   warnings)


class CompileError(ValueError):
    """The compiler reported errors.

    diagnostics: the Findings (errors and any warnings), each with kind,
      severity, message, location and notes.
    text: the diagnostics exactly as ppsc prints them; str(error) is this
      text.
    """

    def __init__(self, text: str, diagnostics: Optional[Findings] = None):
        super().__init__(text)
        self.text = text
        self.diagnostics = (diagnostics if diagnostics is not None
                            else Findings([], text))

    def __str__(self) -> str:
        return self.text

    def __reduce__(self):
        return (type(self), (self.text, self.diagnostics))

    @classmethod
    def _from_report(cls, report) -> "CompileError":
        findings = Findings._from_report(report)
        return cls(findings.text, findings)


class Route(NamedTuple):
    """One route through the stages (Schedule.routes), as the compiler
    derives it for every runtime: microbatches [first_microbatch,
    first_microbatch + microbatches) traverse first_stage..last_stage in
    order; data_rank (the rank of first_stage) reads their inputs,
    loss_rank (the rank of last_stage) computes their losses."""

    first_microbatch: int
    microbatches: int
    first_stage: int
    last_stage: int
    data_rank: int
    loss_rank: int


class RankStats(NamedTuple):
    """Simulated figures of one rank (time units; memory in activations).

    busy: time the compute track is busy. idle: makespan - busy (the
    rank's bubble). comm: summed transfer time of its sends and receives.
    comm_wait: summed time its comms waited to start. end: when its last
    action ends. peak_memory: peak activation memory (in the memory
    model's units: activations by default); peak_memory_at: the
    index of the action reaching it (-1 if 0). computes, sends, recvs:
    action counts. Under a stream rule (None otherwise): stream_held, the
    summed time its comms were held back on their stream behind an
    operation that had not completed; stream_bubble, the idle time inside
    its span that the rule adds against the same schedule without it.
    """

    rank: int
    busy: float
    idle: float
    comm: float
    comm_wait: float
    end: float
    peak_memory: float
    peak_memory_at: int
    computes: int
    sends: int
    recvs: int
    stream_held: Optional[float] = None
    stream_bubble: Optional[float] = None


class CommStream(NamedTuple):
    """A schedule's stream rule (Schedule.comm_stream, SimResult.
    comm_stream): scope 'none', 'peer' or 'rank' (its comms complete in
    issue order on one stream per peer, or per rank, as NCCL runs them);
    eager_threshold: sends of at most this many bytes complete without
    waiting for their receive (None: no threshold)."""

    scope: str
    eager_threshold: Optional[int]


class HeldComm(NamedTuple):
    """A comm that a stream rule held back (SimResult.held_comms): the
    action at index of rank waited `held` time units behind an operation
    ahead of it on its stream; held_by is that operation's TimedAction (the
    nearest one ahead that waited for its partner, typically a receive
    posted before its data could come), or None."""

    comm: "TimedAction"
    held: float
    held_by: Optional["TimedAction"]


class Reordering(NamedTuple):
    """What Schedule.reorder_comms did (`ppsc lint --fix`): the schedule
    with the new comm order (its own when none was faster), the makespans
    under the comm model before and after (before is inf when the own
    order does not finish), and the note ppsc prints ("" when there was
    nothing to reorder)."""

    schedule: Any
    makespan_before: float
    makespan_after: float
    message: str

    @property
    def gain(self) -> float:
        """makespan_before - makespan_after (0 when the order was kept)."""
        return self.makespan_before - self.makespan_after


class Channel(NamedTuple):
    """Messages and bytes from rank src to rank dst."""

    src: int
    dst: int
    messages: int
    bytes: float


class TimedAction(NamedTuple):
    """One action with its simulated times. For a receive, start is when it
    was posted and transfer_start when its data began to arrive; for other
    actions transfer_start == start. NaN for an action that never ran."""

    rank: int
    index: int
    action: Action
    start: float
    transfer_start: float
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


class DiagnosticKind(NamedTuple):
    """A diagnostic kind the compiler can report."""

    name: str
    severity: str
    description: str


def diagnostic_kinds() -> List[DiagnosticKind]:
    """Every diagnostic kind (the `kind` of a Finding), as declared once in
    the compiler's Diagnostics.def."""
    return [DiagnosticKind(*k) for k in _pps.diagnostic_kinds()]


for _cls in (Action, Note, Finding, Findings, CompileError, RankStats, Channel,
             TimedAction, DiagnosticKind, CommStream, HeldComm, Reordering):
    _cls.__module__ = "pps"

_pps._register_types(Action, TimedAction, CompileError)
