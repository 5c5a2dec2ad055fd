"""The oracle: what eager NumPy says an op gives, and how close an implementation must come.

:func:`numpy_apply` runs an op of the registry on NumPy arrays, called exactly as an adapter's
``apply`` is (``adapter.py`` describes the conventions). :func:`assert_close` compares a result
with NumPy's by the op's tolerance class (``ops.toml``, spec "Input domains and tolerance
classes"), and :func:`reduction_bound` gives the magnitude-aware bound of the ``reduction``
class. Nothing here imports minilazy's engine.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from minilazy.conformance.adapter import DtypePolicy
from minilazy.conformance.registry import ops

Array = np.ndarray[Any, Any]
# Units in the last place each tolerance class allows (integers and bools are always exact).
ULPS = {"exact": 0, "ulp": 8, "loose": 512, "reduction": 8}
# For complex results, in ulps of |expected| (``exact``) or of max(|expected|, 1): no library
# rounds a complex product or quotient correctly (each part is a sum of rounded products), and
# XLA's complex log, pow and tan lose up to ~50 ulps (measured on the `PARTS` of strategies.py).
COMPLEX_ULPS = {"exact": 4, "ulp": 128, "loose": 512, "reduction": 8}


class _Policy:
    """The dtype policy of the implementation under test, and the deviations it was used for.

    Set once per process by the plugin (:func:`use_policy`); NumPy's own policy otherwise.
    """

    current = DtypePolicy()
    applied: Counter[str] = Counter()
    widened = False  # a float result was narrowed in this test: compare to within ulps


def use_policy(policy: DtypePolicy) -> None:
    """Check values under ``policy`` from now on (see :class:`DtypePolicy`).

    Example:
        >>> use_policy(DtypePolicy(default_float="float32"))
        >>> numpy_apply("add", np.arange(2), 0.5).dtype
        dtype('float32')
        >>> use_policy(DtypePolicy())
    """
    _Policy.current = policy
    _Policy.applied.clear()


def applied_deviations() -> Counter[str]:
    """The policy deviations used since the last call, and how often (then forgets them).

    Example:
        >>> applied_deviations()
        Counter()
    """
    out = Counter(_Policy.applied)
    _Policy.applied.clear()
    _Policy.widened = False
    return out


def _dtypes_of(args: Sequence[Any]) -> list[np.dtype[Any]]:
    found = []
    for a in args:
        if isinstance(a, np.ndarray):
            found.append(a.dtype)
        elif isinstance(a, list) and a and all(isinstance(x, np.ndarray) for x in a):
            found += [x.dtype for x in a]  # concat, stack
    return found


def _under_policy(op: str, args: Sequence[Any], kwargs: Mapping[str, Any], out: Array) -> Array:
    policy = _Policy.current
    if policy == _DEFAULT or op == "astype" or kwargs.get("dtype") is not None:
        return out  # a dtype the caller names is no default
    inputs = _dtypes_of(args)
    want = policy.result(op, out.dtype, inputs)
    if want == out.dtype:
        return out
    names = ", ".join(d.name for d in inputs) or "no arrays"
    _Policy.applied[f"{op}({names}) -> {want} (NumPy: {out.dtype})"] += 1
    # NumPy computed in its dtype and this casts; the library computes in its own: one more
    # rounding apart, so exact comparisons in this test allow a few ulps.
    _Policy.widened = _Policy.widened or want.kind == "f"
    with np.errstate(all="ignore"):
        if (want.kind == out.dtype.kind == "f" and want.itemsize > out.dtype.itemsize
                and ops()[op].kind == "elementwise"):
            # NumPy computed in a narrower float (exp of bool is float16): the library computes
            # in `want`, and so does the oracle, from the operands cast to it
            wide = [a.astype(want) if isinstance(a, np.ndarray) else a for a in args]
            return np.asarray(ops()[op].numpy_callable()(*wide, **kwargs), want)
        return out.astype(want)


_DEFAULT = DtypePolicy()


def numpy_apply(op: str, *args: Any, **kwargs: Any) -> Array:
    """The oracle's result for ``op`` on NumPy arrays (``setitem`` returns the updated copy).

    Under a declared dtype policy (:func:`use_policy`) the result takes the policy's dtype.

    Example:
        >>> numpy_apply("add", np.ones(2, np.float32), 1.0).dtype
        dtype('float32')
        >>> numpy_apply("setitem", np.zeros(3), (slice(1, None),), 7.0).tolist()
        [0.0, 7.0, 7.0]
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "mean of empty slice" and the like
        if op == "setitem":
            x, key, value = args
            out = np.array(x)  # NumPy updates in place; the lazy op is functional
            out[key] = value
            return out
        return _under_policy(op, args, kwargs,
                             np.asarray(ops()[op].numpy_callable()(*args, **kwargs)))


