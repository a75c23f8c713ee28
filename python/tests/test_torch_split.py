"""pps.torch's backward split: I computes the input gradient without
touching any parameter's .grad, W then adds exactly what a full backward
adds, and the split does not run the backward twice (the nodes that hold
no parameter run once over I + W). One process, no torch.distributed."""

import pytest

torch = pytest.importorskip("torch")

import pps_torch_harness as H  # noqa: E402
from pps.torch._split import Stage, StageState  # noqa: E402

nn = torch.nn


def leaf(x):
    """The stage input as the runtime gives it: a leaf that requires grad
    (token ids stay as they are)."""
    x = x.detach().clone()
    return x.requires_grad_() if x.is_floating_point() else x


def run_forward(stage, x, grad_out=None, loss=False):
    st = StageState()
    x = leaf(x)
    st.inputs = (x,) if x.requires_grad else ()
    out = stage.forward(st, (x,))
    if loss:
        st.roots = [out.pow(2).mean()]
    else:
        st.roots = [out]
        st.root_grads = [grad_out]
    stage.plan(st)
    return st, out


def full_backward(module, x, grad_out=None, loss=False):
    """Reference: one ordinary backward on a copy of the inputs."""
    x = leaf(x)
    out = module(x)
    if loss:
        out.pow(2).mean().backward()
    else:
        out.backward(grad_out)
    return x.grad


def sentinel_grads(module):
    """Gives every parameter a known .grad, to see what I and W add."""
    for i, p in enumerate(module.parameters()):
        p.grad = torch.full_like(p, 0.25 * (i + 1))
    return [p.grad.clone() for p in module.parameters()]


class TwoBlocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = H.Block()
        self.b = H.Block()

    def forward(self, x):
        return self.b(self.a(x))


