"""Mutants of minilazy's reverse mode: a VJP rule (or its cotangent fitting) wrong in one place.

Like :mod:`.engine`'s: each factory patches minilazy in this process and returns the ordinary
adapter, which still claims every capability.
"""

from __future__ import annotations

from typing import Any

from minilazy.api import convolution
from minilazy.api import tensor as surface
from minilazy.api.tensor import Tensor
from minilazy.autodiff import vjps
from minilazy.conformance.adapters.minilazy_adapter import MinilazyAdapter, cpu
from minilazy.conformance.mutate.engine import _set, _set_table
from minilazy.core.dtypes import DType
from minilazy.core.ir import Node, Op


def vjp_matmul_untransposed() -> MinilazyAdapter:
    """The gradient of ``a @ b`` with respect to ``a`` uses ``b``, not its transpose."""
    def matmul(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Any:
        a, b = xs
        if a.ndim == 2 and b.ndim == 2 and b.shape[0] == b.shape[1]:
            return g @ b, a.mT @ g
        return real(g, y, xs, n)

    real = vjps.VJP[Op.MATMUL]
    _set_table(vjps.VJP, Op.MATMUL, matmul)
    return cpu()


def vjp_conv_unflipped() -> MinilazyAdapter:
    """The gradient of a convolution with respect to its input uses the filter unreversed.

    A correlation where the transpose needs a convolution: right only for symmetric windows.
    """
    _set(convolution, "flip", lambda x, axis=None: x)
    return cpu()


def vjp_cumsum_forward() -> MinilazyAdapter:
    """The gradient of a cumulative sum scans the cotangent the way the sum went, not back.

    ``x[i]`` gets the cotangents of the sums up to ``i``, not of those from ``i`` on.
    """
    def cumsum(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Any:
        return (surface.record(Op.CUMSUM, (g._node,), n.attrs, g.device),)

    _set_table(vjps.VJP, Op.CUMSUM, cumsum)
    return cpu()


def vjp_broadcast_not_summed() -> MinilazyAdapter:
    """A cotangent is not summed over the size-1 axes broadcasting stretched.

    It keeps their first slice instead.
    """
    real = vjps.fit

    def fit(ct: Tensor, shape: tuple[int, ...], dtype: DType) -> Tensor:
        lead = ct.ndim - len(shape)
        if lead >= 0 and ct.shape[lead:] != shape and all(
                d in (1, c) for d, c in zip(shape, ct.shape[lead:])):
            index = tuple(slice(None) if d == c else slice(0, 1)
                          for d, c in zip(shape, ct.shape[lead:]))
            ct = ct[(*[slice(None)] * lead, *index)]
        return real(ct, shape, dtype)

    _set(vjps, "fit", fit)
    return cpu()
