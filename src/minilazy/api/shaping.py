"""Shape functions: reshape, permute_dims, squeeze, concat, stack, flip, take and friends.

In the Array API namespace (``minilazy.api``). Each is one recorded op (``expand_dims`` and
``squeeze`` are reshapes; ``stack`` is reshapes and a concat; ``tril``/``triu`` an iota mask and
a ``where``; ``take_along_axis`` one integer-array index); XLA turns most of them into index
arithmetic inside fused kernels, so they cost no copies. Never imports jax.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from minilazy.api.axes import integers, normalize_axes, normalize_axis
from minilazy.api.creation import device_of, tensor, tensors
from minilazy.api.elementwise import where
from minilazy.api.keywords import keywords
from minilazy.api.tensor import Tensor, TensorLike, as_node, record
from minilazy.core import dtypes
from minilazy.core.attrs import Iota, Permute, ToShape
from minilazy.core.infer import broadcast_shapes, describe
from minilazy.core.ir import Op, ShapeError
from minilazy.ops.shaping import Axes, Axis


@keywords
def reshape(x: TensorLike, /, shape: int | Sequence[int], *, copy: bool | None = None) -> Tensor:
    """``x`` with a new shape of the same size; one dimension may be -1 (inferred).

    Example:
        >>> import minilazy as ml
        >>> ml.reshape(ml.arange(6), (2, -1)).shape
        (2, 3)
    """
    x = tensor(x)
    dims = list(integers("reshape", shape))
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise ValueError(f"reshape: invalid shape {tuple(dims)}")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or x.size % known:
            raise ShapeError(f"reshape: cannot reshape {describe(x._node)} into shape "
                             f"{tuple(dims)}")
        dims[dims.index(-1)] = x.size // known
    new = tuple(dims)
    if new == x.shape:
        return Tensor(x._node, x.device)
    return record(Op.RESHAPE, (x._node,), ToShape(new), x.device)


def permute_dims(x: TensorLike, /, axes: Sequence[int]) -> Tensor:
    """``x`` with its axes reordered: result axis ``i`` is ``x``'s axis ``axes[i]``.

    Example:
        >>> import minilazy as ml
        >>> ml.permute_dims(ml.ones((2, 3, 4)), (2, 0, 1)).shape
        (4, 2, 3)
    """
    x = tensor(x)
    perm = tuple(a % x.ndim if x.ndim and -x.ndim <= a < x.ndim else a
                 for a in integers("permute_dims", axes))
    return record(Op.TRANSPOSE, (x._node,), Permute(perm), x.device)


def matrix_transpose(x: TensorLike, /) -> Tensor:
    """Swap the last two axes (a stack of matrix transposes).

    Example:
        >>> import minilazy as ml
        >>> ml.matrix_transpose(ml.ones((5, 2, 3))).shape
        (5, 3, 2)
    """
    x = tensor(x)
    return x.mT


def expand_dims(x: TensorLike, /, axis: int | Sequence[int] = 0) -> Tensor:
    """``x`` with a new axis of length 1 inserted at ``axis`` (or at each of a tuple of axes).

    Axes count in the result, as in NumPy: ``expand_dims(x, (0, -1))`` adds a first and a last.

    Example:
        >>> import minilazy as ml
        >>> ml.expand_dims(ml.ones((2, 3)), axis=-1).shape
        (2, 3, 1)
        >>> ml.expand_dims(ml.ones((2, 3)), axis=(0, -1)).shape
        (1, 2, 3, 1)
    """
    x = tensor(x)
    if isinstance(axis, (tuple, list)):
        axes = normalize_axes("expand_dims", axis, x.ndim + len(axis))
    else:
        axes = (normalize_axis("expand_dims", axis, x.ndim + 1),)
    old = iter(x.shape)
    return reshape(x, tuple(1 if i in axes else next(old) for i in range(x.ndim + len(axes))))


def squeeze(x: TensorLike, /, axis: int | Sequence[int] | None = None) -> Tensor:
    """``x`` without the length-1 axes named by ``axis`` (all of them when None).

    Example:
        >>> import minilazy as ml
        >>> ml.squeeze(ml.ones((1, 2, 1)), axis=0).shape
        (2, 1)
    """
    x = tensor(x)
    if axis is None:
        axes = tuple(i for i, n in enumerate(x.shape) if n == 1)
    elif x.ndim == 0 and not isinstance(axis, bool) and axis in (0, -1):
        axes = ()  # NumPy lets axis 0 name a 0-d array's (absent) axis here
    else:
        axes = normalize_axes("squeeze", axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} of {describe(x._node)} has length "
                             f"{x.shape[a]}, not 1")
    return reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes))


def broadcast_to(x: TensorLike, /, shape: Sequence[int]) -> Tensor:
    """``x`` broadcast to ``shape`` (NumPy rules: new axes on the left, length-1 axes stretch).

    Example:
        >>> import minilazy as ml
        >>> ml.broadcast_to(ml.ones((3,)), (2, 3)).shape
        (2, 3)
    """
    x = tensor(x)
    return record(Op.BROADCAST, (x._node,), ToShape(integers("broadcast_to", shape)),
                  x.device)


@keywords
def concat(arrays: Sequence[TensorLike], /, *, axis: int | None = 0) -> Tensor:
    """Join tensors along an existing axis (flattened first when ``axis`` is None).

    Example:
        >>> import minilazy as ml
        >>> ml.concat([ml.ones((2,)), ml.zeros((1,))]).tolist()
        [1.0, 1.0, 0.0]
    """
    arrays = tensors(*arrays)
    if not arrays:
        raise ValueError("concat: needs at least one tensor")
    first = arrays[0]
    if axis is None:  # of the flattened tensors
        return concat([reshape(a, (-1,)) for a in arrays], axis=0)
    if first.ndim == 0:
        raise ValueError("concat: zero-dimensional tensors cannot be concatenated")
    a = normalize_axis("concat", axis, arrays[0].ndim)
    nodes = tuple(as_node(t, first.device) for t in arrays)
    return record(Op.CONCAT, nodes, Axis(a), first.device)


@keywords
def stack(arrays: Sequence[TensorLike], /, *, axis: int = 0) -> Tensor:
    """Join same-shaped tensors along a new axis.

    Example:
        >>> import minilazy as ml
        >>> ml.stack([ml.ones((2,)), ml.zeros((2,))], axis=1).shape
        (2, 2)
    """
    arrays = tensors(*arrays)
    if not arrays:
        raise ValueError("stack: needs at least one tensor")
    normalize_axis("stack", axis, arrays[0].ndim + 1)  # an int: expand_dims takes tuples too
    shapes = {t.shape for t in arrays}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all tensors must have the same shape, got "
                         f"{', '.join(describe(t._node) for t in arrays)}")
    return concat([expand_dims(t, axis) for t in arrays], axis=axis)


@keywords
def flip(x: TensorLike, /, *, axis: int | Sequence[int] | None = None) -> Tensor:
    """``x`` with the order of elements reversed along ``axis`` (all axes when None).

    Example:
        >>> import minilazy as ml
        >>> ml.flip(ml.arange(3)).tolist()
        [2, 1, 0]
    """
    x = tensor(x)
    axes = normalize_axes("flip", axis, x.ndim)
    return record(Op.FLIP, (x._node,), Axes(axes), x.device)


def _host_indices(name: str, indices: TensorLike) -> Tensor | np.ndarray[Any, Any]:
    """A tensor of indices as it is; host indices (an int, a list, an array) kept on the host.

    Kept there, their values are known when the gather is recorded, so indexing checks them
    against the axis (``IndexError`` at the call, as NumPy); a tensor's are data (LZ-NUM-005).
    """
    if isinstance(indices, Tensor):
        kind = "iu" if indices.dtype in dtypes.INTEGER else "?"
        dtype = describe(indices._node)
    else:
        indices = np.asarray(indices)
        if indices.size == 0 and indices.dtype.kind == "f":
            indices = indices.astype(np.intp)  # `[]`: NumPy reads an empty index list so
        kind, dtype = indices.dtype.kind, f"{indices.dtype}{list(indices.shape)}"
    if kind not in "iu":
        raise TypeError(f"{name}: indices must be integers, got {dtype}")
    return indices


@keywords
def take(x: TensorLike, indices: TensorLike, /, *, axis: int | None = None) -> Tensor:
    """Elements of ``x`` at integer ``indices`` along ``axis`` (of the flattened ``x`` if None).

    Indices known on the host (a Python int, a list, a NumPy array) are checked at the call: one
    out of range raises ``IndexError``, as in NumPy. An index *tensor*'s values are data, unknown
    when recorded: out-of-range ones are clamped into range (LZ-NUM-005).

    Example:
        >>> import minilazy as ml
        >>> ml.take(ml.asarray([[1, 2], [3, 4]]), ml.asarray([1, 0]), axis=1).tolist()
        [[2, 1], [4, 3]]
        >>> ml.take(ml.asarray([1, 2]), 2)
        Traceback (most recent call last):
        ...
        IndexError: index 2 is out of bounds for axis 0 with size 2
    """
    x = tensor(x, device_of(x, indices))
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    a = normalize_axis("take", axis, x.ndim)
    return x[(slice(None),) * a + (_host_indices("take", indices),)]


def _counting(shape: tuple[int, ...], axis: int, x: Tensor) -> Tensor:
    """An int64 iota of ``shape`` counting along ``axis``: recorded, never transferred."""
    return record(Op.IOTA, (), Iota(shape, axis, dtypes.CODE[dtypes.int64]), x.device)


def _band(name: str, x: Tensor, k: int, lower: bool) -> Tensor:
    """``x`` with the elements of its last two axes outside a band set to zero."""
    if x.ndim < 2:
        raise ValueError(f"{name}: x must have at least two dimensions, got {describe(x._node)}")
    m, n = x.shape[-2:]
    k = max(-m, min(n, operator.index(k)))  # the same band, and a k that fits in int64
    # Row and column positions, compared by broadcasting (no int64 matrix beside x; the
    # positions obey the size rule, as NumPy's own aranges do). k is a Python int, so a scalar
    # parameter: another diagonal reuses the compiled program.
    diagonal, cols = _counting((m, 1), 0, x) + k, _counting((1, n), 1, x)
    keep = cols <= diagonal if lower else cols >= diagonal
    return where(keep, x, False if x.dtype == dtypes.bool_ else 0)


@keywords
def tril(x: TensorLike, /, *, k: int = 0) -> Tensor:
    """The lower triangle of each matrix in ``x`` (its last two axes), zeros above diagonal ``k``.

    Recorded as an iota comparison and a ``where``, so its gradient needs no rule of its own.

    Example:
        >>> import minilazy as ml
        >>> ml.tril(ml.ones((2, 3), dtype=ml.int64)).tolist()
        [[1, 0, 0], [1, 1, 0]]
    """
    x = tensor(x)
    return _band("tril", x, k, lower=True)


@keywords
def triu(x: TensorLike, /, *, k: int = 0) -> Tensor:
    """The upper triangle of each matrix in ``x`` (its last two axes), zeros below diagonal ``k``.

    Example:
        >>> import minilazy as ml
        >>> ml.triu(ml.ones((2, 3), dtype=ml.int64), k=1).tolist()
        [[0, 1, 1], [0, 0, 1]]
    """
    x = tensor(x)
    return _band("triu", x, k, lower=False)


@keywords
def take_along_axis(x: TensorLike, indices: TensorLike, /, *, axis: int = -1) -> Tensor:
    """Elements of ``x`` picked along ``axis`` by ``indices``, which has as many axes as ``x``.

    As NumPy's ``np.take_along_axis``: the other axes of ``x`` and ``indices`` broadcast. Recorded
    as one integer-array index (an iota per other axis), so its gradient is getitem's
    scatter-add. Host indices (a list, a NumPy array) out of range raise ``IndexError`` at the
    call; an index tensor's values are data: out-of-range ones are clamped (LZ-NUM-005).

    Example:
        >>> import minilazy as ml
        >>> x = ml.asarray([[10, 30, 20], [60, 40, 50]])
        >>> ml.take_along_axis(x, ml.asarray([[0], [2]]), axis=1).tolist()
        [[10], [50]]
    """
    x = tensor(x, device_of(x, indices))
    try:
        index = _host_indices("take_along_axis", indices)
    except TypeError as e:  # NumPy's error type for a non-integer index
        raise IndexError(str(e)) from None
    shown = describe(index._node) if isinstance(index, Tensor) else f"{index.dtype}{index.shape}"
    if index.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices {shown} and x {describe(x._node)} must have "
                         f"the same number of dimensions")
    a = normalize_axis("take_along_axis", axis, x.ndim)
    try:  # the other axes broadcast; checked here, so the error names both operands
        broadcast_shapes("take_along_axis", tuple(n for i, n in enumerate(x.shape) if i != a),
                         tuple(n for i, n in enumerate(index.shape) if i != a))
    except ShapeError:  # NumPy's error type: an index that does not fit is an IndexError
        raise IndexError(f"take_along_axis: indices {shown} do not broadcast with x "
                         f"{describe(x._node)} off axis {a}") from None
    key = [index if i == a else _counting(tuple(n if j == i else 1 for j in range(x.ndim)), i, x)
           for i, n in enumerate(x.shape)]
    return x[tuple(key)]
