"""Every keyword of every public function, against NumPy and array-api-strict, from one table.

``tests/keyword_table.py`` lists the calls: each public function of ``minilazy``,
``minilazy.linalg`` and ``minilazy.fft`` (and the NumPy-habit methods of ``Tensor``) with each
of its keywords at representative values -- every dtype, axes in and out of range, empty and
0-d inputs, corrections past the count, steps that do not divide. Each call runs on minilazy
and on the reference the row names; both give the same dtype, shape and values, or both raise,
minilazy at the call with an error of NumPy's (or the standard's) type. A coverage check fails
when a keyword no row passes appears in a public signature, unless :data:`EXEMPT` gives the
reason.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np
import pytest

import minilazy as ml
from helpers import forget
from keyword_table import ARRAYS, DEV, FORMULAS, A, H, K, everything
from minilazy.api.methods import NumPyMethods
from minilazy.conformance.oracle import assert_close

xp = pytest.importorskip("array_api_strict")
pytestmark = pytest.mark.filterwarnings("ignore")

ROWS = everything()
# Errors a reference may raise; minilazy's must be an instance of the same ones (NumPy's
# AxisError is a ValueError and an IndexError: either will do; LinAlgError is a ValueError).
ERRORS = (ValueError, IndexError, TypeError, OverflowError, ZeroDivisionError)
RTOL = {2: 4e-3, 4: 4e-6, 8: 1e-12}

# Keywords no row passes, and why. The engine's own functions have no NumPy counterpart.
EXEMPT: dict[tuple[str, str], str] = {
    **{(f, k): "the engine's, not NumPy's: tests/core and tests/introspect check it" for f, k in (
        ("mark_step", "cause"), ("policy", "p"), ("policy", "changes"), ("debug", "level"),
        ("set_cache_dir", "max_bytes"), ("devices", "platform"))},
    **{(f, "argnums"): "autodiff: tests/autodiff checks it against jax.grad"
       for f in ("grad", "value_and_grad")},
    **{("conv", k): "NumPy has no convolution: tests/api/test_scans_and_windows.py checks every "
       "keyword against jax.lax.conv_general_dilated" for k in ("stride", "padding", "dilation",
                                                                "groups")},
    ("asarray", "sharding"): "a mesh, not a NumPy notion: tests/scaleout checks it",
    **{("capture", k): "a step's capture, not NumPy's: tests/parts/test_capture.py checks it"
       for k in ("fn", "recheck")},
}


def _public() -> dict[str, Any]:
    """Every public function by qualified name (``sum``, ``linalg.qr``, ``Tensor.mean``)."""
    found = {}
    for prefix, space in (("", ml), ("linalg.", ml.linalg), ("fft.", ml.fft)):
        for name in space.__all__:
            f = getattr(space, name)
            if callable(f) and not inspect.isclass(f) and not inspect.ismodule(f):
                found[prefix + name] = f
    for name, f in vars(NumPyMethods).items():
        if callable(f) and not name.startswith("_"):
            found[f"Tensor.{name}"] = f
    return found


def _keywords(f: Any) -> set[str]:
    """The parameters a caller may leave out or must name: keyword-only or with a default."""
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return set()
    return {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD)
            or p.default is not p.empty}


def test_every_keyword_of_every_public_function_has_a_row():
    required = {(name, k) for name, f in _public().items() for k in _keywords(f)}
    public = _public()
    covered = set()
    for r in ROWS:  # what each row passes, by name or by position
        method = r.fn.startswith("Tensor.")
        bound = inspect.signature(public[r.fn]).bind_partial(*r.args[1 - method:] if method
                                                             else r.args, **r.kw)
        covered |= {(r.fn, k) for k in bound.arguments} | {(r.fn, k) for k in r.kw}
    missing = required - covered - set(EXEMPT)
    assert not missing, f"keywords no row passes (add rows, or a reason to EXEMPT): {missing}"
    assert set(EXEMPT) <= required, set(EXEMPT) - required  # no stale reasons
    assert len(required) > 180


def _arg(v: Any, side: str) -> Any:
    if isinstance(v, A):
        a = ARRAYS[v.name]
        if side == "ml":
            return a.copy() if isinstance(v, H) else ml.asarray(a)
        return xp.asarray(a) if side == "xp" else a.copy()
    if isinstance(v, list):
        return [_arg(x, side) for x in v]
    if isinstance(v, np.dtype) and side == "xp":
        return getattr(xp, v.name)
    return v


def _call(row: K, side: str) -> Any:
    args = [_arg(a, side) for a in row.args]
    kw = {k: _arg(v, side) for k, v in row.kw.items()}
    if any(v is DEV for v in kw.values()):
        kw = {k: v for k, v in kw.items() if v is not DEV} | (
            {"device": ml.default_device()} if side == "ml" else
            {"device": "cpu"} if side == "np" and "fft" not in row.fn else {})
    space, _, name = row.fn.rpartition(".")
    if space == "Tensor":  # (array-api-strict has functions, not these methods)
        return getattr(xp, name)(*args, **kw) if side == "xp" else \
            getattr(args[0], name)(*args[1:], **kw)
    if side == "ml":
        return getattr(getattr(ml, space) if space else ml, name)(*args, **kw)
    if row.ref in FORMULAS:
        return FORMULAS[row.ref](*args, **kw)
    lib = xp if side == "xp" else np
    return getattr(getattr(lib, space) if space else lib, name)(*args, **kw)


def _flat(result: Any) -> list[Any]:
    return [x for r in result for x in _flat(r)] if isinstance(result, (tuple, list)) \
        else [result]


def _compare(got: Any, want: Any, row: K) -> None:
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want), f"{len(got)} results, want {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        g = g.numpy() if isinstance(g, ml.Tensor) else np.asarray(g)
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, \
            f"result {i}: {g.dtype}{list(g.shape)}, want {w.dtype}{list(w.shape)}"
        if row.cmp == "shape":
            continue
        if row.cmp == "abs":
            g, w = np.abs(g), np.abs(w)
        bound = None
        if w.dtype.kind in "fc" and w.size:
            finite = np.abs(w[np.isfinite(w)])
            bound = RTOL[np.finfo(w.dtype).bits // 8] * (finite.max() if finite.size else 1.0)
        assert_close(g, w, "loose", bound=bound, what=f"result {i}")


def _reference(row: K) -> tuple[Any, tuple[type, ...] | None]:
    """The reference's result, or the error classes minilazy's must be an instance of."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return _call(row, "xp" if row.ref == "xp" else "np"), None
    except ERRORS as e:
        return None, tuple(c for c in ERRORS if isinstance(e, c))


