"""Index specs: NumPy basic and integer-array indexing as static, hashable attributes.

Part of the op-rules layer. ``x[key]`` is recorded as one ``GETITEM`` node whose attrs are a
normalised *spec* (negative indices resolved, ``...`` expanded, slices as start/count/step), and
whose extra operands are the integer index arrays. Static ints are bounds-checked here, at the
call; values of index *arrays* are data, so out-of-range entries are clamped (implementation-
defined, like XLA's gather). Never imports jax.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import EllipsisType
from typing import Any, Final, TypeAlias

import numpy as np

from minilazy.dtypes import INTEGER
from minilazy.ir import Attrs, Node, Shape, ShapeError, UnsupportedError

Item: TypeAlias = int | slice | None | EllipsisType | Node | np.ndarray[Any, Any]
INT: Final = 0  # (INT, i)
SLICE: Final = 1  # (SLICE, start, count, |step|, step < 0)
NEWAXIS: Final = 2  # (NEWAXIS,)
ARRAY: Final = 3  # (ARRAY, k): the k-th index array operand
ELLIPSIS: Final = 4  # (ELLIPSIS,): a `...` standing for no axes, which still separates arrays


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
               ) -> tuple[Attrs, tuple[Node, ...]]:
    """Normalise ``key`` for an array of ``shape``: the spec attrs and the index-array operands.

    Index arrays on the host (NumPy arrays) are bounds-checked here, then made device data by
    ``to_node``; index arrays on the device (nodes) are data, clamped when out of range.

    Example:
        >>> index_spec((4, 5), (-1, slice(None, None, -2)))
        (((0, 3), (1, 4, 3, 2, True)), ())
    """
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{consumed} were indexed")
    spec: list[tuple[object, ...]] = []
    arrays: list[Node] = []
    axis = 0
    for k in key:
        if k is Ellipsis:
            if len(shape) == consumed:  # kept: NumPy moves separated index arrays' axes first
                spec.append((ELLIPSIS,))
            for _ in range(len(shape) - consumed):
                spec.append((SLICE, 0, shape[axis], 1, False))
                axis += 1
        elif k is None:
            spec.append((NEWAXIS,))
        elif isinstance(k, np.ndarray):
            _host_index(k, axis, shape[axis])
            assert to_node is not None, "host index arrays need a to_node"
            spec.append((ARRAY, len(arrays)))
            arrays.append(to_node(k))
            axis += 1
        elif isinstance(k, Node):
            if k.dtype not in INTEGER:
                raise IndexError(f"arrays used as indices must be of integer type, got {k.dtype}"
                                 " (boolean masks have a data-dependent shape: use where())")
            spec.append((ARRAY, len(arrays)))
            arrays.append(k)
            axis += 1
        elif isinstance(k, slice):
            r = range(*k.indices(shape[axis]))
            spec.append((SLICE, r.start, len(r), abs(r.step), r.step < 0) if len(r) else
                        (SLICE, 0, 0, 1, False))
            axis += 1
        elif isinstance(k, bool):
            raise UnsupportedError("boolean scalar indices are not supported")
        else:
            n = shape[axis]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            spec.append((INT, k % n))
            axis += 1
    spec.extend((SLICE, 0, shape[a], 1, False) for a in range(axis, len(shape)))
    return tuple(spec), tuple(arrays)


def numpy_index(spec: Attrs, arrays: Sequence[Any]) -> tuple[Any, ...]:
    """The NumPy-style index tuple that ``spec`` stands for (what lowering and reference use).

    Example:
        >>> numpy_index(((0, 3), (1, 4, 3, 2, True)), ())
        (3, slice(4, None, -2))
    """
    out: list[Any] = []
    for entry in spec:
        assert isinstance(entry, tuple)
        kind = entry[0]
        if kind == INT:
            out.append(entry[1])
        elif kind == NEWAXIS:
            out.append(None)
        elif kind == ARRAY:
            out.append(arrays[entry[1]])
        elif kind == ELLIPSIS:
            out.append(Ellipsis)
        else:
            _, start, count, step, neg = entry
            step = -step if neg else step
            stop = start + count * step
            out.append(slice(start, None if stop < 0 else stop, step))
    return tuple(out)


def index_text(spec: Attrs, arrays: Sequence[str]) -> str:
    """``spec`` as the Python index expression that records it (``arrays`` name the arrays).

    Example:
        >>> index_text(((0, 3), (1, 4, 3, 2, True), (3, 0)), ["i"])
        '3, 4::-2, i'
    """
    parts = []
    for entry in spec:
        assert isinstance(entry, tuple)
        kind = entry[0]
        if kind == INT:
            parts.append(str(entry[1]))
        elif kind == NEWAXIS:
            parts.append("None")
        elif kind == ARRAY:
            parts.append(arrays[entry[1]])
        elif kind == ELLIPSIS:
            parts.append("...")
        else:
            _, start, count, step, neg = entry
            step = -step if neg else step
            stop = start + count * step
            parts.append(f"{start}:{'' if stop < 0 else stop}" + (f":{step}" if step != 1 else ""))
    return ", ".join(parts) if len(parts) != 1 else parts[0] + ","


def index_shape(shape: Shape, spec: Attrs, array_shapes: Sequence[Shape]) -> Shape:
    """The shape of ``x[spec]`` for ``x`` of ``shape``, by NumPy's rules.

    Example:
        >>> index_shape((4, 5), ((0, 3), (1, 4, 3, 2, True)), ())
        (3,)
    """
    if not array_shapes:  # basic indexing only: no need to ask NumPy
        out: list[int] = []
        for entry in spec:
            assert isinstance(entry, tuple)
            if entry[0] == SLICE:
                out.append(entry[2])
            elif entry[0] == NEWAXIS:
                out.append(1)
        return tuple(out)
    # Mixed basic and integer-array indexing moves axes in subtle ways: let NumPy decide,
    # on a zero-strided dummy so no memory of the real size is touched.
    dummy = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape, (0,) * len(shape))
    index = numpy_index(spec, [np.zeros(s, np.intp) for s in array_shapes])
    return tuple(dummy[index].shape)


def setitem_shape(shape: Shape, spec: Attrs, array_shapes: Sequence[Shape],
                  value_shape: Shape) -> None:
    """Check that a value of ``value_shape`` can be assigned to ``x[spec]`` (one-way broadcast).

    Example:
        >>> setitem_shape((4, 5), ((0, 3), (1, 0, 5, 1, False)), (), (2,))
        Traceback (most recent call last):
        ...
        minilazy.ir.ShapeError: setitem: cannot broadcast a value of shape (2,) into shape (5,)
    """
    target = index_shape(shape, spec, array_shapes)
    if value_shape and all(isinstance(e, tuple) and e[0] == INT for e in spec):
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
