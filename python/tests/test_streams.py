"""The stream rule from Python: comm_model='nccl', stream=, eager_threshold=
and comm_placement= mean what ppsc's --comm-model, --stream,
--eager-threshold and --comm-placement mean (compared with ppsc itself),
bad values get ppsc's words, the simulator's stream figures, and
Schedule.reorder_comms as `ppsc lint --fix` (PyTorch #188833's
head-of-line bubble, tests/lit/streams/hol_188833.test)."""

import json
import math
import os

import pytest

import pps
from conftest import SOURCE_DIR, run_ppsc

STREAMS = os.path.join(SOURCE_DIR, "tests", "lit", "streams", "Inputs")
INTERLEAVED = os.path.join(STREAMS, "interleaved_8x2.pps")
X2 = os.path.join(STREAMS, "x2.pps")


@pytest.fixture(scope="module")
def pytorch_csv(tmp_path_factory):
    """interleaved_8x2 with the comm order PyTorch's lowering gives it
    (--comm-placement=pytorch), as the lit test makes it."""
    d = tmp_path_factory.mktemp("streams")
    compute = d / "compute.csv"
    run_ppsc("emit", "--target=torch", INTERLEAVED, "-o", str(compute))
    out = run_ppsc("emit", "--target=torch", "--with-comms",
                   "--comm-placement=pytorch", "--no-verify", str(compute))
    path = d / "pytorch.csv"
    path.write_text(out.stdout.split("\n", 1)[1])
    return compute, path


def sim_json(*args):
    return json.loads(run_ppsc("sim", "--format=json", *args).stdout)


def test_the_nccl_preset_and_comm_stream():
    s = pps.compile(X2)  # `comm { model nccl; }`
    assert s.comm_model == "nccl"
    assert s.comm_stream == pps.CommStream("rank", 65536)
    assert s.comm_stream.scope == "rank"
    plain = pps.compile(INTERLEAVED)
    assert plain.comm_model == "rendezvous"
    assert plain.comm_stream == ("none", None)
    assert plain.comm_placement is None
    nccl = pps.compile(INTERLEAVED, comm_model="nccl")
    assert (nccl.comm_model, nccl.comm_stream) == ("nccl", ("rank", 65536))
    # Changing a part of the preset makes it its parts.
    peer = pps.compile(INTERLEAVED, comm_model="nccl", stream="peer")
    assert (peer.comm_model, peer.comm_stream) == ("rendezvous",
                                                   ("peer", 65536))
    for value, expect in ((1024, 1024), ("64K", 65536), ("1M", 1 << 20),
                          ("none", None), (0, 0)):
        s = pps.compile(INTERLEAVED, stream="rank", eager_threshold=value)
        assert s.comm_stream == ("rank", expect)
    # The options written out: the printed schedule says them.
    text = pps.compile(INTERLEAVED, stream="peer",
                       eager_threshold="1K").to_pps()
    assert "stream peer;" in text and "eager threshold 1024 B;" in text


@pytest.mark.parametrize("opts", [
    {"comm_model": "nccl"},
    {"comm_model": "eager", "stream": "rank"},
    {"stream": "peer", "eager_threshold": "1K"},
    {"comm_model": "nccl", "eager_threshold": "none"},
    {"comm_model": "nccl", "comm_placement": "consumer"},
    {"comm_model": "batched", "stream": "rank",
     "comm_placement": "producer"},
])
def test_simulate_equals_ppsc_sim_under_the_options(opts):
    flags = ["--%s=%s" % (k.replace("_", "-"), v) for k, v in opts.items()]
    want = sim_json(*flags, INTERLEAVED)
    got = pps.compile(INTERLEAVED).simulate(**opts)
    assert json.loads(got.to_json()) == want
    assert got.makespan == want["makespan"]
    assert got.comm_stream == (want["comm_stream"]["scope"],
                               want["comm_stream"]["eager_threshold_bytes"])
    assert got.makespan_without_streams == want.get("makespan_without_streams")
    assert got.stream_held == [r.get("stream_held") for r in want["per_rank"]]
    assert got.stream_bubble == [r.get("stream_bubble")
                                 for r in want["per_rank"]]
    # Compiled with the options, simulated without: the same figures.
    compiled = pps.compile(INTERLEAVED, **opts).simulate()
    assert compiled.to_json() == got.to_json()


