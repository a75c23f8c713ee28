"""Helpers of the pps.torch tests: a small transformer split into pipeline
stages, the single-process reference it is compared with, and the worker
that torch.multiprocessing spawns (one per rank, gloo on CPU). Imported
by the spawned processes, so it holds no pytest code."""

import json
import math
import os
import socket
import sys
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as Fn

VOCAB = 32
DIM = 16
HEADS = 2
SEQ = 8
MB_SIZE = 2
DTYPE = torch.float64


class Block(nn.Module):
    """A pre-norm transformer block: causal self-attention and an MLP, with
    every parameter inside an nn.Linear or nn.LayerNorm."""

    def __init__(self, dim=DIM, heads=HEADS):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        h = self.ln1(x)

        def split(y):
            return y.view(b, t, self.heads, d // self.heads).transpose(1, 2)

        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        a = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        a = a.masked_fill(mask, float("-inf")).softmax(-1)
        y = (a @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.o(y)
        return x + self.fc2(Fn.gelu(self.fc1(self.ln2(x))))


class StageModule(nn.Module):
    """One stage: token and position embeddings when it starts a route, a
    block, the final norm and the vocabulary head when it ends one."""

    def __init__(self, first, last):
        super().__init__()
        self.first = first
        self.last = last
        if first:
            self.tok = nn.Embedding(VOCAB, DIM)
            self.pos = nn.Embedding(SEQ, DIM)
        self.block = Block()
        if last:
            self.norm = nn.LayerNorm(DIM)
            self.head = nn.Linear(DIM, VOCAB)

    def forward(self, x):
        if self.first:
            pos = torch.arange(x.shape[1], device=x.device)
            x = self.tok(x) + self.pos(pos)
        x = self.block(x)
        if self.last:
            x = self.head(self.norm(x))
        return x


def make_stage(schedule_stages, directions, stage):
    """Stage `stage` of a pipeline, initialised from its own seed so every
    process builds the same weights."""
    half = schedule_stages // 2
    firsts = {0, half} if directions == 2 else {0}
    lasts = {half - 1, schedule_stages - 1} if directions == 2 else {
        schedule_stages - 1}
    torch.manual_seed(1000 + stage)
    return StageModule(stage in firsts, stage in lasts).to(DTYPE)


def loss_fn(logits, target):
    return Fn.cross_entropy(logits.reshape(-1, VOCAB), target.reshape(-1))


def data(microbatches, step):
    g = torch.Generator().manual_seed(77 + step)
    x = torch.randint(0, VOCAB, (microbatches, MB_SIZE, SEQ), generator=g)
    y = torch.randint(0, VOCAB, (microbatches, MB_SIZE, SEQ), generator=g)
    return list(x), list(y)


def make_optimizer(params):
    return torch.optim.SGD(params, lr=0.1, momentum=0.9)


def route(stages, directions, microbatches, mb):
    if directions == 2:
        half = stages // 2
        return (0, half - 1) if mb < microbatches // 2 else (half, stages - 1)
    return 0, stages - 1


def reference(stages, directions, microbatches, steps, weight_groups=None):
    """The unpipelined run in one process: the model with each layer once
    (weight_groups, the schedule's exported groups: the stages of a group
    share one module, built as the group's first stage; default: one stage
    per group), every microbatch through its route, loss / microbatches,
    backward, one optimizer step per step. Returns ({stage: {name:
    tensor}}, [[loss per microbatch] per step])."""
    if weight_groups is None:
        weight_groups = [[s] for s in range(stages)]
    layer = {g[0]: make_stage(stages, directions, g[0]) for g in weight_groups}
    mods = [None] * stages
    for g in weight_groups:
        for s in g:
            mods[s] = layer[g[0]]
    params = [p for m in layer.values() for p in m.parameters()]
    opt = make_optimizer(params)
    losses = []
    for step in range(steps):
        xs, ys = data(microbatches, step)
        step_losses = []
        for mb in range(microbatches):
            first, last = route(stages, directions, microbatches, mb)
            h = xs[mb]
            for s in range(first, last + 1):
                h = mods[s](h)
            loss = loss_fn(h, ys[mb])
            step_losses.append(loss.item())
            (loss / microbatches).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(step_losses)
    return ({s: {k: v.detach().clone() for k, v in m.state_dict().items()}
             for s, m in enumerate(mods)}, losses)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _init(rank, world, port):
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=world)
    return dist


def train_worker(rank, world, port, jobs_path, out_dir):
    """Runs every job of jobs_path (JSON: name, source, steps, comm_model,
    stream, eager_threshold, comm_placement, trace, handlers,
    message_shapes, blocking_recv) on this rank and saves the stage
    weights, losses, peaks and what the stream rule held back to
    out_dir/<job>.<rank>.pt; an exception is written to
    out_dir/error.<rank>.txt and re-raised."""
    try:
        import pps
        import pps.torch
        dist = _init(rank, world, port)
        with open(jobs_path) as f:
            jobs = json.load(f)
        for job in jobs:
            s = pps.compile(job["source"], name=job["name"] + ".pps",
                            comm_placement=job.get("comm_placement"))
            local = s.stages_of(rank)
            mods = {st: make_stage(s.stages, s.directions, st) for st in local}
            opt = make_optimizer([p for m in mods.values()
                                  for p in m.parameters()])
            counts = {}
            extra = {}
            if job.get("handlers"):
                # Control actions reach user hooks; overlap pairs go
                # through a handler that runs both halves.
                def count(action, runtime):
                    counts[action.kind] = counts.get(action.kind, 0) + 1

                def pair(first, second, runtime):
                    counts["OVERLAP"] = counts.get("OVERLAP", 0) + 1
                    runtime.run_default(first)
                    runtime.run_default(second)
                extra = {"handlers": {k: count for k in
                                      ("UNSHARD", "RESHARD", "REDUCE_GRAD")},
                         "overlap_handler": pair}
            if job.get("message_shapes"):
                # Every boundary's shapes given: nothing goes through the
                # store (meta tensors describe them).
                extra["message_shapes"] = {
                    st: torch.empty(MB_SIZE, SEQ, DIM, dtype=DTYPE,
                                    device="meta")
                    for st in range(s.stages - 1)}
            rt = pps.torch.PipelineRuntime(
                s, rank, mods, loss_fn, opt,
                comm_model=job.get("comm_model"), stream=job.get("stream"),
                eager_threshold=job.get("eager_threshold"), watchdog=60,
                trace=job.get("trace"),
                blocking_recv=job.get("blocking_recv", False), **extra)
            losses = []
            for step in range(job["steps"]):
                xs, ys = data(s.microbatches, step)
                got = rt.step(inputs=xs, targets=ys)
                losses.append({mb: v.item() for mb, v in got.items()})
            rt.close()
            torch.save({"weights": {st: {k: v.detach().clone() for k, v in
                                         m.state_dict().items()}
                                    for st, m in mods.items()},
                        "losses": losses,
                        "peak": rt.peak_activations,
                        "predicted": rt.predicted_peak_activations,
                        "peak_memory": rt.peak_memory,
                        "predicted_memory": rt.predicted_peak_memory,
                        "peak_bytes": rt.peak_activation_bytes,
                        "live": rt.live_activations,
                        "comm_model": rt.comm_model,
                        "comm_stream": tuple(rt.comm_stream),
                        "stream_held": rt.stream_held,
                        "counts": counts},
                       os.path.join(out_dir, "%s.%d.pt" % (job["name"], rank)))
        dist.destroy_process_group()
    except BaseException:
        with open(os.path.join(out_dir, "error.%d.txt" % rank), "w") as f:
            f.write(traceback.format_exc())
        raise


def stall_worker(rank, world, port, source, watchdog, comm=None):
    """Runs a schedule expected to hang (under the comm options comm, a
    dict of PipelineRuntime keywords); prints when its step starts and
    when it returns."""
    import pps
    import pps.torch
    _init(rank, world, port)
    s = pps.compile(source, name="deadlock.pps")
    mods = {st: make_stage(s.stages, s.directions, st)
            for st in s.stages_of(rank)}
    # verify=False: the proof would refuse it before anything runs.
    rt = pps.torch.PipelineRuntime(s, rank, mods, loss_fn, None,
                                   watchdog=watchdog, verify=False,
                                   **(comm or {}))
    xs, ys = data(s.microbatches, 0)
    print("step start %.6f" % time.time(), file=sys.stderr, flush=True)
    rt.step(inputs=xs, targets=ys)
    print("step returned", file=sys.stderr, flush=True)


class Narrowing(nn.Module):
    """A first stage whose output for microbatch 1 has a shorter sequence:
    the message of `send F1@0 -> 1` does not have the boundary's shape."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(DIM, DIM).to(DTYPE)

    def forward(self, x):
        return self.lin(x)


def mismatch_worker(rank, world, port, out_dir):
    """Stage 0 sends microbatch 1 with another shape than microbatch 0."""
    import pps
    import pps.torch
    _init(rank, world, port)
    s = pps.compile("pipeline p { ranks 2; stages 2; microbatches 2; "
                    "schedule one_f_one_b(); }")
    mods = {st: Narrowing() for st in s.stages_of(rank)}
    xs = [torch.randn(MB_SIZE, SEQ, DIM, dtype=DTYPE),
          torch.randn(MB_SIZE, SEQ - 1, DIM, dtype=DTYPE)]
    ys = [torch.zeros(MB_SIZE, SEQ, DIM, dtype=DTYPE)] * 2
    rt = pps.torch.PipelineRuntime(
        s, rank, mods, lambda out, y: (out.sum() - y.sum()) ** 2, None,
        watchdog=60)
    try:
        rt.step(inputs=xs, targets=ys)
    except pps.torch.PipelineError as e:
        with open(os.path.join(out_dir, "error.%d.txt" % rank), "w") as f:
            f.write(str(e))
        raise


class Failing(nn.Module):
    """Throws on the forward of its fourth call (microbatch 3)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(DIM, DIM).to(DTYPE)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls == 4:
            raise ValueError("injected failure in the forward")
        return self.lin(x)


def failing_worker(rank, world, port, out_dir):
    """One rank, one stage that throws in F3@0."""
    import pps
    import pps.torch
    _init(rank, world, port)
    s = pps.compile("pipeline p { ranks 1; stages 1; microbatches 4; "
                    "schedule one_f_one_b(); }")
    xs = [torch.randn(MB_SIZE, SEQ, DIM, dtype=DTYPE) for _ in range(4)]
    rt = pps.torch.PipelineRuntime(s, rank, {0: Failing()},
                                   lambda out, y: out.sum(), None)
    try:
        rt.step(inputs=xs, targets=xs)
    except pps.torch.PipelineError as e:
        with open(os.path.join(out_dir, "error.%d.txt" % rank), "w") as f:
            f.write("%s\n%s: %s" % (e, type(e.__cause__).__name__,
                                    e.__cause__))
        assert rt.describe() == "rank 0 stopped at action 6 of 8"
        return
    raise AssertionError("the step did not fail")
