"""Index keys of every kind, drawn by Hypothesis, and each side's form of them.

A key is drawn as a list of items: ("int", i), ("slice", s), ("array", values, form),
("none",), ("ellipsis",), wherever NumPy allows them, index values in range (negatives
included). :func:`numpy_key` and :func:`adapter_key` turn it into each side's key. The
strategies take the forms an index array or an int may take, so that a library's own tests can
draw host forms too (NumPy arrays, NumPy integer scalars) that the protocol does not pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle.strategies import DTYPES, dtypes_for

Array = np.ndarray[Any, Any]
Item = tuple[Any, ...]
# Index arrays come in every integer dtype NumPy indexes with.
INDEX_DTYPES = [d for d in DTYPES if d.kind in "iu"]


def index_dtypes(adapter: OptionalAdapter) -> list[np.dtype[Any]]:
    """The integer dtypes the adapter has: those its index arrays are drawn in."""
    return [d for d in dtypes_for(adapter) if d.kind in "iu"]



def int_item(draw: Any, n: int, kinds: Sequence[type] = (int,)) -> Item:
    """An in-range int of axis length ``n`` > 0, maybe negative, as one of ``kinds``."""
    i = draw(st.integers(-n, n - 1))
    kind = draw(st.sampled_from([k for k in kinds if k is int or np.can_cast(
        np.min_scalar_type(i), k)] or [int]))
    return ("int", kind(i))


def slice_item(draw: Any, n: int) -> Item:
    """Any slice: bounds in or past either end, any nonzero step (or None)."""
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    step = st.one_of(st.none(), st.integers(-3, 3).filter(bool))
    return ("slice", slice(draw(bound), draw(bound), draw(step)))


def index_array(draw: Any, values: Array, dtypes: Sequence[np.dtype[Any]],
                forms: Sequence[str]) -> Item:
    """``values`` as an index array of an integer dtype they fit, in one of ``forms``."""
    fits = [d for d in dtypes if values.size == 0 or
            (np.iinfo(d).min <= values.min() and values.max() <= np.iinfo(d).max)]
    assume(fits)  # negative values and only unsigned dtypes
    arr = values.astype(draw(st.sampled_from(fits)))
    # A list of an empty array is `[]`, which NumPy types float64 (and then rejects as an
    # index): lists only when non-empty (test_an_empty_index_list_selects_nothing).
    usable = [f for f in forms if f != "list" or (arr.ndim and arr.size)] or ["tensor"]
    return ("array", arr, draw(st.sampled_from(usable)))


def in_range(draw: Any, n: int, shape: tuple[int, ...]) -> Array:
    """Index values for an axis of length ``n`` > 0: in range, negatives included."""
    return np.asarray(draw(hnp.arrays(np.int64, shape, elements=st.integers(-n, n - 1))))


@st.composite
def mixed_index(draw: Any, shape: tuple[int, ...], dtypes: Sequence[np.dtype[Any]],
                forms: Sequence[str] = ("tensor", "list"),
                ints: Sequence[type] = (int,)) -> list[Item]:
    """Basic items and integer arrays (broadcast together), adjacent or separated.

    With ``None``s and maybe one ``...``: items for axes [0, p), then maybe ``...`` standing for
    axes [p, q), then items for axes [q, ndim) (without ``...``, axes past p are implicit).
    """
    ndim = len(shape)
    p = draw(st.integers(0, ndim))
    ellipsis = draw(st.booleans())
    q = draw(st.integers(p, ndim)) if ellipsis else ndim
    if ellipsis and q == p and p < ndim:
        # An Ellipsis standing for no axis between array indices has a test of its own
        # (test_an_ellipsis_of_no_axes_still_separates_array_indices): put it last here.
        p, q = ndim, ndim
    axes = [*range(p), *range(q, ndim)]
    kinds = {a: draw(st.sampled_from(["int", "slice", "array"])) if shape[a] else "slice"
             for a in axes}
    n_arrays = list(kinds.values()).count("array")
    bshapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=max(n_arrays, 1), max_dims=2,
                                                     max_side=3)).input_shapes
    items: list[Item] = []
    k = 0
    for a in axes:
        if kinds[a] == "int":
            items.append(int_item(draw, shape[a], ints))
        elif kinds[a] == "slice":
            items.append(slice_item(draw, shape[a]))
        else:
            items.append(index_array(draw, in_range(draw, shape[a], bshapes[k]), dtypes, forms))
            k += 1
    if ellipsis:
        items.insert(p, ("ellipsis",))
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), ("none",))
    return items


@st.composite
def basic_index(draw: Any, shape: tuple[int, ...]) -> list[Item]:
    """Basic indexing only: ints, slices, ``None`` and ``...`` (Hypothesis' own generator)."""
    key = draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    return [("none",) if k is None else ("ellipsis",) if k is Ellipsis else
            ("slice", k) if isinstance(k, slice) else ("int", k)
            for k in (key if isinstance(key, tuple) else (key,))]


@st.composite
def unique_array_index(draw: Any, shape: tuple[int, ...], dtypes: Sequence[np.dtype[Any]],
                       forms: Sequence[str] = ("tensor", "list"),
                       ints: Sequence[type] = (int,)) -> list[Item]:
    """Integer arrays on some axes selecting distinct positions: no index repeats.

    Arrays on adjacent axes or not, ints and slices (any step) on the other axes, and maybe a
    ``None``.
    """
    ndim = len(shape)
    array_axes = sorted(draw(st.lists(st.sampled_from(range(ndim)), min_size=1, max_size=ndim,
                                      unique=True)))
    sizes = [shape[a] for a in array_axes]
    total = math.prod(sizes)
    flat = draw(st.lists(st.integers(0, max(total - 1, 0)), max_size=min(total, 5),
                         unique=True))
    coords = np.unravel_index(np.array(flat, np.int64), sizes)
    if draw(st.booleans()) and len(flat) in (4, 6):  # a 2-D arrangement of the same positions
        coords = tuple(c.reshape(2, -1) for c in coords)
    items: list[Item] = []
    for a in range(ndim):
        if a in array_axes:
            c = coords[array_axes.index(a)]
            negate = draw(hnp.arrays(np.bool_, c.shape))
            items.append(index_array(draw, np.where(negate, c - shape[a], c), dtypes, forms))
        elif shape[a] and draw(st.booleans()):
            items.append(int_item(draw, shape[a], ints))
        else:
            items.append(slice_item(draw, shape[a]))
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), ("none",))
    return items


def realise(items: Sequence[Item], tensor: Callable[[Array], Any] | None) -> Any:
    """The key: NumPy's where ``tensor`` is None, else with index arrays made by ``tensor``.

    A lone item is passed bare, except a list (``x[[1, 2]]`` and ``x[([1, 2],)]`` are the same
    to NumPy, and a bare nested list is what people write).
    """
    out: list[Any] = []
    for item in items:
        kind = item[0]
        if kind in ("int", "slice"):
            out.append(item[1])
        elif kind == "none":
            out.append(None)
        elif kind == "ellipsis":
            out.append(Ellipsis)
        else:
            _, arr, form = item
            out.append(arr.tolist() if form == "list" else
                       tensor(arr) if form == "tensor" and tensor is not None else arr)
    return out[0] if len(out) == 1 and not isinstance(out[0], list) else tuple(out)


def numpy_key(items: Sequence[Item]) -> Any:
    """The key NumPy gets."""
    return realise(items, None)


def adapter_key(adapter: OptionalAdapter, items: Sequence[Item]) -> Any:
    """The key the adapter gets: index arrays as its tensors, lists as lists."""
    return realise(items, adapter.from_numpy)
