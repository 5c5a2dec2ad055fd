"""Array API manipulation functions built from shape ops: moveaxis, tile, repeat, roll, meshgrid.

In the Array API namespace (``minilazy.api``). Each is a few recorded reshapes, broadcasts,
slices and concats, so XLA sees index arithmetic it fuses, and no engine op is added. The one
exception to "recorded": ``repeat`` with a *tensor* of counts, whose result shape depends on
data, reads the counts on the host (a counted host fallback). Never imports jax.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Sequence

import numpy as np

from minilazy.api.axes import normalize_axis
from minilazy.api.creation import device_of, full, tensor, tensors
from minilazy.api.fallback import host_values
from minilazy.api.keywords import keywords
from minilazy.api.shaping import broadcast_to, concat, permute_dims, reshape, take
from minilazy.api.tensor import Tensor, TensorLike
from minilazy.core import dtypes
from minilazy.core.infer import broadcast_shapes


def _axes(name: str, axes: int | Sequence[int], ndim: int, unique: bool = True
          ) -> tuple[int, ...]:
    """Axes in the order given, made non-negative (``normalize_axes`` sorts; order matters)."""
    given = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)
    out = tuple(normalize_axis(name, a, ndim) for a in given)
    if unique and len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {axes}")
    return out


def _c_long(n: int) -> int:
    """``n`` if it fits in int64, else NumPy's ``OverflowError`` for a count (tile, repeat)."""
    if not -(1 << 63) <= n < 1 << 63:
        raise OverflowError(f"Python int too large to convert to C long: {n}")
    return n


def moveaxis(x: TensorLike, source: int | tuple[int, ...], destination: int | tuple[int, ...], /
             ) -> Tensor:
    """``x`` with the axes ``source`` moved to positions ``destination``; the others keep order.

    Example:
        >>> import minilazy as ml
        >>> ml.moveaxis(ml.zeros((2, 3, 4)), 0, -1).shape
        (3, 4, 2)
    """
    x = tensor(x)
    src, dst = _axes("moveaxis", source, x.ndim), _axes("moveaxis", destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} must name "
                         f"as many axes")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def broadcast_arrays(*arrays: TensorLike) -> list[Tensor]:
    """The tensors broadcast against each other to one shape (NumPy's rules).

    Example:
        >>> import minilazy as ml
        >>> [t.shape for t in ml.broadcast_arrays(ml.ones((2, 1)), ml.ones((3,)))]
        [(2, 3), (2, 3)]
    """
    arrays = tensors(*arrays)
    if not arrays:
        return []
    shape = broadcast_shapes("broadcast_arrays", *(t.shape for t in arrays))
    return [t if t.shape == shape else broadcast_to(t, shape) for t in arrays]


def meshgrid(*arrays: TensorLike, indexing: str = "xy") -> list[Tensor]:
    """Coordinate grids from 1-D tensors, with Cartesian (``"xy"``) or matrix (``"ij"``) indexing.

    ``"xy"`` swaps the first two axes of the grid, as NumPy's default does.

    Example:
        >>> import minilazy as ml
        >>> xs, ys = ml.meshgrid(ml.arange(3), ml.arange(2))
        >>> xs.shape, ys.tolist()
        ((2, 3), [[0, 0, 0], [1, 1, 1]])
    """
    arrays = tensors(*arrays)
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    for t in arrays:
        if t.ndim != 1:
            raise ValueError(f"meshgrid: needs 1-D tensors, got shape {t.shape}")
    if len({t.dtype for t in arrays}) > 1:
        raise TypeError(f"meshgrid: the tensors must share a dtype, got "
                        f"{[str(t.dtype) for t in arrays]}")
    sizes = [t.shape[0] for t in arrays]
    if indexing == "xy" and len(arrays) > 1:  # Cartesian: x varies along columns (axis 1)
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, t in enumerate(arrays):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(arrays) > 1 else i
        along = [1] * len(arrays)
        along[axis] = t.shape[0]
        out.append(broadcast_to(reshape(t, tuple(along)), tuple(sizes)))
    return out


