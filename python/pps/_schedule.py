"""Compiling, linting, simulating and building schedules: the public API
over the compiler core (pps._pps). This layer checks and normalises
arguments (TypeError / ValueError with the reason) and wraps results in
Python types; the compiler does all the work."""

import math
import numbers
import os
from typing import (Any, Dict, Iterable, List, Mapping, Optional, Sequence,
                    Tuple, Union)

from . import _pps
from ._types import Action, Channel, Findings, RankStats, Route, TimedAction

PathLike = Union[str, "os.PathLike[str]"]

_COMM_MODELS = ("rendezvous", "eager", "batched")


# --- argument checks ----------------------------------------------------------


def _int(name: str, value: Any, minimum: Optional[int] = None,
         optional: bool = False) -> Optional[int]:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("%s must be an int, got %s" % (name, type(value).__name__))
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError("%s must be >= %d, got %d" % (name, minimum, value))
    if abs(value) >= 2 ** 63:
        raise ValueError("%s is out of range: %d" % (name, value))
    return value


def _number(name: str, value: Any, optional: bool = False) -> Optional[float]:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError("%s must be a number, got %s" % (name, type(value).__name__))
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError("%s must be a finite number >= 0, got %r" % (name, value))
    return value


def _str(name: str, value: Any, optional: bool = False) -> Optional[str]:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError("%s must be a str, got %s" % (name, type(value).__name__))
    return value


def _comm_model(value: Any) -> Optional[str]:
    value = _str("comm_model", value, optional=True)
    if value is not None and value not in _COMM_MODELS:
        raise ValueError("comm_model must be 'rendezvous', 'eager' or "
                         "'batched', got %r" % value)
    return value


def _display_name(name: Any, default: str) -> str:
    name = _str("name", name, optional=True) or default
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ValueError("name must not contain control characters: %r" % name)
    return name


def _source(source: Any, text_marks: str) -> Tuple[str, bool]:
    """(path or text, is_text). An os.PathLike is a path; a str is text when
    it contains a newline or one of text_marks, else a path."""
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
        if isinstance(source, bytes):
            source = os.fsdecode(source)
        is_text = False
    elif isinstance(source, str):
        is_text = "\n" in source or any(c in source for c in text_marks)
    else:
        raise TypeError("expected a path (str or os.PathLike) or source text, "
                        "got %s" % type(source).__name__)
    if not is_text:
        if not os.path.isfile(source):
            raise FileNotFoundError(2, "no such file", source)
    return source, is_text


def _costs(costs: Any) -> Tuple[Dict[str, float], Dict[int, Dict[str, float]]]:
    """Normalises a cost argument into (every stage, per stage).

    costs is None, a mapping {"F": 1.0, "B": 2.0, ...} for every stage (its
    int keys, if any, map a stage to its own mapping), or a sequence with
    one mapping per stage."""
    all_stages: Dict[str, float] = {}
    per_stage: Dict[int, Dict[str, float]] = {}
    if costs is None:
        return all_stages, per_stage

    def entries(where: str, m: Any) -> Dict[str, float]:
        if not isinstance(m, Mapping):
            raise TypeError("%s must be a mapping like {'F': 1.0, 'B': 2.0}, "
                            "got %s" % (where, type(m).__name__))
        out = {}
        for k, v in m.items():
            if not isinstance(k, str):
                raise TypeError("%s: cost names are str (F, I, W, B), got %r"
                                % (where, k))
            out[k] = _number("%s[%r]" % (where, k), v)
        return out

    if isinstance(costs, Mapping):
        for k, v in costs.items():
            if isinstance(k, str):
                all_stages[k] = _number("costs[%r]" % k, v)
            else:
                stage = _int("a stage key of costs", k, minimum=0)
                per_stage[stage] = entries("costs[%d]" % stage, v)
    elif isinstance(costs, Sequence) and not isinstance(costs, str):
        for stage, m in enumerate(costs):
            per_stage[stage] = entries("costs[%d]" % stage, m)
    else:
        raise TypeError("costs must be a mapping or a sequence of mappings, "
                        "got %s" % type(costs).__name__)
    return all_stages, per_stage


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# The standard library relative to this package, as ppsc finds its own
# relative to its executable: inside the package when it is installed (pip,
# cmake --install), in the build tree's share/pps/stdlib next to
# build/python/pps (the build tree mirrors the install layout).
_PACKAGE_STDLIBS = (os.path.join(_PACKAGE_DIR, "stdlib"),
                    os.path.join(_PACKAGE_DIR, os.pardir, os.pardir, "share",
                                 "pps", "stdlib"))


def _stdlib_option() -> str:
    """The stdlib directory to hand the compiler: "" (its own search path)
    when $PPS_STDLIB_PATH or $PPS_STDLIB says where, else the package's."""
    if os.environ.get("PPS_STDLIB_PATH") or os.environ.get("PPS_STDLIB"):
        return ""
    for d in _PACKAGE_STDLIBS:
        if os.path.isdir(d):
            return os.path.normpath(d)
    return ""


