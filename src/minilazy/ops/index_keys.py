"""An index key as the IR holds it: one normalised entry per indexed axis, and what it selects.

The indexing family's attribute (``ops/indexing.py`` registers the ops that take it). An
:class:`Index` is what a user's key (``x[1:, None, i]``) becomes once negative indices are
resolved, ``...`` expanded and slices made spans (``api/indexing.py`` does that):
:func:`index_shape` and :func:`setitem_shape` are its shape rules, :func:`numpy_index` the key the
lowering hands to ``jax.numpy`` and the reference to NumPy, :func:`index_text` the Python text
of it. Never imports jax.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple, TypeAlias, assert_never

import numpy as np

from minilazy.core.ir import Shape, ShapeError


# Index entries. Each carries its kind as a last, defaulted field: NamedTuples compare and hash
# as plain tuples, so without it ``At(3)`` and ``Take(3)`` would be the same key.
class At(NamedTuple):
    """An int index: position ``i`` (resolved, >= 0). The axis is dropped.

    Example:
        >>> At(3).i
        3
    """

    i: int
    kind: int = 0


class Span(NamedTuple):
    """A slice: ``size`` elements from ``start``, every ``step``-th, backwards if ``reverse``.

    Example:
        >>> Span(4, 3, 2, True).size
        3
    """

    start: int
    size: int
    step: int
    reverse: bool
    kind: int = 1

    def as_slice(self) -> slice:
        """The Python slice this span is (``Span(4, 3, 2, True)`` is ``4::-2``)."""
        step = -self.step if self.reverse else self.step
        stop = self.start + self.size * step
        return slice(self.start, None if stop < 0 else stop, step)


class NewAxis(NamedTuple):
    """``None`` in an index: a new axis of length 1.

    Example:
        >>> NewAxis() != Gap()
        True
    """

    kind: int = 2


class Take(NamedTuple):
    """An integer index array: the ``k``-th index operand of the node.

    Example:
        >>> Take(0) != At(0)
        True
    """

    k: int
    kind: int = 3


class Gap(NamedTuple):
    """A ``...`` that stands for no axes but still separates index arrays (NumPy's rule).

    Example:
        >>> Gap().kind
        4
    """

    kind: int = 4


class Param(NamedTuple):
    """An int index as a parameter: the ``k``-th index operand, a 0-d int (resolved, >= 0).

    What a Python int in a key becomes: its value is an argument of the program, not part of
    the key, so ``x[i]`` for every ``i`` runs one compiled program. The axis is dropped, as an
    :class:`At`'s; among index arrays it broadcasts with them, as NumPy's ints do.

    Example:
        >>> Param(0) != Take(0)
        True
    """

    k: int
    kind: int = 5


class Window(NamedTuple):
    """A step-1 slice of ``size`` elements whose start is the ``k``-th index operand.

    What ``x[i:i+k]`` becomes: the start is a 0-d int argument of the program (resolved,
    ``0 <= start <= n - size``), the size is static, so a window moving along an axis runs one
    compiled program. Lowering and reference cut the window out first (:func:`windows`).

    Example:
        >>> Window(0, 3).size
        3
    """

    k: int
    size: int
    kind: int = 6


Entry: TypeAlias = At | Span | NewAxis | Take | Gap | Param | Window


class Index(NamedTuple):
    """``GETITEM``, ``SETITEM``, ``SCATTER_ADD``: one entry per indexed axis, normalised.

    Example:
        >>> Index((At(0), Span(0, 2, 1, False))).entries[0]
        At(i=0, kind=0)
    """

    entries: tuple[Entry, ...]


def windows(spec: Index) -> tuple[Index, tuple[tuple[int, int, int], ...]]:
    """``spec`` once its windows are cut out of ``x``, and each window's ``(axis, k, size)``.

    Each :class:`Window` becomes the whole of its (cut) axis, a :class:`Span`: the caller
    slices ``x`` to the windows first (``lax.dynamic_slice`` in the lowering, a view in the
    reference) and applies the returned spec to that region, whose axes are ``x``'s.

    Example:
        >>> spec, cuts = windows(Index((At(1), Window(0, 3))))
        >>> spec.entries[1], cuts  # axis 1 is cut to the window's 3 elements, from operand 0
        (Span(start=0, size=3, step=1, reverse=False, kind=1), ((1, 0, 3),))
    """
    if not any(type(e) is Window for e in spec.entries):
        return spec, ()
    entries: list[Entry] = []
    cuts = []
    axis = 0
    for e in spec.entries:
        if isinstance(e, Window):
            cuts.append((axis, e.k, e.size))
            e = Span(0, e.size, 1, False)
        entries.append(e)
        if not isinstance(e, NewAxis | Gap):  # the others each consume one axis of x
            axis += 1
    return Index(tuple(entries)), tuple(cuts)


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
                out.append(entry.as_slice())
            case NewAxis():
                out.append(None)
            case Take(k):
                out.append(widened(arrays[k]))
            case Param(k):
                out.append(arrays[k])
            case Gap():
                out.append(Ellipsis)
            case Window():
                raise ValueError("cut an index's windows out first: windows(spec)")
            case _:
                assert_never(entry)
    return tuple(out)


def widened(index: Any) -> Any:
    """An index array of a narrow integer type as int32, others as they are.

    JAX makes the axis length a constant of the index's type: an int8 index on an axis of 300
    overflowed (and NumPy's clip of it against the axis length does too).

    Example:
        >>> widened(np.array([-1], np.int8)).dtype
        dtype('int32')
    """
    return index.astype(np.int32) if index.dtype.kind in "iu" and index.dtype.itemsize < 4 \
        else index


def index_shape(shape: Shape, spec: Index, array_shapes: Sequence[Shape]) -> Shape:
    """The shape of ``x[spec]`` for ``x`` of ``shape``, by NumPy's rules.

    Example:
        >>> index_shape((4, 5), Index((At(3), Span(4, 3, 2, True))), ())
        (3,)
    """
    if not any(type(e) is Take for e in spec.entries):  # basic indexing: no need to ask NumPy
        return tuple(1 if isinstance(e, NewAxis) else e.size for e in spec.entries
                     if isinstance(e, Span | Window | NewAxis))
    return _advanced_shape(shape, windows(spec)[0], tuple(array_shapes))


@functools.lru_cache(maxsize=1024)  # a model indexes alike every step: ask NumPy once
def _advanced_shape(shape: Shape, spec: Index, array_shapes: tuple[Shape, ...]) -> Shape:
    # Mixed basic and integer-array indexing moves axes in subtle ways: let NumPy decide, on
    # zero-strided dummies (the index arrays too) so no memory of the real sizes is touched.
    dummy = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape, (0,) * len(shape))
    index = numpy_index(spec, [np.broadcast_to(np.intp(0), s) for s in array_shapes])
    return tuple(dummy[index].shape)


def setitem_shape(shape: Shape, spec: Index, array_shapes: Sequence[Shape],
                  value_shape: Shape) -> None:
    """Check that a value of ``value_shape`` can be assigned to ``x[spec]`` (one-way broadcast).

    Example:
        >>> setitem_shape((4, 5), Index((At(3), Span(0, 5, 1, False))), (), (2,))
        Traceback (most recent call last):
        ...
        minilazy.core.ir.ShapeError: setitem: cannot broadcast a value of shape (2,) into shape (5,)
    """
    target = index_shape(shape, spec, array_shapes)
    if value_shape and all(isinstance(e, At | Param) for e in spec.entries):
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
                s = entry.as_slice()
                parts.append(f"{s.start}:{'' if s.stop is None else s.stop}"
                             + (f":{s.step}" if s.step != 1 else ""))
            case NewAxis():
                parts.append("None")
            case Take(k) | Param(k):
                parts.append(arrays[k])
            case Window(k, size):
                parts.append(f"{arrays[k]}:{arrays[k]}+{size}")
            case Gap():
                parts.append("...")
            case _:
                assert_never(entry)
    return ", ".join(parts) if len(parts) != 1 else parts[0] + ","
