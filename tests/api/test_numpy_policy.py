"""NumPy's functions on a tensor give what they give on the same ndarray, over every dtype.

The policy of ``__array_ufunc__`` and ``__array_function__`` (``minilazy/api/numpy_policy.py``),
checked against NumPy itself: every ufunc minilazy accepts from a tensor and every NumPy
function of ``numpy_policy.FUNCTIONS``, on each of the 14 dtypes, against each dtype and each
kind of Python number (weak, NEP 50), the tensor on either side: NumPy's result dtype and
values, or a ``TypeError`` that names the fix (``np.f(x.numpy(), ...)``, or what to write in
minilazy). Each test records all its cases (the dtype and shape are known then) and runs a
deterministic sample of them at one barrier for the values (compiling is the cost).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minilazy as ml
from helpers import forget
from minilazy.api.numpy_policy import FUNCTIONS, UFUNC_NAMES
from minilazy.conformance.oracle import assert_close

DTYPES = [np.dtype(n) for n in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                "uint32", "uint64", "float16", "float32", "float64", "complex64",
                                "complex128")]
NUMBERS = [True, 3, -0.5, 1.5 + 1j]  # a Python number of each kind
RTOL = {2: 4e-3, 4: 4e-6, 8: 1e-12}
_BASE = np.array([[1, 0, 3], [2, 5, 4]])


def values(d: np.dtype) -> np.ndarray:
    """Two rows of ``d``: negatives, zeros and fractions where ``d`` has them."""
    if d.kind == "b":
        return _BASE % 2 == 1
    if d.kind in "iu":
        return (_BASE - 2 * (d.kind == "i")).astype(d)
    if d.kind == "c":
        return (_BASE * 0.75 - 1 + 0.5j * _BASE[::-1]).astype(d)
    return (_BASE * 0.75 - 1.25).astype(d)


def _ours(ufunc: np.ufunc) -> bool:
    return callable(getattr(ml, UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__), None))


UFUNCS = sorted({u for u in vars(np).values() if isinstance(u, np.ufunc) and _ours(u)},
                key=lambda u: u.__name__)
Case = tuple[str, Callable[[Any], Any], Any]  # (label, call on an operand, the ndarray)


def _run(f: Callable[[Any], Any], operand: Any) -> tuple[Any, tuple[type, str] | None]:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return f(operand), None
    except Exception as e:  # noqa: BLE001 -- compared by the caller, tracebacks dropped
        return None, forget(e)


def check(cases: list[Case], device_exponent: Callable[[str], bool] = lambda label: False,
          every: int = 1) -> None:
    """Every case on the ndarray and on a tensor of it: the same dtype and shape, or both
    raise, or minilazy refuses with a ``TypeError`` naming the fix; and the same values, for
    every ``every``-th case (the others are dropped unrun). One barrier for all."""
    runs = []
    for i, (label, call, a) in enumerate(cases):
        want, np_error = _run(call, a)
        got, ml_error = _run(call, ml.asarray(a))
        if (i + 1) % every and ml_error is None and np_error is None:
            got, want = _meta(got), _meta(want)  # dead tensors are never computed
        runs.append((label, want, np_error, got, ml_error))
    ml.mark_step()
    wrong = []
    for label, want, np_error, got, ml_error in runs:
        if ml_error is not None:
            named = ml_error[0] is TypeError and ("x.numpy()" in ml_error[1]
                                                  or "write" in ml_error[1])
            if np_error is None and not named:
                wrong.append(f"{label}: minilazy raised {ml_error}, NumPy gave "
                             f"{np.asarray(want).dtype}")
            continue
        if np_error is not None:
            if not device_exponent(label):
                wrong.append(f"{label}: NumPy raised {np_error}, minilazy ran")
            continue
        try:
            _same(got, want)
        except AssertionError as e:
            wrong.append(f"{label}: {e}")
    assert wrong == [], f"{len(wrong)} of {len(runs)}:\n" + "\n".join(wrong[:20])


def _meta(x: Any) -> Any:
    """What is known without running: each result's type name, dtype and shape."""
    if isinstance(x, tuple):
        return tuple(_meta(y) for y in x)
    return ("Tensor" if isinstance(x, ml.Tensor) else "", np.dtype(x.dtype), tuple(x.shape))


