"""SimResult: a simulated schedule (Schedule.simulate), its figures,
timeline and trace formats."""

from typing import Dict, List, Optional

from ._args import _int
from ._types import (Channel, CommStream, Findings, HeldComm, RankStats,
                     TimedAction)


class SimResult:
    """A simulated schedule: the figures `ppsc sim` prints, the timeline of
    every action, and the trace formats. Times in the schedule's units."""

    __slots__ = ("_sim", "_per_rank", "_timeline")

    def __init__(self, sim):
        self._sim = sim
        self._per_rank = [RankStats(*r) for r in sim.per_rank]
        self._timeline: Dict[int, List[TimedAction]] = {}

    @property
    def makespan(self) -> float:
        """End of the last action on any rank."""
        return self._sim.makespan

    @property
    def span(self) -> float:
        """The largest per-rank span: from a rank's first compute start to
        its last compute end (the zero-bubble papers' iteration time)."""
        return self._sim.span

    @property
    def ideal(self) -> float:
        """The busiest rank's compute time (the makespan with no bubble)."""
        return self._sim.ideal

    @property
    def bubble(self) -> float:
        """(makespan - ideal) / makespan: the share of the run that is
        bubble (ppsc sim's "bubble")."""
        return self._sim.bubble_over_makespan

    @property
    def bubble_over_makespan(self) -> float:
        return self._sim.bubble_over_makespan

    @property
    def bubble_over_ideal(self) -> float:
        """(makespan - ideal) / ideal: the (p-1)/m of the GPipe and 1F1B
        papers."""
        return self._sim.bubble_over_ideal

    @property
    def mean_idle_fraction(self) -> float:
        return self._sim.mean_idle_fraction

    @property
    def per_rank(self) -> List[RankStats]:
        return list(self._per_rank)

    @property
    def busy(self) -> List[float]:
        """Compute-busy time per rank."""
        return [r.busy for r in self._per_rank]

    @property
    def peak_memory(self) -> float:
        """Peak activation memory over the ranks, in the schedule's memory
        model's units (activations by default; an int when whole)."""
        return self._sim.peak_memory

    @property
    def peak_memory_per_rank(self) -> List[float]:
        return [r.peak_memory for r in self._per_rank]

    @property
    def messages(self) -> int:
        return self._sim.messages

    @property
    def bytes(self) -> float:
        return self._sim.bytes

    @property
    def channels(self) -> List[Channel]:
        return [Channel(*c) for c in self._sim.channels]

    @property
    def comm_model(self) -> str:
        """The model simulated under: 'rendezvous', 'eager', 'batched', or
        'nccl' for the preset."""
        return self._sim.comm_model

    @property
    def comm_stream(self) -> CommStream:
        """The stream rule simulated under."""
        d = self._sim.comm_stream
        return CommStream(d["scope"], d["eager_threshold"])

    @property
    def makespan_without_streams(self) -> Optional[float]:
        """Under a stream rule (async timing): the makespan of the same
        schedule without it (scope none, same eager threshold), so
        makespan - makespan_without_streams is what the rule costs; None
        otherwise."""
        return self._sim.makespan_without_streams

    @property
    def stream_held(self) -> List[Optional[float]]:
        """Per rank: the time its comms were held back on their stream
        (None without a stream rule)."""
        return [r.stream_held for r in self._per_rank]

    @property
    def stream_bubble(self) -> List[Optional[float]]:
        """Per rank: the idle time the stream rule adds (None without
        one)."""
        return [r.stream_bubble for r in self._per_rank]

    @property
    def held_comms(self) -> List[HeldComm]:
        """Every comm the stream rule held back behind an operation ahead
        of it on its stream, by rank and program order, with how long and
        the operation that held it (what ppsc sim's summary adds up per
        rank; empty without a stream rule)."""
        out = []
        for rank, index, held, by_rank, by_index in self._sim.held_comms:
            by = (self.timeline(by_rank)[by_index] if by_rank >= 0
                  else None)
            out.append(HeldComm(self.timeline(rank)[index], held, by))
        return out

    @property
    def blocking(self) -> bool:
        return self._sim.blocking

    @property
    def dataflow(self) -> bool:
        """True if cross-rank waits came from data dependencies (a schedule
        without comms, or timing='dataflow')."""
        return self._sim.dataflow

    @property
    def warnings(self) -> Findings:
        """Warnings the checks reported (the simulation still ran)."""
        return Findings._from_report(self._sim.warnings)

    def timeline(self, rank: Optional[int] = None) -> List[TimedAction]:
        """Every action of a rank (or of all ranks, rank by rank) with its
        simulated start, transfer start and end."""
        if rank is None:
            out: List[TimedAction] = []
            for r in range(self._sim.ranks):
                out.extend(self.timeline(r))
            return out
        rank = _int("rank", rank)
        if rank not in self._timeline:
            self._timeline[rank] = self._sim.timeline(rank)
        return list(self._timeline[rank])

    @property
    def critical_path(self) -> List[TimedAction]:
        """The chain of actions that sets the makespan, first to last."""
        return [self.timeline(r)[i] for r, i in self._sim.critical_path]

    def to_json(self) -> str:
        """Every figure as JSON, as `ppsc sim --format=json` writes it."""
        return self._sim.to_json()

    def to_chrome_trace(self) -> str:
        """Chrome trace JSON (Perfetto, chrome://tracing): one process per
        rank, the format the executors record too (docs/simulation.md)."""
        return self._sim.to_chrome_trace()

    def to_csv(self) -> str:
        """One line per action with its times (`--format=csv`)."""
        return self._sim.to_csv()

    def to_svg(self) -> str:
        return self._sim.to_svg()

    def to_html(self) -> str:
        return self._sim.to_html()

    def summary(self) -> str:
        """The figures as ppsc sim's summary table."""
        return self._sim.summary()

    def gantt(self, width: int = 100) -> str:
        """A text Gantt chart, width columns wide."""
        return self._sim.gantt(_int("width", width, minimum=10))

    def __repr__(self) -> str:
        return ("<pps.SimResult makespan=%g bubble=%.4f peak_memory=%g>"
                % (self.makespan, self.bubble, self.peak_memory))
