"""pps.ScheduleBuilder: orders generated in Python, linted and simulated
without writing text; every mistake in the arguments is a clear exception."""

import pytest

import pps


def one_f_one_b(P, M):
    """1F1B generated the way PyTorch's Schedule1F1B and Megatron-LM do."""
    b = pps.ScheduleBuilder(P, P, M)
    for r in range(P):
        warm = min(P - r - 1, M)
        for i in range(warm):
            b.add(r, "F", i)
        for i in range(M - warm):
            b.add(r, "F", i + warm).add(r, "B", i)
        for i in range(M - warm, M):
            b.add(r, "B", i)
    return b


def test_generated_1f1b_equals_stdlib():
    b = one_f_one_b(4, 8)
    assert b.num_actions == 4 * 16
    assert b.lint() == []
    s = b.build()
    ref = pps.compile("pipeline p { ranks 4; stages 4; microbatches 8; "
                      "schedule one_f_one_b(); }")
    for r in range(4):
        assert [a[:4] for a in s.actions(r)] == [a[:4] for a in ref.actions(r)]
    assert s.simulate().makespan == ref.simulate().makespan == 33
    assert s.name == "builder"


def test_deadlock_found_and_located_in_the_text_form():
    b = pps.ScheduleBuilder(2, 2, 2)
    for mb in (0, 1):
        b.add(0, "F", mb)
    for mb in (0, 1):
        b.add(0, "SEND_F", mb, peer=1)  # both forwards first ...
    b.add(0, "RECV_B", 0).add(0, "B", 0).add(0, "RECV_B", 1).add(0, "B", 1)
    b.add(1, "RECV_F", 0).add(1, "F", 0).add(1, "B", 0).add(1, "SEND_B", 0)
    b.add(1, "RECV_F", 1).add(1, "F", 1).add(1, "B", 1).add(1, "SEND_B", 1)
    findings = b.lint()
    (d,) = findings
    assert d.kind == "deadlock" and d.file == "<builder>"
    lines = b.to_pps().splitlines()
    assert lines[d.line - 1].lstrip().startswith("rank 0:")
    assert lines[d.line - 1][d.column - 1:].startswith("send F1 -> 1")
    assert "rank 1 blocks at `send B0@1 -> 0`" in d.text
    assert not b.lint(comm_model="eager")
    # It still builds (the sends and receives are all there) for a runtime
    # to run with the lint off.
    assert b.build().lint() == findings


def test_missing_action_and_stray_action():
    b = pps.ScheduleBuilder(2, 2, 1)
    b.add(0, "F", 0).add(0, "B", 0).add(1, "F", 0)
    b.add(0, "W", 0, stage=1)  # stage 1 is rank 1's
    kinds = sorted(f.kind for f in b.lint())
    assert "missing-action" in kinds and "stray-action" in kinds
    with pytest.raises(pps.CompileError) as info:
        b.build()
    assert info.value.diagnostics


def test_interleaved_and_explicit_placement():
    # Stages 0 and 3 on rank 1, 1 and 2 on rank 0: neither loop nor v.
    b = pps.ScheduleBuilder(2, 4, 2, placement=[1, 0, 0, 1], name="custom",
                            costs={"F": 2, "B": 3}, latency=0.5,
                            memory_limit=8, comm_model="eager")
    for mb in range(2):
        b.add(1, "F", mb, 0)
    for mb in range(2):
        b.add(0, "F", mb, 1).add(0, "F", mb, 2)
    for mb in range(2):
        b.add(1, "F", mb, 3).add(1, "B", mb, 3)
    for mb in range(2):
        b.add(0, "B", mb, 2).add(0, "B", mb, 1)
    for mb in range(2):
        b.add(1, "B", mb, 0)
    assert b.lint() == []
    s = b.build()
    assert s.placement == "explicit" and s.stage_to_rank == [1, 0, 0, 1]
    assert s.name == "custom" and s.comm_model == "eager"
    assert s.memory_limit == 8 and s.latency == 0.5
    assert s.costs(2) == {"F": 2.0, "I": 1.0, "W": 1.0, "B": 3.0}
    assert s.stages_of(1) == [0, 3]