def _same(got: Any, want: Any) -> None:
    if isinstance(want, tuple) and not isinstance(want[0], str):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    if isinstance(want, tuple):  # known without running: compared without running
        assert got == ("Tensor", *want[1:]), f"got {got}, want NumPy's {want[1:]}"
        return
    assert isinstance(got, ml.Tensor), f"not a Tensor: {type(got).__name__}"
    w = np.asarray(want)
    bound = None
    if w.dtype.kind in "fc" and w.size and np.isfinite(w).any():
        bound = RTOL[np.finfo(w.dtype).bits // 8] * np.abs(w[np.isfinite(w)]).max()
    assert_close(got.numpy(), w, "loose", bound=bound)


@pytest.mark.parametrize("ufunc", [u for u in UFUNCS if u.nin == 1], ids=lambda u: u.__name__)
def test_a_unary_ufunc_gives_numpys_dtype_and_values_on_every_dtype(ufunc: np.ufunc) -> None:
    """``np.rint`` of an integer tensor is float16..float64, as NumPy's (it was the integer
    dtype, ``ml.round``'s); ``np.signbit`` of booleans runs NumPy's float16 loop (it raised);
    ``np.positive`` of booleans is NumPy's ``TypeError`` (it ran)."""
    check([(f"{ufunc.__name__}({d})", ufunc, values(d)) for d in DTYPES])


@pytest.mark.parametrize("ufunc", [u for u in UFUNCS if u.nin == 2], ids=lambda u: u.__name__)
def test_a_binary_ufunc_gives_numpys_dtype_and_values_on_every_pair(ufunc: np.ufunc) -> None:
    """Every pair of dtypes and every kind of Python number, the tensor on either side:
    ``np.hypot``, ``np.copysign`` and ``np.logaddexp`` of integers promote as NumPy's loops
    do (they raised the standard's ``TypeError``); ``bool_tensor ** int8_array`` with a
    negative exponent is NumPy's ``ValueError`` (it ran); ``uint64 ** int8`` is float64 (it
    raised). A negative integer exponent in a *tensor* is data (LZ-NUM-006)."""
    name, cases = ufunc.__name__, []
    for d1 in DTYPES:
        for other in [*(values(d2) for d2 in DTYPES), *NUMBERS]:
            shown = other.dtype if isinstance(other, np.ndarray) else repr(other)
            cases.append((f"{name}(t:{d1}, {shown})", lambda t, o=other: ufunc(t, o),
                          values(d1)))
            cases.append((f"{name}({shown}, t:{d1})", lambda t, o=other: ufunc(o, t),
                          values(d1)))

    def device_exponent(label: str) -> bool:
        return name == "power" and ", t:int" in label  # the exponent is the tensor's data

    check(cases, device_exponent, every=7)


def _function_cases(name: str, d: np.dtype) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Representative arguments of NumPy's ``name`` after the tensor (``T``: the tensor)."""
    others = [values(e) for e in DTYPES]
    calls: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
        "clip": [((lo, hi), {}) for lo, hi in ((0.5, 2.5), (1, None), (None, 2), (-300, 300),
                                               (True, None), (None, 1.5j), (0, np.int16(2)))]
        + [((o, None), {}) for o in others],
        "where": [((T, o), {}) for o in [*others, *NUMBERS]] + [((o, T), {}) for o in NUMBERS],
        "concatenate": [((), {"axis": a, "others": o}) for o in others for a in (0, None)],
        "stack": [((), {"axis": 1, "others": o}) for o in others],
        "einsum": [((o,), {}) for o in others], "tensordot": [((o.T,), {}) for o in others],
        "full_like": [((v,), {}) for v in (7, 2.5, True)]
        + [((1,), {"dtype": e}) for e in DTYPES],
        **{n: [((), {}), *(((), {"dtype": e}) for e in DTYPES)]
           for n in ("zeros_like", "ones_like", "empty_like")},
        "reshape": [(((3, 2),), {})], "swapaxes": [((0, 1), {})], "moveaxis": [((0, 1), {})],
        "roll": [((1,), {"axis": 1})], "tile": [(((2, 1),), {})], "repeat": [((2,), {"axis": 1})],
        "broadcast_to": [(((4, 2, 3),), {})], "expand_dims": [((0,), {})],
    }
    if name in calls:
        return calls[name]
    spec = FUNCTIONS[name][2].split()
    out: list[tuple[tuple[Any, ...], dict[str, Any]]] = [((), {})]
    out += [((), {"axis": a}) for a in (0, -1) if "axis" in spec]
    out += [((), {"keepdims": True, "axis": 1}) for _ in range(1) if "keepdims" in spec]
    out += [((), {"ddof": 1}) for _ in range(1) if "ddof" in spec]
    out += [((), {"dtype": e, "axis": 0}) for e in DTYPES if "dtype" in spec
            and not (e.kind == "u" and d.kind in "if")  # negatives to unsigned: undefined
            and not (name in ("var", "std") and "b" in (d.kind + e.kind))]  # bool - bool
    return out


T = object()  # the tensor's place among a call's arguments


@pytest.mark.parametrize("name", sorted(n for n in FUNCTIONS if n != "result_type"))
def test_a_numpy_function_gives_numpys_dtype_and_values_on_every_dtype(name: str) -> None:
    """``np.clip(int8_tensor, 0.5, 2.5)`` is float64, as on the ndarray (it stayed int8):
    ``np.clip`` is the ufunc ``clip`` in NumPy, so ``x`` and both bounds promote together,
    Python numbers weak, where the standard's (``ml.clip``) keeps ``x``'s dtype. And
    ``np.mean(t, dtype=int64)`` sums in int64 and truncates, as NumPy's (it was float64)."""
    fn, cases = getattr(np, name), []
    cond = values(np.dtype(bool))
    for d in DTYPES:
        for args, kw in _function_cases(name, d):
            label = f"np.{name}(t:{d}, {args}, {kw})"
            kw = dict(kw)
            others = kw.pop("others", None)
            if others is not None:
                call = (lambda t, o=others, k=kw: fn([t, o], **k))
            elif name == "einsum":
                call = (lambda t, a=args: fn("ij,ij->i", t, *a))
            elif name == "where":
                call = (lambda t, a=args: fn(cond, *(t if v is T else v for v in a)))
            else:
                call = (lambda t, a=args, k=kw: fn(t, *a, **k))
            cases.append((label, call, values(d)))
    check(cases, every=10**9 if name == "empty_like" else 3)  # (empty_like: uninitialised)


@pytest.mark.parametrize("d", DTYPES, ids=str)
def test_unary_plus_is_numpys(d: np.dtype) -> None:
    """``+t`` is ``t`` where NumPy's ``+a`` is ``a``'s values; for bool, NumPy's ``TypeError``."""
    a = values(d)
    try:
        want = +a
    except TypeError:
        with pytest.raises(TypeError):
            +ml.asarray(a)  # noqa: B018 (the operator is what is checked)
        return
    got = +ml.asarray(a)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want)
