"""The fft extension (capability ``fft``): NumPy's transforms, recorded lazily (LZ-NUM-019).

Each transform is checked against ``numpy.fft`` on float32, float64, complex64 and complex128
input (the 64-bit ones with capability ``float64``), over any axes, with trimmed or zero-padded
lengths and every ``norm``. The slack is ``8 n eps`` of the largest magnitude an ``n``-point
transform of the input can reach (``n`` times its largest element, scaled as ``norm`` scales
that direction): FFTs are that accurate, and a wrong sign, scale or length is far outside it.
Recording transforms runs nothing (LZ-REC-001). Implementations without the capability skip,
naming it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import assert_close
from minilazy.conformance.oracle.variants import Call, vary
from minilazy.conformance.suite.test_autodiff import numeric_grad
from minilazy.conformance.suite.util import counting, fresh, settle

Array = np.ndarray[Any, Any]
ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_AXES = ["fftn", "ifftn", "rfftn", "irfftn"]
REAL_IN = {"rfft", "rfftn", "ihfft"}  # the rest take complex input
# The transforms scaled by 1/n under the default norm ("backward"): the inverse direction.
INVERSE = {"ifft", "ifftn", "irfft", "irfftn", "ihfft"}


def _dtypes(adapter: OptionalAdapter, real: bool) -> list[np.dtype[Any]]:
    wide = "float64" in adapter.capabilities
    names = ["float32", "float64"] if real else ["complex64", "complex128"]
    return [np.dtype(n) for n in names[:2 if wide else 1]]


def _signal(draw: Any, adapter: OptionalAdapter, real: bool) -> Array:
    """1-d to 3-d, sides 1-6, parts in [-1, 1]."""
    dtype = draw(st.sampled_from(_dtypes(adapter, real)), label="dtype")
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6), label="shape")
    parts = [draw(hnp.arrays(np.float64, shape, elements=st.floats(-1, 1)), label="part")
             for _ in range(1 if real else 2)]
    value: Array = parts[0] if real else parts[0] + 1j * parts[1]
    return value.astype(dtype)


def _bound(name: str, norm: str, points: int, x: Array, want: Array) -> float:
    """``8 n eps`` of the largest magnitude an ``n``-point transform of ``x`` can reach."""
    forward = name not in INVERSE
    scale = {"backward": 1.0 if forward else 1 / points, "ortho": 1 / math.sqrt(points),
             "forward": 1 / points if forward else 1.0}[norm]
    largest = points * float(np.max(np.abs(x), initial=0.0)) * scale
    return 8 * points * float(np.finfo(want.dtype).eps) * largest


def _check(adapter: OptionalAdapter, name: str, x: Array, norm: str, points: int,
           **kwargs: Any) -> None:
    want = getattr(np.fft, name)(x, norm=norm, **kwargs)
    real_parts = {np.dtype("complex64"): np.float32, np.dtype("float32"): np.complex64}
    if x.dtype in real_parts:  # NumPy 2 keeps single precision; older ones widen: narrow back
        want = want.astype(np.float32 if want.dtype.kind == "f" else np.complex64)
    got = adapter.fft(name, adapter.from_numpy(x), norm=norm, **kwargs)
    assert_close(adapter.to_numpy(got), want, "loose", _bound(name, norm, points, x, want),
                 what=f"fft.{name}({list(x.shape)} {x.dtype}, norm={norm!r}, {kwargs})")


@pytest.mark.spec("LZ-NUM-019")
@pytest.mark.parametrize("name", ONE_AXIS)
@given(data=st.data())
def test_one_axis_transforms_match_numpy(adapter: OptionalAdapter, name: str,
                                         data: st.DataObject) -> None:
    """Any axis; ``n`` the axis's length, shorter (trimmed) or longer (zero-padded)."""
    fresh(adapter)
    draw = data.draw
    x = _signal(draw, adapter, name in REAL_IN)
    axis = draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    n = draw(st.one_of(st.none(), st.integers(1, 8)), label="n")
    if name in ("irfft", "hfft") and n is None and x.shape[axis] == 1:
        n = 1  # the default, 2 (m - 1), would be 0 points
    points = n or (2 * (x.shape[axis] - 1) if name in ("irfft", "hfft") else x.shape[axis])
    norm = draw(st.sampled_from(["backward", "ortho", "forward"]), label="norm")
    _check(adapter, name, x, norm, points, n=n, axis=axis)


