"""Weight sharing in PipelineRuntime (Schedule.weight_groups): the copies
of a layer start alike, and after every step's table each copy gets the
sum of its group's gradients, exchanged point to point. A mixin of
PipelineRuntime (_runtime.py), whose state it uses."""

import torch

from ._schema import PipelineError


class _WeightSharing:
    """PipelineRuntime's gradient exchange between copies of a layer."""

    # Messages outside the table travel the channels the schedule's messages
    # use, after them (the table has drained its sends and receives), each
    # pair of ranks posting them in the same order: groups ascending, stages
    # ascending, parameters in module order.

    def _exchange(self, sends, recvs) -> None:
        """Posts every (tensor, peer) receive, then every send, then waits
        for all of them."""
        dist = self._dist
        works = [dist.irecv(t, self._global[q], group=self._group)
                 for t, q in recvs]
        works += [dist.isend(t, self._global[q], group=self._group)
                  for t, q in sends]
        for w in works:
            w.wait()
        self._status.progress += 1

    def _start_copies_alike(self) -> None:
        """Every copy of a shared layer takes the parameters of its group's
        first stage."""
        sends, recvs, local = [], [], []
        for g in self._shared:
            src = g[0]
            src_rank = self._stage_rank[src]
            for st in g[1:]:
                dst = self._stage_rank[st]
                if src_rank == self.rank and dst == self.rank:
                    local.append((src, st))
                elif src_rank == self.rank:
                    sends += [(p.detach().contiguous(), dst) for p in
                              self._stages[src].module.parameters()]
                elif dst == self.rank:
                    recvs += [(p, src_rank) for p in
                              self._stages[st].module.parameters()]
        with torch.no_grad():
            got = [(torch.empty_like(p), q) for p, q in recvs]
            self._exchange(sends, got)
            for (p, _), (t, _) in zip(recvs, got):
                p.copy_(t)
            for src, st in local:
                for p, q in zip(self._stages[st].module.parameters(),
                                self._stages[src].module.parameters()):
                    p.copy_(q)

    def _sum_shared_gradients(self) -> None:
        """Every copy's gradients become the sum over its group, added up in
        stage order (so every copy gets the same numbers)."""
        def grads(st):
            return [p.grad.detach().clone() if p.grad is not None
                    else torch.zeros_like(p)
                    for p in self._stages[st].module.parameters()]

        sends, recvs, parts = [], [], {}
        for g in self._shared:
            peers = sorted({self._stage_rank[st] for st in g} - {self.rank})
            for st in g:
                if self._stage_rank[st] == self.rank:
                    parts[st] = grads(st)
            for q in peers:
                for st in g:
                    if self._stage_rank[st] == self.rank:
                        sends += [(t, q) for t in parts[st]]
                    elif self._stage_rank[st] == q:
                        mine = next(x for x in g
                                    if self._stage_rank[x] == self.rank)
                        parts[st] = [torch.empty_like(t) for t in parts[mine]]
                        recvs += [(t, q) for t in parts[st]]
        self._exchange(sends, recvs)
        for g in self._shared:
            total = parts[g[0]]
            for st in g[1:]:
                if len(parts[st]) != len(total):
                    raise PipelineError(
                        "rank %d: stage %d has %d parameters, stage %d (a copy "
                        "of the same layer) %d" % (self.rank, st,
                                                   len(parts[st]), g[0],
                                                   len(total)))
                total = [a + b for a, b in zip(total, parts[st])]
            for st in g:
                if self._stage_rank[st] != self.rank:
                    continue
                for p, t in zip(self._stages[st].module.parameters(), total):
                    p.grad = t.clone()
