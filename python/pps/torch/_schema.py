"""The action schema as pps.torch uses it: kind codes and classes from the
compiler (runtime/include/ppsrt/Schema.h through pps._pps), the columns
of a runtime table row, the text form of an action, and PipelineError,
the runtime's one error type."""

from .. import _pps

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
