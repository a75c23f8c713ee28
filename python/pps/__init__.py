"""pps: pipeline-parallel training schedules as programs, from Python.

The pps compiler as a module: compile a .pps schedule (or a PyTorch
schedule CSV, or one built in Python), lint it for deadlocks with the cycle
and its source locations, simulate it, synthesise schedules, and write the
text forms other tools read. Everything is done by the same compiler as the
`ppsc` command line; diagnostics come back as data and as the text ppsc
prints. `pps.torch` (import it explicitly; it needs PyTorch) runs a
compiled schedule with torch.distributed. docs/python.md has the guide.

    import pps
    s = pps.compile("pipeline p { ranks 4; stages 4; microbatches 8; "
                    "schedule one_f_one_b(); }")
    assert not s.lint()
    print(s.simulate().makespan)
"""

from . import _pps
from ._args import stdlib_dir
from ._builder import ScheduleBuilder
from ._schedule import Schedule, compile, from_torch_csv, lint, synth
from ._sim import SimResult
from ._types import (ACTION_KINDS, Action, Channel, CommStream, CompileError,
                     DiagnosticKind, Finding, Findings, HeldComm, Note,
                     RankStats, Reordering, Route, TimedAction,
                     diagnostic_kinds)

__version__ = _pps.__version__

__all__ = [
    "ACTION_KINDS", "Action", "Channel", "CommStream", "CompileError",
    "DiagnosticKind", "Finding", "Findings", "HeldComm", "Note", "RankStats",
    "Reordering", "Route", "Schedule", "ScheduleBuilder",
    "SimResult", "TimedAction", "compile", "diagnostic_kinds",
    "from_torch_csv", "lint", "stdlib_dir", "synth",
]
