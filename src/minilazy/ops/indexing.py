"""The indexing family: ``GETITEM``, ``SETITEM`` and ``SCATTER_ADD``, registered into the engine.

Like the FFT family (``ops/fft.py``, the worked example). An ``Index`` attribute (one normalised
entry per indexed axis) selects what NumPy's key would: :func:`index_shape` is the shape rule,
:func:`numpy_index` the key the lowering hands to ``jax.numpy`` and the reference to NumPy.
Out-of-range index arrays are implementation-defined (LZ-NUM-005): XLA's gather clamps them and
its scatter drops their writes, and the reference does the same. How a user's key becomes an
``Index`` is :mod:`~minilazy.api.indexing`'s business; the VJPs are ``autodiff/vjps.py``'s.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, assert_never

import jax.numpy as jnp
import numpy as np

from minilazy.core import infer, lowering
from minilazy.core.attrs import At, Attrs, Gap, Index, NewAxis, Span, Take, mismatch
from minilazy.core.dtypes import DType, sized
from minilazy.core.ir import Node, Op, Shape, ShapeError
from minilazy.inspect import pycode, reference

Array = np.ndarray[Any, Any]


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
            case Gap():
                out.append(Ellipsis)
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
    if not array_shapes:  # basic indexing only: no need to ask NumPy
        return tuple(e.size if isinstance(e, Span) else 1 for e in spec.entries
                     if isinstance(e, Span | NewAxis))
    return _advanced_shape(shape, spec, tuple(array_shapes))


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


# -- the shape rules ------------------------------------------------------------------------
def _index(op: Op, attrs: Attrs) -> Index:
    match attrs:
        case Index() as spec:
            return spec
    raise mismatch(op, attrs)


def getitem_rule(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """``x[index]``'s shape (NumPy's rules) and ``x``'s dtype.

    Example:
        >>> from minilazy.core.dtypes import float32
        >>> from minilazy.core.ir import data_leaf
        >>> x, row = data_leaf(None, (4, 5), float32), Index((At(3), Span(0, 5, 1, False)))
        >>> getitem_rule(Op.GETITEM, (x,), row)
        ((5,), dtype('float32'))
    """
    shape = index_shape(xs[0].shape, _index(op, attrs), tuple(x.shape for x in xs[1:]))
    return sized("getitem", shape, xs[0].dtype), xs[0].dtype


def setitem_rule(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """``x`` with ``x[index] = value`` (or ``+=``, repeats adding up): ``x``'s shape and dtype.

    Example:
        >>> from minilazy.core.dtypes import float32
        >>> from minilazy.core.ir import data_leaf
        >>> x, v = data_leaf(None, (4, 5), float32), data_leaf(None, (5,), float32)
        >>> setitem_rule(Op.SETITEM, (x, v), Index((At(3), Span(0, 5, 1, False))))
        ((4, 5), dtype('float32'))
    """
    x, value, *index = xs
    setitem_shape(x.shape, _index(op, attrs), tuple(i.shape for i in index), value.shape)
    return x.shape, x.dtype


# -- the lowering ---------------------------------------------------------------------------
def lower_getitem(xs: Sequence[Any], n: Node) -> Any:
    """``x[index]`` on ``jax.numpy`` arrays (a gather; out-of-range index arrays clamp)."""
    return xs[0][numpy_index(_index(n.op, n.attrs), xs[1:])]


def lower_setitem(xs: Sequence[Any], n: Node) -> Any:
    """``x.at[index].set(v)`` or ``.add(v)`` (a scatter; out-of-range writes are dropped)."""
    x, v, *arrays = xs
    spec = _index(n.op, n.attrs)
    target = index_shape(x.shape, spec, [a.shape for a in arrays])
    while v.ndim > len(target) and v.shape[0] == 1:  # NumPy drops the value's leading 1s
        v = v.reshape(v.shape[1:])
    at = x.at[numpy_index(spec, arrays)]
    v = jnp.broadcast_to(lowering.astype(v, x.dtype), target)
    return at.add(v) if n.op is Op.SCATTER_ADD else at.set(v)


# -- the reference: NumPy, doing what XLA does with out-of-range index arrays ---------------
def _clamped(x: Array, arrays: Sequence[Array], spec: Index) -> list[Array]:
    """Index arrays clamped into range, as XLA's gather clamps (implementation-defined)."""
    out = []
    axis = 0
    for entry in spec.entries:
        if isinstance(entry, Take):  # an index array: it indexes axis `axis`
            n, k = x.shape[axis], widened(arrays[entry.k])
            if n:  # (an empty axis can only be indexed by an empty array: nothing to clamp)
                k = np.minimum(k, n - 1) if k.dtype.kind == "u" else np.clip(k, -n, n - 1)
            out.append(k)
        if not isinstance(entry, NewAxis | Gap):  # the others each consume one axis
            axis += 1
    return out