@keywords
def unstack(x: TensorLike, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``x`` along ``axis``, as a tuple (the inverse of ``stack``).

    Example:
        >>> import minilazy as ml
        >>> [t.tolist() for t in ml.unstack(ml.asarray([[1, 2], [3, 4]]), axis=1)]
        [[1, 3], [2, 4]]
    """
    x = tensor(x)
    a = normalize_axis("unstack", axis, x.ndim)
    if x.shape[a] > sys.maxsize // 8:  # more than a tuple can hold: (0, 2**62) exists
        raise MemoryError(f"unstack: {x.shape[a]} tensors along axis {a} of {x.shape}")
    head = (slice(None),) * a
    return tuple(x[(*head, i)] for i in range(x.shape[a]))


def tile(x: TensorLike, repetitions: tuple[int, ...], /) -> Tensor:
    """``x`` repeated ``repetitions[i]`` times along axis ``i`` (shapes aligned on the right).

    One broadcast and one reshape: copies ``x`` side by side without a gather.

    Example:
        >>> import minilazy as ml
        >>> ml.tile(ml.asarray([1, 2]), (2, 2)).tolist()
        [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    x = tensor(x)
    reps = tuple(_c_long(operator.index(r)) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be >= 0, got {repetitions}")
    n = max(len(reps), x.ndim)
    reps = (1,) * (n - len(reps)) + reps
    shape = (1,) * (n - x.ndim) + x.shape
    out = tuple(r * d for r, d in zip(reps, shape))
    if 0 in out:  # made directly: (r, d) beside it may be too big ((2**62, 0) of an empty x)
        return full(out, 0, dtype=x.dtype, device=x.device)
    # (r0, d0, r1, d1, ...): each repetition is an outer axis next to the axis it repeats.
    interleaved = reshape(x, tuple(v for d in shape for v in (1, d)))
    spread = broadcast_to(interleaved, tuple(v for r, d in zip(reps, shape) for v in (r, d)))
    return reshape(spread, out)


@keywords
def repeat(x: TensorLike, repeats: TensorLike, /, *, axis: int | None = None) -> Tensor:
    """Each element of ``x`` repeated ``repeats`` times along ``axis`` (None: flattened ``x``).

    An ``int`` is recorded (a broadcast and a reshape). A tensor of counts, one per element
    along ``axis``, makes the result shape depend on data: the counts are read on the host (a
    host fallback, counted in ``ml.metrics().fallbacks``; ``x`` itself stays pending) and the
    result is a recorded gather.

    Example:
        >>> import minilazy as ml
        >>> ml.repeat(ml.asarray([1, 2]), 2).tolist()
        [1, 1, 2, 2]
        >>> ml.repeat(ml.asarray([[1, 2]]), ml.asarray([1, 3]), axis=1).tolist()
        [[1, 2, 2, 2]]
    """
    x = tensor(x, device_of(x, repeats))
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    a = normalize_axis("repeat", axis, x.ndim)
    if isinstance(repeats, Tensor) or np.ndim(repeats):  # counts, read on the host if a tensor
        kind = repeats.dtype if isinstance(repeats, Tensor) else np.asarray(repeats).dtype
        if kind not in dtypes.INTEGER:
            raise TypeError(f"repeat: repeats must be integers, got {kind}")
        (counts,) = (host_values("repeat", [repeats]) if isinstance(repeats, Tensor)
                     else [np.asarray(repeats)])
        if counts.ndim > 1 or counts.size not in (1, x.shape[a]) or (counts < 0).any():
            raise ValueError(f"repeat: repeats must be one count >= 0, or one per element along "
                             f"axis {axis} ({x.shape[a]}), got shape {counts.shape}")
        index = np.repeat(np.arange(x.shape[a]), np.broadcast_to(counts, (x.shape[a],)))
        return take(x, index, axis=a)
    r = _c_long(operator.index(np.asarray(repeats).item()))  # an int, a 0-d array...
    if r < 0:
        raise ValueError(f"repeat: repeats must be >= 0, got {r}")
    out = x.shape[:a] + (x.shape[a] * r,) + x.shape[a + 1:]
    if 0 in out:  # made directly: (d, r) may be too big for an empty x ((0, 2**62) of float64)
        return full(out, 0, dtype=x.dtype, device=x.device)
    # (..., d, 1, ...) -> (..., d, r, ...) -> (..., d * r, ...): each element, r times in a row.
    split = x.shape[:a + 1] + (1,) + x.shape[a + 1:]
    spread = broadcast_to(reshape(x, split), x.shape[:a + 1] + (r,) + x.shape[a + 1:])
    return reshape(spread, out)


@keywords
def roll(x: TensorLike, /, shift: int | tuple[int, ...], *,
         axis: int | tuple[int, ...] | None = None) -> Tensor:
    """``x`` with elements shifted by ``shift`` along ``axis``, wrapping around the end.

    ``axis`` None rolls the flattened ``x`` and reshapes it back; ``shift`` and ``axis``
    broadcast against each other, as NumPy's. Two slices and a concat per axis: no gather.

    Example:
        >>> import minilazy as ml
        >>> ml.roll(ml.asarray([1, 2, 3, 4]), 1).tolist()
        [4, 1, 2, 3]
    """
    x = tensor(x)
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, axis=0), x.shape)
    axes = _axes("roll", axis, x.ndim, unique=False)  # as NumPy, a repeated axis rolls twice
    given = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,)
    shifts = tuple(operator.index(s) for s in given)  # huge ones too: only s % n matters
    # broadcast against each other, as NumPy's: roll(x, (1, 2), axis=0) rolls axis 0 by 3
    if len(shifts) == 1:
        shifts *= len(axes)
    elif len(axes) == 1:
        axes = tuple(axes) * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift} and axis {axis} must have the same length")
    out = x
    for a, s in zip(axes, shifts):
        n = x.shape[a]
        k = s % n if n else 0
        if k:
            head = (slice(None),) * a
            out = concat([out[(*head, slice(n - k, None))], out[(*head, slice(None, n - k))]],
                         axis=a)
    return out