class Shared(nn.Module):
    """Awkward parameter uses: a weight tied into the parent's own code, a
    parameter of the root module, and a module applied twice in a row."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(H.DIM, H.DIM)
        self.twice = nn.Linear(H.DIM, H.DIM)
        self.scale = nn.Parameter(torch.ones(H.DIM))
        self.norm = nn.LayerNorm(H.DIM)

    def forward(self, x):
        h = self.twice(self.twice(x))
        h = self.norm(self.lin(h) * self.scale)
        # The tied use: lin's weight again, outside lin's forward.
        return h + nn.functional.linear(h.tanh(), self.lin.weight)


CASES = {
    "blocks": lambda: TwoBlocks().to(H.DTYPE),
    "first_stage": lambda: H.StageModule(first=True, last=False).to(H.DTYPE),
    "last_stage": lambda: H.StageModule(first=False, last=True).to(H.DTYPE),
    "shared": lambda: Shared().to(H.DTYPE),
}


def make_input(case):
    g = torch.Generator().manual_seed(5)
    if case == "first_stage":
        return torch.randint(0, H.VOCAB, (H.MB_SIZE, H.SEQ), generator=g)
    return torch.randn(H.MB_SIZE, H.SEQ, H.DIM, generator=g, dtype=H.DTYPE)


@pytest.mark.parametrize("case", sorted(CASES))
def test_input_then_weight_equals_full_backward(case):
    torch.manual_seed(0)
    module = CASES[case]()
    x = make_input(case)
    loss = case == "last_stage"
    with torch.no_grad():
        out_shape = module(x).shape
    grad_out = None if loss else torch.randn(out_shape, dtype=H.DTYPE,
                                             generator=torch.Generator().manual_seed(9))
    base = sentinel_grads(module)
    ref_x = full_backward(module, x, grad_out, loss)
    ref = [p.grad - b for p, b in zip(module.parameters(), base)]
    # Every weight matrix gets a gradient (a key projection's bias does
    # not: softmax ignores what it adds).
    assert all(r.abs().max() > 0 for r in ref if r.dim() == 2)

    base = sentinel_grads(module)
    stage = Stage(1, module, split=True)
    st, _ = run_forward(stage, x, grad_out, loss)
    gin = stage.backward_input(st, keep_for_w=True)
    # I: the input gradient, parameters untouched.
    for p, b in zip(module.parameters(), base):
        assert torch.equal(p.grad, b)
    if ref_x is not None:
        assert torch.allclose(gin[0], ref_x, rtol=1e-12, atol=1e-14)
    else:
        assert gin == []
    stage.backward_weight(st)
    # W: exactly what the full backward adds.
    for (name, p), b, r in zip(module.named_parameters(), base, ref):
        assert torch.allclose(p.grad - b, r, rtol=1e-10, atol=1e-13), name
    stage.remove_hooks()


def test_plan_splits_leaf_modules_and_falls_back_for_shared_uses():
    torch.manual_seed(0)
    module = Shared().to(H.DTYPE)
    stage = Stage(0, module, split=True)
    x = make_input("shared")
    st, _ = run_forward(stage, x, torch.ones(H.MB_SIZE, H.SEQ, H.DIM,
                                             dtype=H.DTYPE))
    full = {id(p) for p in st.plan.full}
    names = {id(p): n for n, p in module.named_parameters()}
    # Tied (lin.weight) and applied twice (twice.*): from the stage output.
    # lin.bias, the norm and the root's own scale: from their modules'
    # outputs (the root's output is the stage output).
    assert {names[i] for i in full} == {"lin.weight", "twice.weight",
                                        "twice.bias"}
    stage.remove_hooks()

    block = TwoBlocks().to(H.DTYPE)
    stage = Stage(0, block, split=True)
    st, _ = run_forward(stage, make_input("blocks"),
                        torch.ones(H.MB_SIZE, H.SEQ, H.DIM, dtype=H.DTYPE))
    assert not st.plan.full
    assert len(st.plan.groups) == 16  # 8 modules with parameters per block
    stage.remove_hooks()


def count_node_runs(roots):
    """Hooks every node of the graph under roots; returns (counts by node
    type name list, registry)."""
    runs = {}
    keep = []
    seen = set()
    stack = [t.grad_fn for t in roots]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        keep.append(n)
        if hasattr(n, "variable"):
            continue
        name = type(n).__name__
        key = id(n)
        runs[key] = [name, 0]

        def hook(gi, go, key=key):
            runs[key][1] += 1
        n.register_hook(hook)
        stack.extend(f for f, _ in n.next_functions)
    return runs, keep


# Nodes of the block's attention and MLP that hold no parameter: the
# backward work a second backward would repeat.
PARAM_FREE = {"SoftmaxBackward0", "GeluBackward0", "MaskedFillBackward0",
              "BmmBackward0", "DivBackward0", "TransposeBackward0"}


def test_split_runs_parameter_free_nodes_once():
    torch.manual_seed(0)
    module = TwoBlocks().to(H.DTYPE)
    stage = Stage(0, module, split=True)
    g = torch.ones(H.MB_SIZE, H.SEQ, H.DIM, dtype=H.DTYPE)
    st, out = run_forward(stage, make_input("blocks"), g)
    runs, keep = count_node_runs([out])
    stage.backward_input(st, keep_for_w=True)
    stage.backward_weight(st)
    free = [c for name, c in runs.values() if name in PARAM_FREE]
    assert free and all(c == 1 for c in free), sorted(
        (name, c) for name, c in runs.values() if name in PARAM_FREE)

    # The naive split (grad w.r.t. the input, then w.r.t. the parameters)
    # runs them twice: the check above can fail.
    st, out = run_forward(stage, make_input("blocks"), g)
    runs, keep = count_node_runs([out])
    torch.autograd.grad([out], [st.inputs[0]], [g], retain_graph=True)
    torch.autograd.grad([out], list(module.parameters()), [g])
    free = [c for name, c in runs.values() if name in PARAM_FREE]
    assert any(c == 2 for c in free)
    stage.remove_hooks()


def test_backward_is_one_pass_into_inputs_and_parameters():
    torch.manual_seed(0)
    module = H.Block().to(H.DTYPE)
    x = make_input("blocks")
    g = torch.randn(H.MB_SIZE, H.SEQ, H.DIM, dtype=H.DTYPE)
    ref_x = full_backward(module, x, g)
    ref = [p.grad.clone() for p in module.parameters()]
    module.zero_grad(set_to_none=True)
    stage = Stage(0, module, split=False)
    st, _ = run_forward(stage, x, g)
    assert st.records is None  # no split: nothing recorded
    (gin,) = stage.backward(st)
    assert torch.allclose(gin, ref_x, rtol=1e-12, atol=1e-14)
    for p, r in zip(module.parameters(), ref):
        assert torch.allclose(p.grad, r, rtol=1e-12, atol=1e-14)