def stdlib_dir() -> str:
    """Where `schedule name();` and `import std.x;` look (after
    import_paths): the directories of $PPS_STDLIB_PATH (':'-separated) or
    $PPS_STDLIB when set, as for ppsc (docs/install.md), else the stdlib
    that comes with this package."""
    chosen = _stdlib_option()
    if chosen:
        return chosen
    dirs = [d for d, _ in _pps.stdlib_search_path()]
    existing = [d for d in dirs if os.path.isdir(d)]
    return (existing or dirs or [""])[0]


def _source_kwargs(ranks, microbatches, stages, defines, pipeline,
                   import_paths, step_budget) -> Dict[str, Any]:
    overrides: Dict[str, int] = {}
    if defines is not None:
        if not isinstance(defines, Mapping):
            raise TypeError("defines must be a mapping of name to int, got %s"
                            % type(defines).__name__)
        for k, v in defines.items():
            if not isinstance(k, str) or not k:
                raise TypeError("defines: names are non-empty str, got %r" % (k,))
            overrides[k] = _int("defines[%r]" % k, v)
    for key, value in (("ranks", ranks), ("microbatches", microbatches),
                       ("stages", stages)):
        value = _int(key, value, minimum=1, optional=True)
        if value is not None:
            overrides[key] = value
    if isinstance(import_paths, (str, bytes)) or not isinstance(import_paths, Iterable):
        raise TypeError("import_paths must be a list of directories")
    return dict(
        import_paths=[os.fspath(p) for p in import_paths],
        stdlib_dir=_stdlib_option(),
        pipeline=_str("pipeline", pipeline, optional=True) or "",
        overrides=overrides,
        step_budget=_int("step_budget", step_budget, minimum=1, optional=True),
    )


# --- the API ------------------------------------------------------------------


def compile(source: PathLike, ranks: Optional[int] = None,
            microbatches: Optional[int] = None,
            defines: Optional[Mapping[str, int]] = None,
            comm_model: Optional[str] = None, *, stages: Optional[int] = None,
            pipeline: Optional[str] = None, import_paths: Iterable[PathLike] = (),
            name: Optional[str] = None,
            step_budget: Optional[int] = None) -> "Schedule":
    """Compiles a .pps file or text (or a PyTorch schedule .csv file) and
    lowers it: sends and receives inserted, dependencies verified, as
    `ppsc emit --target=pps` does.

    source: a path (str or os.PathLike), or the .pps text itself (a str
      with a newline or a '{' is text). A path ending in .csv is read as
      PyTorch's schedule CSV (see from_torch_csv).
    ranks, microbatches, stages, defines: override pipeline fields and
      schedule arguments, like ppsc's --ranks, --microbatches, --stages and
      -Dname=value.
    comm_model: 'rendezvous', 'eager' or 'batched' instead of the
      schedule's own.
    pipeline: which pipeline, when the source declares several.
    import_paths: directories searched by `import a.b;` (ppsc -I).
    name: the name diagnostics give a text source (default "<text>").
    step_budget: evaluation steps allowed (ppsc --step-budget).

    Raises CompileError with the diagnostics if the compiler reports an
    error (a deadlock in the compute order, for one); lint() reports the
    rest (deadlocks among written sends and receives, memory, warnings).
    """
    comm = _comm_model(comm_model)
    src, is_text = _source(source, "{")
    if not is_text and src.endswith(".csv"):
        if defines:
            raise ValueError("defines apply to .pps sources, not to a CSV")
        return from_torch_csv(src, ranks=ranks, stages=stages,
                              microbatches=microbatches, comm_model=comm,
                              pipeline=pipeline)
    kw = _source_kwargs(ranks, microbatches, stages, defines, pipeline,
                        import_paths, step_budget)
    return Schedule(_pps.compile(src, is_text, _display_name(name, "<text>"),
                                 comm_model=comm, **kw))


def lint(source: PathLike, ranks: Optional[int] = None,
         microbatches: Optional[int] = None,
         defines: Optional[Mapping[str, int]] = None,
         comm_model: Optional[str] = None, *, stages: Optional[int] = None,
         pipeline: Optional[str] = None, import_paths: Iterable[PathLike] = (),
         name: Optional[str] = None,
         step_budget: Optional[int] = None) -> Findings:
    """`ppsc lint` on a .pps file or text (or a PyTorch schedule .csv file):
    every finding, the front end's included, as data; never raises for a
    problem in the schedule. Same arguments as compile(); an empty result
    means the schedule is complete, free of deadlock and within its memory
    limit."""
    comm = _comm_model(comm_model)
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
        _pps.lint(src, is_text, _display_name(name, "<text>"), comm_model=comm,
                  **kw))