FUNCTIONS = sorted({r.fn for r in ROWS})


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_every_row_agrees_with_the_reference(fn: str) -> None:
    """The rows of ``fn``, recorded one by one (an error must come at the call, before anything
    runs), then run at one barrier (one compile for them all) and compared."""
    recorded, wrong = [], []
    for row in (r for r in ROWS if r.fn == fn):
        if row.ref.startswith("raises:"):  # a refusal the docs give (each row says why)
            want, error = None, (ERRORS[[e.__name__ for e in ERRORS].index(row.ref[7:])],)
        else:
            want, error = _reference(row)
        before = ml.metrics().executions
        try:
            got, raised = _call(row, "ml"), None
        except Exception as e:  # noqa: BLE001 -- compared below, the traceback's tensors dropped
            got, raised = None, forget(e)
        ran = ml.metrics().executions != before
        if error is not None and raised is None:
            wrong.append(f"{row.id}: the reference raised {error[0].__name__}; minilazy did not")
        elif error is not None and not issubclass(raised[0], error):
            wrong.append(f"{row.id}: raised {raised[0].__name__}, the reference "
                         f"{error[0].__name__}: {raised[1]}")
        elif error is not None and ran:
            wrong.append(f"{row.id}: ran before raising {raised[0].__name__}")
        elif raised is not None and error is None:
            wrong.append(f"{row.id}: minilazy raised {raised[0].__name__}: {raised[1]}")
        elif error is None:
            recorded.append((row, got, want))
    ml.mark_step()
    for row, got, want in recorded:
        try:
            _compare(got, want, row)
        except AssertionError as e:
            wrong.append(f"{row.id}: {e}")
    assert wrong == [], f"{len(wrong)} rows:\n" + "\n".join(wrong[:25])
