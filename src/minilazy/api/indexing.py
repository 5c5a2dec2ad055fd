"""Index specs: NumPy basic, integer-array and boolean-mask indexing as static, hashable attributes.

Part of the tensor's surface, above core (a mask tensor is read by a host fallback): the tensor
records ``x[key]`` as one ``GETITEM`` node whose attrs are a normalised
:class:`~minilazy.ops.index_keys.Index` (negative indices resolved, ``...`` expanded, slices as
start/size/step), and whose extra operands are the integer index arrays, the Python ints and
the starts of step-1 slices (parameters, as Python numbers are elsewhere: ``x[i]`` and
``x[i:i+k]`` compile once for every ``i``). Indices known on the host (ints, lists, NumPy
arrays) are bounds-checked here, at the call; the values of index *tensors* are data, so
out-of-range entries are clamped when read and dropped when written (implementation-defined,
like XLA's gather and scatter). A boolean mask stands for the index arrays of its True entries,
as in NumPy: a mask on the device is read by a counted host fallback, and the gather with its
positions stays recorded (and differentiable); a 0-d boolean (``x[True]``) is a new axis of
length 1 or 0 (:func:`scalar_bools`). Never imports jax.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from types import EllipsisType
from typing import Any, TypeAlias, cast

import numpy as np

from minilazy.api.fallback import host_values
from minilazy.api.host import host_data
from minilazy.core import runtime
from minilazy.core.dtypes import DEFAULT_INT, INTEGER
from minilazy.core.ir import (
    Device,
    DeviceError,
    Node,
    Op,
    Shape,
    UnsupportedError,
    data_leaf,
    scalar_leaf,
)
from minilazy.core.state import LIVE, Handle
from minilazy.ops.index_keys import Entry, Gap, Index, NewAxis, Param, Span, Take, Window

# A key item as the tensor hands it over: a tensor only when it is a boolean mask.
Item: TypeAlias = "int | slice | None | EllipsisType | Node | np.ndarray[Any, Any] | Handle"


def _integer_index(k: np.ndarray[Any, Any]) -> None:
    if k.dtype.kind not in "iu":
        raise IndexError(f"arrays used as indices must be of integer (or boolean) type, got "
                         f"{k.dtype}")


def _in_bounds(k: np.ndarray[Any, Any], axis: int, n: int) -> None:
    """Check the values of an index array known on the host (a list, a NumPy array), as NumPy."""
    if k.size:
        low, high = int(k.min()), int(k.max())
        if low < -n or high >= n:  # its values are known now: raise at the call, like NumPy
            bad = low if low < -n else high
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")


def _is_mask(k: Any) -> bool:
    return getattr(k, "dtype", None) == np.bool_ and not isinstance(k, Node)


def check_mask(shape: Shape, axis: int, mask: Shape) -> None:
    """Check a boolean mask of shape ``mask`` indexing axes ``axis, axis + 1, ...`` as NumPy does.

    Example:
        >>> check_mask((3, 4), 0, (2,))
        Traceback (most recent call last):
        ...
        IndexError: boolean index did not match indexed array along axis 0; size of axis is 3 ...
    """
    if not mask:  # x[True]: scalar_bools makes it an axis first; here it would be a bug
        raise UnsupportedError("0-d boolean indices go through scalar_bools first")
    for i, (n, m) in enumerate(zip(shape[axis:], mask)):
        if n != m:
            raise IndexError(f"boolean index did not match indexed array along axis {axis + i}; "
                             f"size of axis is {n} but size of corresponding boolean axis is {m}")


def _is_bool0(k: Any) -> bool:
    """Whether ``k`` is a 0-d boolean index: ``True``, ``np.True_``, a 0-d mask array or tensor."""
    return isinstance(k, (bool, np.bool_)) or (_is_mask(k) and k.ndim == 0)


def _consumed(k: Any) -> int:
    """How many of the indexed array's axes the key item ``k`` uses up (NumPy's count)."""
    if k is None or k is Ellipsis or _is_bool0(k):
        return 0
    if isinstance(k, list):
        k = np.asarray(k)
    return k.ndim if _is_mask(k) else 1


def _too_many(shape: Shape, consumed: int) -> None:
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{consumed} were indexed")


def scalar_bools(shape: Shape, key: Any, op: str = "getitem") -> tuple[Shape | None, Any]:
    """NumPy's 0-d boolean indices (``x[True]``) made ordinary ones: ``x``'s new shape and key.

    NumPy reads a 0-d boolean in a key as a new axis of length 1 there, indexed by
    ``nonzero(b)``: ``[0]`` for True, ``[]`` for False, so ``x[True]`` has shape ``(1, ...)`` and
    ``x[False]`` ``(0, ...)``. So ``x`` gets that axis (the caller records the reshape to the
    shape returned, free) and the boolean becomes the slice ``0:1`` or ``0:0`` on it, or the
    index array ``[0]`` or ``[]`` when the key has integers or index arrays (which it then
    broadcasts with, as in NumPy). A 0-d boolean *tensor*'s value decides the shape: it is read
    on the host (a counted fallback named ``op``). Without 0-d booleans: ``None`` and ``key``.

    Example:
        >>> scalar_bools((2, 3), (False, 1))
        ((1, 2, 3), (array([], dtype=int64), 1))
    """
    items = key if type(key) is tuple else (key,)
    if not any(_is_bool0(k) for k in items):  # the common case: nothing to do
        return None, key
    uses = [_consumed(k) for k in items]
    _too_many(shape, sum(uses))
    tensors = [k for k in items if _is_bool0(k)
               and not isinstance(k, bool | np.generic | np.ndarray)]
    read = {id(t): v for t, v in zip(tensors, host_values(op, tensors))} if tensors else {}
    # the new axes' positions among x's: after the axes the items before use up, or, after an
    # ellipsis, before those that the items after it use up
    ellipsis = next((i for i, k in enumerate(items) if k is Ellipsis), len(items))
    where = [sum(uses[:i]) if i < ellipsis else len(shape) - sum(uses[i:])
             for i in range(len(items))]
    lone = sum(map(_is_bool0, items)) == 1 and all(
        k is None or k is Ellipsis or isinstance(k, slice) or _is_bool0(k) for k in items)
    new, out = list(shape), list(items)
    for i in reversed(range(len(items))):  # right to left: earlier positions stay valid
        k = items[i]
        if _is_bool0(k):
            n = int(bool(read[id(k)] if id(k) in read else k))
            new.insert(where[i], 1)
            out[i] = slice(0, n) if lone else np.zeros(n, np.intp)
    return tuple(new), tuple(out)


def index_spec(shape: Shape, key: Sequence[Item],
               device: Device | None = None, op: str = "getitem"
               ) -> tuple[Index, tuple[Node, ...]]:
    """Normalise ``key`` for an array of ``shape``: the spec attrs and the index-array operands.

    Index arrays on the host (NumPy arrays) are bounds-checked here where they select something
    (as NumPy), then made device data on ``device``; index arrays on the device (nodes) are
    data (LZ-NUM-005). 0-d booleans are :func:`scalar_bools`' business, before this. A
    boolean mask is the index arrays of its True entries (NumPy's rule): a NumPy mask is read
    here, a mask tensor by one counted host fallback named ``op``, once the whole key is checked.

    Example:
        >>> spec, operands = index_spec((4, 5), (-1, slice(None, None, -2)))
        >>> spec.entries, operands[0].payload  # the int is a parameter: its value, resolved
        ((Param(k=0, kind=5), Span(start=4, size=3, step=2, reverse=True, kind=1)), 3)
    """
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(map(_consumed, key))
    _too_many(shape, consumed)
    spec: list[Entry] = []
    # Index arrays in operand order: nodes, host arrays (made nodes last: an error in a later
    # item then sends nothing), or (mask, axis) of a mask tensor, read once the key is checked.
    arrays: list[Node | np.ndarray[Any, Any] | tuple[int, int]] = []
    masks: list[Handle] = []
    bounds: list[tuple[np.ndarray[Any, Any], int, int]] = []  # host arrays, their axes and sizes
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
        elif isinstance(k, np.ndarray) and k.dtype == np.bool_:
            check_mask(shape, axis, k.shape)
            for found in np.nonzero(k):
                spec.append(Take(len(arrays)))
                arrays.append(found)
            axis += k.ndim
        elif isinstance(k, np.ndarray):
            if k.size == 0 and k.dtype.kind == "f":
                k = k.astype(np.intp)  # `[]`: NumPy reads an empty index list so
            _integer_index(k)
            bounds.append((k, axis, shape[axis]))
            spec.append(Take(len(arrays)))
            arrays.append(k)
            axis += 1
        elif isinstance(k, Node):
            if k.dtype not in INTEGER:
                raise IndexError(f"arrays used as indices must be of integer (or boolean) type, "
                                 f"got {k.dtype}")
            spec.append(Take(len(arrays)))
            arrays.append(k)
            axis += 1
        elif isinstance(k, slice):  # Python clamps huge starts and stops, as NumPy does
            r = range(*k.indices(shape[axis]))
            if 0 < len(r) < shape[axis] and (r.step == 1 or len(r) == 1):
                # a window: its start a parameter, so x[i:i+k] compiles once for every i (up to
                # one element the step does not matter; a huge one would not fit XLA's strides)
                spec.append(Window(len(arrays), len(r)))
                arrays.append(scalar_leaf(r.start, DEFAULT_INT))
            else:
                spec.append(Span(r.start, len(r), abs(r.step), r.step < 0) if len(r) > 1 else
                            Span(0, len(r), 1, False))
            axis += 1
        elif isinstance(k, bool):  # not an int 0 or 1: scalar_bools lifts it, before this
            raise UnsupportedError("0-d boolean indices go through scalar_bools first")
        elif isinstance(k, int):
            n = shape[axis]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            spec.append(Param(len(arrays)))  # a parameter: x[i] compiles once for every i
            arrays.append(scalar_leaf(k % n, DEFAULT_INT))
            axis += 1
        else:  # a boolean tensor: where its True entries are is data, known after a barrier
            check_mask(shape, axis, k._node.shape)
            for d in range(len(k._node.shape)):
                spec.append(Take(len(arrays)))
                arrays.append((len(masks), d))
            masks.append(k)
            axis += len(k._node.shape)
    spec.extend(Span(0, shape[a], 1, False) for a in range(axis, len(shape)))
    # NumPy checks the values of index arrays only where they select something (a mask
    # tensor's selection is unknown yet: counted as something)
    known = [i.shape for i in arrays if not isinstance(i, tuple)]
    try:
        selects = bool(masks) or math.prod(np.broadcast_shapes(*known)) > 0
    except ValueError:  # they do not broadcast: NumPy's IndexError, from index_shape
        selects = True
    for host, at, size in bounds if selects else ():
        _in_bounds(host, at, size)
    where = [np.nonzero(m) for m in host_values(op, masks)] if masks else []
    nodes: list[Node] = []
    for a in arrays:
        if isinstance(a, tuple):
            a = where[a[0]][a[1]]
        if not isinstance(a, Node):
            assert device is not None, "host index arrays need a device"
            a = host_data(a, None, device)
        nodes.append(a)
    return Index(tuple(spec)), tuple(nodes)


# A key of Python ints, slices of ints, None and ``...`` (what a model's code writes) -> its spec
# and where each operand comes from: (key position, axis length) of an int, or a window's start.
# Keyed by the key's structure, not its ints' values (they are parameters): a lean path.
_BASIC: dict[tuple[Shape, tuple[Any, ...]], tuple[Index, tuple[tuple[int, int] | int, ...]]] = {}


def basic_index(shape: Shape, key: Any, device: Device) -> tuple[Index, tuple[Node, ...]] | None:
    """:func:`index_spec` of a key of ints, int slices, ``None`` and ``...`` (else ``None``).

    The spec is worked out once per shape and key structure; a later key of that structure
    only checks its ints' bounds (NumPy's ``IndexError``, as :func:`index_spec` raises it) and
    makes their parameters.

    Example:
        >>> spec, operands = basic_index((4, 5), (-1, slice(1, 3)), None)
        >>> spec.entries, [o.payload for o in operands]  # both parameters: the int, the start
        ((Param(k=0, kind=5), Window(k=1, size=2, kind=6)), [3, 1])
    """
    items = key if type(key) is tuple else (key,)
    signature: list[Any] = []
    for k in items:
        if type(k) is int:  # (not a bool: scalar_bools' business)
            signature.append(int)
        elif type(k) is slice:
            parts = (k.start, k.stop, k.step)
            if not all(p is None or type(p) is int for p in parts):
                return None
            signature.append(parts)
        elif k is None or k is Ellipsis:
            signature.append(k)
        else:
            return None
    found = _BASIC.get((shape, tuple(signature)))
    if found is None:
        spec, operands = index_spec(shape, items, device)
        ints = [(i, shape[_axis_of(items, i, len(shape))]) for i, k in enumerate(items)
                if type(k) is int]
        params = {e.k for e in spec.entries if type(e) is Param}
        plan = tuple([ints.pop(0) if j in params else cast(int, o.payload)  # a start
                      for j, o in enumerate(operands)])
        if len(_BASIC) > 4096:  # bounded: a program with many structures starts over
            _BASIC.clear()
        _BASIC[(shape, tuple(signature))] = spec, plan
        return spec, operands
    spec, plan = found
    made = []
    for p in plan:
        if isinstance(p, tuple):
            k, n = items[p[0]], p[1]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis "
                                 f"{_axis_of(items, p[0], len(shape))} with size {n}")
            made.append(scalar_leaf(k % n, DEFAULT_INT))
        else:
            made.append(scalar_leaf(p, DEFAULT_INT))
    return spec, tuple(made)


def _axis_of(items: Sequence[Any], at: int, ndim: int) -> int:
    """The axis the key's item ``at`` indexes (a key of ints, slices, ``None`` and ``...``)."""
    consumed = sum(k is not None and k is not Ellipsis for k in items)
    return sum(ndim - consumed if k is Ellipsis else k is not None for k in items[:at])


