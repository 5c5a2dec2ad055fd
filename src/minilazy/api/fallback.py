"""Host fallback: how an op whose result shape depends on data gets its inputs' values.

Part of the tensor's surface, above core's barrier. A compiled program has static shapes, so
``x[mask]``, ``nonzero`` and ``unique_values`` cannot be recorded: :func:`host_values` runs one
barrier on their inputs only (other pending work stays pending), copies the values to the host
for NumPy to compute on, and counts the call, as PyTorch/XLA counts its ``aten::`` fallbacks.
What NumPy computes goes back as device data: a leaf, so gradients stop there. Never imports jax.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from minilazy.core.barrier import materialise
from minilazy.core.ir import Op
from minilazy.core.metrics import COUNTERS
from minilazy.core.state import LIVE, Handle, current_policy, user_site
from minilazy.core.tracer import to_host

# What the error policy's message suggests instead, per op (what keeps its shape static).
_INSTEAD: Final = {
    "getitem": "where(mask, x, 0) keeps x's shape, and a NumPy mask is on the host already",
    "setitem": "x[mask] = v is a where() when v is a scalar or broadcasts over the masked elements",
}


def host_values(op: str, tensors: Sequence[Handle]) -> list[np.ndarray[Any, Any]]:
    """The values of ``tensors`` on the host, for op ``op`` to compute there (a host fallback).

    One barrier materialises the pending ones among ``tensors``, and nothing else (all live
    tensors under ``BarrierPolicy(observe_all=True)``, as for any observation). The call counts
    once in ``ml.metrics()``: ``fallbacks``, ``fallback_ops[op]`` and ``fallback_sites``, which
    names the user's line. An input that fails to run raises its error here, uncounted.

    Under ``BarrierPolicy(fallback="error")`` it raises ``RuntimeError`` instead, before anything
    runs. ``RuntimeError``, not ``ValueError``: the arguments are valid (NumPy would accept them);
    it is the engine's configuration that refuses, as PyTorch raises ``RuntimeError`` for what
    its backend cannot do.

    Example:
        >>> import minilazy as ml
        >>> ml.reset_metrics()
        >>> host_values("nonzero", [ml.asarray([0, 3]) + 1])[0].tolist()
        [1, 4]
        >>> ml.metrics().fallback_ops["nonzero"]
        1
        >>> with ml.policy(fallback="error"):
        ...     host_values("nonzero", [ml.asarray([0, 3])])
        Traceback (most recent call last):
        ...
        RuntimeError: nonzero: the shape of its result depends on values, so it would run ...
    """
    if current_policy().fallback == "error":
        instead = f"; {_INSTEAD[op]}" if op in _INSTEAD else ""
        raise RuntimeError(f"{op}: the shape of its result depends on values, so it would run on "
                           f"the host, which BarrierPolicy(fallback='error') forbids" + instead)
    pending = [t for t in tensors if t._node.op is not Op.DATA]
    if pending:  # one barrier for all inputs (x[m1, m2] reads two masks)
        materialise(LIVE.tensors() if current_policy().observe_all else pending, op)
    values = [to_host(t, op) for t in tensors]  # ready now: copies (a failed one raises)
    COUNTERS.fallbacks += 1
    COUNTERS.fallback_ops[op] += 1
    COUNTERS.fallback_sites[f"{op} at {user_site()}"] += 1
    return values
