"""minilazy's recording checked through its NumPy reference interpreter instead of XLA.

Ops are recorded by minilazy exactly as usual; an observation evaluates the pending graph of the
observed tensor with :func:`minilazy.introspect.reference.run` (nothing is compiled, run or
rebound), and the barrier does nothing. It checks the engine's recording, shape rules, dtype
promotion and graph keys against NumPy, separately from the lowering to XLA. It declares only what
it really has: no counters (nothing compiles), no pending state (nothing materialises), no sync.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minilazy as ml
from minilazy.conformance.adapters.minilazy_adapter import MinilazyAdapter
from minilazy.introspect import reference as interpreter

# Never auto-cut: an auto-cut would run the graph on XLA, which this adapter does not check.
_NEVER = 1 << 62


class ReferenceAdapter(MinilazyAdapter):
    """minilazy recording + the reference interpreter, as the conformance suite drives it.

    Example:
        >>> a = reference()
        >>> y = a.apply("multiply", a.from_numpy(np.arange(3.0)), 2.0)
        >>> a.to_numpy(y).tolist(), y.is_pending
        ([0.0, 2.0, 4.0], True)
    """

    def __init__(self) -> None:
        super().__init__("cpu")
        self.name = "minilazy-reference"
        self.capabilities = frozenset({"keys", "ir", "setitem", "metadata", "float64",
                                       "linalg", "fft", "complex"})

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        with ml.policy(max_pending_nodes=_NEVER):
            return super().apply(op, *args, **kwargs)

    def inplace(self, op: str, x: ml.Tensor, other: Any) -> ml.Tensor:
        with ml.policy(max_pending_nodes=_NEVER):
            return super().inplace(op, x, other)

    def to_numpy(self, x: ml.Tensor) -> np.ndarray[Any, Any]:
        return np.array(interpreter.run(x)[0])

    def barrier(self) -> None:
        pass  # nothing to materialise: observations interpret the graph

    def isolate(self) -> None:
        pass  # nothing is ever materialised, so nothing is left to a later barrier


def reference() -> ReferenceAdapter:
    """The reference adapter: minilazy checked through its NumPy reference interpreter.

    Example:
        >>> reference().capabilities >= {"keys", "setitem"}
        True
    """
    return ReferenceAdapter()
