#!/usr/bin/env python3
"""What pps.torch costs per action, next to the C++ executor on the same
schedule.

  /usr/bin/python3 tests/bench/torch_runtime_overhead.py build [--steps N]

Trivial stages (out = x * w on a one-element tensor), so the figures are
the runtimes' own costs, not the model's:

* pipeline: tests/exec/schedules/one_f_one_b.pps (4 ranks, 8 microbatches,
  48 actions on the busiest rank), pps.torch in 4 processes over gloo
  (TCP on loopback) against build/tests/exec/exec_one_f_one_b with its
  built-in workload at --time-scale=0, on threads and, when mpirun is
  there, in 4 MPI processes; and the same actions replayed by a minimal
  plain torch.distributed loop (isend/irecv/wait and the module calls
  only), which is what gloo itself costs. Figures: time per step (the
  slowest rank's median) and per action of the busiest rank, and the CPU
  time of the busiest process (its main and gloo threads) per action,
  which load on the machine changes less than wall time.
* compute only: one rank, one stage, 2000 microbatches (F, B or F, I, W
  per microbatch, no messages), pps.torch against a plain PyTorch loop
  doing the same forward, loss and backward calls: the difference is the
  runtime's bookkeeping per compute action. The C++ figure for the same
  thing is bench_runtime_overhead's BM_ComputeAction, run when built.
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))


def make_stage():
    import torch

    class Scale(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(1))

        def forward(self, x):
            return x * self.w

    return Scale()


def loss_fn(out, target):
    return (out - target).sum()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pipeline_worker(rank, world, port, source, steps, warmup, out):
    import torch
    import torch.distributed as dist
    import pps
    import pps.torch
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=world)
    s = pps.compile(source)
    mods = {st: make_stage() for st in s.stages_of(rank)}
    rt = pps.torch.PipelineRuntime(s, rank, mods, loss_fn, None, watchdog=60)
    xs = [torch.ones(1) for _ in range(s.microbatches)]
    times = []
    for step in range(warmup + steps):
        dist.barrier()
        t0 = time.perf_counter()
        c0 = time.process_time()
        rt.step(inputs=xs, targets=xs)
        times.append((time.perf_counter() - t0, time.process_time() - c0))
        for m in mods.values():
            m.zero_grad(set_to_none=True)
    rt.close()
    with open(os.path.join(out, "rank%d" % rank), "w") as f:
        f.write("%d %r\n" % (len(s.actions(rank)), times[warmup:]))
    dist.destroy_process_group()


def plain_worker(rank, world, port, source, steps, warmup, out):
    """The same actions with the least code plain torch.distributed needs
    (what a hand-written pipeline loop does): the transport's own cost."""
    import torch
    import torch.distributed as dist
    import pps
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=world)
    s = pps.compile(source)
    acts = [(a.kind, a.microbatch, a.stage, a.peer) for a in s.actions(rank)]
    mods = {st: make_stage() for st in s.stages_of(rank)}
    last = s.stages - 1
    times = []
    for step in range(warmup + steps):
        dist.barrier()
        t0 = time.perf_counter()
        c0 = time.process_time()
        xs, outs, grads, posted = {}, {}, {}, {}
        for kind, mb, st, peer in acts:
            if kind == "F":
                if st == 0:
                    x = torch.ones(1)
                else:
                    buf, work = posted.pop(("F", mb))
                    work.wait()
                    x = buf.requires_grad_()
                xs[mb] = x
                y = mods[st](x)
                outs[mb] = loss_fn(y, torch.ones(1)) / 8 if st == last else y
            elif kind == "B":
                g = None
                if st != last:
                    buf, work = posted.pop(("B", mb))
                    work.wait()
                    g = buf
                outs.pop(mb).backward(g)
                grads[mb] = xs.pop(mb).grad
            elif kind == "SEND_F":
                dist.isend(outs[mb].detach(), peer).wait()
            elif kind == "SEND_B":
                dist.isend(grads.pop(mb), peer).wait()
            else:
                buf = torch.empty(1)
                posted[(kind[-1], mb)] = (buf, dist.irecv(buf, peer))
        times.append((time.perf_counter() - t0, time.process_time() - c0))
        for m in mods.values():
            m.zero_grad(set_to_none=True)
    with open(os.path.join(out, "rank%d" % rank), "w") as f:
        f.write("%d %r\n" % (len(acts), times[warmup:]))
    dist.destroy_process_group()


