"""pps.compile: files and texts, overrides, the Schedule's topology and
actions, and its text forms against ppsc's."""

import json
import os

import pytest

import pps
from conftest import EXAMPLES, run_ppsc

ONE_F_ONE_B = """
pipeline p {
  ranks 4; stages P; microbatches 8;
  schedule one_f_one_b();
}
"""


def test_compile_text():
    s = pps.compile(ONE_F_ONE_B)
    assert (s.name, s.ranks, s.stages, s.microbatches) == ("p", 4, 4, 8)
    assert s.placement == "loop" and s.directions == 1
    assert s.stage_to_rank == [0, 1, 2, 3]
    assert s.comm_model == "rendezvous"
    assert s.memory_limit is None
    assert s.costs(0) == {"F": 1.0, "I": 1.0, "W": 1.0, "B": 2.0}
    assert repr(s).startswith("<pps.Schedule 'p': 4 ranks")


def test_compile_file_matches_ppsc_emit(tmp_pps):
    path = str(tmp_pps(ONE_F_ONE_B))
    s = pps.compile(path)
    assert s.to_pps() == run_ppsc("emit", "--target=pps", path).stdout
    assert s.to_json() == run_ppsc("emit", "--target=json", path).stdout
    # pathlib paths are paths too.
    import pathlib
    assert pps.compile(pathlib.Path(path)).to_pps() == s.to_pps()


def test_actions_are_lowered_named_tuples():
    s = pps.compile(ONE_F_ONE_B)
    ir = json.loads(s.to_json())
    total = 0
    for r in range(s.ranks):
        acts = s.actions(r)
        total += len(acts)
        # The JSON export carries the same actions, plus a reduce_grad per
        # stage after its last backward (as PyTorch's compute+comms CSV).
        exported = [a["kind"].lower() for a in ir["ranks"][r]["actions"]]
        assert exported.count("reduce_grad") == len(s.stages_of(r))
        assert [a.kind.lower() for a in acts] == [
            k for k in exported if k != "reduce_grad"]
        for a in acts:
            kind, mb, stage, peer = a[:4]
            assert isinstance(a, pps.Action)
            assert s.stage_to_rank[stage] == r
            if a.is_send or a.is_recv:
                assert a.is_comm and peer != r and 0 <= peer < s.ranks
                # A send of F(m, s) goes to the rank of s + 1, etc.
                partner = stage + 1 if kind in ("SEND_F", "RECV_B") else stage - 1
                assert s.stage_to_rank[partner] == peer
            else:
                assert peer == -1
            assert str(a) == a.text
        # Every compute of the rank's stage appears once.
        computes = [(a.kind, a.microbatch) for a in acts if a.is_compute]
        assert sorted(computes) == sorted(
            (k, m) for k in ("F", "B") for m in range(8))
    assert total == s.num_actions
    # Locations point into the stdlib source that emitted the action.
    f = s.actions(0)[0]
    assert f.text == "F0@0" and f.file.endswith("one_f_one_b.pps") and f.line > 0


def test_overrides_and_defines():
    s = pps.compile(ONE_F_ONE_B, ranks=2, microbatches=3)
    assert (s.ranks, s.stages, s.microbatches) == (2, 2, 3)
    text = """
    pipeline q {
      ranks 2; stages 2 * P; microbatches 4;
      schedule interleaved_1f1b();
    }"""
    s = pps.compile(text, defines={"ranks": 4, "microbatches": 8})
    assert (s.ranks, s.stages, s.microbatches) == (4, 8, 8)
    assert s.stages_of(1) == [1, 5]
    s = pps.compile(text, stages=4)
    assert s.stages == 4


def test_comm_model_argument(tmp_pps):
    s = pps.compile(ONE_F_ONE_B, comm_model="eager")
    assert s.comm_model == "eager"
    assert s.simulate().comm_model == "eager"


def test_round_trip_through_text_form():
    s = pps.compile(ONE_F_ONE_B)
    t = pps.compile(s.to_pps())
    for r in range(s.ranks):
        assert [a[:6] for a in s.actions(r)] == [a[:6] for a in t.actions(r)]


def test_examples_compile_like_ppsc():
    for f in sorted(os.listdir(EXAMPLES)):
        if not f.endswith(".pps"):
            continue
        path = os.path.join(EXAMPLES, f)
        assert pps.compile(path).to_pps() == run_ppsc(
            "emit", "--target=pps", path).stdout, f


def test_synth_request_in_source_is_filled_in():
    s = pps.compile("""
    pipeline sy {
      ranks 2; stages 2; microbatches 4;
      cost { F = 1; I = 1; W = 1; }
      schedule synth(memory: 2);
    }""")
    assert s.synth_algorithm
    assert s.memory_limit == 2
    assert not s.lint()
    assert s.simulate().peak_memory <= 2