def _fits(value: Shape, target: Shape) -> bool:
    """Whether a value of shape ``value`` broadcasts into ``target`` as NumPy's setitem does."""
    v = list(value)
    while len(v) > len(target) and v[0] == 1:  # NumPy drops a value's leading length-1 axes
        v.pop(0)
    return len(v) <= len(target) and all(n in (1, m) for n, m in zip(v[::-1], target[::-1]))


def fill_mask(shape: Shape, device: Device, key: Any, value: Shape) -> tuple[Node, Shape] | None:
    """The mask of ``x[key] = v``, when it can be recorded as ``where(mask, v, x)``.

    That is when ``key`` is one boolean mask (a tensor, a NumPy array or a list) over leading
    axes of ``x`` (of ``shape``), and ``v`` broadcasts into what one True entry selects
    (``x[x < 0] = 0``, ``rows[keep] = row``): the result's shape is static, so nothing goes to
    the host. Returns the mask's node and the shape the caller reshapes it to (length-1 axes
    where ``x`` has more, so that ``where`` broadcasts it); ``None`` for other keys and values:
    the caller then indexes with the mask's True positions (a host fallback for a mask tensor).

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((3, 2))
        >>> node, to = fill_mask(x.shape, x.device, x[:, 0] > 0, (2,))
        >>> node.shape, to
        ((3,), (3, 1))
    """
    mask = key[0] if type(key) is tuple and len(key) == 1 else key
    if isinstance(mask, list):
        mask = np.asarray(mask)
    if not _is_mask(mask) or not mask.ndim:
        return None
    check_mask(shape, 0, mask.shape)
    rest = shape[mask.ndim:]
    if not _fits(value, rest):  # a value per True entry: where they are is data
        return None
    to = mask.shape + (1,) * len(rest)
    if isinstance(mask, np.ndarray):  # known on the host: shaped there, sent as data
        return data_leaf(runtime.to_device(mask.reshape(to), device), to, mask.dtype), to
    if mask.device != device:
        raise DeviceError(f"setitem: the mask is on {mask.device}, the tensor on {device}")
    return mask._node, to


