"""Compiling, linting and synthesising schedules, and Schedule: the public
API over the compiler core (pps._pps). This layer checks and normalises
arguments (TypeError / ValueError with the reason, _args.py) and wraps
results in Python types (SimResult in _sim.py; ScheduleBuilder, in
_builder.py, builds a Schedule from Python); the compiler does all the
work."""

import numbers
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from . import _pps
from ._args import (PathLike, _comm, _costs, _display_name, _int, _number,
                    _source, _source_kwargs, _stdlib_option, _str)
from ._sim import SimResult
from ._types import Action, CommStream, Findings, Reordering, Route


# --- the API ------------------------------------------------------------------


def compile(source: PathLike, ranks: Optional[int] = None,
            microbatches: Optional[int] = None,
            defines: Optional[Mapping[str, int]] = None,
            comm_model: Optional[str] = None, *, stages: Optional[int] = None,
            pipeline: Optional[str] = None, import_paths: Iterable[PathLike] = (),
            name: Optional[str] = None,
            step_budget: Optional[int] = None, stream: Optional[str] = None,
            eager_threshold: Any = None,
            comm_placement: Optional[str] = None) -> "Schedule":
    """Compiles a .pps file or text (or a PyTorch schedule .csv file) and
    lowers it: sends and receives inserted, dependencies verified, as
    `ppsc emit --target=pps` does.

    source: a path (str or os.PathLike), or the .pps text itself (a str
      with a newline or a '{' is text). A path ending in .csv is read as
      PyTorch's schedule CSV (see from_torch_csv).
    ranks, microbatches, stages, defines: override pipeline fields and
      schedule arguments, like ppsc's --ranks, --microbatches, --stages and
      -Dname=value.
    comm_model, stream, eager_threshold, comm_placement: the comm options
      (ppsc's --comm-model, --stream, --eager-threshold, --comm-placement;
      None keeps the schedule's own, as its `comm { }` block says):
      comm_model 'rendezvous', 'eager', 'batched' or 'nccl' (rendezvous
      on one in-order stream per rank, sends of up to 64 KiB eager);
      stream 'none', 'peer' or 'rank'; eager_threshold bytes (an int, or
      '64K', '1M') up to which a send does not wait for its receive, or
      'none'; comm_placement where the lowering puts each send/recv pair:
      'consumer', 'producer', 'optimize' (the default under a stream rule)
      or 'pytorch' (what PyTorch's lowering does; lint it).
    pipeline: which pipeline, when the source declares several.
    import_paths: directories searched by `import a.b;` (ppsc -I).
    name: the name diagnostics give a text source (default "<text>").
    step_budget: evaluation steps allowed (ppsc --step-budget).

    Raises CompileError with the diagnostics if the compiler reports an
    error (a deadlock in the compute order, for one); lint() reports the
    rest (deadlocks among written sends and receives, memory, warnings).
    """
    src, is_text = _source(source, "{")
    if not is_text and src.endswith(".csv"):
        if defines:
            raise ValueError("defines apply to .pps sources, not to a CSV")
        return from_torch_csv(src, ranks=ranks, stages=stages,
                              microbatches=microbatches,
                              comm_model=comm_model, stream=stream,
                              eager_threshold=eager_threshold,
                              comm_placement=comm_placement,
                              pipeline=pipeline)
    comm = _comm(comm_model, stream, eager_threshold, comm_placement)
    kw = _source_kwargs(ranks, microbatches, stages, defines, pipeline,
                        import_paths, step_budget)
    return Schedule(_pps.compile(src, is_text, _display_name(name, "<text>"),
                                 comm=comm, **kw))


