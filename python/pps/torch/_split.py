"""F, I, W and B of one pipeline stage with torch.autograd, and the split of
the backward into I (input gradients) and W (weight gradients) without a
second backward.

F runs the stage module and keeps its autograd graph. B is one backward
pass into the stage's inputs and parameters. The split must not run the
backward twice (calling grad(out, params) after grad(out, input) re-runs it),
and PyTorch 1.13 cannot start a backward at a graph node (no GradientEdge),
so the split works on module outputs instead:

* during F, forward hooks on the modules that hold trainable parameters
  record those modules' outputs;
* I = torch.autograd.grad(stage outputs, stage inputs + recorded outputs,
  retain_graph=True): the input gradient, and on the way the gradients
  arriving at each recorded output, captured;
* W = torch.autograd.backward(recorded outputs, captured gradients,
  inputs=that module's parameters), per module: the engine runs only the
  nodes between a module's output and its parameters, so each node that
  consumes a parameter runs its weight half here and its input half in I.

That is exact for a parameter when every path from the stage output to it
passes through its module's recorded outputs, and no recorded output of the
module lies below another (the module is not applied to its own output). A
plan made once per graph shape (the sequence of modules that ran) checks
both by walking the graph; parameters for which they fail (a weight tied
into code outside its module, a module applied twice in a chain) get their
gradient in W from the stage output instead, which is exact too, only not
free. So do parameters whose module never ran while an ancestor without
parameters of its own did (nn.MultiheadAttention's out_proj is used by its
parent's code: the parent holds parameters, so it is the group). A
module's group costs in W the part of the backward between its output and
its parameters: for leaf modules (Linear, LayerNorm, Embedding) that is the
weight half of their own nodes.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from torch import Tensor


def as_tensors(value: Any, what: str) -> Tuple[Tensor, ...]:
    """A tensor or a non-empty tuple/list of tensors, as a tuple."""
    if isinstance(value, Tensor):
        return (value,)
    if (isinstance(value, (tuple, list)) and value
            and all(isinstance(v, Tensor) for v in value)):
        return tuple(value)
    raise TypeError("%s must be a tensor or a tuple of tensors, got %s"
                    % (what, type(value).__name__))


def _flat_tensors(value: Any, out: List[Tensor]) -> None:
    if isinstance(value, Tensor):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _flat_tensors(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _flat_tensors(v, out)


class _Plan:
    """How W computes the parameter gradients for one graph shape.

    groups: (parameters, positions of their module's recorded outputs)
    full: parameters whose gradient W takes from the stage outputs
    captured: the recorded outputs whose gradients I captures, in order
    """

    __slots__ = ("groups", "full", "captured", "slot")

    def __init__(self, groups, full, captured):
        self.groups = groups
        self.full = full
        self.captured = captured
        # recorded position -> index into I's captured gradients
        self.slot = {k: i for i, k in enumerate(captured)}


def _walk(starts: Sequence[Tuple[Any, int]], blocked: set, params: set,
          edges: set) -> set:
    """Walks the graph from the edges `starts` without crossing an edge in
    `blocked`. Returns the ids of the parameters in `params` whose
    AccumulateGrad it reaches, plus the marker "edge" if it crosses an edge
    in `edges` (it then stops). Edges are (id(node), output_nr)."""
    keep = []  # node wrappers stay alive, so their ids stay unique
    seen = set()
    stack = []
    found = set()
    for node, nr in starts:
        if node is None or (id(node), nr) in blocked:
            continue
        if (id(node), nr) in edges:
            return {"edge"}
        stack.append(node)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        keep.append(node)
        var = getattr(node, "variable", None)
        if var is not None:
            if id(var) in params:
                found.add(id(var))
            continue
        for nxt, nr in node.next_functions:
            if nxt is None:
                continue
            key = (id(nxt), nr)
            if key in blocked:
                continue
            if key in edges:
                return {"edge"}
            if id(nxt) not in seen:
                stack.append(nxt)
    return found


class StageState:
    """What F(m, s) leaves for the backward of (m, s): the runtime holds one
    per live activation and drops it at the last backward."""

    __slots__ = ("inputs", "outputs", "roots", "root_grads", "records",
                 "plan", "captured", "loss", "nbytes")

    def __init__(self):
        self.inputs: Tuple[Tensor, ...] = ()
        self.outputs: Tuple[Tensor, ...] = ()
        self.roots: List[Tensor] = []
        self.root_grads: Optional[List[Tensor]] = None
        self.records: Optional[List[Tuple[int, Tensor]]] = None
        self.plan: Optional[_Plan] = None
        self.captured: Optional[Sequence[Optional[Tensor]]] = None
        self.loss: Optional[Tensor] = None
        self.nbytes = 0


class Stage:
    """A stage module with the hooks and plans its I/W split needs.

    split: record module outputs during F (the schedule has I/W for this
    stage); without it F records nothing and only B is allowed.
    """

    def __init__(self, index: int, module: torch.nn.Module, split: bool):
        if not isinstance(module, torch.nn.Module):
            raise TypeError("stage %d: expected a torch.nn.Module, got %s"
                            % (index, type(module).__name__))
        self.index = index
        self.module = module
        self.split = split
        self.params: List[torch.nn.Parameter] = [
            p for p in module.parameters() if p.requires_grad]
        self._records: Optional[List[Tuple[int, Tensor]]] = None
        self._plans: Dict[Tuple[int, ...], _Plan] = {}
        self._handles = []
        # Modules holding trainable parameters directly are hooked; each
        # parameter knows its owners' chains of hooked ancestors (innermost
        # first), from which a plan picks the innermost one that ran.
        modules = list(module.named_modules())
        parent: Dict[int, torch.nn.Module] = {}
        for _, m in modules:
            for child in m.children():
                parent.setdefault(id(child), m)
        self._hooked: List[torch.nn.Module] = []
        index_of: Dict[int, int] = {}
        for _, m in modules:
            if any(p is not None and p.requires_grad
                   for p in m._parameters.values()):
                index_of[id(m)] = len(self._hooked)
                self._hooked.append(m)
        self._owner_chains: Dict[int, List[List[int]]] = {}
        for m in self._hooked:
            chain = []
            a: Optional[torch.nn.Module] = m
            while a is not None:
                if id(a) in index_of:
                    chain.append(index_of[id(a)])
                a = parent.get(id(a))
            for p in m._parameters.values():
                if p is not None and p.requires_grad:
                    self._owner_chains.setdefault(id(p), []).append(chain)
        if split:
            for i, m in enumerate(self._hooked):
                self._handles.append(m.register_forward_hook(self._hook(i)))

    def _hook(self, i: int):
        def hook(mod, args, out):
            rec = self._records
            if rec is None:
                return
            if isinstance(out, Tensor):
                if out.grad_fn is not None:
                    rec.append((i, out))
                return
            flat: List[Tensor] = []
            _flat_tensors(out, flat)
            for t in flat:
                if t.grad_fn is not None:
                    rec.append((i, t))
        return hook

    def remove_hooks(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    # --- F ------------------------------------------------------------------

    def forward(self, st: StageState, args: Tuple[Any, ...]) -> Any:
        """Runs the module on args, recording what the split needs. Returns
        the module's output (the caller sets st.roots)."""
        if self.split:
            self._records = rec = []
            try:
                out = self.module(*args)
            finally:
                self._records = None
            st.records = rec
        else:
            out = self.module(*args)
        return out

    def plan(self, st: StageState) -> None:
        """Chooses (or reuses) the plan for st's graph shape; call once
        st.roots is set, before the backward."""
        if not self.split or st.records is None:
            return
        sig = tuple(i for i, _ in st.records)
        p = self._plans.get(sig)
        if p is None:
            p = self._make_plan(st)
            self._plans[sig] = p
        st.plan = p

    def _make_plan(self, st: StageState) -> _Plan:
        records = st.records or []
        fired = {i for i, _ in records}
        by_group: Dict[int, List[torch.nn.Parameter]] = {}
        full: List[torch.nn.Parameter] = []
        for p in self.params:
            chosen = set()
            for chain in self._owner_chains.get(id(p), [[]]):
                chosen.add(next((a for a in chain if a in fired), None))
            if len(chosen) == 1 and None not in chosen:
                by_group.setdefault(chosen.pop(), []).append(p)
            else:
                full.append(p)
        # The node wrappers are held for the whole planning: a wrapper that
        # died could hand its id to another node.
        fns = [t.grad_fn for _, t in records]
        roots = [(t.grad_fn, t.output_nr) for t in st.roots
                 if t.grad_fn is not None]
        groups = []
        captured: List[int] = []
        for g in sorted(by_group):
            params = by_group[g]
            # The module's recorded outputs, each graph edge once (a tensor
            # returned twice carries its gradient once).
            positions, edges = [], set()
            for k, (i, t) in enumerate(records):
                key = (id(fns[k]), t.output_nr)
                if i == g and key not in edges:
                    positions.append(k)
                    edges.add(key)
            # A parameter the stage output reaches without passing the
            # module's outputs is used elsewhere too (a tied weight).
            bypass = _walk(roots, edges, {id(p) for p in params}, set())
            if bypass:
                full.extend(p for p in params if id(p) in bypass)
                params = [p for p in params if id(p) not in bypass]
            if params and len(positions) > 1:
                # One recorded output below another (the module applied to
                # its own output): the lower one's captured gradient already
                # holds what flows down from the upper one.
                for k in positions:
                    start = (fns[k], records[k][1].output_nr)
                    others = edges - {(id(fns[k]), start[1])}
                    if _walk([start], set(), set(), others):
                        full.extend(params)
                        params = []
                        break
            if params:
                groups.append((params, positions))
                captured.extend(positions)
        return _Plan(groups, full, captured)

    # --- I, W, B ------------------------------------------------------------

    def backward_input(self, st: StageState, keep_for_w: bool
                       ) -> List[Optional[Tensor]]:
        """I: the gradients of the stage inputs that require grad (None
        where the output does not depend on one). With keep_for_w the graph
        is retained and the gradients at the recorded outputs are kept in
        st for W; parameter .grad is not touched."""
        wanted = [x for x in st.inputs if x.requires_grad]
        plan = st.plan
        recs: List[Tensor] = []
        if keep_for_w and plan is not None:
            recs = [st.records[k][1] for k in plan.captured]
        targets = wanted + recs
        st.captured = [None] * len(recs)
        if not targets or not st.roots:
            return [None] * len(wanted)
        grads = torch.autograd.grad(st.roots, targets, st.root_grads,
                                    retain_graph=keep_for_w,
                                    allow_unused=True)
        st.captured = grads[len(wanted):]
        return list(grads[:len(wanted)])

    def backward_weight(self, st: StageState) -> None:
        """W: accumulates the parameter gradients into .grad from what I
        kept."""
        plan = st.plan
        if not st.roots:
            return
        if plan is None:
            # I ran without a plan (no split recorded): W from the outputs.
            if self.params:
                torch.autograd.backward(st.roots, st.root_grads,
                                        inputs=self.params)
            return
        calls = []
        captured = st.captured or ()
        for params, positions in plan.groups:
            outs, grads = [], []
            for k in positions:
                g = captured[plan.slot[k]]
                if g is not None:
                    outs.append(st.records[k][1])
                    grads.append(g)
            if outs:
                calls.append((outs, grads, params))
        if plan.full:
            calls.append((st.roots, st.root_grads, plan.full))
        last = len(calls) - 1
        for n, (outs, grads, params) in enumerate(calls):
            torch.autograd.backward(outs, grads, retain_graph=n < last,
                                    inputs=params)

    def backward(self, st: StageState) -> List[Optional[Tensor]]:
        """B: input and parameter gradients in one pass (parameters
        accumulate into .grad). Returns the input gradients as
        backward_input does."""
        wanted = [x for x in st.inputs if x.requires_grad]
        targets = wanted + self.params
        if not targets or not st.roots:
            return [None] * len(wanted)
        for x in wanted:
            x.grad = None
        torch.autograd.backward(st.roots, st.root_grads, inputs=targets)
        return [x.grad for x in wanted]
