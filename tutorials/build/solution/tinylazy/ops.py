"""The op tables and NumPy's shape inference (given: infrastructure, not an assignment).

Ops are named as in the Python Array API standard, as the oracle's ``ops.toml`` names them.
NumPy 2 spells almost all of them the same way, and so does ``jax.numpy``: ``getattr`` is the
table. Indexing has no function of its own: ``getitem`` is ``x[key]`` and ``setitem`` is
``x[key] = value`` (functional here: a new array). ``add=`` and friends are ``x += y``.
"""

from __future__ import annotations

import contextlib
import operator
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tinylazy.ir import fill

Array = np.ndarray[Any, Any]
SCALARS = (bool, int, float)
ERRORS = (OverflowError, TypeError, IndexError, ValueError)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """NumPy without its warnings (``1/0``, the mean of nothing): values say it all.

    Example:
        >>> with quiet():
        ...     float(np.mean(np.zeros(0)))
        nan
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def weak(op: str) -> bool:
    """Whether ``op`` takes Python scalars as weak operands (NEP 50): elementwise ops.

    Example:
        >>> weak("add"), weak("where"), weak("sum")
        (True, True, False)
    """
    op = op.rstrip("=")
    return op in ("round", "where", "clip") or (
        op != "matmul" and isinstance(getattr(np, op, None), np.ufunc))


def _setitem(x: Array, key: Any, value: Any) -> Array:
    out = x.copy()  # functional: the old value stays valid for whoever holds it
    out[key] = value
    return out


def _inplace(ufunc: Callable[..., Any]) -> Callable[[Array, Any], Array]:
    def run(x: Array, other: Any) -> Array:
        out = x.copy()
        ufunc(out, other, out=out)  # NumPy's x op= y: same_kind casting into x's dtype
        return out
    return run


def numpy_function(op: str) -> Callable[..., Any]:
    """The NumPy function that defines ``op``.

    Example:
        >>> numpy_function("pow")(np.arange(3), 2).tolist()
        [0, 1, 4]
    """
    if op == "getitem":
        return operator.getitem
    if op == "setitem":
        return _setitem
    if op.endswith("="):
        return _inplace(getattr(np, op[:-1]))
    fn: Callable[..., Any] = getattr(np, op)
    return fn


def cast(x: Any, dtype: np.dtype[Any]) -> Any:
    """``x`` (a JAX array) as ``dtype``, rounded once as NumPy rounds.

    XLA converts float64 to float16 through float32, rounding twice; rounding to float32 *to
    odd* first (truncate, set the last bit where inexact) makes the second rounding exact.

    Example:
        >>> float(cast(jnp.asarray(1 + 2**-11 + 2**-40), np.dtype("float16")))
        1.0009765625
    """
    if x.dtype == np.bool_ and np.dtype(dtype).kind == "f":  # else XLA's simplifier turns
        x = x.astype(np.uint8)  # convert(b) / y into select(b, 1 / y, 0), and 0 / 0 into 0
    if x.dtype != np.float64 or dtype != np.float16:
        return x.astype(dtype)
    y = x.astype(np.float32)
    bits = jax.lax.bitcast_convert_type(y, np.uint32)
    wide = y.astype(np.float64)
    odd = (bits - (jnp.abs(wide) > jnp.abs(x)).astype(np.uint32)) | np.uint32(1)
    bits = jnp.where(wide != x, odd, bits)
    return jax.lax.bitcast_convert_type(bits, np.float32).astype(dtype)


def _key(key: Any) -> Any:
    """An index key for JAX: index lists (known on the host) as integer arrays.

    Index arrays of narrow integer types become int32: JAX makes the axis length a constant of
    the index's type (an int8 index on an axis of 300 overflows).
    """
    if isinstance(key, list):
        return np.asarray(key, dtype=np.int64)
    if getattr(key, "dtype", np.dtype(np.float32)).kind in "iu" and key.dtype.itemsize < 4:
        return key.astype(np.int32)
    return tuple(map(_key, key)) if isinstance(key, tuple) else key


def _by_zero(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with NumPy's integer ``x // 0 == x % 0 == 0`` (XLA's differ)."""
    def run(x: Any, y: Any) -> Any:
        out = fn(x, y)
        return jnp.where(jnp.asarray(y) == 0, 0, out) if out.dtype.kind in "iu" else out
    return run


def _linspace(start: float, stop: float, num: int, dtype: Any = None, device: Any = None,
              endpoint: bool = True) -> Any:
    """NumPy's ``linspace``, step for step (its rounding, and its floor into integers)."""
    div = num - 1 if endpoint else num
    step = (stop - start) / div if div > 0 else float("nan")
    y = jnp.arange(num, dtype=np.float64)
    y = y / div * (stop - start) if step == 0 else y * (step if div > 0 else stop - start)
    y = y + start
    if endpoint and num > 1:
        y = y.at[-1].set(stop)
    return jnp.floor(y) if dtype is not None and np.dtype(dtype).kind in "iu" else y