@pytest.mark.spec("LZ-NUM-019")
@pytest.mark.parametrize("name", N_AXES)
@given(data=st.data())
def test_n_dimensional_transforms_match_numpy(adapter: OptionalAdapter, name: str,
                                              data: st.DataObject) -> None:
    """Over one to all axes, in any order (the last is the real one of ``rfftn``/``irfftn``)."""
    fresh(adapter)
    draw = data.draw
    x = _signal(draw, adapter, name in REAL_IN)
    axes = draw(st.permutations(range(x.ndim)).flatmap(
        lambda p: st.integers(1, len(p)).map(lambda k: tuple(p[:k]))), label="axes")
    s = draw(st.one_of(st.none(), st.lists(st.integers(1, 6), min_size=len(axes),
                                           max_size=len(axes)).map(tuple)), label="s")
    if name == "irfftn" and s is None and x.shape[axes[-1]] == 1:
        s = tuple(x.shape[a] for a in axes[:-1]) + (2,)
    lengths = list(s) if s is not None else [x.shape[a] for a in axes]
    if name == "irfftn" and s is None:
        lengths[-1] = 2 * (lengths[-1] - 1)
    norm = draw(st.sampled_from(["backward", "ortho", "forward"]), label="norm")
    _check(adapter, name, x, norm, math.prod(lengths), s=s, axes=axes)


@pytest.mark.spec("LZ-NUM-019")
@given(n=st.integers(1, 12), d=st.floats(0.1, 10), axes=st.sampled_from([None, 0, -1, (0, 1)]),
       data=st.data())
def test_frequencies_and_shifts_match_numpy(adapter: OptionalAdapter, n: int, d: float,
                                            axes: Any, data: st.DataObject) -> None:
    """``fftfreq``/``rfftfreq`` of ``n`` points, spacing ``d``; shifts of 2-d arrays."""
    fresh(adapter)
    dtype = data.draw(st.sampled_from(_dtypes(adapter, real=True)), label="dtype")
    for name in ("fftfreq", "rfftfreq"):
        want = getattr(np.fft, name)(n, d=d).astype(dtype)
        got = adapter.to_numpy(adapter.fft(name, n, d=d, dtype=dtype))
        assert_close(got, want, "loose", 4 * float(np.finfo(dtype).eps) * np.abs(want),
                     what=f"fft.{name}({n}, d={d})")
    x = data.draw(hnp.arrays(dtype, data.draw(hnp.array_shapes(min_dims=2, max_dims=2,
                                                               max_side=5), label="shape"),
                             elements=st.floats(-4, 4, width=32)), label="x")
    for name in ("fftshift", "ifftshift"):
        got = adapter.to_numpy(adapter.fft(name, adapter.from_numpy(x), axes=axes))
        assert_close(got, getattr(np.fft, name)(x, axes=axes), what=f"fft.{name}(axes={axes})")


@pytest.mark.spec("LZ-REC-001", "LZ-NUM-019")
@pytest.mark.requires("fft")
def test_recording_transforms_executes_nothing(adapter: OptionalAdapter) -> None:
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    t = adapter.from_numpy(x)
    settle(adapter)
    with counting(adapter) as d:
        ys = [adapter.fft("rfft", t), adapter.fft("fftn", adapter.fft("rfftn", t), axes=(0,)),
              adapter.fft("irfft", adapter.fft("rfft", t), n=6),
              adapter.fft("fftshift", t, axes=None)]
    assert d.ran_nothing(), f"recording ran something: {d}"
    wants: list[Array] = [np.fft.rfft(x), np.fft.fftn(np.fft.rfftn(x), axes=(0,)),
             np.fft.irfft(np.fft.rfft(x), n=6), np.fft.fftshift(x)]
    for got, want in zip(ys, wants, strict=True):
        want = want.astype(np.complex64 if want.dtype.kind == "c" else np.float32)
        assert_close(adapter.to_numpy(got), want, "loose", _bound("fftn", "backward", 24, x, want))