def test_no_stream_rule_no_stream_figures():
    r = pps.compile(INTERLEAVED).simulate()
    assert r.comm_model == "rendezvous"
    assert r.makespan_without_streams is None
    assert r.stream_held == [None] * 8 and r.stream_bubble == [None] * 8
    assert r.held_comms == []
    assert r.per_rank[0].stream_held is None


def test_the_head_of_line_bubble_and_held_comms(pytorch_csv):
    _, path = pytorch_csv
    s = pps.from_torch_csv(str(path))
    assert s.simulate().makespan == 117
    r = s.simulate(comm_model="nccl")
    assert r.comm_model == "nccl"
    assert (r.makespan, r.makespan_without_streams) == (168, 117)
    # What ppsc sim's summary adds up per rank: rank 0's sends held back
    # behind `recv F0@8 <- 7`, 6 units in all.
    mine = [h for h in r.held_comms if h.comm.rank == 0
            and h.held_by is not None
            and h.held_by.action.text == "recv F0@8 <- 7"]
    assert len(mine) == 1 and mine[0].held == pytest.approx(6)
    assert mine[0].comm.action.text == "send F1@0 -> 1"
    for h in r.held_comms:
        assert h.held > 0 and h.comm.action.kind in (
            "SEND_F", "RECV_F", "SEND_B", "RECV_B")
        if h.held_by is not None:
            assert h.held_by.rank == h.comm.rank
            assert h.held_by.index < h.comm.index
    assert sum(h.held for h in r.held_comms if h.comm.rank == 0) == \
        pytest.approx(r.stream_held[0])
    summary = run_ppsc("sim", "--format=summary", "--comm-model=nccl",
                       str(path)).stdout
    assert r.summary() == summary
    # The lint names the receive that holds it back.
    found = s.lint(comm_model="nccl")
    assert found.errors == 0 and found[0].kind == "early-recv"
    assert "holds back `send F1@0 -> 1` by 6" in found[0].message
    assert not s.lint()


def test_reorder_comms_is_lint_fix(pytorch_csv, tmp_path):
    _, path = pytorch_csv
    s = pps.from_torch_csv(str(path))
    fixed = s.reorder_comms(comm_model="nccl")
    assert isinstance(fixed, pps.Reordering)
    assert (fixed.makespan_before, fixed.makespan_after) == (168, 117)
    assert fixed.gain == 51
    # ppsc lint --fix says the same and rewrites the CSV the same way.
    copy = tmp_path / "fix.csv"
    copy.write_text(path.read_text())
    out = run_ppsc("lint", "--fix", "--comm-model=nccl", str(copy))
    assert fixed.message in out.stderr
    assert fixed.message == ("reordered the comms: makespan 168 -> 117 (-51, "
                             "30.4%) under the nccl model")
    new = fixed.schedule
    assert new.comm_model == "nccl"
    assert new.simulate().makespan == 117
    assert new.to_torch_csv(with_comms=True) == copy.read_text()
    assert not new.prove()
    # Fixed again, it is kept.
    again = new.reorder_comms()
    assert again.gain == 0 and again.message.startswith("kept the comm order")


def test_comm_placement(pytorch_csv):
    compute, path = pytorch_csv
    # pps's own placement under nccl is optimize; pytorch's is PyTorch's.
    assert pps.from_torch_csv(str(compute),
                              comm_model="nccl").simulate().makespan == 117
    torch_order = pps.from_torch_csv(str(compute), comm_model="nccl",
                                     comm_placement="pytorch")
    assert torch_order.comm_placement == "pytorch"
    assert torch_order.simulate().makespan == 168
    def comms(s):
        return [[a.text for a in s.actions(r) if a.is_comm]
                for r in range(s.ranks)]
    assert comms(torch_order) == comms(pps.from_torch_csv(str(path)))
    # lint, prove and simulate keep the placement the schedule was lowered
    # with unless told another.
    for name in ("pytorch", "optimize"):
        found = torch_order.lint() if name == "pytorch" else \
            torch_order.lint(comm_placement=name)
        want = run_ppsc("lint", "--comm-model=nccl",
                        "--comm-placement=" + name, str(compute)).stderr
        assert found and found.text in want
        assert found[0].kind == "early-recv"
    assert len(torch_order.lint(comm_placement="optimize")) < \
        len(torch_order.lint())
    assert torch_order.simulate(comm_placement="consumer").makespan == \
        pps.from_torch_csv(str(compute), comm_model="nccl",
                           comm_placement="consumer").simulate().makespan
    for name in ("consumer", "producer", "optimize"):
        want = sim_json("--comm-model=nccl", "--comm-placement=" + name,
                        INTERLEAVED)
        got = pps.compile(INTERLEAVED, comm_model="nccl",
                          comm_placement=name).simulate()
        assert got.makespan == want["makespan"], name


