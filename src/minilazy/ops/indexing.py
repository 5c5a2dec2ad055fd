"""The indexing family: ``GETITEM``, ``SETITEM`` and ``SCATTER_ADD``, registered into the engine.

Like the FFT family (``ops/fft.py``, the worked example). An ``Index`` attribute (one normalised
entry per indexed axis, ``ops/index_keys.py``) selects what NumPy's key would: its shape rule,
and the key the lowering hands to ``jax.numpy`` and the reference to NumPy.
Out-of-range index arrays are implementation-defined (LZ-NUM-005): XLA's gather clamps them and
its scatter drops their writes, and the reference does the same. How a user's key becomes an
``Index`` is :mod:`~minilazy.api.indexing`'s business; the VJPs are ``autodiff/vjps.py``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from minilazy.core import infer, ir, lowering
from minilazy.core.attrs import Attrs, mismatch
from minilazy.core.dtypes import DType, sized
from minilazy.core.ir import Node, Op, Shape
from minilazy.introspect import printers, pycode, reference
from minilazy.ops.index_keys import (
    Gap,
    Index,
    NewAxis,
    Take,
    index_shape,
    index_text,
    numpy_index,
    setitem_shape,
    widened,
    windows,
)

Array = np.ndarray[Any, Any]


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
        >>> from minilazy.ops.index_keys import At, Span
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
        >>> from minilazy.ops.index_keys import At, Span
        >>> x, v = data_leaf(None, (4, 5), float32), data_leaf(None, (5,), float32)
        >>> setitem_rule(Op.SETITEM, (x, v), Index((At(3), Span(0, 5, 1, False))))
        ((4, 5), dtype('float32'))
    """
    x, value, *index = xs
    setitem_shape(x.shape, _index(op, attrs), tuple(i.shape for i in index), value.shape)
    return x.shape, x.dtype


# -- the lowering ---------------------------------------------------------------------------
def _region(x: Any, arrays: Sequence[Any], spec: Index) -> tuple[Index, list[Any], list[int]]:
    """The spec once ``x`` is cut to its windows, and the cut's starts and sizes on ``x``."""
    static, cuts = windows(spec)
    starts: list[Any] = [0] * x.ndim
    sizes = list(x.shape)
    for axis, k, size in cuts:
        starts[axis], sizes[axis] = arrays[k], size
    return static, starts, sizes


def lower_getitem(xs: Sequence[Any], n: Node) -> Any:
    """``x[index]`` on ``jax.numpy`` arrays (a gather; out-of-range index arrays clamp).

    A window (``x[i:i+k]``) is a ``dynamic_slice`` at the program's argument ``i`` first.
    """
    x, *arrays = xs
    static, starts, sizes = _region(x, arrays, _index(n.op, n.attrs))
    if static is not n.attrs:
        x = lax.dynamic_slice(x, starts, sizes)
    return x[numpy_index(static, arrays)]


def lower_setitem(xs: Sequence[Any], n: Node) -> Any:
    """``x.at[index].set(v)`` or ``.add(v)`` (a scatter; out-of-range writes are dropped).

    Through a window: the window's region is cut out, updated, and put back in place.
    """
    whole, v, *arrays = xs
    spec, starts, sizes = _region(whole, arrays, _index(n.op, n.attrs))
    x = whole if spec is n.attrs else lax.dynamic_slice(whole, starts, sizes)
    target = index_shape(x.shape, spec, [a.shape for a in arrays])
    while v.ndim > len(target) and v.shape[0] == 1:  # NumPy drops the value's leading 1s
        v = v.reshape(v.shape[1:])
    at = x.at[numpy_index(spec, arrays)]
    v = jnp.broadcast_to(lowering.astype(v, x.dtype), target)
    x = at.add(v) if n.op is Op.SCATTER_ADD else at.set(v)
    return x if spec is n.attrs else lax.dynamic_update_slice(whole, x, starts)


