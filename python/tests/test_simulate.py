"""Schedule.simulate against `ppsc sim --format=json` on every stdlib
schedule, the overrides against ppsc's flags, and the timeline."""

import json

import pytest

import pps
from conftest import STDLIB_PIPELINES, run_ppsc, stdlib_names, stdlib_pipeline


def test_every_stdlib_schedule_has_a_pipeline():
    # A schedule added to stdlib/ must be added to the comparison too.
    assert stdlib_names() == sorted(STDLIB_PIPELINES)


def ppsc_figures(path, *flags):
    out = run_ppsc("sim", "--format=json", *flags, str(path))
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("name", stdlib_names())
def test_makespan_equals_ppsc_sim(name, tmp_pps):
    path = tmp_pps(stdlib_pipeline(name), name + ".pps")
    want_text = ppsc_figures(path)
    want = json.loads(want_text)
    schedule = pps.compile(str(path))
    got = schedule.simulate()
    assert got.makespan == want["makespan"]
    assert got.ideal == want["ideal"]
    assert got.span == want["span"]
    assert got.bubble == want["bubble_over_makespan"]
    assert got.bubble_over_ideal == want["bubble_over_ideal"]
    assert got.peak_memory == want["peak_memory"]
    assert got.messages == want["messages"]
    assert got.busy == [r["busy"] for r in want["per_rank"]]
    assert got.peak_memory_per_rank == [r["peak_memory"] for r in want["per_rank"]]
    # The memory analysis without simulating (what the runtimes check).
    assert schedule.peak_memory_per_rank == got.peak_memory_per_rank
    assert [tuple(r) for r in got.per_rank] == [
        tuple(r.get(k) for k in pps.RankStats._fields)
        for r in want["per_rank"]]
    assert [tuple(c) for c in got.channels] == [
        (c["src"], c["dst"], c["messages"], c["bytes"]) for c in want["channels"]]
    # The whole figures document is ppsc's, byte for byte.
    assert got.to_json() == want_text
    assert got.makespan > 0 and 0 <= got.bubble < 1


def test_timeline_is_consistent():
    s = pps.compile(stdlib_pipeline("zb_v"))
    r = s.simulate()
    for rank in range(s.ranks):
        tl = r.timeline(rank)
        assert [t.action for t in tl] == s.actions(rank)
        assert [t.index for t in tl] == list(range(len(tl)))
        for t in tl:
            assert t.rank == rank
            assert t.start <= t.transfer_start <= t.end + 1e-12
            assert t.duration >= 0
        assert max(t.end for t in tl) == r.per_rank[rank].end
        # Computes run one at a time, in program order.
        comp = [t for t in tl if t.action.is_compute]
        assert all(a.end <= b.start + 1e-9 for a, b in zip(comp, comp[1:]))
    assert max(t.end for t in r.timeline()) == r.makespan
    cp = r.critical_path
    assert cp[0].start == 0 and cp[-1].end == r.makespan
    # Each link ends no later than the next one (a receive starts when it
    # is posted, so its start may come before its predecessor's end).
    assert all(a.end <= b.end + 1e-9 for a, b in zip(cp, cp[1:]))


def test_cost_overrides_equal_a_cost_block(tmp_pps):
    base = "pipeline c { ranks 4; stages 8; microbatches 8; %s schedule interleaved_1f1b(); }"
    written = tmp_pps(base % "cost { F = 1.5; I = 2; W = 1; F[stage 3] = 4; }")
    want = json.loads(ppsc_figures(written))
    s = pps.compile(base % "")
    got = s.simulate(costs={"F": 1.5, "I": 2, "W": 1, 3: {"F": 4}})
    assert (got.makespan, got.busy) == (want["makespan"],
                                        [r["busy"] for r in want["per_rank"]])
    # B = I + W when only I and W are given, as the cost block does.
    assert got.makespan != s.simulate().makespan
    per_stage = [{"F": 1.5, "I": 2, "W": 1, "B": 3}] * 8
    per_stage[3] = {"F": 4, "I": 2, "W": 1, "B": 3}
    assert s.simulate(costs=per_stage).makespan == want["makespan"]


