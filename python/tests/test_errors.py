"""Errors: compile errors as exceptions carrying the diagnostics and
printing them as ppsc does; bad arguments as TypeError / ValueError; no
input crashes the interpreter; the GIL is released during compiler work."""

import pickle
import random
import threading
import time

import pytest

import pps
from conftest import STDLIB, run_ppsc

GOOD = """\
pipeline p {
  ranks 4; stages 2 * P; microbatches 8;
  cost { F = 1; I = 1; W = 1; }
  schedule interleaved_1f1b();
}
"""


@pytest.mark.parametrize("text,kind,line,column", [
    ("pipeline p {\n  ranks 2 stages 2;\n}\n", "syntax-error", 2, 10),
    ("pipeline p { ranks 2; stages 2; microbatches 2;\n  schedule nope(); }\n",
     "unknown-name", 2, 12),
    ("import no.such.module;\npipeline p { ranks 1; stages 1; microbatches 1; "
     "schedule gpipe(); }\n", "import-not-found", 1, 8),
    ("pipeline p { ranks 2; stages 2; microbatches 2;\n  rank 0: F0 F1 B0 B1;\n"
     "  rank 1: F0 B0 F1 B1 F7;\n}\n", "out-of-range", 3, 24),
    ("pipeline p { ranks 70000; stages 2; microbatches 2; schedule gpipe(); }\n",
     "out-of-range", 1, 20),
])
def test_errors_are_exceptions_printed_as_ppsc_does(text, kind, line, column,
                                                    tmp_pps, monkeypatch):
    # The same stdlib for both (an unknown schedule's note says where the
    # stdlib was looked for, and why there).
    monkeypatch.setenv("PPS_STDLIB_PATH", STDLIB)
    path = str(tmp_pps(text))
    ppsc = run_ppsc("emit", "--target=pps", path)
    assert ppsc.returncode == 1
    with pytest.raises(pps.CompileError) as info:
        pps.compile(path)
    e = info.value
    assert isinstance(e, ValueError)
    assert str(e) == e.text == ppsc.stderr
    d = e.diagnostics[0]
    assert (d.kind, d.severity, d.file, d.line, d.column) == (
        kind, "error", path, line, column)
    assert str(d) == d.text and d.text in str(e)
    assert e.diagnostics.errors >= 1
    # The same text for a text source named like the file.
    with pytest.raises(pps.CompileError) as info:
        pps.compile(text if "\n" in text else text + "\n", name=path)
    assert str(info.value) == ppsc.stderr


def test_compile_error_pickles():
    with pytest.raises(pps.CompileError) as info:
        pps.compile("pipeline p { ranks 2 }\n")
    e = pickle.loads(pickle.dumps(info.value))
    assert type(e) is pps.CompileError
    assert str(e) == str(info.value)
    assert e.diagnostics == info.value.diagnostics
    assert e.diagnostics.errors == info.value.diagnostics.errors


def test_step_budget():
    text = ("fn f(n) { let s = 0; for i in 0..n { s = s + i; } return s; }\n"
            "pipeline p { ranks 1; stages 1; microbatches f(100000) - f(100000) + 1;"
            " schedule gpipe(); }\n")
    with pytest.raises(pps.CompileError) as info:
        pps.compile(text, step_budget=1000)
    assert info.value.diagnostics[0].kind == "budget-exhausted"


@pytest.mark.parametrize("call,error,match", [
    (lambda: pps.compile("/no/such/file.pps"), FileNotFoundError, "no such file"),
    (lambda: pps.compile(42), TypeError, "expected a path"),
    (lambda: pps.compile(GOOD, ranks=0), ValueError, "ranks must be >= 1"),
    (lambda: pps.compile(GOOD, ranks="4"), TypeError, "ranks must be an int"),
    (lambda: pps.compile(GOOD, ranks=True), TypeError, "ranks must be an int"),
    (lambda: pps.compile(GOOD, ranks=2 ** 70), ValueError, "out of range"),
    (lambda: pps.compile(GOOD, defines={"x": -2 ** 70}), ValueError, "out of range"),
    (lambda: pps.compile(GOOD, defines=[("x", 1)]), TypeError, "defines"),
    (lambda: pps.compile(GOOD, defines={"x": 1.5}), TypeError, "defines"),
    (lambda: pps.compile(GOOD, comm_model="smoke"), ValueError, "comm_model"),
    (lambda: pps.compile(GOOD, comm_model=1), TypeError, "comm_model"),
    (lambda: pps.compile(GOOD, name="a\nb"), ValueError, "control characters"),
    (lambda: pps.compile(GOOD, import_paths="dir"), TypeError, "import_paths"),
    (lambda: pps.compile(GOOD, step_budget=0), ValueError, "step_budget"),
    (lambda: pps.lint(GOOD, microbatches=-1), ValueError, "microbatches"),
    (lambda: pps.Schedule(object()), TypeError, "pps.compile"),
])
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_bad_schedule_method_arguments():
    s = pps.compile(GOOD)
    for call, error in [
            (lambda: s.actions(4), ValueError),
            (lambda: s.actions(-1), ValueError),
            (lambda: s.actions("0"), TypeError),
            (lambda: s.stages_of(9), ValueError),
            (lambda: s.costs(8), ValueError),
            (lambda: s.lint(comm_model="x"), ValueError),
            (lambda: s.simulate(costs={"F": "1"}), TypeError),
            (lambda: s.simulate(costs={"F": -1}), ValueError),
            (lambda: s.simulate(costs={"X": 1}), ValueError),
            (lambda: s.simulate(costs={9: {"F": 1}}), ValueError),
            (lambda: s.simulate(costs={0: {"overlap": -1}}), ValueError),
            (lambda: s.simulate(costs=3), TypeError),
            (lambda: s.simulate(latency=float("nan")), ValueError),
            (lambda: s.simulate(blocking="yes"), TypeError),
            (lambda: s.simulate(timing="later"), ValueError),
            (lambda: s.simulate().gantt(width=3), ValueError),
            (lambda: s.simulate().timeline(4), ValueError)]:
        with pytest.raises(error):
            call()