def numpy_inplace(op: str, x: Array, other: Any) -> Array:
    """The oracle's ``x op= other``: NumPy's in-place ufunc on a copy of ``x``.

    Example:
        >>> numpy_inplace("add", np.arange(3, dtype=np.int8), 2).tolist()
        [2, 3, 4]
    """
    out = np.array(x)
    with np.errstate(all="ignore"):
        ops()[op].numpy_callable()(out, other, out=out)
    return out


def ulp_distance(actual: Array, expected: Array) -> Array:
    """``|actual - expected|`` in units in the last place of ``expected`` (finite values).

    Example:
        >>> float(ulp_distance(np.float32(1.0) + np.spacing(np.float32(1.0)), np.float32(1.0)))
        1.0
    """
    spacing = np.spacing(np.abs(expected).astype(expected.dtype)).astype(np.float64)
    return np.asarray(np.abs(actual.astype(np.float64) - expected.astype(np.float64)) / spacing)


def assert_close(actual: Any, expected: Any, tolerance: str = "exact",
                 bound: Any = None, what: str = "") -> None:
    """Assert equal shape and dtype, and values within tolerance class ``tolerance``.

    Floats: NaN where NaN, the same infinities, and finite values within the class's ulp
    distance, or one smallest-normal near zero (flushed subnormals, LZ-NUM-004), or ``bound``
    (an array broadcasting to the result: the ``reduction`` class's magnitude-aware slack).
    Complex values: NaN and infinities part by part, and finite values as vectors, within
    ``COMPLEX_ULPS`` of the expected modulus (a part alone is ill-conditioned: ``ac - bd``).

    Example:
        >>> assert_close(np.float32([1.0, np.nan]), np.float32([1.0, np.nan]))
        >>> assert_close(np.int8([1]), np.int16([1]))
        Traceback (most recent call last):
        ...
        AssertionError: dtype int8 != int16...
    """
    a, e = np.asarray(actual), np.asarray(expected)
    prefix = f"{what}: " if what else ""
    if tolerance == "exact" and _Policy.widened:
        tolerance = "ulp"  # the expected value went through a declared dtype deviation
    assert a.shape == e.shape, f"{prefix}shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"{prefix}dtype {a.dtype} != {e.dtype}"
    if e.dtype.kind == "c":
        _assert_close_complex(a, e, tolerance, bound, prefix)
        return
    if e.dtype.kind != "f":
        if not np.array_equal(a, e):
            raise AssertionError(f"{prefix}values differ:\n got {a!r}\nwant {e!r}")
        return
    nan = np.isnan(e)
    if not np.array_equal(np.isnan(a), nan):
        raise AssertionError(f"{prefix}NaN positions differ:\n got {a!r}\nwant {e!r}")
    inf = np.isinf(e)
    if not np.array_equal(np.where(inf, a, 0), np.where(inf, e, 0)):
        raise AssertionError(f"{prefix}infinities differ:\n got {a!r}\nwant {e!r}")
    finite = ~(nan | inf)
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    slack = np.full(e.shape, float(np.finfo(e.dtype).smallest_normal))
    if bound is not None:
        slack = np.maximum(slack, np.broadcast_to(np.asarray(bound, np.float64), e.shape))
    with np.errstate(all="ignore"):
        close = (ulp_distance(a, e) <= ULPS[tolerance]) | (np.abs(a64 - e64) <= slack)
    bad = finite & ~close
    if bad.any():
        where = np.argwhere(bad)[:5]
        raise AssertionError(f"{prefix}{tolerance}: values differ at {where.tolist()}: got "
                             f"{a[bad][:5]!r}, want {e[bad][:5]!r}")


