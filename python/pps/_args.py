"""Argument checks and normalisation shared by the API (_schedule.py), the
simulator's options and the builder: TypeError / ValueError with the
reason, before anything reaches the compiler core (pps._pps); where the
standard library is; a source given as a path or as text."""

import math
import numbers
import os
from typing import (Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple,
                    Union)

from . import _pps

PathLike = Union[str, "os.PathLike[str]"]

_COMM_MODELS = ("rendezvous", "eager", "batched", "nccl")


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


def _eager_threshold(value: Any) -> Optional[str]:
    """The threshold as ppsc's --eager-threshold takes it: an int of bytes,
    a str ("64K", "1M", "none"); None: not given."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral,
                                                          str)):
        raise TypeError("eager_threshold must be an int (bytes), a str such "
                        "as '64K' or 'none', or None, got %s"
                        % type(value).__name__)
    return str(int(value)) if isinstance(value, numbers.Integral) else value


def _comm(comm_model: Any = None, stream: Any = None,
          eager_threshold: Any = None,
          comm_placement: Any = None) -> "_pps.CommArgs":
    """The comm options of a call, read by the compiler as ppsc reads
    --comm-model, --stream, --eager-threshold and --comm-placement (a
    ValueError in its words for a bad value). None: not given (the
    schedule's own)."""
    return _pps.comm_args(
        _str("comm_model", comm_model, optional=True),
        _str("stream", stream, optional=True),
        _eager_threshold(eager_threshold),
        _str("comm_placement", comm_placement, optional=True))


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
