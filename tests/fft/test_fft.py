"""The ``fft`` extension, checked against array-api-strict and NumPy (values, dtypes, shapes;
lazily and under ``ml.eager()``), its VJP against ``jax.grad``, its errors, the reference
interpreter and the Python printer, and one compile per shape through ``ml.metrics()``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from minilazy.core.ir import Op
from minilazy.introspect import reference
from minilazy.ops.fft import Kind

xp = pytest.importorskip("array_api_strict")

MODES = ["lazy", "eager"]
NORMS = st.sampled_from(["backward", "ortho", "forward"])
ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_AXES = ["fftn", "ifftn", "rfftn", "irfftn"]
# Which functions take real input (the rest are given complex input, as the standard says).
REAL_IN = {"rfft", "ihfft", "rfftn"}


def run(mode: str, thunk: Callable[[], ml.Tensor]) -> np.ndarray:
    with ml.eager() if mode == "eager" else contextlib.nullcontext():
        out = thunk()
    return out.numpy()


def close(got: np.ndarray, expected: Any, scale: float = 1.0) -> None:
    expected = np.asarray(expected)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    t = (1e-4 if got.dtype in (np.float32, np.complex64) else 1e-10) * scale
    np.testing.assert_allclose(got, expected, rtol=t, atol=t)


@st.composite
def signals(draw: st.DrawFn, real: bool, min_dims: int = 1) -> np.ndarray:
    """Real or complex float32/float64 arrays of up to 3 axes, sides 1..6 (values in [-1, 1])."""
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=6))
    parts = [draw(hnp.arrays(np.float64, shape, elements=st.floats(-1, 1))) for _ in range(
        1 if real else 2)]
    value = parts[0] if real else parts[0] + 1j * parts[1]
    wide = draw(st.booleans())
    return value.astype((np.float64 if wide else np.float32) if real else
                        (np.complex128 if wide else np.complex64))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ONE_AXIS)
@given(st.data(), NORMS)
def test_one_axis_transforms_match_strict(mode, name, data, norm):
    x = data.draw(signals(name in REAL_IN))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = data.draw(st.one_of(st.none(), st.integers(1, 9)))
    if name in ("irfft", "hfft") and n is None and x.shape[axis] == 1:
        n = 1  # the default n = 2 (m - 1) would be 0
    got = run(mode, lambda: getattr(ml.fft, name)(ml.asarray(x), n=n, axis=axis, norm=norm))
    expected = getattr(xp.fft, name)(xp.asarray(x), n=n, axis=axis, norm=norm)
    close(got, np.from_dlpack(expected), scale=10)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", N_AXES)
@given(st.data(), NORMS)
def test_n_dimensional_transforms_match_strict(mode, name, data, norm):
    x = data.draw(signals(name in REAL_IN))
    axes = data.draw(st.one_of(st.none(), st.permutations(range(x.ndim)).flatmap(
        lambda p: st.integers(1, len(p)).map(lambda k: p[:k]))))
    if axes is None:
        s = None
        last = x.ndim - 1
    else:
        s = data.draw(st.one_of(st.none(), st.lists(st.one_of(st.integers(1, 7), st.just(-1)),
                                                    min_size=len(axes), max_size=len(axes))))
        last = axes[-1]
    if name == "irfftn" and x.shape[last] == 1 and (s is None or s[-1] == -1):
        axes = axes or list(range(x.ndim))  # (s without axes is deprecated in NumPy)
        s = [*(s or [-1] * len(axes))[:-1], 2]
    got = run(mode, lambda: getattr(ml.fft, name)(ml.asarray(x), s=s, axes=axes, norm=norm))
    if s is not None:  # -1 is the whole axis (2 (M - 1) for irfftn's last): NumPy lacks it
        s = [v if v != -1 else 2 * (x.shape[a] - 1) if name == "irfftn" and a == last else
             x.shape[a] for a, v in zip(axes, s)]
    expected = getattr(xp.fft, name)(xp.asarray(x), s=s, axes=axes, norm=norm)
    close(got, np.from_dlpack(expected), scale=10)


@pytest.mark.parametrize("mode", MODES)
@given(st.integers(1, 12), st.floats(0.1, 10), st.sampled_from([None, ml.float32, ml.float64]))
def test_frequencies_match_strict(mode, n, d, dtype):
    strict = None if dtype is None else getattr(xp, str(np.dtype(dtype)))
    for name in ("fftfreq", "rfftfreq"):
        f = getattr(ml.fft, name)
        got = run(mode, lambda f=f: f(n, d=d, dtype=dtype))
        close(got, np.from_dlpack(getattr(xp.fft, name)(n, d=d, dtype=strict)))


@pytest.mark.parametrize("mode", MODES)
@given(hnp.arrays(st.sampled_from([np.int32, np.float32, np.complex128]),
                  hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5)), st.data())
def test_shifts_match_numpy(mode, x, data):
    axes = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1),
                               st.lists(st.integers(0, x.ndim - 1), unique=True)))
    for name in ("fftshift", "ifftshift"):
        f = getattr(ml.fft, name)
        got = run(mode, lambda f=f: f(ml.asarray(x), axes=axes))
        # NumPy's: array-api-strict takes floating input only, where the standard says "should"
        expected = getattr(np.fft, name)(x, axes=axes)
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype


def test_round_trips_and_real_input_as_numpy_takes_it():
    x = np.random.default_rng(0).standard_normal((4, 6))
    t = ml.asarray(x)
    close(ml.fft.irfftn(ml.fft.rfftn(t), s=x.shape).numpy(), x)
    close(ml.real(ml.fft.ifft(ml.fft.fft(t))).numpy(), x)
    close(ml.fft.hfft(ml.fft.ihfft(t), n=6).numpy(), x)
    # real input to the complex transforms is transformed as complex, as NumPy does; float16
    # widens to complex64 (NumPy's choice too)
    close(ml.fft.fft(t).numpy(), np.fft.fft(x))
    assert ml.fft.fft(ml.asarray(x, dtype=ml.float16)).dtype == np.fft.fft(
        x.astype(np.float16)).dtype == np.complex64
    assert ml.fft.rfft(ml.asarray(x, dtype=ml.float16)).dtype == ml.complex64
    assert ml.fft.fftn(ml.asarray(2.0)).numpy() == 2.0  # no axes: the identity


def test_errors_at_the_call_name_dtypes_shapes_and_options():
    c, r = ml.ones((2, 4), dtype=ml.complex128), ml.ones((2, 4))
    bad: list[tuple[type[BaseException], str, Callable[[], object]]] = [
        (TypeError, r"fft.fft: needs a floating-point tensor, got i64\[3\]",
         lambda: ml.fft.fft(ml.arange(3))),
        (TypeError, r"fft.rfft: needs a real floating-point tensor, got c128\[2,4\]",
         lambda: ml.fft.rfft(c)),
        (TypeError, "cannot make a tensor from object", lambda: ml.fft.fft(object())),
        (ValueError, "norm must be", lambda: ml.fft.fft(c, norm="none")),
        (np.exceptions.AxisError, "axis 2 is out of bounds", lambda: ml.fft.fft(c, axis=2)),
        (ValueError, "duplicate value in axis", lambda: ml.fft.fftn(c, axes=(0, -2))),
        (ValueError, "differ in length", lambda: ml.fft.fftn(c, s=(2,), axes=(0, 1))),
        (ValueError, r"invalid transform lengths \(0,\)", lambda: ml.fft.fft(c, n=0)),
        (ValueError, r"invalid transform lengths \(0,\)", lambda: ml.fft.irfft(c[:, :1])),
        (ValueError, r"invalid transform lengths", lambda: ml.fft.fft(ml.ones((0,)))),
        (ValueError, "at least one axis", lambda: ml.fft.rfftn(r, axes=())),
        (ValueError, "n must be positive", lambda: ml.fft.fftfreq(0)),
        (ValueError, "real floating-point dtype", lambda: ml.fft.rfftfreq(4, dtype=ml.int32)),
        (np.exceptions.AxisError, "axis 3 is out of bounds", lambda: ml.fft.fftshift(r, axes=3)),
    ]
    for error, message, call in bad:
        with pytest.raises(error, match=message):
            call()
    # nothing is lost: pending work still materialises
    np.testing.assert_array_equal(ml.fft.fft(c).numpy()[:, 0], [4, 4])


def test_namespace_has_the_whole_extension():
    assert set(ml.fft.__all__) == set(xp.fft.__all__)
    assert all(callable(getattr(ml.fft, name)) for name in ml.fft.__all__)


def test_one_compile_per_shape_and_options():
    x = ml.asarray(np.ones((4, 8)))
    ml.fft.rfft(x).numpy()
    before = ml.metrics()
    for _ in range(3):
        ml.fft.rfft(ml.asarray(np.random.rand(4, 8))).numpy()
    assert ml.metrics().compiles - before.compiles == 0
    ml.fft.rfft(x, norm="ortho").numpy()  # a new option is a new graph
    assert ml.metrics().compiles - before.compiles == 1


# -- VJPs against jax.grad -----------------------------------------------------------------
GRAD_CASES = [
    ("fft", {}), ("fft", {"n": 4, "norm": "ortho"}), ("ifft", {"n": 9, "norm": "forward"}),
    ("rfft", {}), ("rfft", {"n": 9, "norm": "ortho"}), ("rfft", {"n": 3}),
    ("irfft", {}), ("irfft", {"n": 7, "norm": "ortho"}), ("irfft", {"n": 4, "norm": "forward"}),
    ("hfft", {"n": 5}), ("ihfft", {"norm": "ortho"}), ("fftn", {"s": (5, 2)}),
    ("rfftn", {"s": (4, 5), "axes": (1, 0)}), ("irfftn", {"s": (2, 8), "norm": "ortho"}),
    ("ifftn", {"axes": (0,)}),
]


@pytest.mark.parametrize(("name", "kw"), GRAD_CASES)
def test_vjp_matches_jax(name, kw):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 6))
    if name not in REAL_IN:
        x = x + 1j * rng.standard_normal((3, 6))
    w = rng.standard_normal((12, 12)) + 1j * rng.standard_normal((12, 12))

    def loss(f: Any, v: Any, namespace: Any, asarray: Any) -> Any:
        y = f(v, **kw)
        weights = asarray(w[: y.shape[0], : y.shape[1]])
        return namespace.sum(namespace.real(y * weights))

    with jax.enable_x64(True):  # scoped: other tests compare with JAX's 32-bit defaults
        expected = jax.grad(lambda v: loss(getattr(jnp.fft, name), v, jnp, jnp.asarray))(x)
    got = ml.grad(lambda v: loss(getattr(ml.fft, name), v, ml, ml.asarray))(ml.asarray(x))
    close(got.numpy(), np.asarray(expected))


def test_second_derivative_through_the_transpose():
    # d/dx of sum(|irfft(rfft(x) * k)|^2): the VJP of a VJP of both real kinds, against JAX
    x = np.random.default_rng(2).standard_normal(6)
    k = np.linspace(0.5, 1.5, 4)

    def f(v: Any, m: Any) -> Any:
        return m.sum(m.fft.irfft(m.fft.rfft(v) * (k if m is jnp else ml.asarray(k)), n=6) ** 3)

    with jax.enable_x64(True):
        expected = jax.grad(lambda v: jnp.sum(jax.grad(lambda u: f(u, jnp))(v) ** 2))(x)
    got = ml.grad(lambda v: ml.sum(ml.grad(lambda u: f(u, ml))(v) ** 2))(ml.asarray(x))
    close(got.numpy(), np.asarray(expected))


# -- the reference interpreter and the Python printer ---------------------------------------
def test_reference_and_printer_agree():
    x = np.random.default_rng(3).standard_normal((3, 4))
    t = ml.asarray(x)
    outs = [ml.fft.fft(t), ml.fft.ifftn(t, s=(2, 5)), ml.fft.rfftn(t, axes=(1, 0), norm="ortho"),
            ml.fft.irfft(ml.fft.rfft(t), n=4), ml.fft.hfft(t, n=3),
            ml.grad(lambda a: ml.sum(ml.fft.irfft(ml.fft.rfft(a)) ** 2))(t)]
    assert {o._node.attrs.kind for o in outs[:5]} >= {k.value for k in Kind}
    text = ml.graph(outs[2]).text()
    assert "fft %0 kind=rfft axes=[1, 0] lengths=[4, 3] norm=ortho : c128[2,4]" in text, text
    code = ml.graph(*outs).to_python()
    scope: dict[str, object] = {}
    exec(code, scope)
    assert ml.graph(*scope["outputs"]).key == ml.graph(*outs).key, code
    assert "ml.fft.rfftn(" in code
    for o, r in zip(outs, reference.run(*outs)):
        close(o.numpy(), r)
    assert Op.FFT.value == "fft"