# -- the reference: NumPy, doing what XLA does with out-of-range index arrays ---------------
def _cut(x: Array, arrays: Sequence[Array], spec: Index
         ) -> tuple[Index, tuple[slice, ...] | None]:
    """The spec once ``x`` is cut to its windows, and the slices that cut it (``None``: none)."""
    static, cuts = windows(spec)
    if not cuts:  # (and x as it is: a 0-d array indexed by () would be a NumPy scalar)
        return static, None
    at = [slice(None)] * x.ndim
    for axis, k, size in cuts:
        at[axis] = slice(int(arrays[k]), int(arrays[k]) + size)
    return static, tuple(at)


def _clamped(x: Array, arrays: Sequence[Array], spec: Index) -> list[Array]:
    """Index arrays clamped into range, as XLA's gather clamps (implementation-defined)."""
    out = list(arrays)  # (an int parameter is in range: checked when it was recorded)
    axis = 0
    for entry in spec.entries:
        if isinstance(entry, Take):  # an index array: it indexes axis `axis`
            n, k = x.shape[axis], widened(arrays[entry.k])
            if n:  # (an empty axis can only be indexed by an empty array: nothing to clamp)
                k = np.minimum(k, n - 1) if k.dtype.kind == "u" else np.clip(k, -n, n - 1)
            out[entry.k] = k
        if not isinstance(entry, NewAxis | Gap):  # the others each consume one axis
            axis += 1
    return out


def reference_getitem(xs: Sequence[Array], n: Node) -> Array:
    """``x[index]`` in NumPy, index arrays clamped as XLA's gather clamps them.

    Example:
        >>> from minilazy.core.dtypes import float64, int64
        >>> from minilazy.core.ir import data_leaf
        >>> from minilazy.ops.index_keys import At, Span
        >>> x, k = data_leaf(None, (3,), float64), data_leaf(None, (1,), int64)
        >>> n = Node(Op.GETITEM, (x, k), Index((Take(0),)), (1,), float64)
        >>> reference_getitem([np.array([1.0, 2.0, 3.0]), np.array([7])], n)
        array([3.])
    """
    x, *arrays = xs
    spec, at = _cut(x, arrays, _index(n.op, n.attrs))
    x = x if at is None else x[at]
    return np.asarray(x[numpy_index(spec, _clamped(x, arrays, spec))])


def _dropping(x: Array, arrays: Sequence[Array], spec: Index) -> tuple[Array, list[Array]]:
    """``x`` padded by one element on each axis an index array updates, and the index arrays.

    Each out-of-range index is sent to the padding: XLA's scatter drops such writes
    (implementation-defined, LZ-NUM-005), and so does this once the padding is cut off again.
    """
    widths = [(0, 0)] * x.ndim
    out = list(arrays)  # (an int parameter is in range: checked when it was recorded)
    axis = 0
    for entry in spec.entries:
        if isinstance(entry, Take):
            n, k = x.shape[axis], widened(arrays[entry.k])
            inside = k < n if k.dtype.kind == "u" else (k >= -n) & (k < n)
            out[entry.k] = np.where(inside, np.mod(k, max(n, 1)), n)
            widths[axis] = (0, 1)
        if not isinstance(entry, NewAxis | Gap):
            axis += 1
    return (np.pad(x, widths) if any(w != (0, 0) for w in widths) else x.copy()), out


