"""Index specs: NumPy basic and integer-array indexing as static, hashable attributes.

Part of the op-rules layer. ``x[key]`` is recorded as one ``GETITEM`` node whose attrs are a
normalised :class:`~minilazy.attrs.Index` (negative indices resolved, ``...`` expanded, slices as
start/size/step), and whose extra operands are the integer index arrays. Static ints are
bounds-checked here, at the call; values of index *arrays* are data, so out-of-range entries are
clamped (implementation-defined, like XLA's gather). Never imports jax.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import EllipsisType
from typing import Any, TypeAlias, assert_never

import numpy as np

from minilazy.attrs import At, Entry, Gap, Index, NewAxis, Span, Take
from minilazy.dtypes import INTEGER
from minilazy.ir import Node, Shape, ShapeError, UnsupportedError

Item: TypeAlias = int | slice | None | EllipsisType | Node | np.ndarray[Any, Any]


def _host_index(k: np.ndarray[Any, Any], axis: int, n: int) -> None:
    """Check an index array known on the host (a list, a NumPy array) as NumPy does."""
    if k.dtype.kind not in "iu":
        raise IndexError(f"arrays used as indices must be of integer type, got {k.dtype}"
                         " (boolean masks have a data-dependent shape: use where())")
    if k.size:
        low, high = int(k.min()), int(k.max())
        if low < -n or high >= n:  # its values are known now: raise at the call, like NumPy
            bad = low if low < -n else high
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")


def index_spec(shape: Shape, key: Sequence[Item],
               to_node: Callable[[np.ndarray[Any, Any]], Node] | None = None
               ) -> tuple[Index, tuple[Node, ...]]:
    """Normalise ``key`` for an array of ``shape``: the spec attrs and the index-array operands.

    Index arrays on the host (NumPy arrays) are bounds-checked here, then made device data by
    ``to_node``; index arrays on the device (nodes) are data, clamped when out of range.

    Example:
        >>> index_spec((4, 5), (-1, slice(None, None, -2)))[0].entries
        (At(i=3, kind=0), Span(start=4, size=3, step=2, reverse=True, kind=1))
    """
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{consumed} were indexed")
    spec: list[Entry] = []
    arrays: list[Node] = []
    axis = 0
    for k in key:
        if k is Ellipsis:
            if len(shape) == consumed:  # kept: NumPy moves separated index arrays' axes first
                spec.append(Gap())
            for _ in range(len(shape) - consumed):
                spec.append(Span(0, shape[axis], 1, False))
                axis += 1
        elif k is None:
            spec.append(NewAxis())
        elif isinstance(k, np.ndarray):
            _host_index(k, axis, shape[axis])
            assert to_node is not None, "host index arrays need a to_node"
            spec.append(Take(len(arrays)))
            arrays.append(to_node(k))
            axis += 1
        elif isinstance(k, Node):
            if k.dtype not in INTEGER:
                raise IndexError(f"arrays used as indices must be of integer type, got {k.dtype}"
                                 " (boolean masks have a data-dependent shape: use where())")
            spec.append(Take(len(arrays)))
            arrays.append(k)
            axis += 1
        elif isinstance(k, slice):
            r = range(*k.indices(shape[axis]))
            spec.append(Span(r.start, len(r), abs(r.step), r.step < 0) if len(r) else
                        Span(0, 0, 1, False))
            axis += 1
        elif isinstance(k, bool):
            raise UnsupportedError("boolean scalar indices are not supported")
        else:
            n = shape[axis]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            spec.append(At(k % n))
            axis += 1
    spec.extend(Span(0, shape[a], 1, False) for a in range(axis, len(shape)))
    return Index(tuple(spec)), tuple(arrays)


def _slice(s: Span) -> slice:
    step = -s.step if s.reverse else s.step
    stop = s.start + s.size * step
    return slice(s.start, None if stop < 0 else stop, step)


def numpy_index(spec: Index, arrays: Sequence[Any]) -> tuple[Any, ...]:
    """The NumPy-style index tuple that ``spec`` stands for (what lowering and reference use).

    Example:
        >>> numpy_index(Index((At(3), Span(4, 3, 2, True))), ())
        (3, slice(4, None, -2))
    """
    out: list[Any] = []
    for entry in spec.entries:
        match entry:
            case At(i):
                out.append(i)
            case Span():
                out.append(_slice(entry))
            case NewAxis():
                out.append(None)
            case Take(k):
                out.append(arrays[k])
            case Gap():
                out.append(Ellipsis)
            case _:
                assert_never(entry)
    return tuple(out)


def index_text(spec: Index, arrays: Sequence[str]) -> str:
    """``spec`` as the Python index expression that records it (``arrays`` name the arrays).

    Example:
        >>> index_text(Index((At(3), Span(4, 3, 2, True), Take(0))), ["i"])
        '3, 4::-2, i'
    """
    parts = []
    for entry in spec.entries:
        match entry:
            case At(i):
                parts.append(str(i))
            case Span():
                s = _slice(entry)
                parts.append(f"{s.start}:{'' if s.stop is None else s.stop}"
                             + (f":{s.step}" if s.step != 1 else ""))
            case NewAxis():
                parts.append("None")
            case Take(k):
                parts.append(arrays[k])
            case Gap():
                parts.append("...")
            case _:
                assert_never(entry)
    return ", ".join(parts) if len(parts) != 1 else parts[0] + ","


def index_shape(shape: Shape, spec: Index, array_shapes: Sequence[Shape]) -> Shape:
    """The shape of ``x[spec]`` for ``x`` of ``shape``, by NumPy's rules.

    Example:
        >>> index_shape((4, 5), Index((At(3), Span(4, 3, 2, True))), ())
        (3,)
    """
    if not array_shapes:  # basic indexing only: no need to ask NumPy
        return tuple(e.size if isinstance(e, Span) else 1 for e in spec.entries
                     if isinstance(e, Span | NewAxis))
    # Mixed basic and integer-array indexing moves axes in subtle ways: let NumPy decide,
    # on a zero-strided dummy so no memory of the real size is touched.
    dummy = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape, (0,) * len(shape))
    index = numpy_index(spec, [np.zeros(s, np.intp) for s in array_shapes])
    return tuple(dummy[index].shape)


def setitem_shape(shape: Shape, spec: Index, array_shapes: Sequence[Shape],
                  value_shape: Shape) -> None:
    """Check that a value of ``value_shape`` can be assigned to ``x[spec]`` (one-way broadcast).

    Example:
        >>> setitem_shape((4, 5), Index((At(3), Span(0, 5, 1, False))), (), (2,))
        Traceback (most recent call last):
        ...
        minilazy.ir.ShapeError: setitem: cannot broadcast a value of shape (2,) into shape (5,)
    """
    target = index_shape(shape, spec, array_shapes)
    if value_shape and all(isinstance(e, At) for e in spec.entries):
        # one element, picked by integers alone: NumPy stores a scalar there, not an array
        raise ValueError(f"setitem: cannot set a single element to an array of shape "
                         f"{value_shape}")
    # NumPy drops leading length-1 axes of the value before broadcasting it into the target.
    v = list(value_shape)
    while len(v) > len(target) and v[0] == 1:
        v.pop(0)
    ok = len(v) <= len(target) and all(n in (1, m) for n, m in zip(v[::-1], target[::-1]))
    if not ok:
        raise ShapeError(f"setitem: cannot broadcast a value of shape {value_shape} into shape "
                         f"{target}")