def lint(source: PathLike, ranks: Optional[int] = None,
         microbatches: Optional[int] = None,
         defines: Optional[Mapping[str, int]] = None,
         comm_model: Optional[str] = None, *, stages: Optional[int] = None,
         pipeline: Optional[str] = None, import_paths: Iterable[PathLike] = (),
         name: Optional[str] = None,
         step_budget: Optional[int] = None, stream: Optional[str] = None,
         eager_threshold: Any = None,
         comm_placement: Optional[str] = None) -> Findings:
    """`ppsc lint` on a .pps file or text (or a PyTorch schedule .csv file):
    every finding, the front end's included, as data; never raises for a
    problem in the schedule. Same arguments as compile(); an empty result
    means the schedule is complete, free of deadlock and within its memory
    limit."""
    comm = _comm(comm_model, stream, eager_threshold, comm_placement)
    src, is_text = _source(source, "{")
    if not is_text and src.endswith(".csv"):
        if defines:
            raise ValueError("defines apply to .pps sources, not to a CSV")
        return Findings._from_report(_pps.lint_torch_csv(
            *_csv_args(src, ranks, stages, microbatches, None, False, None,
                       pipeline), comm))
    kw = _source_kwargs(ranks, microbatches, stages, defines, pipeline,
                        import_paths, step_budget)
    return Findings._from_report(
        _pps.lint(src, is_text, _display_name(name, "<text>"), comm=comm,
                  **kw))


def from_torch_csv(source: PathLike, *, ranks: Optional[int] = None,
                   stages: Optional[int] = None,
                   microbatches: Optional[int] = None,
                   placement: Optional[str] = None, keep_idle: bool = False,
                   comm_model: Optional[str] = None,
                   name: Optional[str] = None,
                   pipeline: Optional[str] = None,
                   stream: Optional[str] = None, eager_threshold: Any = None,
                   comm_placement: Optional[str] = None) -> "Schedule":
    """Reads PyTorch pipelining's schedule CSV (one row per rank, cells like
    `0F0`, `1SEND_F0`, `(0F7;7B3)OVERLAP_F_B`; docs/interop.md), compute
    only or with comms, and lowers it like compile().

    source: a path, or the CSV text (a str with a newline or a comma).
    ranks, stages, microbatches: sizes the CSV cannot say (or overrides).
    placement: 'loop' or 'v' (default: inferred from where the stages are).
    keep_idle: keep empty cells as idle slots.
    name: the name diagnostics give a text source (default "<csv>").
    pipeline: the schedule's name (default: from the file name).
    comm_model, stream, eager_threshold, comm_placement: as for compile()
      (comm_placement places the comms of a compute-only CSV).
    """
    comm = _comm(comm_model, stream, eager_threshold, comm_placement)
    return Schedule(_pps.import_torch_csv(
        *_csv_args(source, ranks, stages, microbatches, placement, keep_idle,
                   name, pipeline), comm))


def _csv_args(source, ranks, stages, microbatches, placement, keep_idle, name,
              pipeline) -> tuple:
    src, is_text = _source(source, ",")
    placement = _str("placement", placement, optional=True)
    if placement is not None and placement not in ("loop", "v"):
        raise ValueError("placement must be 'loop' or 'v', got %r" % placement)
    sizes = {}
    for key, value in (("ranks", ranks), ("stages", stages),
                       ("microbatches", microbatches)):
        value = _int(key, value, minimum=1, optional=True)
        if value is not None and value >= 2 ** 31:
            raise ValueError("%s is too large: %d" % (key, value))
        sizes[key] = value
    return (src, is_text, _display_name(name, "<csv>"),
            _str("pipeline", pipeline, optional=True) or "", sizes["ranks"],
            sizes["stages"], sizes["microbatches"], placement, bool(keep_idle))


