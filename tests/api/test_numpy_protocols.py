"""One policy for NumPy's functions on a tensor: run lazily in minilazy, or refuse naming the fix.

``__array_ufunc__`` and ``__array_function__``: every ufunc minilazy has, and every NumPy function
in ``numpy_policy.FUNCTIONS``, gives NumPy's values as a pending Tensor (nothing runs); the rest
raise ``TypeError`` at the call, naming what to write instead. Nothing is pulled to the host
but by ``np.asarray`` (an observation).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minilazy as ml
from minilazy.api.numpy_policy import FUNCTIONS, UFUNC_NAMES

pytestmark = pytest.mark.filterwarnings("ignore::minilazy.RecompileWarning")
A = np.array([[0.5, -1.5, 2.0], [3.0, 0.25, -0.75]])
B = np.array([[1.0, 2.0, -1.0], [0.5, 0.5, 4.0]])
UNARY = [u for u in (getattr(np, n) for n in dir(np)) if isinstance(u, np.ufunc)
         and u.nin == 1 and u.nout == 1]
BINARY = [u for u in (getattr(np, n) for n in dir(np)) if isinstance(u, np.ufunc)
          and u.nin == 2 and u.nout == 1 and u.signature is None]


def _ours(ufunc: np.ufunc) -> bool:
    return callable(getattr(ml, UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__), None))


def _lazy(result: Any, want: Any) -> None:
    """A pending Tensor (nothing ran since the last reset) with NumPy's dtype and values."""
    assert isinstance(result, ml.Tensor) and ml.metrics().executions == 0
    got = result.numpy()
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("ufunc", [u for u in UNARY if _ours(u)], ids=lambda u: u.__name__)
def test_a_unary_ufunc_minilazy_has_runs_lazily(ufunc):
    a = np.abs(A) + 1.5 if ufunc.__name__ == "arccosh" else A / 4  # in each ufunc's domain
    a = (a > 0) if ufunc.__name__ in ("logical_not",) else a
    a = np.arange(6).reshape(2, 3) if ufunc.__name__ in ("invert", "bitwise_invert",
                                                         "bitwise_not") else a
    ml.reset_metrics()
    with np.errstate(all="ignore"):
        _lazy(ufunc(ml.asarray(a)), ufunc(a))


@pytest.mark.parametrize("ufunc", [u for u in BINARY if _ours(u)], ids=lambda u: u.__name__)
def test_a_binary_ufunc_minilazy_has_runs_lazily_from_either_side(ufunc):
    ints = "shift" in ufunc.__name__ or "bitwise" in ufunc.__name__ or "gcd" in ufunc.__name__
    a, b = (np.arange(6).reshape(2, 3), np.ones((2, 3), int)) if ints else (A, B)
    a, b = ((a > 0), (b > 0)) if ufunc.__name__.startswith("logical") else (a, b)
    ml.reset_metrics()
    _lazy(ufunc(ml.asarray(a), b), ufunc(a, b))
    ml.reset_metrics()
    _lazy(ufunc(a, ml.asarray(b)), ufunc(a, b))  # an ndarray first: NumPy asks the tensor


def test_operators_with_an_ndarray_on_the_left_are_lazy_tensors():
    t = ml.asarray(B)
    for op in (np.add, np.multiply, np.less):
        ml.reset_metrics()
        _lazy(op(A, t), op(A, B))
    ml.reset_metrics()
    _lazy(A @ t.T, A @ B.T)


@pytest.mark.parametrize("name", sorted(n for n in FUNCTIONS if n != "result_type"))
def test_a_numpy_function_minilazy_has_runs_lazily(name):
    calls = {"reshape": ((3, 2),), "swapaxes": (0, 1), "where": (A, B), "moveaxis": (0, 1),
             "roll": (1,), "tile": ((2, 1),), "repeat": (2,), "broadcast_to": ((4, 2, 3),),
             "tensordot": (B.T,), "matmul": (B.T,), "full_like": (7.0,), "clip": (0.0, 1.0),
             "expand_dims": (0,)}
    kwargs = {"var": {"ddof": 1}, "std": {"ddof": 1}, "sum": {"axis": 0}, "tensordot": {"axes": 1},
              "clip": {}, "repeat": {"axis": 1}, "roll": {"axis": 1}}.get(name, {})
    fn = getattr(np, name)
    ml.reset_metrics()
    if name in ("concatenate", "stack"):
        want, got = fn([A, B], axis=1), fn([ml.asarray(A), B], axis=1)
    elif name == "einsum":
        want, got = fn("ij,kj->ik", A, B), fn("ij,kj->ik", ml.asarray(A), B)
    elif name == "where":
        want, got = fn(A > 0, A, B), fn(ml.asarray(A) > 0, A, B)
    else:
        want = fn(A, *calls.get(name, ()), **kwargs)
        got = fn(ml.asarray(A), *calls.get(name, ()), **kwargs)
    if name in ("empty_like",):
        assert (got.shape, got.dtype) == (want.shape, want.dtype)
        return
    _lazy(got, want)


def test_the_shape_is_read_without_a_barrier():
    t = ml.exp(ml.asarray(A))
    ml.reset_metrics()
    assert (np.shape(t), np.ndim(t), np.size(t)) == ((2, 3), 2, 6)
    assert ml.metrics().barriers == 0 and t.is_pending


@pytest.mark.parametrize(("call", "names"), [
    (lambda t: np.add.reduce(t), "ml.sum(x, axis=...)"),
    (lambda t: np.maximum.accumulate(t), "a minilazy function"),
    (lambda t: np.exp(t, out=np.empty((2, 3))), "ml.exp(...)"),
    (lambda t: np.add(t, 1, dtype=np.float32), "dtype"),
    (lambda t: np.spacing(t), "np.spacing(x.numpy(), ...)"),
    (lambda t: np.sum(t, where=A > 0), "'where'"),
    (lambda t: np.reshape(t, (3, 2), order="F"), "'order'"),
    (lambda t: np.round(t, 2), "'decimals'"),
    (lambda t: np.where(t > 0), "ml.nonzero(condition)"),
    (lambda t: np.allclose(t, t), "ml.all(ml.abs(a - b)"),
    (lambda t: np.dot(t, t.T), "ml.matmul(a, b)"),
    (lambda t: np.linalg.det(t[:, :2]), "ml.linalg.det(...)"),
    (lambda t: np.fft.fft(t), "ml.fft.fft(...)"),
    (lambda t: np.median(t), "np.median(x.numpy(), ...)"),
])
def test_what_minilazy_does_not_run_is_a_type_error_naming_the_fix(call, names):
    t = ml.asarray(A)
    ml.reset_metrics()
    with pytest.raises(TypeError) as e:
        call(t)
    assert names in str(e.value), str(e.value)
    assert ml.metrics().executions == 0


def test_an_ndarray_cannot_take_a_lazy_result_in_place():
    a = A.copy()
    with pytest.raises(TypeError, match="out="):
        a += ml.asarray(B)
    np.testing.assert_array_equal(a, A)  # untouched


def test_asarray_is_the_observation():
    t = ml.asarray(A) * 2
    got = np.asarray(t)
    assert isinstance(got, np.ndarray) and np.array_equal(got, A * 2)
