"""Mutants of what happens when a call raises: checked late, said vaguely, or work dropped.

An implementation that checks arguments when it lowers, whose errors name nothing, or that drops
what was pending when an error came. Each wraps minilazy's adapter: the engine is unchanged,
its errors are handled as such implementations handle theirs (LZ-ERR-001..003, 006..008,
LZ-DYN-004).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minilazy as ml
from minilazy.conformance.adapters.minilazy_adapter import MinilazyAdapter
from minilazy.core import barrier
from minilazy.core.ir import Op
from minilazy.core.state import LIVE


class _Wrapped(MinilazyAdapter):
    """minilazy, with what happens when a call raises changed by :meth:`failed`."""

    def failed(self, error: Exception) -> Any:
        raise error

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().apply(op, *args, **kwargs)
        except Exception as e:  # noqa: BLE001 -- every error of a call is the site
            return self.failed(e)

    def inplace(self, op: str, x: ml.Tensor, other: Any) -> ml.Tensor:
        try:
            return super().inplace(op, x, other)
        except Exception as e:  # noqa: BLE001
            self.failed(e)
            return x


class _Deferred(_Wrapped):
    late: list[Exception]

    def failed(self, error: Exception) -> Any:
        self.late.append(error)  # raised by the next observation, as a lowering error would be
        return ml.zeros(())

    def to_numpy(self, x: ml.Tensor) -> np.ndarray[Any, Any]:
        if self.late:
            raise self.late.pop(0)
        return super().to_numpy(x)

    def barrier(self) -> None:
        if self.late:
            raise self.late.pop(0)
        super().barrier()


class _Vague(_Wrapped):
    def failed(self, error: Exception) -> Any:
        raise type(error)("invalid arguments") from None


class _Poisoning(_Wrapped):
    def failed(self, error: Exception) -> Any:
        for t in LIVE.tensors():  # every pending tensor takes the error, as a failed barrier's
            if t._node.op is not Op.DATA:
                barrier._fail(t, error)
        raise error


def checks_at_the_barrier() -> MinilazyAdapter:
    """Arguments are checked when the graph is lowered, not when the op is called.

    As implementations that leave shape and dtype checks to the compiler do: a bad call
    returns a tensor and the error comes out of the next observation or barrier.
    """
    adapter = _Deferred("cpu")
    adapter.late = []
    return adapter


def errors_name_nothing() -> MinilazyAdapter:
    """Errors keep their type and lose their message: no shape, dtype or op is named."""
    return _Vague("cpu")


def errors_fail_pending() -> MinilazyAdapter:
    """A call that raises fails every pending tensor with its error (the failed-barrier path).

    As an implementation that resets its trace on an error, so that no half-made node is left.
    """
    return _Poisoning("cpu")
