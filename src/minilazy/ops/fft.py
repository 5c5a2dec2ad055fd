"""The FFT family: ``Op.FFT``, every interpretation of it, registered into the engine's tables.

The worked example of an op family (docs/families.md). Four kinds of transform
(:class:`~minilazy.core.attrs.Kind`) cover the standard's ten: complex to complex forward and
inverse (``fftn``/``ifftn``, and ``fft``/``ifft`` over one axis), real to complex (``rfftn``)
and complex to real (``irfftn``); ``hfft`` and ``ihfft`` are these on conjugates
(``minilazy.fft``). This module writes the op's rules, one per interpretation:

- :func:`rule`, its result shape and dtype, checked when it is recorded (``infer.INFER``);
- :func:`evaluate`, its value, written once for any array namespace: the lowering calls it with
  ``jax.numpy`` (``lowering.LOWER``), the reference interpreter with NumPy
  (``reference.REFERENCE``); their ``fft`` modules share these signatures, so the two agree by
  construction;
- :func:`python`, the public call that records it again (``pycode.PYTHON``).

Its VJP is written with the namespace, beside the public functions (``minilazy.fft``). Never
imports jax.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, Final, NamedTuple

from minilazy.core import dtypes, infer, ir, lowering
from minilazy.core.attrs import Attrs, mismatch
from minilazy.core.dtypes import DType, typed
from minilazy.core.ir import Node, Op, Shape, ShapeError
from minilazy.introspect import printers, pycode, reference


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

# The complex dtype of a real one's transform (minilazy.fft widens float16 first, as NumPy does).
COMPLEX_OF: Final[dict[DType, DType]] = {v: k for k, v in dtypes.PART.items()}
_NAMES: Final = {Kind.FFT: "fftn", Kind.IFFT: "ifftn", Kind.RFFT: "rfftn", Kind.IRFFT: "irfftn"}


def name(kind: int) -> str:
    """The public n-dimensional function a kind of transform is (``ml.fft.<name>``).

    Example:
        >>> name(Kind.IRFFT)
        'irfftn'
    """
    return _NAMES[Kind(kind)]


def rule(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """The result shape and dtype of ``FFT`` (its options as the public functions check them).

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (4, 6), dtypes.float32)
        >>> rule(Op.FFT, (x,), Fft(Kind.RFFT, (0, 1), (4, 10), Norm.BACKWARD))
        ((4, 6), dtype('complex64'))
        >>> rule(Op.FFT, (x,), Fft(Kind.FFT, (1,), (6,), Norm.BACKWARD))
        Traceback (most recent call last):
        ...
        TypeError: fftn: needs a complex operand, got f32[4,6]
    """
    match attrs:
        case Fft(kind, axes, lengths, _):
            (x,) = xs
            real_in = kind == Kind.RFFT
            if x.dtype not in (COMPLEX_OF if real_in else dtypes.COMPLEX):
                want = "float32 or float64" if real_in else "complex"
                raise TypeError(f"{name(kind)}: needs a {want} operand, got "
                                f"{typed(x.dtype, x.shape)}")
            if len(axes) != len(lengths) or not axes or len(set(axes)) != len(axes) or any(
                    not 0 <= a < len(x.shape) for a in axes) or min(lengths) < 1:
                raise ShapeError(f"{name(kind)}: bad axes {axes} or lengths {lengths} for shape "
                                 f"{x.shape}")
            shape = list(x.shape)
            for a, n in zip(axes, lengths):
                shape[a] = n
            if kind == Kind.RFFT:
                shape[axes[-1]] = lengths[-1] // 2 + 1
            parts = dtypes.PART.get(x.dtype, x.dtype)  # IRFFT's result: real
            dtype = COMPLEX_OF[x.dtype] if real_in else parts if kind == Kind.IRFFT else x.dtype
            return dtypes.sized(name(kind), tuple(shape), dtype), dtype  # lengths are user input
    raise mismatch(op, attrs)


def evaluate(xp: Any, xs: Sequence[Any], n: Node) -> Any:
    """The value of an ``FFT`` node computed with namespace ``xp`` (``jax.numpy`` or NumPy).

    Example:
        >>> import numpy as np
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (3,), dtypes.float64)
        >>> n = Node(Op.FFT, (x,), Fft(Kind.RFFT, (0,), (4,), Norm.BACKWARD), (3,),
        ...          dtypes.complex128)
        >>> evaluate(np, [np.array([1.0, 2.0, 3.0])], n)
        array([ 6.+0.j, -2.-2.j,  2.+0.j])
    """
    match n.attrs:
        case Fft(kind, axes, lengths, norm):
            return getattr(xp.fft, name(kind))(xs[0], s=lengths, axes=axes,
                                               norm=Norm(norm).name.lower())
    raise mismatch(n.op, n.attrs)


def python(result: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line of minilazy code that records ``n`` again (``ml.fft.rfftn(v0, ...)``).

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (3,), dtypes.complex64)
        >>> python("v1", Node(Op.FFT, (x,), Fft(Kind.FFT, (0,), (3,), Norm.ORTHO), (3,),
        ...                   dtypes.complex64), ["v0"])
        ["v1 = ml.fft.fftn(v0, s=(3,), axes=(0,), norm='ortho')"]
    """
    match n.attrs:
        case Fft(kind, axes, lengths, norm):
            return [f"{result} = ml.fft.{name(kind)}({args[0]}, s={lengths!r}, "
                    f"axes={axes!r}, norm={Norm(norm).name.lower()!r})"]
    raise mismatch(n.op, n.attrs)


def text(a: Fft) -> str:
    """How the IR text shows a transform's attributes.

    Example:
        >>> text(Fft(Kind.RFFT, (0,), (8,), Norm.ORTHO))
        'kind=rfft axes=[0] lengths=[8] norm=ortho'
    """
    return (f"kind={Kind(a.kind).name.lower()} axes={list(a.axes)} lengths={list(a.lengths)}"
            f" norm={Norm(a.norm).name.lower()}")


# Registration: the op's entry in each interpreter's table (JAX's layout; Autodidax's tables).
ir.FAMILY[Op.FFT] = (Fft,)
printers.TEXT[Fft] = text
infer.INFER[Op.FFT] = rule
lowering.LOWER[Op.FFT] = lowering.with_namespace(evaluate)
reference.REFERENCE[Op.FFT] = reference.with_namespace(evaluate)
pycode.PYTHON[Op.FFT] = python