def test_mangled_sources_never_crash():
    # Random edits of a valid schedule: each compiles, or raises CompileError.
    rng = random.Random(1234)
    alphabet = "{}();:,.@<>-=+*/%0123456789 \nFBIWrankstage\x00\x07\xff"
    outcomes = {"ok": 0, "error": 0}
    for _ in range(300):
        text = list(GOOD)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(text))
            op = rng.random()
            if op < 0.4:
                del text[i]
            elif op < 0.8:
                text.insert(i, rng.choice(alphabet))
            else:
                text[i] = rng.choice(alphabet)
        src = "".join(text) + "\n"
        try:
            s = pps.compile(src)
            s.lint()
            outcomes["ok"] += 1
        except pps.CompileError as e:
            assert e.diagnostics and str(e)
            outcomes["error"] += 1
        pps.lint(src)
    assert outcomes["error"] > 0


def test_gil_is_released_while_compiling():
    # A big schedule compiles on a thread while this thread keeps running.
    text = ("pipeline big { ranks 8; stages 8; microbatches 20000; "
            "schedule one_f_one_b(); }")
    done = threading.Event()
    result = {}

    def work():
        # done is set whatever happens, so a failure here fails the test
        # (result is then incomplete) instead of leaving the loop below
        # spinning until ctest's timeout.
        try:
            s = pps.compile(text)
            result["lint"] = s.lint()
            result["makespan"] = s.simulate().makespan
        finally:
            done.set()

    t = threading.Thread(target=work)
    start = time.perf_counter()
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    elapsed = time.perf_counter() - start
    assert result.get("lint") == [] and result.get("makespan") == (20000 + 7) * 3
    # Holding the GIL for the whole call would leave ~0 ticks.
    assert ticks >= min(20, elapsed / 0.01), (ticks, elapsed)


def test_threads_compile_at_once():
    from conftest import stdlib_names, stdlib_pipeline
    names = stdlib_names()
    want = {n: pps.compile(stdlib_pipeline(n)).simulate().makespan for n in names}
    errors = []

    def work(k):
        try:
            for i in range(len(names)):
                n = names[(i + k) % len(names)]
                s = pps.compile(stdlib_pipeline(n))
                assert s.simulate().makespan == want[n] and not s.lint()
                with pytest.raises(pps.CompileError):
                    pps.compile("pipeline p { ranks 2 stages 2; }\n")
        except BaseException as e:  # reported below, on the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_stdlib_search(monkeypatch, tmp_path):
    import os
    monkeypatch.delenv("PPS_STDLIB_PATH", raising=False)
    monkeypatch.delenv("PPS_STDLIB", raising=False)
    # The package's own: here the build tree's share/pps/stdlib.
    assert os.path.samefile(pps.stdlib_dir(), STDLIB)
    monkeypatch.setenv("PPS_STDLIB_PATH", str(tmp_path))
    assert pps.stdlib_dir() == str(tmp_path)
    with pytest.raises(pps.CompileError) as info:
        pps.compile("pipeline p { ranks 2; stages 2; microbatches 2; "
                    "schedule gpipe(); }")
    assert "PPS_STDLIB_PATH" in str(info.value)
    (tmp_path / "gpipe.pps").write_text(
        "schedule gpipe() { for r in 0..P { rank r { for i in 0..M { F(i); } "
        "for i in 0..M { B(i); } } } }\n")
    s = pps.compile("pipeline p { ranks 2; stages 2; microbatches 2; "
                    "schedule gpipe(); }")
    assert s.actions(0)[0].file == str(tmp_path / "gpipe.pps")