def run_workers(worker, source, steps):
    import tempfile

    import torch.multiprocessing as mp
    with tempfile.TemporaryDirectory() as out:
        mp.spawn(worker, args=(4, free_port(), source, steps, 5, out),
                 nprocs=4)
        per_rank = []
        for r in range(4):
            with open(os.path.join(out, "rank%d" % r)) as f:
                n, times = f.read().split(" ", 1)
                times = eval(times)
                per_rank.append((int(n),
                                 statistics.median(t for t, _ in times),
                                 statistics.median(c for _, c in times)))
    return (max(n for n, _, _ in per_rank), max(t for _, t, _ in per_rank),
            max(c for _, _, c in per_rank))


def bench_pipeline(build, steps):
    path = os.path.join(root, "tests", "exec", "schedules", "one_f_one_b.pps")
    with open(path) as f:
        source = f.read()
    actions, step, cpu = run_workers(pipeline_worker, source, steps)
    _, plain, plain_cpu = run_workers(plain_worker, source, steps)
    print("pipeline, one_f_one_b, 4 ranks, 8 microbatches (%d actions on the "
          "busiest rank)" % actions)
    for label, t, c in (("pps.torch, gloo, 4 processes", step, cpu),
                        ("plain torch.distributed loop", plain, plain_cpu)):
        print("  %-30s %8.3f ms per step, %7.1f us per action (CPU of the "
              "busiest process: %6.1f us per action)"
              % (label + ":", t * 1e3, t * 1e6 / actions, c * 1e6 / actions))
    exe = os.path.join(build, "tests", "exec", "exec_one_f_one_b")
    if not os.path.exists(exe):
        print("  (C++: %s not built)" % exe)
        return
    runs = [("C++ executor, threads", [exe])]
    mpirun = shutil.which("mpirun")
    if mpirun:
        runs.append(("C++ executor, MPI, 4 processes",
                     [mpirun, "--oversubscribe", "-n", "4", exe,
                      "--transport=mpi"]))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for label, cmd in runs:
        p = subprocess.run(cmd + ["--time-scale=0", "--steps=%d" % max(steps, 20),
                                  "--watchdog=60"],
                           capture_output=True, text=True, env=env)
        m = re.search(r"measured makespan: ([0-9.]+) ms per step", p.stdout)
        if p.returncode != 0 or not m:
            print("  %s: failed (%s)" % (label, (p.stderr or p.stdout)[-200:]))
            continue
        ms = float(m.group(1))
        print("  %-30s %8.3f ms per step, %7.1f us per action"
              % (label + ":", ms, ms * 1e3 / actions))


def bench_compute(build, microbatches, repeats):
    import torch
    import torch.distributed as dist
    import pps
    import pps.torch
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d"
                            % free_port(), rank=0, world_size=1)
    xs = [torch.ones(1) for _ in range(microbatches)]
    print("compute only, one rank, one stage, %d microbatches" % microbatches)
    for sched, kinds in (("one_f_one_b", "F, B"), ("zb_h1", "F, I, W")):
        s = pps.compile("pipeline p { ranks 1; stages 1; microbatches %d; "
                        "schedule %s(); }" % (microbatches, sched))
        mod = make_stage()
        rt = pps.torch.PipelineRuntime(s, 0, {0: mod}, loss_fn, None,
                                       watchdog=0)
        n = len(s.actions(0))
        rt.step(inputs=xs, targets=xs)
        best = min(timed(lambda: rt.step(inputs=xs, targets=xs))
                   for _ in range(repeats))
        rt.close()

        def plain():
            for x in xs:
                (loss_fn(mod(x), x) / microbatches).backward()
        plain()
        base = min(timed(plain) for _ in range(repeats))
        print("  %-10s (%s): pps.torch %6.1f us per action, plain loop %6.1f "
              "us per action of the same work; bookkeeping %5.1f us per action"
              % (sched, kinds, best * 1e6 / n, base * 1e6 / n,
                 (best - base) * 1e6 / n))
    dist.destroy_process_group()
    exe = os.path.join(build, "bench", "bench_runtime_overhead")
    if os.path.exists(exe):
        p = subprocess.run([exe, "--benchmark_filter=BM_ComputeAction/"],
                           capture_output=True, text=True)
        m = re.search(r"per_action=([0-9.]+)ns", p.stdout)
        if m:
            print("  C++ executor (bench_runtime_overhead BM_ComputeAction): "
                  "%.3f us per action, all included" % (float(m.group(1)) / 1e3))


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", help="the build directory")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--microbatches", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    sys.path.insert(0, os.path.join(build, "python"))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(build, "python")] +
        [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    bench_pipeline(build, args.steps)
    bench_compute(build, args.microbatches, args.repeats)


if __name__ == "__main__":
    main()