def test_lint_and_prove_take_the_options():
    # Each rank sends before it receives: fine while 1 KiB sends are eager,
    # a deadlock once they must rendezvous on the stream.
    assert not pps.lint(X2)
    found = pps.lint(X2, eager_threshold="none")
    assert found.errors and found[0].kind == "deadlock"
    assert "under the rendezvous model with one stream per rank" in \
        found[0].message
    want = run_ppsc("lint", "--eager-threshold=none", X2)
    assert found.text == want.stderr
    s = pps.compile(X2)
    assert not s.prove()
    assert s.prove(eager_threshold="none").errors
    assert not s.prove(comm_model="eager", stream="none")


def test_builder_takes_the_options():
    b = pps.ScheduleBuilder(2, 2, 1, comm_model="nccl")
    b.add(0, "F", 0).add(0, "SEND_F", 0).add(0, "RECV_B", 0).add(0, "B", 0)
    b.add(1, "RECV_F", 0).add(1, "F", 0).add(1, "B", 0).add(1, "SEND_B", 0)
    assert "stream rank; eager threshold 65536 B;" in b.to_pps()
    assert b.build().comm_model == "nccl"
    assert not b.lint()
    b.set_comm_model(None, stream="peer", eager_threshold="none")
    assert b.build().comm_stream == ("peer", None)
    assert not b.lint(comm_model="eager")


@pytest.mark.parametrize("kwargs,error,words", [
    ({"comm_model": "ncl"}, ValueError,
     "comm_model must be rendezvous, eager, batched or nccl, got 'ncl'"),
    ({"stream": "device"}, ValueError,
     "stream must be none, peer or rank, got 'device'"),
    ({"eager_threshold": "64Q"}, ValueError,
     "eager_threshold must be a number of bytes (with an optional K, M or G "
     "suffix) or 'none', got '64Q'"),
    ({"eager_threshold": -1}, ValueError, "got '-1'"),
    ({"eager_threshold": 1 << 41}, ValueError, "eager_threshold must be"),
    ({"eager_threshold": 1.5}, TypeError,
     "eager_threshold must be an int (bytes), a str such as '64K' or 'none', "
     "or None, got float"),
    ({"eager_threshold": True}, TypeError, "eager_threshold must be"),
    ({"stream": 1}, TypeError, "stream must be a str, got int"),
    ({"comm_placement": "first"}, ValueError,
     "comm_placement must be consumer, producer, optimize or pytorch, got "
     "'first'"),
    ({"comm_model": "batched", "stream": "peer"}, ValueError,
     "the comm options say: a batched group (batch_isend_irecv) runs on the "
     "rank's one stream, whatever its peers: use `stream rank` with `model "
     "batched`"),
])
def test_bad_values_get_ppscs_words(kwargs, error, words):
    s = pps.compile(INTERLEAVED)
    calls = [lambda: pps.compile(INTERLEAVED, **kwargs),
             lambda: pps.lint(INTERLEAVED, **kwargs),
             lambda: s.lint(**kwargs), lambda: s.prove(**kwargs),
             lambda: s.simulate(**kwargs)]
    if "comm_placement" not in kwargs:
        calls.append(lambda: s.reorder_comms(**kwargs))
    for call in calls:
        with pytest.raises(error) as info:
            call()
        assert words in str(info.value)
    # ppsc says the same of its options (a usage error).
    flags = {"comm_model": "--comm-model", "stream": "--stream",
             "eager_threshold": "--eager-threshold",
             "comm_placement": "--comm-placement"}
    if error is ValueError and "got '" in words:
        args = ["%s=%s" % (flags[k], v) for k, v in kwargs.items()]
        out = run_ppsc("lint", *args, INTERLEAVED)
        assert out.returncode == 2
        key = next(iter(kwargs))
        assert words.replace(key, flags[key], 1) in out.stderr


def test_reorder_comms_of_a_schedule_without_comms():
    # The comms the lowering placed are the ones reordered.
    s = pps.compile(INTERLEAVED, comm_model="nccl", comm_placement="consumer")
    r = s.reorder_comms()
    assert r.makespan_after <= r.makespan_before
    assert math.isfinite(r.makespan_before)
    assert r.schedule.simulate().makespan == r.makespan_after
