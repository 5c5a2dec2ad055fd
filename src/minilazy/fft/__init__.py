"""The Array API's ``fft`` extension (2023.12): ``ml.fft``.

Every transform is one recorded ``Op.FFT`` node
(:mod:`minilazy.ops.fft`) over some axes: ``fft``/``ifft``/``rfft``/``irfft`` are the
n-dimensional ones over a single axis, and ``hfft``/``ihfft`` are ``irfft``/``rfft`` of
conjugates with the other scaling, as NumPy defines them. ``fftfreq`` and ``rfftfreq`` are
recorded from ``arange``; the shifts are ``roll``. Transforms are linear, so each one's VJP is
another transform (:func:`fft_vjp`), in JAX's convention for complex numbers.

Where the standard says "should", minilazy accepts what NumPy does: ``fft`` and friends take
real floating input (transformed as complex) and ``irfft``/``hfft`` real input too. Integer and
bool input raises TypeError, as does complex input to ``rfft``/``ihfft`` (NumPy would drop the
imaginary part silently). Repeated axes raise ValueError. Never imports jax.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Literal

from minilazy.api.axes import normalize_axes
from minilazy.api.creation import arange, tensor, zeros
from minilazy.api.elementwise import astype, conj
from minilazy.api.manipulation import roll
from minilazy.api.shaping import concat, reshape
from minilazy.api.tensor import Tensor, TensorLike, record
from minilazy.core import dtypes
from minilazy.core.attrs import Device
from minilazy.core.dtypes import DTypeLike
from minilazy.core.infer import describe
from minilazy.core.ir import Node, Op
from minilazy.ops.fft import COMPLEX_OF, Fft, Kind, Norm

__all__ = ["fft", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifftn", "ifftshift", "ihfft",
           "irfft", "irfftn", "rfft", "rfftfreq", "rfftn"]

NormName = Literal["backward", "ortho", "forward"]
_SWAPPED = {Norm.BACKWARD: Norm.FORWARD, Norm.ORTHO: Norm.ORTHO, Norm.FORWARD: Norm.BACKWARD}


def _norm(name: str, norm: object) -> Norm:
    if norm not in ("backward", "ortho", "forward"):
        raise ValueError(f"fft.{name}: norm must be 'backward', 'ortho' or 'forward', got "
                         f"{norm!r}")
    return Norm[str(norm).upper()]


def _operand(name: str, x: TensorLike, want: Literal["complex", "real"]) -> Tensor:
    """``x`` as a tensor of the dtype the transform computes in; TypeError if it has none."""
    x = tensor(x)
    if want == "complex" and x.dtype in dtypes.COMPLEX:
        return x
    if x.dtype not in dtypes.FLOATING:
        kind = "a floating-point" if want == "complex" else "a real floating-point"
        raise TypeError(f"fft.{name}: needs {kind} tensor, got {describe(x._node)}")
    widened = astype(x, dtypes.float32) if x.dtype == dtypes.float16 else x
    return astype(widened, COMPLEX_OF[widened.dtype]) if want == "complex" else widened


def _plan(name: str, x: Tensor, s: Sequence[int] | None, axes: Sequence[int] | None,
          inverse_real: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The axes transformed (in the given order) and the transform's length along each."""
    ndim = x.ndim
    if axes is None:  # all axes, or the last len(s), as NumPy does
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = tuple(axes)
    normalize_axes(f"fft.{name}", axes, ndim)  # AxisError, or ValueError for a repeated one
    resolved = tuple(a % ndim for a in axes)  # in the given order: rfftn's last is the real one
    sizes = [x.shape[a] for a in resolved]
    if inverse_real and sizes:  # the last axis holds n//2 + 1 frequencies of n real values
        sizes[-1] = 2 * (sizes[-1] - 1)
    if s is not None:
        s = [operator.index(n) for n in s]
        if len(s) != len(resolved):
            raise ValueError(f"fft.{name}: s={tuple(s)} and axes={tuple(resolved)} differ in "
                             "length")
        sizes = [m if n == -1 else n for n, m in zip(s, sizes)]  # -1: the whole axis
    if any(n < 1 for n in sizes):
        raise ValueError(f"fft.{name}: invalid transform lengths {tuple(sizes)} (each must be "
                         f">= 1) for {describe(x._node)}")
    return tuple(resolved), tuple(sizes)


