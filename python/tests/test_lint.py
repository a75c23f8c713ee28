"""Schedule.lint / pps.lint: findings as data, with the deadlock cycle and
its locations, and the text exactly as `ppsc lint` prints it."""


import pytest

import pps
from conftest import STDLIB, run_ppsc, stdlib_names, stdlib_pipeline

# Each rank sends both forwards before it receives: under rendezvous, rank 0
# waits in `send F1@0` for rank 1, which waits in `send B0@1` for rank 0.
DEADLOCK = """\
pipeline deadlock {
  ranks 2; stages 2; microbatches 2;
  rank 0: F0 F1 send F0@0 -> 1 send F1@0 -> 1 recv B0@0 <- 1 B0 recv B1@0 <- 1 B1;
  rank 1: recv F0@1 <- 0 F0 B0 send B0@1 -> 0 recv F1@1 <- 0 F1 B1 send B1@1 -> 0;
}
"""

# The compute order alone waits on itself: no comm placement can help.
CYCLE = """\
pipeline cyc {
  ranks 2; stages 2; microbatches 2;
  rank 0: F0 B0 F1 B1;
  rank 1: F1 B1 F0 B0;
}
"""


def test_deadlock_cycle_with_locations(tmp_pps):
    path = str(tmp_pps(DEADLOCK, "deadlock.pps"))
    s = pps.compile(path)  # it lowers: the sends and receives are written
    findings = s.lint()
    assert not findings.ok and findings.errors == 1
    (d,) = findings
    assert isinstance(d, pps.Finding)
    assert (d.kind, d.severity) == ("deadlock", "error")
    assert (d.file, d.line, d.column) == (path, 3, 32)
    assert "ranks 0 and 1 wait on each other" in d.message
    # The cycle: each rank's blocked action and what it waits for.
    steps = [(n.line, n.column, n.message) for n in d.notes]
    assert steps[0][:2] == (3, 32) and "`send F1@0 -> 1`" in steps[0][2]
    assert any(line == 4 and "rank 1 blocks at `send B0@1 -> 0`" in msg
               for line, _, msg in steps)
    assert all(n.file == path for n in d.notes)
    # Exactly what ppsc lint prints.
    ppsc = run_ppsc("lint", path)
    assert ppsc.returncode == 1
    assert findings.text == ppsc.stderr == str(findings)
    assert d.text == ppsc.stderr == str(d)
    # pps.lint on the file says the same.
    assert pps.lint(path).text == ppsc.stderr


def test_deadlock_depends_on_comm_model(tmp_pps):
    path = str(tmp_pps(DEADLOCK, "deadlock.pps"))
    s = pps.compile(path)
    for model in ("rendezvous", "eager", "batched"):
        ppsc = run_ppsc("lint", "--comm-model=" + model, path)
        got = s.lint(comm_model=model)
        assert got.text == ppsc.stderr if got else ppsc.returncode == 0, model
        assert bool(got) == (ppsc.returncode == 1), model
    assert not s.lint(comm_model="eager")  # eager sends never block


def test_compute_order_cycle_is_a_compile_error(tmp_pps):
    path = str(tmp_pps(CYCLE, "cyc.pps"))
    with pytest.raises(pps.CompileError) as info:
        pps.compile(path)
    e = info.value
    (d,) = e.diagnostics
    assert d.kind == "deadlock" and (d.line, d.column) == (3, 14)
    assert [(n.line, n.column) for n in d.notes] == [(3, 14), (4, 20), (4, 11), (3, 17)]
    assert str(e) == run_ppsc("emit", "--target=pps", path).stderr
    # pps.lint reports it without raising, as ppsc lint does.
    findings = pps.lint(path)
    assert findings.text == run_ppsc("lint", path).stderr
    assert [f.kind for f in findings] == ["deadlock"]


def test_text_sources_are_located_by_name():
    findings = pps.lint(DEADLOCK, name="mine.pps")
    assert findings[0].file == "mine.pps"
    assert findings.text.startswith("mine.pps:3:32: error: deadlock")
    assert pps.lint(DEADLOCK)[0].file == "<text>"


@pytest.mark.parametrize("name", stdlib_names())
def test_stdlib_lints_clean(name):
    s = pps.compile(stdlib_pipeline(name))
    assert s.lint() == [] and s.lint().ok


def test_front_end_errors_are_findings_of_pps_lint(tmp_pps, monkeypatch):
    monkeypatch.setenv("PPS_STDLIB_PATH", STDLIB)  # the same for both
    path = str(tmp_pps("pipeline p { ranks 2; stages 2; microbatches 2;\n"
                       "  schedule no_such_schedule(); }\n"))
    findings = pps.lint(path)
    assert [f.kind for f in findings] == ["unknown-name"]
    assert findings.text == run_ppsc("lint", path).stderr


def test_missing_and_misordered_actions(tmp_pps):
    path = str(tmp_pps("""\
pipeline bad {
  ranks 2; stages 2; microbatches 2;
  rank 0: F0 F1 B1;
  rank 1: F0 B0 B1 F1;
}
"""))
    findings = pps.lint(path)
    kinds = {f.kind for f in findings}
    assert "missing-action" in kinds and "dependency-order" in kinds
    assert findings.text == run_ppsc("lint", path).stderr
    with pytest.raises(pps.CompileError) as info:
        pps.compile(path)
    assert info.value.text == run_ppsc("emit", path).stderr


def test_memory_limit_finding():
    s = pps.compile("pipeline m { ranks 2; stages 2; microbatches 4; "
                    "memory limit 2; schedule gpipe(); }")
    findings = s.lint()
    assert [f.kind for f in findings] == ["memory-limit"] * 2
    # Located at the F that goes over, with a note at the pipeline.
    assert all(f.file.endswith("gpipe.pps") for f in findings)
    assert [n.message for f in findings for n in f.notes] == [
        "rank 0 peaks at 4 activations", "rank 1 peaks at 4 activations"]
    assert findings[0].notes[0][1:] == ("<text>", 1, 10)


def test_diagnostic_kinds():
    kinds = {k.name: k for k in pps.diagnostic_kinds()}
    assert kinds["deadlock"].severity == "error"
    assert kinds["early-recv"].severity == "warning"
    assert kinds["deadlock"].description