def synth(ranks: int, microbatches: int, memory_limit: int,
          placement: str = "loop", *, stages: Optional[int] = None,
          costs: Any = None, latency: float = 0.0,
          exact: bool = True,
          memory_model: Optional[Dict[str, float]] = None) -> "Schedule":
    """`ppsc synth`: the fastest schedule the synthesis algorithms find
    within memory_limit activations per rank (chunks under V placement, or
    the memory model's units), lowered like compile(). Raises CompileError
    (synth-infeasible) when no schedule fits.

    placement: 'loop' (one stage per rank, or `stages` for several) or 'v'.
    costs: {"F": 1, "I": 1, "W": 1} for every stage (B is accepted for I,
      as the zero-bubble papers name the input-gradient backward), with int
      keys or a sequence for per-stage costs.
    latency: time of one message between ranks.
    exact: also run the exact search where it applies (ranks <= 4,
      microbatches <= 8).
    memory_model: the amounts of a `memory { }` block, {"F": 2, "I": -1,
      "W": -1} (the zero-bubble papers' half activations; W and B are
      checks, W alone gives I); None: the chunk model.
    """
    ranks = _int("ranks", ranks, minimum=1)
    microbatches = _int("microbatches", microbatches, minimum=1)
    memory_limit = _int("memory_limit", memory_limit, minimum=1)
    placement = _str("placement", placement)
    if placement not in ("loop", "v"):
        raise ValueError("placement must be 'loop' or 'v', got %r" % placement)
    all_stages, per_stage = _costs(costs)
    if "overlap" in all_stages:
        raise ValueError("synthesis places no overlap pairs: drop the "
                         "'overlap' cost")
    model = {}
    if memory_model is not None:
        if not isinstance(memory_model, dict):
            raise TypeError("memory_model must be a dict like {'F': 2, "
                            "'I': -1, 'W': -1}, got %s"
                            % type(memory_model).__name__)
        for key, value in memory_model.items():
            if not isinstance(key, str):
                raise TypeError("memory_model keys are 'F', 'I', 'W' or 'B', "
                                "got %r" % (key,))
            if isinstance(value, bool) or not isinstance(value,
                                                         numbers.Real):
                raise TypeError("memory_model[%r] must be a number, got %s"
                                % (key, type(value).__name__))
            model[key] = float(value)
    return Schedule(_pps.synth(
        ranks, microbatches, memory_limit, placement,
        _int("stages", stages, minimum=1, optional=True), all_stages,
        per_stage, _number("latency", latency), bool(exact),
        _stdlib_option(), model))


