"""ScheduleBuilder: a schedule built action by action from Python, checked
and lowered by the compiler like a .pps file."""

from typing import Any, Optional, Sequence, Tuple, Union

from . import _pps
from ._args import _comm, _costs, _int, _number, _str
from ._schedule import Schedule
from ._types import Findings


def _compute_spec(rank: int, spec: Any) -> Tuple[str, int, Optional[int]]:
    if not isinstance(spec, (tuple, list)) or len(spec) not in (2, 3):
        raise TypeError("an overlapped compute is (kind, microbatch) or "
                        "(kind, microbatch, stage), got %r" % (spec,))
    kind = _str("kind", spec[0])
    mb = _int("microbatch", spec[1])
    stage = _int("stage", spec[2], optional=True) if len(spec) == 3 else None
    return kind, mb, stage


class ScheduleBuilder:
    """Builds a schedule from Python without writing .pps text, for code
    that generates orders (as PyTorch's, Megatron-LM's or zero-bubble's
    schedule classes do) and wants them linted or simulated.

        b = pps.ScheduleBuilder(2, 2, 2)
        for mb in range(2):
            b.add(0, "F", mb)
        ...
        print(b.lint())

    placement: 'loop', 'v' or a list with the rank of each stage.
    Every add() checks its arguments (ValueError / TypeError with the
    reason); mistakes in the order itself are the lint's to find. lint()
    and build() compile the schedule's text form (to_pps()), so findings
    point at the action in that text.
    """

    __slots__ = ("_b", "_name")

    def __init__(self, ranks: int, stages: int, microbatches: int,
                 placement: Union[str, Sequence[int]] = "loop", *,
                 name: str = "builder", costs: Any = None,
                 comm_model: Optional[str] = None,
                 latency: Optional[float] = None,
                 memory_limit: Optional[int] = None,
                 stream: Optional[str] = None, eager_threshold: Any = None):
        name = _str("name", name)
        if not name.isidentifier() or not name.isascii():
            raise ValueError("name must be an identifier, got %r" % name)
        if isinstance(placement, str):
            if placement not in ("loop", "v"):
                raise ValueError("placement must be 'loop', 'v' or a list of "
                                 "ranks, got %r" % placement)
        elif isinstance(placement, Sequence):
            placement = [_int("placement[%d]" % i, r)
                         for i, r in enumerate(placement)]
        else:
            raise TypeError("placement must be 'loop', 'v' or a list of ranks "
                            "(one per stage)")
        self._b = _pps.Builder(_int("ranks", ranks), _int("stages", stages),
                               _int("microbatches", microbatches), placement,
                               name)
        self._name = name
        if costs is not None:
            self.set_costs(costs)
        if comm_model is not None or stream is not None or \
                eager_threshold is not None:
            self.set_comm_model(comm_model, stream=stream,
                                eager_threshold=eager_threshold)
        if latency is not None:
            self.set_latency(latency)
        if memory_limit is not None:
            self.set_memory_limit(memory_limit)

    def add(self, rank: int, kind: str, microbatch: Optional[int] = None,
            stage: Optional[int] = None, *,
            peer: Optional[int] = None) -> "ScheduleBuilder":
        """Appends an action to a rank's program.

        kind: F, I, W, B; SEND_F, RECV_F, SEND_B, RECV_B (a send or receive
          names the local compute it serves, as PyTorch's do; peer defaults
          to the rank the stage map gives); UNSHARD, RESHARD, REDUCE_GRAD
          (a stage, no microbatch). Case does not matter.
        stage: may be left out when the rank holds one stage.
        Returns the builder, so calls chain.
        """
        self._b.add(_int("rank", rank), _str("kind", kind),
                    _int("microbatch", microbatch, optional=True),
                    _int("stage", stage, optional=True),
                    _int("peer", peer, optional=True))
        return self

    def add_overlap(self, rank: int, first: Sequence, second: Sequence
                    ) -> "ScheduleBuilder":
        """Appends two computes that run together, each (kind, microbatch)
        or (kind, microbatch, stage): overlap(F4@1, B2@5)."""
        rank = _int("rank", rank)
        k1, m1, s1 = _compute_spec(rank, first)
        k2, m2, s2 = _compute_spec(rank, second)
        self._b.add_overlap(rank, k1, m1, s1, k2, m2, s2)
        return self

    def add_idle(self, rank: int, time: float = 1.0) -> "ScheduleBuilder":
        """Appends an explicit idle slot of `time` units (a no-op)."""
        self._b.add_idle(_int("rank", rank), _number("time", time))
        return self

    def set_costs(self, costs: Any) -> "ScheduleBuilder":
        """Costs as in Schedule.simulate(costs=...)."""
        all_stages, per_stage = _costs(costs)
        self._b.set_costs(all_stages, per_stage)
        return self

    def set_comm_model(self, comm_model: Optional[str], *,
                       stream: Optional[str] = None,
                       eager_threshold: Any = None) -> "ScheduleBuilder":
        """The schedule's `comm { }` model and stream rule, as for
        pps.compile(comm_model=..., stream=..., eager_threshold=...): None
        leaves that part as it is."""
        self._b.set_comm(_comm(comm_model, stream, eager_threshold))
        return self

    def set_latency(self, latency: float) -> "ScheduleBuilder":
        self._b.set_latency(_number("latency", latency))
        return self

    def set_memory_limit(self, limit: int) -> "ScheduleBuilder":
        self._b.set_memory_limit(_int("memory_limit", limit, minimum=0))
        return self

    @property
    def num_actions(self) -> int:
        return self._b.num_actions

    def to_pps(self) -> str:
        """The schedule so far in the .pps text form."""
        return self._b.to_pps()

    def lint(self, comm_model: Optional[str] = None, *,
             stream: Optional[str] = None, eager_threshold: Any = None,
             comm_placement: Optional[str] = None) -> Findings:
        """Lints the schedule so far (like pps.lint on to_pps(), with the
        same comm options); findings are located in the text form, whose
        file is "<name>"."""
        return Findings._from_report(self._b.lint(
            "<%s>" % self._name,
            _comm(comm_model, stream, eager_threshold, comm_placement)))

    def build(self) -> Schedule:
        """Compiles and lowers the schedule (like pps.compile on to_pps()).
        Raises CompileError if it cannot be lowered."""
        return Schedule(self._b.build("<%s>" % self._name))

    def __repr__(self) -> str:
        return "<pps.ScheduleBuilder %r: %d actions>" % (self._name,
                                                         self.num_actions)
