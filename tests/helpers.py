"""Running both sides: NumPy's result or error, minilazy's value or error at the call.

Values are compared by the oracle's ``assert_close`` (one tolerance table for both).
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from minilazy.conformance.oracle import assert_close


def assert_matches(actual: Any, expected: Any, tol: str = "exact") -> None:
    """Shape, dtype and values within tolerance class ``tol``: the oracle's own comparison.

    (``reduction``: NaNs and infinities here; the caller checks the magnitude-aware bound.)
    """
    if tol == "reduction":
        e = np.asarray(expected)
        bound = np.full(e.shape, np.inf) if e.dtype.kind == "f" else None
        assert_close(actual, expected, "exact", bound=bound)
        return
    assert_close(actual, expected, tol)


# -- running both sides: NumPy's result or error, minilazy's value or error at the call ------

NUMPY_ERRORS = (ValueError, IndexError, TypeError, OverflowError)


def forget(e: BaseException) -> tuple[type, str]:
    """The exception's type and message, its tracebacks' frames cleared.

    A traceback keeps alive the tensors its frames recorded: if one is bad (an engine bug that
    fails at the barrier), every later ``mark_step`` -- the next test's -- trips over it again.
    Clearing the frames drops them, so that an engine bug fails only the test that found it.
    """
    kind, msg, seen = type(e), str(e), set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        traceback.clear_frames(e.__traceback__)
        e = e.__cause__ or e.__context__
    return kind, msg


def value(thunk: Callable[[], Any], device: Any = None) -> np.ndarray:
    """Record ``thunk()`` (on ``device``, if given) and observe it; a failure becomes an
    ``AssertionError``. (No local names the tensor: this frame is not cleared.)"""
    try:
        return _observe(thunk(), device)
    except Exception as e:  # noqa: BLE001 -- reported below, without the traceback's tensors
        kind, msg = forget(e)
    raise AssertionError(f"minilazy raised {kind.__name__}: {msg}")


def _observe(t: Any, device: Any) -> np.ndarray:
    assert device is None or t.device == device, f"made on {t.device}, asked for {device}"
    return t.numpy()


def raises_at_the_call(thunk: Callable[[], Any], exc: Any) -> str:
    """``thunk()`` must raise ``exc`` having run nothing (no barrier, no execution).

    Returns the message. (The exception is forgotten first: its traceback holds whatever
    ``thunk`` half-recorded, which a later barrier must not meet.)
    """
    import minilazy as ml

    before = ml.metrics()
    try:
        thunk()
        kind, msg = None, ""
    except Exception as e:  # noqa: BLE001 -- checked below, after the traceback is gone
        kind, msg = forget(e)
    after = ml.metrics()
    assert kind is not None, f"did not raise {exc}"
    assert issubclass(kind, exc), f"raised {kind.__name__}: {msg}; expected {exc}"
    assert after.executions == before.executions, f"executed before raising: {msg}"
    assert after.barriers == before.barriers, f"ran a barrier before raising: {msg}"
    return msg


def quiet(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """NumPy's result, its warnings (empty means, 0/0 variances, overflow) silenced."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def numpy_or_error(fn: Callable[..., Any], *args: Any, **kwargs: Any
                   ) -> tuple[Any, tuple[type, ...] | None]:
    """(NumPy's result, None), or (None, the exception classes minilazy must raise instead)."""
    try:
        return np.asarray(quiet(fn, *args, **kwargs)), None
    except NUMPY_ERRORS as e:  # AxisError is both a ValueError and an IndexError: accept either
        return None, tuple(c for c in NUMPY_ERRORS if isinstance(e, c))


def check(np_fn: Callable[[], Any], ml_thunk: Callable[[], Any], device: Any = None,
          tol: str = "exact") -> tuple[Any, Any]:
    """NumPy's result (shape, dtype, values within ``tol``), or NumPy's error class at the call.

    Returns both results (``None`` when NumPy raised) for further checks.
    """
    want, err = numpy_or_error(np_fn)
    if err:
        raises_at_the_call(ml_thunk, err)
        return None, None
    got = value(ml_thunk, device)
    assert_matches(got, want, tol)
    return got, want


def names_shape(message: str, shape: tuple[int, ...]) -> bool:
    """Whether an error message shows ``shape`` (as a tuple, a list, or ``f32[2,3]``)."""
    forms = {str(shape), str(list(shape)), "[" + ",".join(map(str, shape)) + "]"}
    return any(f in message for f in forms)