def reference_getitem(xs: Sequence[Array], n: Node) -> Array:
    """``x[index]`` in NumPy, index arrays clamped as XLA's gather clamps them.

    Example:
        >>> from minilazy.core.dtypes import float64, int64
        >>> from minilazy.core.ir import data_leaf
        >>> x, k = data_leaf(None, (3,), float64), data_leaf(None, (1,), int64)
        >>> n = Node(Op.GETITEM, (x, k), Index((Take(0),)), (1,), float64)
        >>> reference_getitem([np.array([1.0, 2.0, 3.0]), np.array([7])], n)
        array([3.])
    """
    x, *arrays = xs
    spec = _index(n.op, n.attrs)
    return np.asarray(x[numpy_index(spec, _clamped(x, arrays, spec))])


def _dropping(x: Array, arrays: Sequence[Array], spec: Index) -> tuple[Array, list[Array]]:
    """``x`` padded by one element on each axis an index array updates, and the index arrays.

    Each out-of-range index is sent to the padding: XLA's scatter drops such writes
    (implementation-defined, LZ-NUM-005), and so does this once the padding is cut off again.
    """
    widths = [(0, 0)] * x.ndim
    out = []
    axis = 0
    for entry in spec.entries:
        if isinstance(entry, Take):
            n, k = x.shape[axis], widened(arrays[entry.k])
            inside = k < n if k.dtype.kind == "u" else (k >= -n) & (k < n)
            out.append(np.where(inside, np.mod(k, max(n, 1)), n))
            widths[axis] = (0, 1)
        if not isinstance(entry, NewAxis | Gap):
            axis += 1
    return (np.pad(x, widths) if out else x.copy()), out


def reference_setitem(xs: Sequence[Array], n: Node) -> Array:
    """``x`` with ``x[index] = v`` (or ``+= v``, repeats adding up) in NumPy.

    Out-of-range writes are dropped, as XLA's scatter drops them.

    Example:
        >>> from minilazy.core.dtypes import float64
        >>> from minilazy.core.ir import data_leaf
        >>> x, v = data_leaf(None, (3,), float64), data_leaf(None, (), float64)
        >>> n = Node(Op.SETITEM, (x, v), Index((At(1),)), (3,), float64)
        >>> reference_setitem([np.zeros(3), np.array(5.0)], n)
        array([0., 5., 0.])
    """
    x, v, *arrays = xs
    spec = _index(n.op, n.attrs)
    out, kept = _dropping(x, arrays, spec)
    index = numpy_index(spec, kept)
    target = index_shape(x.shape, spec, [a.shape for a in arrays])
    while v.ndim > len(target):  # extra leading axes are 1s (checked when recorded)
        v = v[0]
    with np.errstate(all="ignore"):
        if n.op is Op.SCATTER_ADD:
            np.add.at(out, index, np.broadcast_to(v.astype(x.dtype), target))
        else:
            out[index] = np.broadcast_to(v.astype(x.dtype), target)
    return out[tuple(slice(0, side) for side in x.shape)]


# -- the printer ----------------------------------------------------------------------------
def python_getitem(result: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line of minilazy code that records ``n`` again: ``v1 = v0[2:, None]``.

    Example:
        >>> from minilazy.core.dtypes import float32
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (4, 5), float32)
        >>> python_getitem("v1", Node(Op.GETITEM, (x,), Index((At(3),)), (5,), float32), ["v0"])
        ['v1 = v0[3,]']
    """
    return [f"{result} = {args[0]}[{pycode.index_text(_index(n.op, n.attrs), args[1:])}]"]


def python_setitem(result: str, n: Node, args: Sequence[str]) -> list[str]:
    """The lines that record ``n`` again: a new handle, then the in-place update on it.

    Scatter-add has no public function: it is replayed.

    Example:
        >>> from minilazy.core.dtypes import float32
        >>> from minilazy.core.ir import data_leaf
        >>> x, v = data_leaf(None, (3,), float32), data_leaf(None, (), float32)
        >>> python_setitem("v2", Node(Op.SETITEM, (x, v), Index((At(1),)), (3,), float32),
        ...                ["v0", "v1"])
        ['v2 = ml.positive(v0)', 'v2[1,] = v1']
    """
    if n.op is not Op.SETITEM:
        return pycode.replayed(result, n, args)
    return [f"{result} = ml.positive({args[0]})",
            f"{result}[{pycode.index_text(_index(n.op, n.attrs), args[2:])}] = {args[1]}"]


infer.INFER[Op.GETITEM] = getitem_rule
lowering.LOWER[Op.GETITEM] = lower_getitem
reference.REFERENCE[Op.GETITEM] = reference_getitem
pycode.PYTHON[Op.GETITEM] = python_getitem
for _op in (Op.SETITEM, Op.SCATTER_ADD):
    infer.INFER[_op] = setitem_rule
    lowering.LOWER[_op] = lower_setitem
    reference.REFERENCE[_op] = reference_setitem
    pycode.PYTHON[_op] = python_setitem
