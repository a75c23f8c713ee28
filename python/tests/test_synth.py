"""pps.synth against ppsc synth."""

import pytest

import pps
from conftest import run_ppsc


def ppsc_synth_text(*flags):
    out = run_ppsc("synth", *flags)
    assert out.returncode == 0, out.stderr
    # Drop the `//` figures (they include the time taken).
    return "".join(l + "\n" for l in out.stdout.splitlines()
                   if not l.startswith("//"))


@pytest.mark.parametrize("placement,memory", [("loop", 4), ("loop", 2), ("v", 3)])
def test_synth_equals_ppsc(placement, memory):
    s = pps.synth(4, 8, memory, placement, costs={"F": 1, "B": 1.5, "W": 0.5})
    assert s.to_pps() == ppsc_synth_text(
        "--ranks", "4", "--microbatches", "8", "--placement", placement,
        "--cost", "F=1,B=1.5,W=0.5", "--memory-limit", str(memory))
    assert s.synth_algorithm
    r = s.simulate()
    assert r.peak_memory <= memory
    assert not s.lint()


def test_per_stage_costs_and_latency():
    s = pps.synth(2, 4, 2, costs={"F": 1, "I": 1, "W": 1, 1: {"F": 2}},
                  latency=0.25, exact=False)
    assert s.to_pps() == ppsc_synth_text(
        "--ranks", "2", "--microbatches", "4", "--cost", "F=1,I=1,W=1",
        "--stage-cost", "1:F=2", "--comm-latency", "0.25", "--memory-limit",
        "2", "--no-exact")
    assert s.costs(1)["F"] == 2


def test_infeasible():
    with pytest.raises(pps.CompileError) as info:
        pps.synth(2, 4, 1, "v")
    (d,) = info.value.diagnostics
    assert d.kind == "synth-infeasible" and d.file is None
    assert "v placement needs at least 2" in d.message
    assert str(info.value) == "<unknown>: error: %s [synth-infeasible]\n" % d.message


@pytest.mark.parametrize("kwargs,error", [
    (dict(ranks=0, microbatches=4, memory_limit=2), ValueError),
    (dict(ranks=2, microbatches=4, memory_limit=0), ValueError),
    (dict(ranks=2, microbatches=4, memory_limit=2, placement="x"), ValueError),
    (dict(ranks=2, microbatches=4, memory_limit=2, costs={"Q": 1}), ValueError),
    (dict(ranks=2, microbatches=4, memory_limit=2, costs={"F": 0}), ValueError),
    (dict(ranks=2, microbatches=4, memory_limit=2, costs={5: {"F": 1}}), ValueError),
    (dict(ranks=2, microbatches=4, memory_limit=2, latency=-1), ValueError),
    (dict(ranks=2, microbatches=4, memory_limit=2, stages=3, placement="v"), ValueError),
    (dict(ranks=1000, microbatches=100000, memory_limit=2), ValueError),
    (dict(ranks=2.0, microbatches=4, memory_limit=2), TypeError),
])
def test_bad_arguments(kwargs, error):
    with pytest.raises(error):
        pps.synth(**kwargs)


def test_zero_bubble_memory_model():
    # The zero-bubble paper's units (half activations): its spans 193 and
    # 183 at (4, 12, 5, 6, 4) and max_mem 10 and 14, as ppsc synth gives.
    for limit, span in ((10, 193), (14, 183)):
        s = pps.synth(4, 12, limit, costs={"F": 5, "B": 6, "W": 4},
                      memory_model={"F": 2, "I": -1, "W": -1})
        assert s.memory_model == {"F": 2, "I": -1, "W": -1}
        assert s.memory_limit == limit
        assert max(s.peak_memory_per_rank) <= limit
        assert s.to_pps() == ppsc_synth_text(
            "--ranks", "4", "--microbatches", "12", "--cost", "F=5,B=6,W=4",
            "--memory-model", "F=2,I=-1,W=-1", "--memory-limit", str(limit))
    with pytest.raises(ValueError, match="W frees the rest"):
        pps.synth(4, 8, 4, memory_model={"F": 1, "I": -0.5, "W": -0.25})
    with pytest.raises(ValueError, match="unknown memory amount 'Q'"):
        pps.synth(4, 8, 4, memory_model={"Q": 1})
    with pytest.raises(TypeError, match="memory_model"):
        pps.synth(4, 8, 4, memory_model=[1, 2])