# -- gradients of every transform, complex-to-real and real-to-complex too (LZ-AD-001) ------------
NORMS = ["backward", "ortho", "forward"]
# Each transform's options, one at a time (the first of each list is the base call).
GRADIENT_CALLS: dict[str, list[Call]] = {
    **{name: vary(n=[None, 3, 6], axis=[-1, 0], norm=NORMS)
       for name in ("rfft", "ihfft", "irfft", "hfft", "fft", "ifft")},
    **{name: vary(s=[None, (2, 6), (4, 3)], axes=[(0, 1), (1, 0), (1,)], norm=NORMS)
       for name in ("rfftn", "fftn", "ifftn")},
    "irfftn": vary(s=[None, (2, 6), (4, 5)], axes=[(0, 1), (1, 0), (0,)], norm=NORMS),
}


@pytest.mark.spec("LZ-AD-001")
@pytest.mark.requires("fft", "complex", "float64")
@pytest.mark.ops("add", "multiply", "real", "imag", "sum")
@pytest.mark.parametrize("name", sorted(GRADIENT_CALLS))
def test_complex_and_real_transforms_have_their_gradients(adapter: OptionalAdapter,
                                                          name: str) -> None:
    """``sum(real(F(z)) w1 + imag(F(z)) w2)`` for every option of ``F``, by central differences.

    A complex input is ``re + 1j im``, built inside the function from two real arguments, so
    each gradient is a real one (the part a frequency counts twice included).
    """
    rng = np.random.default_rng(9)
    parts = [rng.standard_normal((3, 4)) for _ in range(1 if name in REAL_IN else 2)]
    for args, kwargs in GRADIENT_CALLS[name]:
        fresh(adapter)
        out = getattr(np.fft, name)(_joined(np, parts), **kwargs)
        w = [rng.standard_normal(out.shape) for _ in range(2 if out.dtype.kind == "c" else 1)]

        def f_numpy(*xs: Array, kw: dict[str, Any] = kwargs, w: list[Array] = w) -> float:
            y = getattr(np.fft, name)(_joined(np, xs), **kw)
            return float(np.sum(np.real(y) * w[0]) + (np.sum(np.imag(y) * w[1]) if w[1:] else 0))

        def f_lazy(*xs: Any, kw: dict[str, Any] = kwargs, w: list[Array] = w) -> Any:
            ap = adapter.apply
            y = adapter.fft(name, _joined(adapter, xs), **kw)
            total = ap("sum", ap("multiply", ap("real", y) if w[1:] else y,
                                 adapter.from_numpy(w[0])))
            if w[1:]:
                total = ap("add", total, ap("sum", ap("multiply", ap("imag", y),
                                                      adapter.from_numpy(w[1]))))
            return total

        grads = adapter.grad(f_lazy, tuple(range(len(parts))))(*map(adapter.from_numpy, parts))
        for i, g in enumerate(grads):
            got = adapter.to_numpy(g)
            assert got.shape == parts[i].shape and got.dtype == parts[i].dtype, (got.dtype,
                                                                                  got.shape)
            np.testing.assert_allclose(got, numeric_grad(f_numpy, parts, i), rtol=1e-5,
                                       atol=1e-6, err_msg=f"fft.{name}{args}{kwargs}: "
                                       f"{'real' if i == 0 else 'imaginary'} part")


def _joined(on: Any, parts: Sequence[Any]) -> Any:
    """``re`` or ``re + 1j im``: with NumPy (``on`` is ``np``) or through the adapter."""
    if len(parts) == 1:
        return parts[0]
    if on is np:
        return parts[0] + 1j * parts[1]
    return on.apply("add", parts[0], on.apply("multiply", parts[1], 1j))
