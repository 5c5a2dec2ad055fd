"""A gradient for every option of every differentiable op (LZ-AD-001).

The calls of :mod:`minilazy.conformance.oracle.variants` (each attribute of each op family, one
value at a time) in float64, each differentiated through ``sum(op(...) * w)`` for random weights and
checked against central differences: a VJP rule wrong for one option only (a descending sort
scattered through the ascending order, one ``norm`` of an FFT, a window's stride) fails here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import numpy_apply
from minilazy.conformance.oracle.variants import ATTRIBUTES, EXTENSIONS, GRADIENTS, X
from minilazy.conformance.suite.test_scans import check_gradient

Array = np.ndarray[Any, Any]
# Not differentiable (integer, boolean or constant results), or differentiable only in a
# convention central differences cannot see (cholesky reads one triangle of its input), or
# complex (the FFTs: every option of each, test_fft.py's test_complex_and_real_transforms_...).
SKIPPED = {"argmax", "argmin", "any", "all", "astype", "searchsorted", "eye", "arange",
           "linspace", "full", "full_like", "cholesky", "irfft", "rfft"}
# Ties: a derivative that depends on which tied element wins; these ops get distinct values.
DISTINCT = {"sort": X, "argsort": X}


def _float64(adapter: OptionalAdapter) -> None:
    if "float64" not in adapter.capabilities:
        pytest.skip("needs float64 (central differences)")


def _check(adapter: OptionalAdapter, name: str, floats: list[Array], f: Callable[..., Any],
           f_numpy: Callable[..., Any], rng: np.random.Generator, what: str) -> None:
    check_gradient(adapter, name, floats, f, lambda *t: np.asarray(f_numpy(*t)), rng, what)


@pytest.mark.spec("LZ-AD-001")
@pytest.mark.parametrize("op", sorted(set(ATTRIBUTES) - SKIPPED))
def test_every_option_of_an_op_has_its_gradient(adapter: OptionalAdapter, op: str) -> None:
    _float64(adapter)
    operands, calls = ATTRIBUTES[op]
    floats = [a.astype(np.float64) for a in operands if a.dtype.kind == "f"]
    fixed = [a for a in operands if a.dtype.kind != "f"]  # index arrays stay as they are
    rng = np.random.default_rng(5)
    for args, kwargs in calls:
        what = f"{args}{kwargs}"
        if op in ("concat", "stack"):  # a list of tensors: the arrays are the attribute's
            _check(adapter, op, [a.astype(np.float64) for a in args[0]],
                   partial(_listed, adapter.apply, op, kwargs),
                   partial(_listed, numpy_apply, op, kwargs), rng, what)
        else:
            lazy = [adapter.from_numpy(a) for a in fixed]
            _check(adapter, op, floats, partial(_call, adapter.apply, op, lazy, args, kwargs),
                   partial(_call, numpy_apply, op, fixed, args, kwargs), rng, what)


def _listed(apply: Callable[..., Any], op: str, kwargs: dict[str, Any], *xs: Any) -> Any:
    return apply(op, list(xs), **kwargs)


def _call(apply: Callable[..., Any], op: str, fixed: list[Any], args: tuple[Any, ...],
          kwargs: dict[str, Any], *xs: Any) -> Any:
    if op == "setitem":  # on a copy: an update of the argument itself is LZ-AD-009's business
        xs = (apply("add", xs[0], 0.0), *xs[1:])
    return apply(op, *xs, *fixed, *args, **kwargs)


@pytest.mark.spec("LZ-AD-001")
@pytest.mark.parametrize("name", sorted({*EXTENSIONS, *GRADIENTS} - SKIPPED - {"argsort"}))
def test_every_option_of_an_extension_has_its_gradient(adapter: OptionalAdapter,
                                                       name: str) -> None:
    _float64(adapter)
    capability, method, oracle, operands, calls = {**EXTENSIONS, **GRADIENTS}[name]
    if capability not in adapter.capabilities:
        pytest.skip(f"needs capability {capability!r}")
    floats = [a.astype(np.float64) for a in ((DISTINCT[name],) if name in DISTINCT else operands)]
    rng = np.random.default_rng(6)
    for args, kwargs in calls:
        _check(adapter, name, floats, partial(_extended, method(adapter), args, kwargs),
               partial(_extended, oracle, args, kwargs), rng, f"{args}{kwargs}")


def _extended(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *xs: Any
              ) -> Any:
    return f(*xs, *args, **kwargs)