def reference_setitem(xs: Sequence[Array], n: Node) -> Array:
    """``x`` with ``x[index] = v`` (or ``+= v``, repeats adding up) in NumPy.

    Out-of-range writes are dropped, as XLA's scatter drops them.

    Example:
        >>> from minilazy.core.dtypes import float64
        >>> from minilazy.core.ir import data_leaf
        >>> from minilazy.ops.index_keys import At, Span
        >>> x, v = data_leaf(None, (3,), float64), data_leaf(None, (), float64)
        >>> n = Node(Op.SETITEM, (x, v), Index((At(1),)), (3,), float64)
        >>> reference_setitem([np.zeros(3), np.array(5.0)], n)
        array([0., 5., 0.])
    """
    whole, v, *arrays = xs
    spec, at = _cut(whole, arrays, _index(n.op, n.attrs))
    x = whole if at is None else whole[at]
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
    out = out[tuple(slice(0, side) for side in x.shape)]
    if at is None:
        return out
    whole = whole.copy()
    whole[at] = out
    return whole


# -- the printers ---------------------------------------------------------------------------
def ir_operands(n: Node, names: list[str]) -> list[str]:
    """How the IR text shows an indexing node's operands: ``%0[1:, %2]`` (and the value).

    Example:
        >>> from minilazy.core.dtypes import float32
        >>> from minilazy.core.ir import data_leaf
        >>> from minilazy.ops.index_keys import At, Span
        >>> x = data_leaf(None, (4,), float32)
        >>> ir_operands(Node(Op.GETITEM, (x,), Index((Span(1, 3, 1, False),)), (3,), float32),
        ...             ["%0"])
        ['%0[1:4,]']
    """
    first = 1 if n.op is Op.GETITEM else 2
    return [f"{names[0]}[{index_text(_index(n.op, n.attrs), names[first:])}]", *names[1:first]]


def python_getitem(result: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line of minilazy code that records ``n`` again: ``v1 = v0[2:, None]``.

    Example:
        >>> from minilazy.core.dtypes import float32
        >>> from minilazy.core.ir import data_leaf
        >>> from minilazy.ops.index_keys import At, Span
        >>> x = data_leaf(None, (4, 5), float32)
        >>> python_getitem("v1", Node(Op.GETITEM, (x,), Index((At(3),)), (5,), float32), ["v0"])
        ['v1 = v0[3,]']
    """
    return [f"{result} = {args[0]}[{index_text(_index(n.op, n.attrs), args[1:])}]"]


def python_setitem(result: str, n: Node, args: Sequence[str]) -> list[str]:
    """The lines that record ``n`` again: a new handle, then the in-place update on it.

    Scatter-add has no public function: it is replayed.

    Example:
        >>> from minilazy.core.dtypes import float32
        >>> from minilazy.core.ir import data_leaf
        >>> from minilazy.ops.index_keys import At, Span
        >>> x, v = data_leaf(None, (3,), float32), data_leaf(None, (), float32)
        >>> python_setitem("v2", Node(Op.SETITEM, (x, v), Index((At(1),)), (3,), float32),
        ...                ["v0", "v1"])
        ['v2 = ml.positive(v0)', 'v2[1,] = v1']
    """
    if n.op is not Op.SETITEM:
        return pycode.replayed(result, n, args)
    return [f"{result} = ml.positive({args[0]})",
            f"{result}[{index_text(_index(n.op, n.attrs), args[2:])}] = {args[1]}"]


ir.FAMILY.update(dict.fromkeys([Op.GETITEM, Op.SETITEM, Op.SCATTER_ADD], (Index,)))
printers.TEXT[Index] = lambda attrs: ""  # shown with the operands
printers.OPERANDS.update(dict.fromkeys([Op.GETITEM, Op.SETITEM, Op.SCATTER_ADD], ir_operands))
infer.INFER[Op.GETITEM] = getitem_rule
lowering.LOWER[Op.GETITEM] = lower_getitem
reference.REFERENCE[Op.GETITEM] = reference_getitem
pycode.PYTHON[Op.GETITEM] = python_getitem
for _op in (Op.SETITEM, Op.SCATTER_ADD):
    infer.INFER[_op] = setitem_rule
    lowering.LOWER[_op] = lower_setitem
    reference.REFERENCE[_op] = reference_setitem
    pycode.PYTHON[_op] = python_setitem