def test_costs_file_equals_ppsc_sim_costs(tmp_pps):
    # costs="FILE" is `ppsc sim --costs=FILE`: the file's costs replace the
    # schedule's before any pass (here a profile as an executor writes it).
    costs = tmp_pps("pipeline measured { ranks 4; stages 4 placement loop; "
                    "microbatches 8; cost { F = 1.25; I = 1.5; W = 0.5; "
                    "F[stage 3] = 2; } comm { latency 0.25; } memory limit 4; "
                    "schedule synth(); }", "profile.pps")
    path = tmp_pps("pipeline z { ranks 4; microbatches 8; "
                   "comm { model eager; } schedule zb_h1(); }", "z.pps")
    want = json.loads(ppsc_figures(path, "--costs=" + str(costs)))
    got = pps.compile(str(path)).simulate(costs=str(costs))
    assert (got.makespan, got.busy) == (want["makespan"],
                                        [r["busy"] for r in want["per_rank"]])
    assert got.makespan != pps.compile(str(path)).simulate().makespan
    # A costs file for other stages: located in the file.
    with pytest.raises(pps.CompileError) as info:
        pps.compile("pipeline i { ranks 4; stages 8; microbatches 8; "
                    "schedule interleaved_1f1b(); }").simulate(costs=costs)
    d = info.value.diagnostics[0]
    assert d.kind == "costs-mismatch" and d.file.endswith("profile.pps")
    assert (d.line, d.column) == (1, 10)


@pytest.mark.parametrize("flags,kwargs", [
    (["--latency=0.5"], {"latency": 0.5}),
    (["--comm-model=eager"], {"comm_model": "eager"}),
    (["--comm-model=batched"], {"comm_model": "batched"}),
    (["--blocking-comm"], {"blocking": True}),
    (["--timing=dataflow"], {"timing": "dataflow"}),
])
def test_options_equal_ppsc_flags(flags, kwargs, tmp_pps):
    path = tmp_pps(stdlib_pipeline("zb_h1"), "zb_h1.pps")
    want = ppsc_figures(path, *flags)
    assert pps.compile(str(path)).simulate(**kwargs).to_json() == want


def test_latency_equals_the_same_latency_in_the_file(tmp_pps):
    # The option reaches insert-comms, which orders messages by the
    # simulated time of each pair (ZB-H1 here took 38 instead of 37.6).
    base = ("pipeline z { ranks 4; microbatches 8; "
            "cost { F = 1; I = 1.5; W = 0.7; } %s schedule zb_h1(); }")
    written = pps.compile(base % "comm { latency 0.5; }").simulate()
    assert written.makespan == pytest.approx(37.6)
    assert pps.compile(base % "").simulate(latency=0.5).makespan == \
        written.makespan


def test_trace_formats_equal_ppsc(tmp_pps):
    path = str(tmp_pps(stdlib_pipeline("one_f_one_b"), "p.pps"))
    r = pps.compile(path).simulate()
    for fmt, method in (("chrome", r.to_chrome_trace), ("csv", r.to_csv),
                        ("svg", r.to_svg), ("summary", r.summary)):
        assert method() == run_ppsc("sim", "--format=" + fmt, path).stdout, fmt
    assert r.gantt(width=60) == run_ppsc("sim", "--format=gantt", "--width=60",
                                         "--timeline-color=never", path).stdout
    trace = json.loads(r.to_chrome_trace())
    assert {e["pid"] for e in trace["traceEvents"]} == {0, 1, 2, 3}


def test_simulating_a_deadlock_raises(tmp_pps):
    from test_lint import DEADLOCK
    s = pps.compile(DEADLOCK)
    with pytest.raises(pps.CompileError) as info:
        s.simulate()
    assert info.value.diagnostics[0].kind == "deadlock"
    assert s.simulate(comm_model="eager").makespan > 0
