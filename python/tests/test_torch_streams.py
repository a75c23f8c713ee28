"""pps.torch under the stream rule, on gloo (where pps.torch emulates it):
4 processes train the harness's transformer for 3 steps with and without
the rule, and the weights and losses must be identical, bit for bit (the
rule changes when messages move, never what is computed or in which order
gradients are summed). The schedules include the head-of-line case of
PyTorch #188833 (interleaved 1F1B with the comm order of PyTorch's
lowering, where early receives hold back the sends behind them on the
rank's stream): it completes, and the queues did hold comms back. A
schedule that only deadlocks on a stream runs without one and is stopped
by the watchdog with one, naming the receive that holds the send back.
Eagerness goes by the message sizes the schedules declare, as the proof
and the C++ executor decide it."""

import json
import os

import pytest

torch = pytest.importorskip("torch")
mp = pytest.importorskip("torch.multiprocessing")
dist = pytest.importorskip("torch.distributed")
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("torch.distributed with gloo is not available",
                allow_module_level=True)

import pps  # noqa: E402
import pps.torch  # noqa: E402
import pps_torch_harness as H  # noqa: E402

STEPS = 3
# Interleaved 1F1B on 4 ranks x 2 chunks; messages of the harness's size
# (2 x 8 x 16 float64 = 2 KiB) declared, so the proof and the run agree on
# which sends are under the eager threshold.
HOL = ("pipeline %s { ranks 4; stages 2 * P; microbatches 8; "
       "cost { F = 1; B = 2; } comm { latency 0.1; activation 2 KiB; } "
       "schedule interleaved_1f1b(); }")
ZB = ("pipeline %s { ranks 4; stages 2 * P placement v; microbatches 8; "
      "comm { activation 2 KiB; } schedule zb_v(); }")
