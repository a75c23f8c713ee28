"""pps.torch end to end: 4 processes (torch.multiprocessing spawn, gloo on
CPU) train a small transformer split over pipeline stages for 3 steps
under stdlib schedules and comm models; every stage's weights and every
loss must equal an unpipelined single-process run (dualpipe's two
directions sharing weights as the exported groups say). Also: a schedule
the proof rejects is refused, the watchdog stops a deadlocking schedule
with every rank's blocked action in the lint's words, a message with
another shape is refused naming both ranks and the action, a FIFO
mismatch is refused before anything is sent, and the measured trace has
the simulator's layout.

Float tolerance: the model runs in float64. A pipeline computes exactly
the reference's operations on exactly the same numbers; what may differ is
the order in which microbatch gradients are summed into .grad (a
schedule's backward order) and, for split backwards, that a weight
gradient is summed from captured output gradients rather than in the same
autograd call. Each is a rounding of float64 (~1e-16 relative), so after
3 optimizer steps agreement to rtol 1e-9 / atol 1e-12 leaves a margin of
several orders of magnitude and still fails on any real mistake (a lost or
doubled microbatch changes weights by ~1e-3). In practice they agree
bit for bit."""

import json
import os
import re
import signal
import time

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
from conftest import SOURCE_DIR, run_ppsc  # noqa: E402

STEPS = 3
RTOL, ATOL = 1e-9, 1e-12


def pipeline(name, schedule, body):
    return "pipeline %s {\n  %s\n  schedule %s();\n}\n" % (name, body, schedule)


FOUR = "ranks 4; stages 4; microbatches 8;"
EIGHT = "ranks 4; stages 2 * P; microbatches 8;"
EIGHT_V = "ranks 4; stages 2 * P placement v; microbatches 8;"
JOBS = {
    "one_f_one_b": pipeline("one_f_one_b", "one_f_one_b", FOUR),
    "interleaved_1f1b": pipeline("interleaved_1f1b", "interleaved_1f1b", EIGHT),
    "zb_h1": pipeline("zb_h1", "zb_h1", FOUR),
    "zb_v": pipeline("zb_v", "zb_v", EIGHT_V),
    "dualpipe_v": pipeline("dualpipe_v", "dualpipe_v", EIGHT_V),
    # Bidirectional: two routes, two last stages computing losses.
    "dualpipe": pipeline("dualpipe", "dualpipe",
                         "ranks 4; stages 2 * P placement v; directions 2; "
                         "microbatches 8;"),
    # The other comm models.
    "interleaved_1f1b_eager": pipeline("interleaved_1f1b_eager",
                                       "interleaved_1f1b", EIGHT),
    "zb_v_batched": pipeline("zb_v_batched", "zb_v", EIGHT_V),
    # Overlap pairs, and FSDP control actions, through handlers.
    "interleaved_1f1b_overlap": pipeline(
        "interleaved_1f1b_overlap", "interleaved_1f1b_overlap",
        EIGHT + " cost { overlap = 2.5; }"),
    "fsdp_interleaved_1f1b": pipeline("fsdp_interleaved_1f1b",
                                      "interleaved_1f1b",
                                      EIGHT + " fsdp prefetch 1;"),
    # Receives waited on where they stand (the lint's model), and shapes
    # given instead of exchanged.
    "one_f_one_b_options": pipeline("one_f_one_b_options", "one_f_one_b",
                                    FOUR),
    # A memory model where I frees half of F's amount: the measured peak in
    # its units (4, 3.5, 3, 2.5) as well as in live activations.
    "zb_h1_half_memory": pipeline(
        "zb_h1_half_memory", "zb_h1",
        FOUR + " memory { F = 1; I = -0.5; W = -0.5; }"),
    # A model per stage, in bytes (as a profile writes it): each rank
    # counts its own stage's amounts.
    "zb_h1_stage_bytes": pipeline(
        "zb_h1_stage_bytes", "zb_h1",
        FOUR + " memory { F[stage 0] = 4 KiB; F[stage 1] = 2 KiB; "
        "F[stage 2] = 2 KiB; F[stage 3] = 8 KiB; I[stage 3] = -4 KiB; }"),
}
COMM = {"interleaved_1f1b_eager": "eager", "zb_v_batched": "batched"}
OPTIONS = {"one_f_one_b_options": {"blocking_recv": True,
                                   "message_shapes": True}}
