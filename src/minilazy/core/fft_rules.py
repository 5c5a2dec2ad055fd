"""The fft extension's one primitive, ``Op.FFT``: its kinds, shape rule and evaluation table.

One of core's op rules, beside ``namespaced.py``. Four kinds of transform cover the
standard's ten: complex to complex forward and inverse (``fftn``/``ifftn``, and ``fft``/``ifft``
over one axis), real to complex (``rfftn``) and complex to real (``irfftn``); ``hfft`` and
``ihfft`` are these on conjugates (``minilazy.fft``). :func:`evaluate` computes a node with the
array namespace it is given: ``jax.numpy`` in the lowering, NumPy in the reference interpreter,
whose ``fft`` modules share these functions' signatures, so the two interpretations agree by
construction. Never imports jax.
"""

from __future__ import annotations

import enum
from typing import Any, Final

from minilazy.core import dtypes
from minilazy.core.attrs import Attrs, Fft, mismatch
from minilazy.core.dtypes import DType, typed
from minilazy.core.ir import Node, Op, Shape, ShapeError


class Kind(enum.IntEnum):
    """A transform ``Op.FFT`` records; the real ones are real along the last of their axes.

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


def fft_rule(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """The result shape and dtype of ``FFT`` (its options as the public functions check them).

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (4, 6), dtypes.float32)
        >>> fft_rule(Op.FFT, (x,), Fft(Kind.RFFT, (0, 1), (4, 10), Norm.BACKWARD))
        ((4, 6), dtype('complex64'))
        >>> fft_rule(Op.FFT, (x,), Fft(Kind.FFT, (1,), (6,), Norm.BACKWARD))
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


def evaluate(xp: Any, x: Any, attrs: Attrs) -> Any:
    """The value of an ``FFT`` node computed with namespace ``xp`` (``jax.numpy`` or NumPy).

    Example:
        >>> import numpy as np
        >>> evaluate(np, np.array([1.0, 2.0, 3.0]), Fft(Kind.RFFT, (0,), (4,), Norm.BACKWARD))
        array([ 6.+0.j, -2.-2.j,  2.+0.j])
    """
    match attrs:
        case Fft(kind, axes, lengths, norm):
            return getattr(xp.fft, name(kind))(x, s=lengths, axes=axes,
                                               norm=Norm(norm).name.lower())
    raise mismatch(Op.FFT, attrs)