# name: (source, PipelineRuntime comm options, the run without the rule).
JOBS = {
    "hol_plain": (HOL, {"comm_placement": "pytorch"}, None),
    "hol_nccl": (HOL, {"comm_placement": "pytorch", "comm_model": "nccl"},
                 "hol_plain"),
    "hol_rank_rendezvous": (HOL, {"comm_placement": "pytorch",
                                  "comm_model": "nccl",
                                  "eager_threshold": "none"}, "hol_plain"),
    "hol_peer": (HOL, {"comm_placement": "pytorch", "stream": "peer"},
                 "hol_plain"),
    "hol_eager_rank": (HOL, {"comm_placement": "pytorch",
                             "comm_model": "eager", "stream": "rank"},
                       "hol_plain"),
    "zb_plain": (ZB, {}, None),
    "zb_nccl": (ZB, {"comm_model": "nccl"}, "zb_plain"),
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("pps_torch_streams")
    jobs = []
    for name, (source, opts, _) in JOBS.items():
        job = {"name": name, "source": source % name, "steps": STEPS}
        job.update(opts)
        jobs.append(job)
    (out / "jobs.json").write_text(json.dumps(jobs))
    try:
        mp.spawn(H.train_worker, args=(4, H.free_port(), str(out / "jobs.json"),
                                       str(out)), nprocs=4)
    except Exception:
        errors = "".join((out / f).read_text() for f in sorted(os.listdir(out))
                         if f.startswith("error."))
        pytest.fail("the workers failed:\n" + errors)
    return out


def result(trained, name, rank):
    return torch.load(str(trained / ("%s.%d.pt" % (name, rank))))


@pytest.mark.parametrize("name", sorted(n for n in JOBS if JOBS[n][2]))
def test_training_is_identical_with_the_stream_rule(trained, name):
    plain = JOBS[name][2]
    for rank in range(4):
        got, want = result(trained, name, rank), result(trained, plain, rank)
        assert got["losses"] == want["losses"]
        assert set(got["weights"]) == set(want["weights"])
        for stage, sd in got["weights"].items():
            for key, value in sd.items():
                assert torch.equal(value, want["weights"][stage][key]), (
                    name, stage, key)
        assert got["peak"] == want["peak"] and got["live"] == 0


def test_the_runs_report_their_rule(trained):
    expect = {"hol_plain": ("rendezvous", ("none", None)),
              "hol_nccl": ("nccl", ("rank", 65536)),
              "hol_rank_rendezvous": ("rendezvous", ("rank", None)),
              "hol_peer": ("rendezvous", ("peer", None)),
              "hol_eager_rank": ("eager", ("rank", None)),
              "zb_nccl": ("nccl", ("rank", 65536))}
    for name, (model, rule) in expect.items():
        res = result(trained, name, 0)
        assert (res["comm_model"], res["comm_stream"]) == (model, rule)


def test_the_head_of_line_case_completes_and_was_held(trained):
    # The rule was in force: comms queued behind unfinished ones (the
    # early receives of PyTorch's order), on every rank-stream run.
    for name in ("hol_nccl", "hol_rank_rendezvous", "hol_eager_rank"):
        held = [result(trained, name, r)["stream_held"] for r in range(4)]
        assert sum(ops for ops, _ in held) > 0, name
        assert all(t >= 0 for _, t in held)
    # Without a rule nothing is queued.
    assert all(result(trained, "hol_plain", r)["stream_held"] == (0, 0.0)
               for r in range(4))
    # The run without the rule is the unpipelined reference's.
    s = pps.compile(HOL % "hol_plain", comm_placement="pytorch")
    ref_weights, ref_losses = H.reference(s.stages, s.directions,
                                          s.microbatches, STEPS)
    for rank in range(4):
        res = result(trained, "hol_plain", rank)
        for stage, sd in res["weights"].items():
            for key, value in sd.items():
                assert torch.allclose(value, ref_weights[stage][key],
                                      rtol=1e-9, atol=1e-12)
        for step, got in enumerate(res["losses"]):
            for mb, loss in got.items():
                assert loss == pytest.approx(ref_losses[step][mb], rel=1e-9)


# Rank 0 posts the receive of B0 before it sends F1: the receive waits
# aside without a stream rule; on the rank's one stream it holds back the
# send of F1, which rank 1 needs before it can send B0.
HOLD = """pipeline hold {
  ranks 2; stages 2; microbatches 2;
  comm { activation 2 KiB; }
  rank 0: F0 send F0 -> 1 recv B0 <- 1 F1 send F1 -> 1 B0 recv B1 <- 1 B1;
  rank 1: recv F0 <- 0 F0 recv F1 <- 0 F1 B0 send B0 -> 0 B1 send B1 -> 0;
}
"""


def test_a_stream_deadlock_is_refused_before_anything_runs():
    s = pps.compile(HOLD)
    with pytest.raises(pps.torch.PipelineError) as info:
        pps.torch.PipelineRuntime(s, 0, {0: torch.nn.Identity()}, None,
                                  comm_model="nccl")
    assert str(info.value).startswith(
        "the schedule is not proved free of deadlock under the nccl model "
        "(what `ppsc lint` checks); verify=False runs it anyway:\n")
    assert "[deadlock]" in str(info.value)


@pytest.mark.parametrize("kwargs,error,words", [
    ({"comm_model": "ncl"}, ValueError,
     "comm_model must be rendezvous, eager, batched or nccl, got 'ncl'"),
    ({"stream": "device"}, ValueError,
     "stream must be none, peer or rank, got 'device'"),
    ({"eager_threshold": "big"}, ValueError,
     "eager_threshold must be a number of bytes (with an optional K, M or G "
     "suffix) or 'none', got 'big'"),
    ({"eager_threshold": 2.5}, TypeError, "eager_threshold must be an int"),
    ({"comm_model": "batched", "stream": "peer"}, ValueError,
     "the comm options say: a batched group"),
])
def test_bad_options_are_refused(kwargs, error, words):
    s = pps.compile(HOL % "p")
    with pytest.raises(error) as info:
        pps.torch.PipelineRuntime(s, 0, {0: torch.nn.Identity(),
                                         4: torch.nn.Identity()}, None,
                                  **kwargs)
    assert words in str(info.value)


def test_the_watchdog_names_the_receive_holding_a_send_back(capfd):
    # Without a rule it runs to the end (its receives wait aside) ...
    mp.spawn(H.stall_worker, args=(2, H.free_port(), HOLD, 30.0), nprocs=2)
    assert capfd.readouterr().err.count("step returned") == 2
    # ... on one stream per rank with sends that must rendezvous it stops,
    # and the report says which receive holds rank 0's send back.
    with pytest.raises(mp.ProcessExitedException) as info:
        mp.spawn(H.stall_worker,
                 args=(2, H.free_port(), HOLD, 2.0,
                       {"stream": "rank", "eager_threshold": "none"}),
                 nprocs=2)
    assert info.value.exit_code == 3
    err = capfd.readouterr().err
    assert "step returned" not in err
    # Rank 0 issued `send F1@0 -> 1` and went on, as on NCCL; the send
    # waits on its stream behind the receive.
    assert ("rank 0 blocks at `B0@0` waiting for rank 1 to post "
            "`send B0@1 -> 0` (for `recv B0@0 <- 1`, action 2); on its comm "
            "stream `send F1@0 -> 1` waits behind `recv B0@0 <- 1`") in err, err
    assert ("rank 1 blocks at `F1@1` waiting for rank 0 to post "
            "`send F1@0 -> 1` (for `recv F1@1 <- 0`, action 2)") in err, err
