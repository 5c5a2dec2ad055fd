"""What a rule of :mod:`minilazy.pytorch.aten` receives, and the helpers rules share.

A *rule* is a function of a :class:`Call` and an aten op's arguments in its schema's order
(PyTorch's defaults filled in), minilazy tensors in place of the tensors; it returns minilazy
tensors. The dispatcher (:mod:`minilazy.pytorch.tensor`) has run the op on ``meta`` tensors
first, so a rule reads the result's shape and dtype from the call (``c.shape``, ``c.dtype``)
instead of working PyTorch's rules out again. A *view rule* returns :class:`View` steps.

Example:
    >>> c = Call(torch.empty(2, 3, dtype=torch.int32, device="meta"), ())
    >>> c.shape, c.dtype, to(c.dtype, ml.ones(2), 1.5)[0].dtype
    ((2, 3), dtype('int32'), dtype('int32'))
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

import minilazy as ml

Value = Any  # an ml.Tensor or a Python number: what a rule computes with


@dataclass(frozen=True, slots=True)
class View:
    """One step from a tensor to a view of it (``get``), and back (``put``).

    ``put(parent, value)`` is the parent's new value once the view's value is ``value``.

    Example:
        >>> v = View(lambda x: x[0], lambda x, y: assign(x, (0,), y))
        >>> v.put(ml.zeros((2, 2)), ml.ones(2)).tolist()
        [[1.0, 1.0], [0.0, 0.0]]
    """

    get: Callable[[ml.Tensor], ml.Tensor]
    put: Callable[[ml.Tensor, ml.Tensor], ml.Tensor]
    expanded: bool = False  # the view repeats elements of its parent (``expand``)


class Call:
    """What a rule knows of the op it computes: the meta results, and writes it must make.

    Example:
        >>> Call(torch.empty(2, 3, device="meta"), ()).dtype
        dtype('float32')
    """

    __slots__ = ("dtype", "metas", "out", "shape", "writes")

    def __init__(self, out: Any, metas: Sequence[Any],
                 known: tuple[tuple[int, ...], Any] | None = None) -> None:
        self.out, self.metas = out, metas
        # the (first) result's shape and dtype (as minilazy's), where it is a tensor
        self.shape: tuple[int, ...]
        self.shape, self.dtype = known if known is not None else described(out)
        self.writes: list[tuple[int, ml.Tensor]] = []  # (argument index, its new value)

    @property
    def promoted(self) -> Any:
        """The dtype PyTorch computes a comparison of the first two operands in."""
        return ml_dtype(torch.result_type(*self.metas[:2]))


DTYPES: dict[torch.dtype, Any] = {
    torch.bool: ml.bool, torch.uint8: ml.uint8, torch.uint16: ml.uint16, torch.uint32: ml.uint32,
    torch.uint64: ml.uint64, torch.int8: ml.int8, torch.int16: ml.int16,
    torch.int32: ml.int32, torch.int64: ml.int64, torch.float16: ml.float16,
    torch.float32: ml.float32, torch.float64: ml.float64, torch.complex64: ml.complex64,
    torch.complex128: ml.complex128}


def described(out: Any) -> tuple[tuple[int, ...], Any]:
    """The shape and minilazy dtype of an op's (first) meta result, where it is a tensor.

    Example:
        >>> described((torch.empty(2, device="meta"), 3))
        ((2,), dtype('float32'))
    """
    first = out[0] if isinstance(out, tuple | list) and out else out
    if isinstance(first, torch.Tensor):
        return tuple(first.shape), DTYPES.get(first.dtype)
    return (), None


def ml_dtype(dtype: torch.dtype) -> Any:
    """Minilazy's dtype for a torch dtype (``TypeError`` naming it where minilazy has none).

    Example:
        >>> ml_dtype(torch.int32)
        dtype('int32')
    """
    try:
        return DTYPES[dtype]
    except KeyError:
        raise TypeError(f"minilazy.pytorch has no dtype {dtype}") from None


# -- helpers -----------------------------------------------------------------------------------

def to(dtype: Any, *xs: Value) -> list[Value]:
    """Tensors cast to ``dtype``; Python numbers stay (minilazy types them by the tensor).

    An integer wraps into an integer ``dtype``, as in PyTorch (``uint8 + -1`` adds 255).

    Example:
        >>> to(ml.uint8, ml.ones(1), -1, 0.5)[1:]
        [255, 0.5]
    """
    return [ml.astype(x, dtype) if isinstance(x, ml.Tensor) and x.dtype != dtype
            else int(np.array(x, np.int64).astype(dtype))
            if type(x) is int and dtype.kind in "iu" else x
            for x in xs]


def assign(x: ml.Tensor, key: Any, value: Value) -> ml.Tensor:
    """``x`` with ``x[key] = value``, as a new tensor (``x`` itself is unchanged).

    Example:
        >>> x = ml.zeros(3)
        >>> assign(x, 1, 5.0).tolist(), x.tolist()
        ([0.0, 5.0, 0.0], [0.0, 0.0, 0.0])
    """
    y = ml.asarray(x, copy=True)
    with warnings.catch_warnings():  # a new value is meant: no NumPy view is written here
        warnings.simplefilter("ignore", ml.ViewWriteWarning)
        y[key] = value
    return y


def dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """Aten's ``dim`` (None, an int, a list; an empty one means all) as minilazy's ``axis``.

    Example:
        >>> dims(-1, 3), dims([], 3)
        ((2,), None)
    """
    if dim is None or (isinstance(dim, Sequence) and len(dim) == 0):
        return None
    return tuple(d % max(ndim, 1) for d in ([dim] if isinstance(dim, int) else dim))


def along(ndim: int, dim: int, item: Any) -> tuple[Any, ...]:
    """An index tuple that is ``item`` on axis ``dim`` and everything before it.

    Example:
        >>> along(3, -2, 0)
        (slice(None, None, None), 0)
    """
    return (slice(None),) * (dim % max(ndim, 1)) + (item,)


def span(n: int, start: int | None, end: int | None, step: int) -> slice:
    """Aten's slice bounds (past the end, or negative) as a slice within ``n`` items.

    Example:
        >>> span(4, 1, 2**63 - 1, 1)
        slice(1, 4, 1)
    """
    return slice(*slice(start, end, step).indices(n))


def pair(v: Sequence[int] | int) -> tuple[int, int]:
    """A layer's size argument (``3``, ``[3]`` or ``[3, 2]``) as a pair.

    Example:
        >>> pair([3]), pair(2)
        ((3, 3), (2, 2))
    """
    return (v, v) if isinstance(v, int) else (v[0], v[-1]) if len(v) else (1, 1)


def arith(f: Callable[..., Value]) -> Callable[..., Value]:
    """A rule that computes ``f`` on its operands cast to the result's dtype.

    Example:
        >>> c = Call(torch.empty(2, device="meta"), ())
        >>> arith(lambda x, y: x / y)(c, ml.asarray([1, 2]), 2).tolist()
        [0.5, 1.0]
    """
    def rule(c: Call, *args: Any) -> Value:
        return f(*to(c.dtype, *args))
    return rule


def compare(f: Callable[[Value, Value], Value]) -> Callable[..., Value]:
    """A comparison's rule: computed in the operands' promoted dtype.

    Example:
        >>> m = torch.empty(1, dtype=torch.int32, device="meta")
        >>> c = Call(torch.empty(1, dtype=torch.bool, device="meta"), (m, 0.5))
        >>> compare(ml.greater)(c, ml.asarray([1], dtype=ml.int32), 0.5).tolist()
        [True]
    """
    return lambda c, x, y: f(*to(c.promoted, x, y))


def vjp(f: Callable[..., ml.Tensor], primals: Sequence[Value], cotangent: ml.Tensor,
        mask: Sequence[bool]) -> list[ml.Tensor | None]:
    """``f``'s vector-Jacobian product for the primals ``mask`` asks for, None for the others.

    minilazy's autodiff computes it, recorded lazily: a backward op's rule without a formula.

    Example:
        >>> vjp(lambda x, y: x * y, (ml.ones(2), ml.full(2, 3.0)), ml.ones(2),
        ...     (True, False))[0].tolist()
        [3.0, 3.0]
    """
    wanted = [i for i, m in enumerate(mask) if m]
    if not wanted:
        return [None] * len(mask)
    grads = ml.grad(lambda *p: ml.sum(f(*p) * cotangent), argnums=tuple(wanted))(*primals)
    out: list[ml.Tensor | None] = [None] * len(mask)
    for i, g in zip(wanted, grads):
        out[i] = g
    return out
