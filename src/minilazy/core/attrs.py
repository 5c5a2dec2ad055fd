"""Op attributes: one small frozen type per op family, such as a reduction's axes and keepdims.

Part of the IR. Attributes are static: they are part of a node's digest and so of the
cache key. Each family is a ``NamedTuple``: fields have names and types, while hashing and
equality stay a tuple's (in C, as cheap as before). Every field is an int (>= 0 but for a
convolution's padding), a bool or a tuple of them (or a :class:`~minilazy.core.device.Mesh`, which
hashes a stable CRC), so Python's ``hash`` of an attribute is the same in every process. Which
family an op takes is :data:`minilazy.core.ir.FAMILY`, checked when a node is made; tables read the
fields by name, with ``match`` where they branch on the family. Never imports jax.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Final, NamedTuple, TypeAlias

from minilazy.core.device import Mesh


class NoAttrs(NamedTuple):
    """No attributes: leaves that are parameters, elementwise ops, ``where``, ``matmul``.

    Example:
        >>> NONE == ()
        True
    """


NONE: Final = NoAttrs()


class Constant(NamedTuple):
    """A ``SCALAR`` baked into the program (0 or 1): its value is in the key.

    Example:
        >>> Constant(1).value
        1
    """

    value: int


class Iota(NamedTuple):
    """``IOTA``: a ``shape`` counting along ``axis``, of the dtype with code ``dtype``.

    Example:
        >>> Iota((3,), 0, 4).axis
        0
    """

    shape: tuple[int, ...]
    axis: int
    dtype: int  # a dtype's code (dtypes.CODE), stable across processes


class Cast(NamedTuple):
    """``CONVERT``: the target dtype's code.

    Example:
        >>> Cast(4).dtype
        4
    """

    dtype: int


class Reduce(NamedTuple):
    """A reduction: the ``axes`` it folds (sorted, non-negative) and whether it keeps them.

    Example:
        >>> Reduce((0, 2), False).keepdims
        False
    """

    axes: tuple[int, ...]
    keepdims: bool


class Contract(NamedTuple):
    """``TENSORDOT``: the axes of each operand that are summed over, pairwise.

    Example:
        >>> Contract((1,), (0,)).b
        (0,)
    """

    a: tuple[int, ...]
    b: tuple[int, ...]


class ToShape(NamedTuple):
    """``RESHAPE`` and ``BROADCAST``: the result shape.

    Example:
        >>> ToShape((2, 3)).shape
        (2, 3)
    """

    shape: tuple[int, ...]


class Piece(NamedTuple):
    """``UNPACK``: the piece of a packed vector that starts at ``offset``, as ``shape``.

    Example:
        >>> Piece(4, (2, 3)).shape
        (2, 3)
    """

    offset: int
    shape: tuple[int, ...]


class Permute(NamedTuple):
    """``TRANSPOSE``: result axis ``i`` is operand axis ``perm[i]``.

    Example:
        >>> Permute((1, 0)).perm
        (1, 0)
    """

    perm: tuple[int, ...]


class Axes(NamedTuple):
    """``FLIP``: the axes reversed.

    Example:
        >>> Axes((0,)).axes
        (0,)
    """

    axes: tuple[int, ...]


class Axis(NamedTuple):
    """``CONCAT``: the axis joined along.

    Example:
        >>> Axis(1).axis
        1
    """

    axis: int


class Scan(NamedTuple):
    """``CUMSUM``: the axis scanned, and whether from its end (a cumulative sum's VJP).

    Example:
        >>> Scan(0, True).reverse
        True
    """

    axis: int
    reverse: bool


class Conv(NamedTuple):
    """``CONV``: strides, padding, dilations and groups of an N-d convolution.

    Per spatial axis: the window ``strides``, the ``padding`` (low, high; negative crops), the
    spacing of the input (``lhs_dilation``: a transposed convolution) and of the filter
    (``rhs_dilation``); then how features and batch split into groups. Layouts are torch's:
    input (N, C, ...), filter (O, C / groups, ...), result (N, O, ...).

    Example:
        >>> Conv((1,), ((0, 0),), (1,), (1,), 1, 1).groups
        1
    """

    strides: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]
    lhs_dilation: tuple[int, ...]
    rhs_dilation: tuple[int, ...]
    groups: int
    batch_groups: int  # the filter's gradient splits the batch, not the features


class Sort(NamedTuple):
    """``SORT``, ``ARGSORT``: the axis sorted, and whether descending (every sort is stable).

    Example:
        >>> Sort(0, True).descending
        True
    """

    axis: int
    descending: bool


class Fn(enum.IntEnum):
    """A function of the linalg extension that is a primitive (``Linalg.fn``).

    The others (``matrix_norm``, ``pinv``, ``trace``...) are composed from recorded ops.

    Example:
        >>> Fn.CHOLESKY.name.lower(), Fn(0) is Fn.CHOLESKY
        ('cholesky', True)
    """

    CHOLESKY = 0
    EIGH_VALUES = 1
    EIGH_VECTORS = 2
    QR_Q = 3
    QR_R = 4
    SVD_U = 5
    SVD_S = 6
    SVD_VT = 7
    SOLVE = 8
    INV = 9
    DET = 10
    SLOGDET_SIGN = 11
    SLOGDET_LOGABS = 12


class Linalg(NamedTuple):
    """``LINALG``: which function (an :class:`Fn`), and if its factors are ``full``.

    Example:
        >>> Linalg(0, False).full
        False
    """

    fn: int  # eigh, qr, svd and slogdet record one node per result
    full: bool  # qr's mode="complete", svd's full_matrices


class Kind(enum.IntEnum):
    """A transform ``FFT`` records; the real ones are real along the last of their axes.

    Example:
        >>> Kind.RFFT.name.lower(), Kind(3) is Kind.IRFFT
        ('rfft', True)
    """

    FFT = 0  # complex -> complex, e^{-2 pi i jk/n}
    IFFT = 1  # complex -> complex, e^{+2 pi i jk/n}
    RFFT = 2  # real -> complex: the last axis keeps n//2 + 1 frequencies
    IRFFT = 3  # complex -> real: the last axis's n//2 + 1 frequencies give n real values


class Norm(enum.IntEnum):
    """Which direction is scaled, by ``1/n`` (or both by ``1/sqrt(n)``): the ``norm=`` keyword.

    Example:
        >>> Norm["ORTHO"].name.lower()
        'ortho'
    """

    BACKWARD = 0
    ORTHO = 1
    FORWARD = 2


class Fft(NamedTuple):
    """``FFT``: a :class:`Kind` over ``axes``, of ``lengths``, scaled by a :class:`Norm`.

    Example:
        >>> Fft(0, (1,), (8,), 0).lengths
        (8,)
    """

    kind: int
    axes: tuple[int, ...]
    lengths: tuple[int, ...]
    norm: int


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


Entry: TypeAlias = At | Span | NewAxis | Take | Gap


class Sharding(NamedTuple):
    """How a tensor is split over a mesh: ``DATA`` placed so, or a ``SHARD`` annotation.

    ``dims`` has one entry per tensor dimension: the positions of the mesh axes that dimension
    is split over, in order (empty: replicated along it). Positions, not names: a name is a
    ``str``, and ``str`` hashing differs from process to process.

    Example:
        >>> import minilazy as ml
        >>> s = Sharding(ml.Mesh([ml.Device("cpu", 0)], ("data",)), ((0,), ()))
        >>> s.spec
        ('data', None)
    """

    mesh: Mesh
    dims: tuple[tuple[int, ...], ...]

    @property
    def spec(self) -> tuple[str | tuple[str, ...] | None, ...]:
        """The partition spec: per dimension a mesh axis name, a tuple of them, or ``None``."""
        names = self.mesh.axis_names
        return tuple(None if not d else names[d[0]] if len(d) == 1 else
                     tuple(names[i] for i in d) for d in self.dims)

class Index(NamedTuple):
    """``GETITEM``, ``SETITEM``, ``SCATTER_ADD``: one entry per indexed axis, normalised.

    Example:
        >>> Index((At(0), Span(0, 2, 1, False))).entries[0]
        At(i=0, kind=0)
    """

    entries: tuple[Entry, ...]


# A user's partition spec: per dimension a mesh axis name, a tuple of them, or None.
Spec: TypeAlias = Sequence[str | tuple[str, ...] | None]

Attrs: TypeAlias = (NoAttrs | Constant | Iota | Cast | Reduce | Contract | ToShape | Permute | Axes
                    | Axis | Scan | Conv | Sharding | Index | Sort | Linalg | Fft | Piece)


def mismatch(op: object, attrs: object) -> TypeError:
    """The error for attributes of the wrong family (a bug in the caller, not user input).

    Example:
        >>> mismatch("sum", Axis(0))
        TypeError('sum: attributes Axis(axis=0) are of the wrong family')
    """
    return TypeError(f"{getattr(op, 'value', op)}: attributes {attrs!r} are of the wrong family")