def jax_function(op: str) -> Callable[..., Any]:
    """The ``jax.numpy`` function that computes ``op`` inside a compiled program.

    Its result may have another dtype than NumPy's: the caller casts it (:func:`cast`).

    Example:
        >>> jax_function("setitem")(jnp.zeros(3), 1, 5.0).tolist()
        [0.0, 5.0, 0.0]
    """
    if op == "getitem":
        return lambda x, key: x[_key(key)]
    if op == "setitem":
        return _set
    if op == "astype":
        return lambda x, dtype, copy=True: cast(x, dtype)
    if op == "arange":  # computed in the default dtype: JAX has no bool arange
        return lambda *args, dtype=None, **kwargs: jnp.arange(*args, **kwargs)
    if op == "linspace":
        return _linspace
    if op.rstrip("=") in ("floor_divide", "remainder"):
        return _by_zero(getattr(jnp, op.rstrip("=")))
    fn: Callable[..., Any] = getattr(jnp, op.rstrip("="))  # x op= y: cast back by the caller
    return fn


def _set(x: Any, key: Any, value: Any) -> Any:
    v, target = jnp.asarray(value), x[_key(key)].shape
    if v.ndim > len(target):  # extra leading ones of the value: NumPy drops them, JAX does not
        v = v.reshape(v.shape[v.ndim - len(target):])
    return x.at[_key(key)].set(cast(v, x.dtype))


def dummy(shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    """A read-only array of ``shape`` and ``dtype`` that takes no memory (zero strides)."""
    return np.broadcast_to(np.zeros((), dtype), shape)


SHAPED = ("zeros", "ones", "full", "empty")  # creation ops whose first argument is a shape
LARGE = 2**24  # elements: an elementwise result this big is inferred without making it


def _shaped(op: str, args: Any, kwargs: Any) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """Shape and dtype of ``zeros(shape, ...)`` and its kin, checked as NumPy checks them."""
    dims = args[0] if isinstance(args[0], (tuple, list)) else (args[0],)
    shape = tuple(operator.index(d) for d in dims)  # a float: TypeError, as NumPy's
    if any(d > np.iinfo(np.intp).max for d in shape):
        raise ValueError("Maximum allowed dimension exceeded")
    if any(d < 0 for d in shape):
        raise ValueError("negative dimensions are not allowed")
    dtype = np.asarray(numpy_function(op)((0,), *args[1:], **kwargs)).dtype
    # A zero among the dimensions excuses none of the others: NumPy multiplies the non-zero ones.
    if int(np.prod([d for d in shape if d], dtype=object)) * dtype.itemsize > np.iinfo(
            np.intp).max:
        raise ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than "
                         "the maximum possible size.")
    return shape, dtype


def infer(op: str, template: Any, operands: list[Any]) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """The shape and dtype of ``op`` on ``operands``, by running NumPy on them.

    ``operands`` are dummies (:func:`dummy`) for tensors and the values of Python scalars, so
    NumPy's own rules decide, and NumPy's errors are raised here, at the call, naming the
    operands. A creation op too big for this machine's memory (but valid) is not refused: it is
    a program that fails when run, not a call that fails, so NumPy never makes it here.

    Example:
        >>> from tinylazy.ir import In
        >>> infer("add", ((In(0), In(1)), {}), [dummy((2, 1), np.dtype("int8")), 0.5])
        ((2, 1), dtype('float64'))
    """
    args, kwargs = fill(template[0], operands), fill(template[1], operands)
    try:
        with quiet():
            if op in SHAPED:  # never allocate the array itself: it may be 4 TiB, and valid
                return _shaped(op, args, kwargs)
            arrays = [o.shape for o in operands if isinstance(o, np.ndarray)]
            if weak(op) and any(np.prod(a, dtype=object) > LARGE for a in arrays):
                small = [np.zeros((), o.dtype) if isinstance(o, np.ndarray) else o
                         for o in operands]  # the dtype from 0-d operands, the shape from all
                dtype = np.asarray(numpy_function(op)(*fill(template[0], small),
                                                      **fill(template[1], small))).dtype
                return np.broadcast_shapes(*arrays), dtype
            out = np.asarray(numpy_function(op)(*args, **kwargs))
    except ERRORS as e:
        names = ", ".join(f"{o.dtype}{list(o.shape)}" if isinstance(o, np.ndarray)
                          else type(o).__name__ for o in operands)
        kind = next(k for k in ERRORS if isinstance(e, k))
        raise kind(f"{op}: {e} (operands: {names})") from None
    return out.shape, out.dtype