class Schedule:
    """A compiled, lowered schedule (from compile, from_torch_csv, synth or
    ScheduleBuilder.build). Read-only."""

    __slots__ = ("_unit",)

    def __init__(self, unit):
        if not isinstance(unit, _pps.Unit):
            raise TypeError("Schedule objects come from pps.compile(), "
                            "pps.from_torch_csv(), pps.synth() or "
                            "ScheduleBuilder.build()")
        self._unit = unit

    # --- topology
    @property
    def name(self) -> str:
        """The pipeline's name."""
        return self._unit.name

    @property
    def ranks(self) -> int:
        return self._unit.ranks

    @property
    def stages(self) -> int:
        return self._unit.stages

    @property
    def microbatches(self) -> int:
        return self._unit.microbatches

    @property
    def placement(self) -> str:
        """'loop', 'v' or 'explicit'."""
        return self._unit.placement

    @property
    def directions(self) -> int:
        """1, or 2 for a bidirectional (DualPipe) schedule: microbatches
        [0, M/2) traverse stages [0, S/2), the others [S/2, S)."""
        return self._unit.directions

    @property
    def stage_to_rank(self) -> List[int]:
        """The rank of each stage."""
        return self._unit.stage_to_rank

    def stages_of(self, rank: int) -> List[int]:
        """The stages a rank holds, ascending."""
        return self._unit.stages_of(_int("rank", rank))

    def route(self, microbatch: int) -> Tuple[int, int]:
        """(first, last): the stages a microbatch traverses, in order. Every
        stage unless directions == 2, where microbatches [0, M/2) traverse
        [0, S/2) and the others [S/2, S). F at the first stage receives
        nothing; B/I at the last stage starts from its own F."""
        return self._unit.route(_int("microbatch", microbatch))

    @property
    def routes(self) -> List[Route]:
        """Every route (one per direction) with the rank that reads its
        microbatches' inputs and the rank that computes their losses."""
        return [Route(*r) for r in self._unit.layout["routes"]]

    @property
    def data_ranks(self) -> List[int]:
        """The ranks that read microbatch inputs, ascending."""
        return list(self._unit.layout["data_ranks"])

    @property
    def loss_ranks(self) -> List[int]:
        """The ranks that compute losses, ascending."""
        return list(self._unit.layout["loss_ranks"])

    @property
    def weight_groups(self) -> List[List[int]]:
        """Group k: the stages (ascending) that hold layer k of the model,
        the k-th stage of every route. The stages of a group of more than
        one (DualPipe's stage k and S/2 + k) hold copies of the same
        weights: initialise them alike and sum their gradients before the
        optimizer steps (pps.torch does both)."""
        return [list(g) for g in self._unit.layout["weight_groups"]]

    # --- costs and options
    @property
    def comm_model(self) -> str:
        """'rendezvous', 'eager', 'batched', or 'nccl' for the preset
        (`model nccl;`: rendezvous, one in-order stream per rank, sends of
        up to 64 KiB eager), as the compiler's messages name it."""
        return self._unit.comm_model

    @property
    def comm_stream(self) -> CommStream:
        """The stream rule (`stream ...; eager threshold ...;`): scope
        'none', 'peer' or 'rank' (one in-order stream per peer or per rank,
        as NCCL runs point-to-point operations), and eager_threshold, the
        bytes up to which a send completes without waiting for its receive
        (None: no threshold)."""
        d = self._unit.comm_stream
        return CommStream(d["scope"], d["eager_threshold"])

    @property
    def comm_placement(self) -> Optional[str]:
        """The comm_placement the schedule was lowered with, or None for
        the default (optimize under a stream rule, consumer otherwise)."""
        return self._unit.comm_placement

    @property
    def memory_limit(self) -> Optional[int]:
        """Activations per rank the schedule declares, or None."""
        return self._unit.memory_limit

    def costs(self, stage: int) -> Dict[str, float]:
        """{"F", "I", "W", "B"} costs of a stage in time units, and
        "overlap": the time of an overlap pair whose first compute is on the
        stage, when one is given (`overlap`, `overlap[stage s]`)."""
        return self._unit.costs(_int("stage", stage))

    @property
    def latency(self) -> float:
        """Time of one activation message (latency + bytes / bandwidth)."""
        return self._unit.latency

    @property
    def synth_algorithm(self) -> Optional[str]:
        """Which synthesis algorithm made the schedule (pps.synth(), or
        `schedule synth(memory: N);` in the source), or None."""
        return self._unit.synth_algorithm

    # --- actions
    @property
    def num_actions(self) -> int:
        return self._unit.num_actions

    def actions(self, rank: int) -> List[Action]:
        """The rank's lowered program in order: computes, the sends and
        receives carrying data between ranks, control and idle actions."""
        return self._unit.actions(_int("rank", rank))

    @property
    def peak_memory_per_rank(self) -> List[float]:
        """The memory analysis: peak memory per rank in program order,
        without simulating, in the memory model's units (by default live
        activations: +1 at F(m, s), -1 at its last backward; an int when
        whole); the figure the runtimes check their measured peaks
        against."""
        return self._unit.peak_memory_per_rank

    @property
    def peak_activations_per_rank(self) -> List[int]:
        """Peak live (microbatch, stage) activations per rank, whatever the
        memory model (the chunk model's count): what the runtimes' state
        counts reach."""
        return self._unit.peak_activations_per_rank

    @property
    def memory_model(self) -> Dict[str, float]:
        """The memory model, as the `memory { }` block writes it: {"F": 1,
        "I": 0, "W": -1} by default (F allocates per (microbatch, stage), I
        frees its part, W the rest)."""
        return self._unit.memory_model

    @property
    def warnings(self) -> Findings:
        """Warnings the compilation reported (it had no errors)."""
        return Findings._from_report(self._unit.warnings)

    # --- checks and figures
    def prove(self, comm_model: Optional[str] = None, *,
              stream: Optional[str] = None, eager_threshold: Any = None,
              comm_placement: Optional[str] = None) -> Findings:
        """The proof every executable export and pps.torch run first (what
        `ppsc lint` checks: dependencies, comm matching, deadlock under the
        comm model and stream rule, memory): empty if the schedule passes
        it, else lint's findings. Warnings do not fail it. The comm options
        as for compile()."""
        report = self._unit.prove(_comm(comm_model, stream, eager_threshold,
                                        comm_placement))
        return Findings() if report is None else Findings._from_report(report)

    def lint(self, comm_model: Optional[str] = None, *,
             stream: Optional[str] = None, eager_threshold: Any = None,
             comm_placement: Optional[str] = None) -> Findings:
        """`ppsc lint`: dependencies, FIFO matching, deadlock (with the
        cycle and its locations), memory, idle ranks with ready work, and
        under a stream rule the receives that hold back the comms behind
        them (early-recv). Empty when the schedule is clean. comm_model,
        stream, eager_threshold, comm_placement: check under these instead
        of the schedule's (as for compile())."""
        return Findings._from_report(self._unit.lint(
            _comm(comm_model, stream, eager_threshold, comm_placement)))

    def reorder_comms(self, comm_model: Optional[str] = None, *,
                      stream: Optional[str] = None,
                      eager_threshold: Any = None) -> Reordering:
        """`ppsc lint --fix` (`ppsc emit --reorder-comms`): the sends and
        receives reordered as the optimize placement orders them, under
        the comm model and stream rule (the schedule's, or these), when
        that is faster. Returns a Reordering: the schedule (the new order,
        or its own when none was faster), the makespans before and after,
        and the note ppsc prints. Raises CompileError if the schedule does
        not pass the checks."""
        unit, before, after, message = self._unit.reorder_comms(
            _comm(comm_model, stream, eager_threshold))
        return Reordering(Schedule(unit), before, after, message)

    def simulate(self, costs: Any = None, latency: Optional[float] = None, *,
                 comm_model: Optional[str] = None,
                 blocking: Optional[bool] = None,
                 timing: str = "auto", stream: Optional[str] = None,
                 eager_threshold: Any = None,
                 comm_placement: Optional[str] = None) -> "SimResult":
        """`ppsc sim`: the timeline under the cost model.

        costs: override the schedule's costs, as its `cost { }` block would:
          {"F": 1, "B": 2, "I": 1, "W": 1, "overlap": 2.5} for every stage,
          int keys mapping a stage to its own mapping ({3: {"F": 1.4}}), or a
          sequence with one mapping per stage. Giving I and W without B makes
          B = I + W. Or the path of a costs file, such as the profile an
          executor writes with --profile (`ppsc sim --costs=FILE`): its cost
          and comm figures replace the schedule's (CompileError, located in
          the file, if it does not fit).
        latency: the per-message time instead of the schedule's (ppsc sim
          --latency).
        comm_model, stream, eager_threshold, comm_placement: simulate (and
          check) under these (as for compile(); ppsc sim --comm-model & co.).
          Under a stream rule the result also has the makespan without it
          and what the rule held back (SimResult.makespan_without_streams,
          held_comms).
        blocking: True = comm occupies the rank, False = it overlaps compute.
        timing: 'auto' (from the sends and receives), 'comms' or 'dataflow'.

        Raises CompileError if the schedule does not pass the checks (as
        ppsc sim refuses to simulate it).
        """
        costs_file = None
        if isinstance(costs, (str, os.PathLike)):
            costs_file, costs = os.fspath(costs), None
        all_stages, per_stage = _costs(costs)
        if blocking is not None and not isinstance(blocking, bool):
            raise TypeError("blocking must be True, False or None")
        timing = _str("timing", timing)
        if timing not in ("auto", "comms", "dataflow"):
            raise ValueError("timing must be 'auto', 'comms' or 'dataflow', "
                             "got %r" % timing)
        return SimResult(self._unit.simulate(
            costs=all_stages, stage_costs=per_stage, costs_file=costs_file,
            latency=_number("latency", latency, optional=True),
            comm=_comm(comm_model, stream, eager_threshold, comm_placement),
            blocking=blocking,
            timing=timing))

    # --- text forms
    def to_pps(self) -> str:
        """The lowered .pps text form (parses back to the same schedule)."""
        return self._unit.to_pps()

    def to_json(self, verify: bool = True) -> str:
        """The JSON export (`ppsc emit --target=json`; its schema is
        docs/export.schema.json). Proved first as `ppsc lint` proves it:
        raises CompileError with lint's findings if the schedule fails;
        verify=False writes it anyway, marked unverified."""
        return self._unit.to_json(bool(verify))

    def to_torch_csv(self, with_comms: bool = False,
                     verify: bool = True) -> str:
        """PyTorch's schedule CSV (`ppsc emit --target=torch`): compute
        only, or with_comms for the compute+comms flavour. Raises
        CompileError for what PyTorch cannot express (two directions, an
        overlap of other than a forward and a full backward) and, unless
        verify=False, if the schedule fails the proof `ppsc lint` runs
        (verify=False writes it with a first line marking it unverified,
        which PyTorch's loaders reject)."""
        return self._unit.to_torch_csv(bool(with_comms), bool(verify))

    def __str__(self) -> str:
        return self.to_pps()

    def __repr__(self) -> str:
        return ("<pps.Schedule %r: %d ranks, %d stages, %d microbatches, "
                "%d actions>" % (self.name, self.ranks, self.stages,
                                 self.microbatches, self.num_actions))