def _record(kind: Kind, x: Tensor, axes: tuple[int, ...], lengths: tuple[int, ...],
            norm: Norm) -> Tensor:
    return record(Op.FFT, (x._node,), Fft(int(kind), axes, lengths, int(norm)), x.device)


def _transform(name: str, kind: Kind, x: TensorLike, s: Sequence[int] | None,
               axes: Sequence[int] | None, how: Norm) -> Tensor:
    x = _operand(name, x, "real" if kind == Kind.RFFT else "complex")
    resolved, lengths = _plan(name, x, s, axes, kind == Kind.IRFFT)
    if not resolved:
        if kind in (Kind.RFFT, Kind.IRFFT):
            raise ValueError(f"fft.{name}: needs at least one axis, got {describe(x._node)}")
        return x  # no axis to transform: the identity, as NumPy's fftn(x, axes=())
    return _record(kind, x, resolved, lengths, how)


def _one_axis(name: str, n: int | None, axis: int) -> tuple[list[int] | None, list[int]]:
    if n is not None and operator.index(n) < 0:  # (-1, "the whole axis", is for s= only)
        raise ValueError(f"fft.{name}: invalid number of data points n={n} (must be >= 1)")
    return (None if n is None else [n]), [axis]


def fft(x: TensorLike, /, *, n: int | None = None, axis: int = -1,
        norm: NormName = "backward") -> Tensor:
    """The discrete Fourier transform along ``axis``, trimmed or zero-padded to ``n`` first.

    Example:
        >>> import minilazy as ml
        >>> ml.fft.fft(ml.asarray([1.0, 2.0, 3.0, 4.0])).numpy()
        array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    return _transform("fft", Kind.FFT, x, *_one_axis("fft", n, axis),
                      _norm("fft", norm))


def ifft(x: TensorLike, /, *, n: int | None = None, axis: int = -1,
         norm: NormName = "backward") -> Tensor:
    """The inverse of :func:`fft` (scaled by ``1/n`` with the default ``norm``).

    Example:
        >>> import minilazy as ml
        >>> ml.fft.ifft(ml.asarray([10.0, -2 + 2j, -2.0, -2 - 2j])).numpy().real
        array([1., 2., 3., 4.])
    """
    return _transform("ifft", Kind.IFFT, x, *_one_axis("ifft", n, axis),
                      _norm("ifft", norm))


def fftn(x: TensorLike, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: NormName = "backward") -> Tensor:
    """The n-dimensional transform over ``axes`` (all, or the last ``len(s)``), to lengths ``s``.

    Example:
        >>> import minilazy as ml
        >>> ml.fft.fftn(ml.ones((2, 2))).numpy().real
        array([[4., 0.],
               [0., 0.]])
    """
    return _transform("fftn", Kind.FFT, x, s, axes, _norm("fftn", norm))


def ifftn(x: TensorLike, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: NormName = "backward") -> Tensor:
    """The inverse of :func:`fftn`.

    Example:
        >>> import minilazy as ml
        >>> ml.fft.ifftn(ml.fft.fftn(ml.ones((2, 2)))).numpy().real
        array([[1., 1.],
               [1., 1.]])
    """
    return _transform("ifftn", Kind.IFFT, x, s, axes, _norm("ifftn", norm))


def rfft(x: TensorLike, /, *, n: int | None = None, axis: int = -1,
         norm: NormName = "backward") -> Tensor:
    """The transform of real input: the ``n//2 + 1`` non-negative frequencies.

    Example:
        >>> import minilazy as ml
        >>> ml.fft.rfft(ml.asarray([1.0, 2.0, 3.0, 4.0])).numpy()
        array([10.+0.j, -2.+2.j, -2.+0.j])
    """
    return _transform("rfft", Kind.RFFT, x, *_one_axis("rfft", n, axis),
                      _norm("rfft", norm))


def irfft(x: TensorLike, /, *, n: int | None = None, axis: int = -1,
          norm: NormName = "backward") -> Tensor:
    """The inverse of :func:`rfft`: ``n`` real values (``2 * (m - 1)`` for ``m`` frequencies).

    Example:
        >>> import minilazy as ml
        >>> ml.fft.irfft(ml.asarray([10.0, -2 + 2j, -2.0])).numpy()
        array([1., 2., 3., 4.])
    """
    return _transform("irfft", Kind.IRFFT, x, *_one_axis("irfft", n, axis),
                      _norm("irfft", norm))


def rfftn(x: TensorLike, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: NormName = "backward") -> Tensor:
    """:func:`fftn` of real input; the last of ``axes`` keeps ``s[-1]//2 + 1`` frequencies.

    Example:
        >>> import minilazy as ml
        >>> ml.fft.rfftn(ml.ones((2, 4))).shape
        (2, 3)
    """
    return _transform("rfftn", Kind.RFFT, x, s, axes, _norm("rfftn", norm))


def irfftn(x: TensorLike, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: NormName = "backward") -> Tensor:
    """The inverse of :func:`rfftn`: real values, ``s[-1]`` of them along the last axis.

    Example:
        >>> import minilazy as ml
        >>> ml.fft.irfftn(ml.fft.rfftn(ml.ones((2, 4)))).numpy()
        array([[1., 1., 1., 1.],
               [1., 1., 1., 1.]])
    """
    return _transform("irfftn", Kind.IRFFT, x, s, axes, _norm("irfftn", norm))


def hfft(x: TensorLike, /, *, n: int | None = None, axis: int = -1,
         norm: NormName = "backward") -> Tensor:
    """The transform of a Hermitian-symmetric signal given by its first half: real values.

    ``irfft`` of the conjugate with the other scaling (NumPy's definition).

    Example:
        >>> import minilazy as ml
        >>> ml.fft.hfft(ml.asarray([1.0, 2.0, 3.0])).numpy()
        array([ 8., -2.,  0., -2.])
    """
    how = _SWAPPED[_norm("hfft", norm)]
    return _transform("hfft", Kind.IRFFT, conj(_operand("hfft", x, "complex")),
                      *_one_axis("hfft", n, axis), how)


def ihfft(x: TensorLike, /, *, n: int | None = None, axis: int = -1,
          norm: NormName = "backward") -> Tensor:
    """The inverse of :func:`hfft`: the first half of a Hermitian-symmetric spectrum.

    Example:
        >>> import minilazy as ml
        >>> ml.fft.ihfft(ml.asarray([8.0, -2.0, 0.0, -2.0])).numpy()
        array([1.-0.j, 2.-0.j, 3.-0.j])
    """
    how = _SWAPPED[_norm("ihfft", norm)]
    return conj(_transform("ihfft", Kind.RFFT, x, *_one_axis("ihfft", n, axis), how))


def _frequencies(name: str, n: int, d: float, dtype: DTypeLike | None,
                 device: Device | None) -> tuple[Tensor, dtypes.DType, float]:
    """``arange`` of the count of frequencies, the dtype wanted and ``1 / (d * n)``, checked."""
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"fft.{name}: n must be positive, got {n}")
    want = dtypes.DEFAULT_FLOAT if dtype is None else dtypes.canonical(dtype)
    if want not in dtypes.FLOATING:
        raise ValueError(f"fft.{name}: dtype must be a real floating-point dtype, got {want}")
    count = n if name == "fftfreq" else n // 2 + 1
    return arange(count, dtype=dtypes.DEFAULT_INT, device=device), want, 1.0 / (d * n)


def fftfreq(n: int, /, *, d: float = 1.0, dtype: DTypeLike | None = None,
            device: Device | None = None) -> Tensor:
    """The sample frequencies of an ``n``-point :func:`fft`, for sample spacing ``d``.

    Example:
        >>> import minilazy as ml
        >>> ml.fft.fftfreq(4, d=0.5).numpy()
        array([ 0. ,  0.5, -1. , -0.5])
    """
    k, want, scale = _frequencies("fftfreq", n, d, dtype, device)
    half = n // 2  # positive frequencies first, then the negative ones
    return astype((k + half) % n - half, want) * scale


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: DTypeLike | None = None,
             device: Device | None = None) -> Tensor:
    """The sample frequencies of an ``n``-point :func:`rfft`: ``n//2 + 1`` non-negative ones.

    Example:
        >>> import minilazy as ml
        >>> ml.fft.rfftfreq(4).numpy()
        array([0.  , 0.25, 0.5 ])
    """
    k, want, scale = _frequencies("rfftfreq", n, d, dtype, device)
    return astype(k, want) * scale


def _shift(name: str, x: TensorLike, axes: int | Sequence[int] | None, sign: int) -> Tensor:
    x = tensor(x)
    resolved = normalize_axes(f"fft.{name}", axes, x.ndim)
    if not resolved:
        return x
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in resolved), axis=resolved)


def fftshift(x: TensorLike, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """``x`` rolled so the zero frequency is in the middle of each of ``axes`` (default: all).

    Example:
        >>> import minilazy as ml
        >>> ml.fft.fftshift(ml.fft.fftfreq(4)).numpy()
        array([-0.5 , -0.25,  0.  ,  0.25])
    """
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: TensorLike, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of :func:`fftshift` (they differ for odd lengths).

    Example:
        >>> import minilazy as ml
        >>> ml.fft.ifftshift(ml.fft.fftshift(ml.arange(5))).numpy()
        array([0, 1, 2, 3, 4])
    """
    return _shift("ifftshift", x, axes, -1)


# -- the VJP: transforms are linear, so each one's transpose is another transform --------------
def _resize(x: Tensor, axes: tuple[int, ...], sizes: Sequence[int]) -> Tensor:
    """``x`` trimmed or zero-padded at the end of each of ``axes`` to ``sizes``."""
    for a, want in zip(axes, sizes):
        have = x.shape[a]
        if have > want:
            x = x[(slice(None),) * a + (slice(0, want),)]
        elif have < want:
            pad = list(x.shape)
            pad[a] = want - have
            x = concat([x, zeros(tuple(pad), dtype=x.dtype, device=x.device)], axis=a)
    return x


def fft_vjp(ct: Tensor, out: Tensor, xs: tuple[Tensor, ...], n: Node) -> tuple[Tensor | None]:
    """The cotangent of an ``FFT`` node's operand: the transposed transform, resized back.

    A complex-to-complex DFT matrix is symmetric, so its transpose is the same transform. The
    real-to-complex one's is the full transform of the zero-padded frequencies (its real part is
    taken by ``vjps.fit``); the complex-to-real one's is an ``rfft`` with the other scaling,
    conjugated and doubled for the frequencies that stand for two (JAX's convention).

    Example:
        >>> import minilazy as ml
        >>> x = ml.asarray([1.0, 2.0, 3.0])
        >>> ml.grad(lambda x: ml.sum(ml.real(ml.fft.fft(x))))(x).numpy()
        array([3., 0., 0.])
    """
    match n.attrs:
        case Fft(code, axes, lengths, code_norm):
            kind, norm, (x,) = Kind(code), Norm(code_norm), xs
            if kind in (Kind.FFT, Kind.IFFT):
                g = _record(kind, ct, axes, lengths, norm)
            elif kind == Kind.RFFT:
                g = _record(Kind.FFT, _resize(ct, axes[-1:], lengths[-1:]), axes, lengths, norm)
            else:
                last, size = axes[-1], lengths[-1]
                g = conj(_record(Kind.RFFT, ct, (last,), (size,), _SWAPPED[norm]))
                k = arange(size // 2 + 1, device=ct.device)
                twice = 2.0 - astype((k == 0) | (2 * k == size), dtypes.PART[g.dtype])
                g = g * reshape(twice, tuple(-1 if i == last else 1 for i in range(g.ndim)))
                if len(axes) > 1:
                    g = _record(Kind.IFFT, g, axes[:-1], lengths[:-1], norm)
            return (_resize(g, axes, [x.shape[a] for a in axes]),)
    raise TypeError(f"fft_vjp: not an FFT node: {n.op.value}")