class ViewWriteWarning(UserWarning):
    """A write into a tensor taken from another by indexing or reshaping: the other is unchanged.

    NumPy's basic indexing, ``reshape`` and ``.T`` make *views*, so ``v = x[0]; v[:] = 7`` changes
    ``x`` in NumPy (and in PyTorch). minilazy's tensors are values, as JAX's are (LZ-REC-005): the
    write changes ``v`` only. Warned once per write site while ``x`` is alive; write into ``x``
    itself (``x[0] = 7``) to change it.

    Example:
        >>> import warnings
        >>> import minilazy as ml
        >>> x = ml.zeros((2, 3))
        >>> v = x[0]
        >>> with warnings.catch_warnings(record=True) as seen:
        ...     warnings.simplefilter("always")
        ...     v[:] = 7.0
        >>> seen[0].category.__name__, x.tolist()[0]
        ('ViewWriteWarning', [0.0, 0.0, 0.0])
    """


# What NumPy makes views of: basic indexing (no index arrays), reshapes and transposes.
_VIEWS = frozenset({Op.GETITEM, Op.RESHAPE, Op.TRANSPOSE})


def warn_view_write(node: Node) -> None:
    """Warn if ``node``, about to be written into, is a NumPy view of a live tensor's value."""
    if node.op not in _VIEWS or (isinstance(node.attrs, Index) and any(
            type(e) is Take for e in node.attrs.entries)):  # index arrays: NumPy copies too
        return
    base = node.operands[0]
    if any(t._node is base for t in LIVE.tensors()):
        what = "an index" if node.op is Op.GETITEM else f"a {node.op.value}"
        warnings.warn(ViewWriteWarning(
            f"this write changes a tensor made by {what} of another tensor that is still alive, "
            f"and not that tensor: minilazy's tensors are values, not NumPy views (LZ-REC-005); "
            f"write into the other tensor itself to change it"), stacklevel=3)

