"""Activation bytes: what the autograd graph of one forward keeps alive for
its backward, measured by walking the graph's saved tensors (pps.torch's
counterpart of the C++ runtime's tracking allocator)."""

from typing import Any, Dict, Sequence, Tuple

from torch import Tensor

_SAVED_NAMES: Dict[type, Tuple[str, ...]] = {}


def _storage(t: Tensor):
    us = getattr(t, "untyped_storage", None)
    return us() if us is not None else t.storage()


def _graph_bytes(roots: Sequence[Tensor], extra: Sequence[Tensor],
                 exclude: set) -> int:
    """Bytes of the distinct storages the autograd graph under roots saved
    for its backward (plus `extra`), without those in `exclude` (the
    parameters): the activation memory one F keeps alive."""
    seen_storage = set(exclude)
    total = 0

    def add(t: Any) -> None:
        nonlocal total
        if isinstance(t, Tensor):
            try:
                s = _storage(t)
                key = s.data_ptr()
            except Exception:
                return
            if key in seen_storage:
                return
            seen_storage.add(key)
            total += s.nbytes()
        elif isinstance(t, (tuple, list)):
            for x in t:
                add(x)

    for t in extra:
        add(t)
    keep = []
    seen = set()
    stack = [t.grad_fn for t in roots if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        keep.append(node)
        if hasattr(node, "variable"):
            continue
        names = _SAVED_NAMES.get(type(node))
        if names is None:
            names = tuple(a for a in dir(node) if a.startswith("_saved_")
                          and not a.endswith(("_sizes", "_strides")))
            if hasattr(node, "saved_tensors"):
                names += ("saved_tensors",)
            _SAVED_NAMES[type(node)] = names
        for a in names:
            try:
                add(getattr(node, a))
            except Exception:
                pass
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)
    return total
