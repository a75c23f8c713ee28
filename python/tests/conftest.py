"""Shared fixtures of the pps module's tests: where the sources and this
build's ppsc are (ctest sets PPSC and PPS_SOURCE_DIR), and a runner for
ppsc, which the tests compare the module against."""

import os
import re
import subprocess

import pytest

SOURCE_DIR = os.environ.get("PPS_SOURCE_DIR") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PPSC = os.environ.get("PPSC") or os.path.join(SOURCE_DIR, "build", "bin", "ppsc")
STDLIB = os.path.join(SOURCE_DIR, "stdlib")
EXAMPLES = os.path.join(SOURCE_DIR, "examples")

# One pipeline per stdlib schedule, with unequal costs and a latency so that
# the figures depend on every part of the cost model.
COSTS = "cost { F = 1; I = 1.5; W = 0.75; B = 2.25; } comm { latency 0.125; }"
STDLIB_PIPELINES = {
    "gpipe": "ranks 4; stages 4; microbatches 8;",
    "one_f_one_b": "ranks 4; stages 4; microbatches 8;",
    "interleaved_1f1b": "ranks 4; stages 2 * P; microbatches 8;",
    "interleaved_1f1b_overlap":
        "ranks 4; stages 2 * P; microbatches 8; cost { overlap = 2.5; }",
    "looped_bfs": "ranks 4; stages 2 * P; microbatches 8;",
    "zb_h1": "ranks 4; stages 4; microbatches 8;",
    "zb_h2": "ranks 4; stages 4; microbatches 8;",
    "zb_auto": "ranks 4; stages 4; microbatches 8;",
    "zb_v": "ranks 4; stages 2 * P placement v; microbatches 8;",
    "v_half": "ranks 4; stages 2 * P placement v; microbatches 8;",
    "v_min": "ranks 4; stages 2 * P placement v; microbatches 8;",
    "dualpipe_v": "ranks 4; stages 2 * P placement v; microbatches 8;",
    "dualpipe": "ranks 4; stages 2 * P placement v; directions 2; microbatches 8;",
}


def stdlib_names():
    # The files that define a schedule of their own name (helper modules
    # such as common.pps and vshape.pps do not).
    names = []
    for f in os.listdir(STDLIB):
        if not f.endswith(".pps"):
            continue
        with open(os.path.join(STDLIB, f), encoding="utf-8") as src:
            if re.search(r"^schedule %s\(" % re.escape(f[:-4]), src.read(), re.M):
                names.append(f[:-4])
    return sorted(names)


def stdlib_pipeline(name):
    return "pipeline %s {\n  %s\n  %s\n  schedule %s();\n}\n" % (
        name, STDLIB_PIPELINES[name], COSTS, name)


def run_ppsc(*args, stdin=None):
    """Runs this build's ppsc; returns the CompletedProcess (text mode)."""
    assert os.path.isfile(PPSC), "ppsc not found at %s (set PPSC)" % PPSC
    return subprocess.run([PPSC, *args], input=stdin, capture_output=True,
                          text=True, env=dict(os.environ, NO_COLOR="1"))


@pytest.fixture
def tmp_pps(tmp_path):
    """Writes a .pps (or any) file into a temporary directory."""
    def write(text, name="s.pps"):
        path = tmp_path / name
        path.write_text(text)
        return path
    return write