def test_warnings_are_kept():
    s = pps.compile("""
    fn unused_helper(x) { return x; }
    pipeline w { ranks 2; stages 2; microbatches 2; schedule gpipe(); }
    """)
    assert isinstance(s.warnings, pps.Findings)
    assert all(f.severity == "warning" for f in s.warnings)


def test_routes():
    s = pps.compile(ONE_F_ONE_B)
    assert [s.route(m) for m in (0, 7)] == [(0, 3), (0, 3)]
    from conftest import stdlib_pipeline
    d = pps.compile(stdlib_pipeline("dualpipe"))
    assert d.directions == 2
    assert [d.route(m) for m in (0, 3, 4, 7)] == [(0, 3), (0, 3), (4, 7), (4, 7)]
    # The first stage of a microbatch's route receives no input.
    for r in range(d.ranks):
        for a in d.actions(r):
            if a.kind == "RECV_F":
                assert a.stage != d.route(a.microbatch)[0]
    with pytest.raises(ValueError):
        d.route(8)


def test_memory_in_bytes_per_stage():
    # A model per stage in bytes: the dict carries each stage's amounts and
    # the unit, the peaks are bytes, lint checks the limit in bytes.
    src = ("pipeline b { ranks 2; microbatches 4; memory { F[stage 0] = 1 "
           "MiB; F[stage 1] = 3 MiB; I[stage 1] = -1 MiB; limit %s; } "
           "schedule zb_h1(); }")
    s = pps.compile(src % "6 MiB")
    mib = 1 << 20
    assert s.memory_model["unit"] == "bytes"
    assert s.memory_model["stages"] == [
        {"F": mib, "I": 0, "W": -mib},
        {"F": 3 * mib, "I": -mib, "W": -2 * mib}]
    assert s.memory_limit == 6 * mib
    # Rank 0 holds two of stage 0's; rank 1 one of stage 1's, then a second
    # F after the first's I freed a third of it.
    assert s.peak_memory_per_rank == [2 * mib, 5 * mib]
    assert s.simulate().peak_memory_per_rank == [2 * mib, 5 * mib]
    with pytest.raises(pps.CompileError) as e:
        pps.compile(src % "8")
    assert "give the limit a size unit" in str(e.value)
    findings = pps.lint(src % "4 MiB")
    assert [f.kind for f in findings] == ["memory-limit"]
    assert "holds 5 MiB of activations" in findings[0].message


def test_memory_model_and_stage_overlap():
    # The memory block: the model, the peaks in its units (fractional), the
    # live activations apart; the simulator counts the same.
    s = pps.compile("pipeline m { ranks 2; microbatches 4; memory { F = 1; "
                    "I = -0.5; W = -0.5; limit 4; } schedule zb_h1(); }")
    assert s.memory_model == {"F": 1, "I": -0.5, "W": -0.5}
    assert s.memory_limit == 4
    assert s.peak_memory_per_rank == [2, 1.5]
    assert s.peak_activations_per_rank == [2, 2]
    r = s.simulate()
    assert r.peak_memory_per_rank == [2, 1.5]
    assert r.peak_memory == 2
    plain = pps.compile("pipeline p { ranks 2; microbatches 4; "
                        "schedule zb_h1(); }")
    assert plain.memory_model == {"F": 1, "I": 0, "W": -1}
    assert plain.peak_memory_per_rank == [2, 2]
    assert all(isinstance(v, int) for v in plain.peak_memory_per_rank)
    # Per-stage overlap times: keyed by the pair's first compute.
    ov = pps.compile("pipeline o { ranks 1; stages 2; microbatches 2; cost { "
                     "overlap[stage 0] = 1.5; } rank 0: F0@0 F0@1 "
                     "overlap(F1@0, B0@1) F1@1 B0@0 B1@1 B1@0; }")
    assert ov.costs(0)["overlap"] == 1.5
    assert "overlap" not in ov.costs(1)
    assert ov.simulate().makespan == 10.5
    assert ov.simulate(costs={1: {"overlap": 0.5}}).makespan == 10.5
    assert ov.simulate(costs={0: {"overlap": 0.5}}).makespan == 9.5
    # A schedule built from its costs refuses other costs afterwards.
    auto = pps.compile("pipeline z { ranks 4; microbatches 8; cost { F = 5; "
                       "I = 6; W = 4; } schedule zb_auto(); }")
    assert auto.simulate().span == 126
    with pytest.raises(ValueError, match="read its cost model"):
        auto.simulate(latency=0.5)
