"""pps.torch: run a compiled pps schedule with torch.distributed.

    import torch.distributed as dist
    import pps, pps.torch

    dist.init_process_group("gloo")            # or "nccl"; torchrun sets the env
    rank = dist.get_rank()
    s = pps.compile("zb.pps")
    rt = pps.torch.PipelineRuntime(s, rank, {i: stage(i) for i in s.stages_of(rank)},
                                   loss_fn, optimizer)
    for step in range(steps):
        losses = rt.step(inputs=microbatches, targets=labels)
    rt.close()

Each rank walks its action list as the C++ executor does: F keeps the
autograd graph, I computes the input gradient, W the parameter gradients
(no second backward), B both; receives are posted where the schedule says
and waited on by the compute that needs them; sends follow the comm model
(rendezvous, eager, batched, nccl) and its stream rule (comms in issue
order on one queue per rank or per peer, emulated where the backend is
not NCCL). A watchdog reports every rank's blocked
action in the lint's words when the run stops making progress, and the
measured timeline can be written as a Chrome trace in the simulator's
format. docs/python.md has the guide.
"""

from ._messages import format_meta
from ._runtime import PipelineRuntime
from ._schema import PipelineError, action_text

__all__ = ["PipelineError", "PipelineRuntime", "action_text", "format_meta"]