HANDLERS = {"interleaved_1f1b_overlap", "fsdp_interleaved_1f1b"}
TRACED = "zb_h1"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Runs every job in one set of 4 processes; returns their output dir."""
    out = tmp_path_factory.mktemp("pps_torch")
    jobs = []
    for name, source in JOBS.items():
        job = {"name": name, "source": source, "steps": STEPS}
        if name in COMM:
            job["comm_model"] = COMM[name]
        if name == TRACED:
            job["trace"] = str(out / "trace.json")
        if name in HANDLERS:
            job["handlers"] = True
        job.update(OPTIONS.get(name, {}))
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


@pytest.mark.parametrize("name", sorted(JOBS))
def test_training_equals_unpipelined_reference(trained, name):
    s = pps.compile(JOBS[name])
    # The reference shares weights as the exported groups say (dualpipe:
    # stage k and stage 4 + k hold one layer).
    ref_weights, ref_losses = H.reference(s.stages, s.directions,
                                          s.microbatches, STEPS,
                                          s.weight_groups)
    first_of = {st: g[0] for g in s.weight_groups for st in g}
    seen_stages = set()
    losses = {}
    for rank in range(4):
        res = torch.load(str(trained / ("%s.%d.pt" % (name, rank))))
        assert set(res["weights"]) == set(s.stages_of(rank))
        for stage, sd in res["weights"].items():
            seen_stages.add(stage)
            init = H.make_stage(s.stages, s.directions,
                                first_of[stage]).state_dict()
            for key, value in sd.items():
                ref = ref_weights[stage][key]
                assert torch.allclose(value, ref, rtol=RTOL, atol=ATOL), (
                    "stage %d %s: max |diff| %g" % (
                        stage, key, (value - ref).abs().max()))
                # The weights moved: equality is not the initial state's.
                if value.dtype.is_floating_point and key.endswith("weight"):
                    assert (value - init[key]).abs().max() > 1e-4, key
        for step, got in enumerate(res["losses"]):
            for mb, loss in got.items():
                assert (step, mb) not in losses
                losses[(step, mb)] = loss
        # The measured peak activations equal the memory analysis, in live
        # activations and in the memory model's units, and every activation
        # was released.
        assert (res["peak"] == res["predicted"]
                == s.peak_activations_per_rank[rank])
        assert res["peak_memory"] == pytest.approx(
            res["predicted_memory"], abs=1e-9)
        assert res["peak_memory"] == pytest.approx(
            s.peak_memory_per_rank[rank], abs=1e-9)
        if name == "zb_h1_half_memory":
            assert res["peak_memory"] == [4, 3.5, 3, 2.5][rank]
        elif name == "zb_h1_stage_bytes":
            # Live activations times the rank's stage bytes (ranks 0-2);
            # rank 3's I frees half of its 8 KiB.
            assert s.memory_model["unit"] == "bytes"
            if rank < 3:
                assert res["peak_memory"] == res["peak"] * [4096, 2048,
                                                            2048][rank]
        else:
            assert res["peak_memory"] == res["peak"]
        assert res["live"] == 0
        assert res["peak_bytes"] > 0
        if name in HANDLERS:
            expect = {}
            for a in s.actions(rank):
                if a.is_control or a.overlap_next:
                    kind = "OVERLAP" if a.overlap_next else a.kind
                    expect[kind] = expect.get(kind, 0) + STEPS
            assert expect and res["counts"] == expect
    assert seen_stages == set(range(s.stages))
    # Each microbatch's loss computed once, on the last stage of its route.
    assert len(losses) == STEPS * s.microbatches
    for (step, mb), loss in losses.items():
        assert loss == pytest.approx(ref_losses[step][mb], rel=RTOL)


def test_trace_has_the_simulator_layout(trained, tmp_path):
    data = json.loads((trained / "trace.json").read_text())
    assert data["otherData"]["source"] == "measured"
    assert data["otherData"]["pipeline"] == TRACED
    events = [e for e in data["traceEvents"] if e["ph"] == "X"]
    s = pps.compile(JOBS[TRACED])
    # Every compute and comm action of every rank, once per step, named in
    # the text form, on the lane the simulator puts it.
    for rank in range(4):
        texts = sorted(a.text for a in s.actions(rank))
        for step in range(STEPS):
            got = sorted(e["name"] for e in events
                         if e["pid"] == rank and e["args"]["step"] == step)
            assert got == texts
    for e in events:
        assert e["tid"] == (1 if e["cat"] in ("send", "recv") else 0)
        assert e["ts"] >= 0 and e["dur"] >= 0
    # Each message: a flow from its send to the completion of its receive.
    flows = [e for e in data["traceEvents"] if e.get("cat") == "flow"]
    starts = {e["id"] for e in flows if e["ph"] == "s"}
    ends = {e["id"] for e in flows if e["ph"] == "f"}
    assert starts == ends and len(starts) == STEPS * sum(
        1 for r in range(4) for a in s.actions(r) if a.is_send)
    # The simulator's trace of the same schedule names the same events on
    # the same ranks and lanes, with the same category and kind.
    path = tmp_path / "s.pps"
    path.write_text(JOBS[TRACED])
    sim = run_ppsc("sim", "--format=chrome", str(path))
    assert sim.returncode == 0, sim.stderr
    simulated = sorted((e["pid"], e["tid"], e["name"], e["cat"],
                        e["args"]["kind"], e["args"]["microbatch"],
                        e["args"]["stage"])
                       for e in json.loads(sim.stdout)["traceEvents"]
                       if e["ph"] == "X" and e["tid"] in (0, 1))
    measured = sorted((e["pid"], e["tid"], e["name"], e["cat"],
                       e["args"]["kind"], e["args"]["microbatch"],
                       e["args"]["stage"]) for e in events
                      if e["args"]["step"] == 0)
    assert measured == simulated


def test_watchdog_stops_a_deadlock_with_a_report(capfd):
    # tests/exec/deadlock.pps: the lint rejects it; compile() lowers it
    # without the deadlock check.
    with open(os.path.join(SOURCE_DIR, "tests", "exec", "deadlock.pps")) as f:
        source = f.read()
    assert pps.lint(source).errors > 0
    watchdog = 2.0
    with pytest.raises(mp.ProcessExitedException) as info:
        mp.spawn(H.stall_worker, args=(2, H.free_port(), source, watchdog),
                 nprocs=2)
    end = time.time()
    assert info.value.exit_code == 3
    err = capfd.readouterr().err
    starts = [float(x) for x in re.findall(r"step start ([0-9.]+)", err)]
    assert len(starts) == 2
    assert "step returned" not in err
    assert end - max(starts) < watchdog + 5
    assert ("error: watchdog: no rank made progress for 2 s; the schedule is "
            "stuck:\n"
            "  rank 0 blocks at `send F1@0 -> 1` waiting for rank 1 to post "
            "`recv F1@1 <- 0`\n"
            "  rank 1 blocks at `send B0@1 -> 0` waiting for rank 0 to post "
            "`recv B0@0 <- 1`\n") in err


def test_shape_mismatch_names_both_ranks_and_the_action(tmp_path):
    # Both ranks fail; whichever exits first, spawn() would terminate the
    # other, maybe before rank 0 has written its message: wait for both.
    ctx = mp.spawn(H.mismatch_worker, args=(2, H.free_port(), str(tmp_path)),
                   nprocs=2, join=False)
    for p in ctx.processes:
        p.join(120)
    assert [p.exitcode for p in ctx.processes] != [0, 0]
    message = (tmp_path / "error.0.txt").read_text()
    assert message == (
        "rank 0: action 3 `send F1@0 -> 1`: the message is float64[2, 7, 16], "
        "but rank 1 receives `recv F1@1 <- 0` into float64[2, 8, 16] (the "
        "shapes of stage 0's first output; a stage boundary carries the same "
        "shapes for every microbatch)")


def test_an_exception_in_a_stage_names_the_rank_and_the_action(tmp_path):
    mp.spawn(H.failing_worker, args=(1, H.free_port(), str(tmp_path)),
             nprocs=1)
    assert (tmp_path / "error.0.txt").read_text() == (
        "rank 0: action 6 `F3@0` threw: ValueError: injected failure in the "
        "forward\nValueError: injected failure in the forward")


def test_fifo_mismatch_is_refused_before_anything_runs():
    s = pps.compile(os.path.join(SOURCE_DIR, "tests", "exec",
                                 "fifo_mismatch.pps"))
    with pytest.raises(pps.torch.PipelineError) as info:
        pps.torch.PipelineRuntime(s, 0, {0: torch.nn.Identity()}, None)
    assert str(info.value) == (
        "error: the 1st send from rank 0 to rank 1 is `send F0@0 -> 1`, but "
        "the 1st receive at rank 1 from rank 0 is `recv F1@1 <- 0` (messages "
        "on one channel are matched in order) [fifo-mismatch]")


def test_a_schedule_lint_rejects_is_refused_before_anything_runs():
    # The proof of every export, under the run's comm model, before the
    # process group is even looked at.
    with open(os.path.join(SOURCE_DIR, "tests", "exec", "deadlock.pps")) as f:
        s = pps.compile(f.read(), name="deadlock.pps")
    with pytest.raises(pps.torch.PipelineError) as info:
        pps.torch.PipelineRuntime(s, 0, {0: torch.nn.Identity()}, None)
    text = str(info.value)
    assert text.startswith(
        "the schedule is not proved free of deadlock under the rendezvous "
        "model (what `ppsc lint` checks); verify=False runs it anyway:\n"
        "deadlock.pps:9:")
    assert "error: deadlock under the rendezvous model: ranks 0 and 1 wait " \
        "on each other [deadlock]" in text
    # verify=False goes on (here to the missing process group), warning.
    with pytest.warns(UserWarning, match="unverified"):
        with pytest.raises(RuntimeError, match="init_process_group"):
            pps.torch.PipelineRuntime(s, 0, {0: torch.nn.Identity()}, None,
                                      verify=False)


def test_needs_an_initialised_process_group():
    s = pps.compile(pipeline("p", "one_f_one_b", FOUR))
    with pytest.raises(RuntimeError, match="init_process_group"):
        pps.torch.PipelineRuntime(s, 0, {0: torch.nn.Identity()}, None)
    with pytest.raises(TypeError, match="pps.Schedule"):
        pps.torch.PipelineRuntime("schedule.pps", 0, {}, None)


def test_the_documented_training_script_runs_under_torchrun(tmp_path):
    """docs/python.md's example, as written, under torchrun (4 processes)."""
    with open(os.path.join(SOURCE_DIR, "docs", "python.md")) as f:
        doc = f.read()
    m = re.search(r"<!-- pps.torch example: begin -->\n```python\n(.*?)```\n"
                  r"<!-- pps.torch example: end -->", doc, re.S)
    assert m, "the example's markers are missing from docs/python.md"
    (tmp_path / "train.py").write_text(m.group(1))
    import subprocess
    import sys
    # The flags of docs/python.md, with a free port for the rendezvous
    # instead of --standalone's fixed one.
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes=1",
           "--nproc_per_node=4", "--rdzv_backend=c10d",
           "--rdzv_endpoint=127.0.0.1:%d" % H.free_port(), "--redirects", "1",
           "--tee", "1", "train.py"]
    here = os.path.dirname(os.path.dirname(os.path.abspath(pps.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [here] + [x for x in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                  if x]))
    # Its own session, so that running out of time ends torchrun's workers
    # too; sanitized builds allow five times as long (PPS_SUITE_TIME_SCALE).
    limit = 300 * int(os.environ.get("PPS_SUITE_TIME_SCALE", "1"))
    p = subprocess.Popen(cmd, cwd=str(tmp_path), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail("torchrun ran past %d s:\n%s%s" % (limit, out, err))
    assert p.returncode == 0, out + err
    for step in range(5):
        assert "step %d: loss" % step in out
    peaks = re.findall(r"rank (\d): peak activations (\d+) \(memory analysis "
                       r"(\d+)\)", out)
    assert sorted(int(r) for r, _, _ in peaks) == [0, 1, 2, 3]
    assert all(a == b for _, a, b in peaks)
    trace = json.loads((tmp_path / "trace.json").read_text())
    assert trace["otherData"]["pipeline"] == "train"