def from_torch_csv(source: PathLike, *, ranks: Optional[int] = None,
                   stages: Optional[int] = None,
                   microbatches: Optional[int] = None,
                   placement: Optional[str] = None, keep_idle: bool = False,
                   comm_model: Optional[str] = None,
                   name: Optional[str] = None,
                   pipeline: Optional[str] = None) -> "Schedule":
    """Reads PyTorch pipelining's schedule CSV (one row per rank, cells like
    `0F0`, `1SEND_F0`, `(0F7;7B3)OVERLAP_F_B`; docs/interop.md), compute
    only or with comms, and lowers it like compile().

    source: a path, or the CSV text (a str with a newline or a comma).
    ranks, stages, microbatches: sizes the CSV cannot say (or overrides).
    placement: 'loop' or 'v' (default: inferred from where the stages are).
    keep_idle: keep empty cells as idle slots.
    name: the name diagnostics give a text source (default "<csv>").
    pipeline: the schedule's name (default: from the file name).
    """
    return Schedule(_pps.import_torch_csv(
        *_csv_args(source, ranks, stages, microbatches, placement, keep_idle,
                   name, pipeline), _comm_model(comm_model)))


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
          exact: bool = True) -> "Schedule":
    """`ppsc synth`: the fastest schedule the synthesis algorithms find
    within memory_limit activations per rank (chunks under V placement),
    lowered like compile(). Raises CompileError (synth-infeasible) when no
    schedule fits.

    placement: 'loop' (one stage per rank, or `stages` for several) or 'v'.
    costs: {"F": 1, "I": 1, "W": 1} for every stage (B is accepted for I,
      as the zero-bubble papers name the input-gradient backward), with int
      keys or a sequence for per-stage costs.
    latency: time of one message between ranks.
    exact: also run the exact search where it applies (ranks <= 4,
      microbatches <= 8).
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
    return Schedule(_pps.synth(
        ranks, microbatches, memory_limit, placement,
        _int("stages", stages, minimum=1, optional=True), all_stages,
        per_stage, _number("latency", latency), bool(exact)))


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
        """'rendezvous', 'eager' or 'batched'."""
        return self._unit.comm_model

    @property
    def memory_limit(self) -> Optional[int]:
        """Activations per rank the schedule declares, or None."""
        return self._unit.memory_limit

    def costs(self, stage: int) -> Dict[str, float]:
        """{"F", "I", "W", "B"} costs of a stage in time units."""
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
    def peak_memory_per_rank(self) -> List[int]:
        """The memory analysis: peak live activations per rank in program
        order (+1 at F(m, s), -1 at its last backward), without simulating;
        the figure the runtimes check their measured peaks against."""
        return self._unit.peak_memory_per_rank

    @property
    def warnings(self) -> Findings:
        """Warnings the compilation reported (it had no errors)."""
        return Findings._from_report(self._unit.warnings)

    # --- checks and figures
    def prove(self, comm_model: Optional[str] = None) -> Findings:
        """The proof every executable export and pps.torch run first (what
        `ppsc lint` checks: dependencies, comm matching, deadlock under the
        comm model, memory): empty if the schedule passes it, else lint's
        findings. Warnings do not fail it."""
        report = self._unit.prove(_comm_model(comm_model))
        return Findings() if report is None else Findings._from_report(report)

    def lint(self, comm_model: Optional[str] = None) -> Findings:
        """`ppsc lint`: dependencies, FIFO matching, deadlock (with the
        cycle and its locations), memory, idle ranks with ready work. Empty
        when the schedule is clean. comm_model: check under this model
        instead of the schedule's."""
        return Findings._from_report(self._unit.lint(_comm_model(comm_model)))

    def simulate(self, costs: Any = None, latency: Optional[float] = None, *,
                 comm_model: Optional[str] = None,
                 blocking: Optional[bool] = None,
                 timing: str = "auto") -> "SimResult":
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
        comm_model: simulate (and check) under this model.
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
            comm_model=_comm_model(comm_model), blocking=blocking,
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
    def peak_memory(self) -> int:
        """Peak activation memory over the ranks."""
        return self._sim.peak_memory

    @property
    def peak_memory_per_rank(self) -> List[int]:
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
        return self._sim.comm_model

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
        return ("<pps.SimResult makespan=%g bubble=%.4f peak_memory=%d>"
                % (self.makespan, self.bubble, self.peak_memory))


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
                 memory_limit: Optional[int] = None):
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
        if comm_model is not None:
            self.set_comm_model(comm_model)
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

    def set_comm_model(self, comm_model: str) -> "ScheduleBuilder":
        model = _comm_model(comm_model)
        if model is None:
            raise TypeError("comm_model must be 'rendezvous', 'eager' or "
                            "'batched'")
        self._b.set_comm_model(model)
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

    def lint(self, comm_model: Optional[str] = None) -> Findings:
        """Lints the schedule so far (like pps.lint on to_pps()); findings
        are located in the text form, whose file is "<name>"."""
        return Findings._from_report(
            self._b.lint("<%s>" % self._name, _comm_model(comm_model)))

    def build(self) -> Schedule:
        """Compiles and lowers the schedule (like pps.compile on to_pps()).
        Raises CompileError if it cannot be lowered."""
        return Schedule(self._b.build("<%s>" % self._name))

    def __repr__(self) -> str:
        return "<pps.ScheduleBuilder %r: %d actions>" % (self._name,
                                                         self.num_actions)