def _assert_close_complex(a: Array, e: Array, tolerance: str, bound: Any, prefix: str) -> None:
    for part in ("real", "imag"):  # NaN and infinities as NumPy places them, part by part
        pa, pe = getattr(a, part), getattr(e, part)
        if not np.array_equal(np.isnan(pa), np.isnan(pe)):
            raise AssertionError(f"{prefix}NaN positions of the {part} parts differ:\n"
                                 f" got {a!r}\nwant {e!r}")
        inf = np.isinf(pe)
        if not np.array_equal(np.where(inf, pa, 0), np.where(inf, pe, 0)):
            raise AssertionError(f"{prefix}infinite {part} parts differ:\n got {a!r}\nwant {e!r}")
    finite = np.isfinite(e.real) & np.isfinite(e.imag)
    with np.errstate(all="ignore"):
        scale = np.abs(e.astype(np.complex128))
        if tolerance != "exact":
            scale = np.maximum(scale, 1.0)
        spacing = np.spacing(scale.astype(e.real.dtype)).astype(np.float64)
        error = np.abs(a.astype(np.complex128) - e.astype(np.complex128))
        slack = np.full(e.shape, float(np.finfo(e.dtype).smallest_normal))
        if bound is not None:
            slack = np.maximum(slack, np.broadcast_to(np.asarray(bound, np.float64), e.shape))
        close = (error <= COMPLEX_ULPS[tolerance] * spacing) | (error <= slack)
    bad = finite & ~close
    if bad.any():
        where = np.argwhere(bad)[:5]
        raise AssertionError(f"{prefix}{tolerance}: complex values differ at {where.tolist()}: "
                             f"got {a[bad][:5]!r}, want {e[bad][:5]!r}")


def _axes(ndim: int, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in ((axis,) if isinstance(axis, int) else axis))


def reduction_bound(op: str, args: Sequence[Any], kwargs: Mapping[str, Any],
                    expected: Array) -> Array | None:
    """The ``reduction`` class's slack for ``op``: ``n * eps`` times the magnitude of the terms.

    ``n`` counts the terms of each result, ``eps`` is the result dtype's epsilon, and the
    magnitude is the same reduction over absolute values (``|a| @ |b|`` for products,
    ``mean(x**2)`` for variances; a standard deviation gets the square root of its variance's
    bound). ``None`` for non-float results, which must be exact.

    Example:
        >>> x = np.float32([1.0, -2.0, 3.0])
        >>> float(reduction_bound("sum", [x], {}, np.float32(2.0))) > 0
        True
    """
    if expected.dtype.kind not in "fc":
        return None
    eps = float(np.finfo(expected.dtype).eps)
    keep = bool(kwargs.get("keepdims", False))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of nothing is NaN: fine
        if op in ("matmul", "tensordot"):
            a, b = (np.abs(np.asarray(v)).astype(np.float64) for v in args[:2])
            if op == "matmul":
                mag, n = np.matmul(a, b), a.shape[-1]
            else:
                axes = kwargs.get("axes", 2)
                mag = np.tensordot(a, b, axes)
                summed = range(a.ndim - axes, a.ndim) if isinstance(axes, int) else axes[0]
                n = math.prod(a.shape[i] for i in summed)
            return np.asarray(2 * (n + 2) * eps * mag)
        x = np.asarray(args[0])
        x = (np.abs(x) if x.dtype.kind == "c" else x).astype(np.float64)  # complex: moduli
        axes = _axes(x.ndim, kwargs.get("axis"))
        n = math.prod(x.shape[a] for a in axes)
        if op == "prod":
            mag = np.prod(np.abs(x), axis=axes, keepdims=keep)
        elif op in ("var", "std"):
            mag = np.mean(x * x, axis=axes, keepdims=keep) * n / max(1, n - kwargs.get(
                "correction", 0))
        else:
            mag = np.sum(np.abs(x), axis=axes, keepdims=keep) / (n if op == "mean" else 1)
        bound = 2 * (n + 2) * eps * mag + eps * np.abs(expected).astype(np.float64)
        return np.asarray(np.sqrt(bound) if op == "std" else bound)