def test_overlap_idle_and_control():
    b = pps.ScheduleBuilder(1, 1, 2)
    b.add(0, "unshard", stage=0).add(0, "F", 0).add_idle(0, 2.5)
    b.add_overlap(0, ("F", 1), ("B", 0)).add(0, "B", 1).add(0, "reshard", stage=0)
    b.add(0, "REDUCE_GRAD", stage=0)
    s = b.build()
    kinds = [(a.kind, a.overlap_next) for a in s.actions(0)]
    assert kinds == [("UNSHARD", False), ("F", False), ("IDLE", False),
                     ("F", True), ("B", False), ("B", False),
                     ("RESHARD", False), ("REDUCE_GRAD", False)]
    assert s.actions(0)[2].idle_time == 2.5
    assert "overlap(F1, B0)" in b.to_pps()


@pytest.mark.parametrize("call,error,match", [
    (lambda b: b.add(2, "F", 0), ValueError, "rank 2 is out of range 0..1"),
    (lambda b: b.add(-1, "F", 0), ValueError, "rank -1"),
    (lambda b: b.add(0, "X", 0), ValueError, "unknown action kind 'X'"),
    (lambda b: b.add(0, "F", 4), ValueError, "microbatch 4 is out of range"),
    (lambda b: b.add(0, "F"), ValueError, "F needs a microbatch"),
    (lambda b: b.add(0, "F", 0, 9), ValueError, "stage 9 is out of range"),
    (lambda b: b.add(0, "F", 0, peer=1), ValueError, "takes no peer"),
    (lambda b: b.add(0, "UNSHARD", 0), ValueError, "takes no microbatch"),
    (lambda b: b.add(0, "SEND_F", 0, peer=7), ValueError, "rank 7"),
    (lambda b: b.add(0, "IDLE"), ValueError, "add_idle"),
    (lambda b: b.add(0, "F", True), TypeError, "microbatch must be an int"),
    (lambda b: b.add(0, "F", 1.0), TypeError, "microbatch must be an int"),
    (lambda b: b.add(0, 5, 1), TypeError, "kind must be a str"),
    (lambda b: b.add_idle(0, -1), ValueError, "time"),
    (lambda b: b.add_idle(0, float("nan")), ValueError, "time"),
    (lambda b: b.add_overlap(0, ("F", 0), ("SEND_F", 0)), ValueError, "two computes"),
    (lambda b: b.add_overlap(0, ("F",), ("B", 0)), TypeError, "overlapped"),
    (lambda b: b.set_costs({"Q": 1}), ValueError, "unknown cost 'Q'"),
    (lambda b: b.set_costs({"F": -1}), ValueError, "F"),
    (lambda b: b.set_costs({7: {"F": 1}}), ValueError, "stage 7"),
    (lambda b: b.set_comm_model("smoke"), ValueError, "comm_model"),
])
def test_bad_arguments(call, error, match):
    b = pps.ScheduleBuilder(2, 2, 4)
    with pytest.raises(error, match=match):
        call(b)
    assert b.num_actions == 0  # nothing half-added


def test_stage_needed_when_a_rank_holds_several():
    b = pps.ScheduleBuilder(2, 4, 2)
    with pytest.raises(ValueError, match="rank 0 holds stages 0, 2: give F a stage"):
        b.add(0, "F", 0)
    b = pps.ScheduleBuilder(4, 2, 2, placement=[0, 1])
    with pytest.raises(ValueError, match="rank 3 holds no stage"):
        b.add(3, "F", 0)


@pytest.mark.parametrize("args,kwargs,error", [
    ((0, 1, 1), {}, ValueError),
    ((1, 0, 1), {}, ValueError),
    ((1, 1, 0), {}, ValueError),
    ((1 << 17, 1, 1), {}, ValueError),
    ((1, 1, 1 << 30), {}, ValueError),
    ((10 ** 30, 1, 1), {}, ValueError),
    (("2", 2, 2), {}, TypeError),
    ((2, 3, 2), {"placement": "v"}, ValueError),
    ((2, 3, 2), {"placement": "zigzag"}, ValueError),
    ((2, 3, 2), {"placement": [0, 1]}, ValueError),
    ((2, 3, 2), {"placement": [0, 1, 2]}, ValueError),
    ((2, 3, 2), {"placement": 5}, TypeError),
    ((2, 2, 2), {"name": "not an identifier"}, ValueError),
    ((2, 2, 2), {"memory_limit": -1}, ValueError),
    ((2, 2, 2), {"latency": float("inf")}, ValueError),
])
def test_bad_builder_construction(args, kwargs, error):
    with pytest.raises(error):
        pps.ScheduleBuilder(*args, **kwargs)
