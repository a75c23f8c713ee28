#!/usr/bin/env python3
"""The cost of pps.torch's backward split: I + W against one B, and
against the naive split (grad w.r.t. the input with the graph retained,
then grad w.r.t. the parameters, which runs the backward again).

  /usr/bin/python3 tests/bench/torch_split.py build [--repeats N]

Stage: two pre-norm transformer blocks (the test model of
python/tests/pps_torch_harness.py: attention and MLP, every parameter in
an nn.Linear or nn.LayerNorm), float32, one thread, batch 8. For each
size: the median over repeats of B, I + W and the naive I + W, each timed
from after F to the end of the backward, in interleaved order so load on
the machine hits all three alike.
"""
import argparse
import os
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", help="the build directory")
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(os.path.abspath(args.build), "python"))
    sys.path.insert(0, os.path.join(root, "python", "tests"))
    import torch
    import pps_torch_harness as H
    from pps.torch._split import Stage, StageState
    torch.set_num_threads(1)
    print("torch %s; median of %d; two transformer blocks, batch 8"
          % (torch.__version__, args.repeats))
    for dim, seq in ((64, 32), (128, 64), (256, 128)):
        torch.manual_seed(0)
        module = torch.nn.Sequential(H.Block(dim, 4), H.Block(dim, 4))
        stage = Stage(0, module, split=True)
        params = list(module.parameters())
        x0 = torch.randn(8, seq, dim)
        g = torch.randn(8, seq, dim)

        def forward():
            st = StageState()
            x = x0.clone().requires_grad_()
            st.inputs = (x,)
            st.roots = [stage.forward(st, (x,))]
            st.root_grads = [g]
            stage.plan(st)
            return st

        def b(st):
            stage.backward(st)

        def iw(st):
            stage.backward_input(st, keep_for_w=True)
            stage.backward_weight(st)

        def naive(st):
            torch.autograd.grad(st.roots, list(st.inputs), st.root_grads,
                                retain_graph=True)
            grads = torch.autograd.grad(st.roots, params, st.root_grads)
            for p, gp in zip(params, grads):
                p.grad = gp if p.grad is None else p.grad + gp

        times = {"B": [], "I+W": [], "naive": []}
        for rep in range(args.repeats + 2):
            for name, fn in (("B", b), ("I+W", iw), ("naive", naive)):
                st = forward()
                t0 = time.perf_counter()
                fn(st)
                dt = time.perf_counter() - t0
                if rep >= 2:
                    times[name].append(dt)
                module.zero_grad(set_to_none=True)
        med = {k: statistics.median(v) for k, v in times.items()}
        print("  dim %3d, seq %3d: B %8.2f ms   I+W %8.2f ms = %.3f x B   "
              "naive %8.2f ms = %.3f x B"
              % (dim, seq, med["B"] * 1e3, med["I+W"] * 1e3,
                 med["I+W"] / med["B"], med["naive"] * 1e3,
                 med["naive"] / med["B"]))
        stage.remove_hooks()


if __name__ == "__main__":
    main()
