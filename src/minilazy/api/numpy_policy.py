"""NumPy's functions on a tensor: run lazily in minilazy with NumPy's result, or refuse.

What ``Tensor.__array_ufunc__`` and ``Tensor.__array_function__`` (``interop.py``) hand
over to, here in the namespace because it is the namespace's functions they call. A NumPy
function called on a tensor runs in minilazy where minilazy has the op (``np.exp(t)``,
``np.sum(t, 0)``, ``ndarray + t``: recorded, a Tensor back), and gives what NumPy gives on the
same ndarray: NumPy's values and NumPy's result dtype. Where the namespace's function follows
the Array API standard instead (``clip`` keeps ``x``'s dtype, ``hypot`` refuses integers,
``round`` keeps them where ``np.rint`` does not), the operands are first converted as NumPy
converts them: to the dtypes of the loop NumPy's own type resolution picks, Python numbers
weak (NEP 50). Everything else raises ``TypeError`` naming what to write instead. Nothing is
pulled to the host behind the caller's back. Never imports jax.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any, Final

import numpy as np

from minilazy.api.tensor import Tensor
from minilazy.core.dtypes import DType

# NumPy's ufunc names where the namespace's (the Array API's) differ.
UFUNC_NAMES: Final = {
    "true_divide": "divide", "mod": "remainder", "power": "pow", "absolute": "abs",
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh", "rint": "round", "invert": "bitwise_invert",
    "bitwise_not": "bitwise_invert", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "conjugate": "conj",
}
# What a ufunc's other methods are in minilazy, for the error that names it.
UFUNC_METHODS: Final = {
    "add.reduce": "ml.sum(x, axis=...)", "multiply.reduce": "ml.prod(x, axis=...)",
    "maximum.reduce": "ml.max(x, axis=...)", "minimum.reduce": "ml.min(x, axis=...)",
    "logical_and.reduce": "ml.all(x, axis=...)", "logical_or.reduce": "ml.any(x, axis=...)",
    "add.accumulate": "ml.cumulative_sum(x, axis=...)", "multiply.outer": "x[:, None] * y",
}
# NumPy functions that run in minilazy: NumPy's name -> (minilazy's, a leading "." for the
# tensor method; how many leading arguments pass by position; NumPy's other parameters that
# minilazy takes, "numpy:minilazy" where the names differ, "numpy:" where it is ignored).
FUNCTIONS: Final = {
    **{n: (f".{n}", 1, "axis dtype keepdims") for n in ("sum", "prod", "mean")},
    **{n: (f".{n}", 1, "axis dtype ddof keepdims") for n in ("var", "std")},
    **{n: (f".{m}", 1, "axis keepdims") for n, m in (("max", "max"), ("amax", "max"),
       ("min", "min"), ("amin", "min"), ("any", "any"), ("all", "all"), ("argmax", "argmax"),
       ("argmin", "argmin"))},
    "cumsum": (".cumsum", 1, "axis dtype"), "reshape": (".reshape", 2, "copy order:"),
    "ravel": (".ravel", 1, "order:"), "squeeze": (".squeeze", 1, "axis"),
    "swapaxes": (".swapaxes", 3, ""), "copy": (".copy", 1, "order:"),
    "transpose": ("transpose", 1, "axes"), "concatenate": ("concatenate", 1, "axis"),
    "stack": ("stack", 1, "axis"), "where": ("where", 3, ""),
    "clip": ("clip", 1, "a_min:min a_max:max min max"), "expand_dims": ("expand_dims", 1, "axis"),
    "moveaxis": ("moveaxis", 3, ""), "flip": ("flip", 1, "axis"), "roll": ("roll", 2, "axis"),
    "sort": ("sort", 1, "axis stable"), "argsort": ("argsort", 1, "axis stable"),
    "tile": ("tile", 2, ""), "repeat": ("repeat", 2, "axis"),
    "broadcast_to": ("broadcast_to", 2, ""), "einsum": ("einsum", 1, "optimize:"),
    "tensordot": ("tensordot", 2, "axes"),
    **{n: (n, 1, "dtype") for n in ("zeros_like", "ones_like", "empty_like")},
    "full_like": ("full_like", 2, "dtype"), "round": ("round", 1, ""),
    "around": ("round", 1, ""), "result_type": ("result_type", 1, ""),
}
# Where NumPy's name is not minilazy's and the fix is more than a rename.
INSTEAD: Final = {
    "dot": "ml.matmul(a, b) (ml.tensordot for other axes)", "unique": "ml.unique_values(x)",
    "outer": "ml.reshape(a, (-1, 1)) * ml.reshape(b, (1, -1))",
    "allclose": "ml.all(ml.abs(a - b) <= atol + rtol * ml.abs(b))",
    "isclose": "ml.abs(a - b) <= atol + rtol * ml.abs(b)", "array_equal": "ml.all(a == b)",
    "norm": "ml.linalg.vector_norm(x) or ml.linalg.matrix_norm(x)",
}


def _ns() -> Any:
    return sys.modules["minilazy"]  # the face: its functions are the namespace's


def _host_hint(call: str) -> str:
    return f"{call}(x.numpy(), ...) computes it in NumPy (x.numpy() is an observation barrier)"


def _in_type(x: Any) -> DType | type:
    """What NumPy's type resolution sees: a dtype, or a Python number's type (weak, NEP 50)."""
    if isinstance(x, Tensor):
        return x.dtype
    if type(x) in (int, float, complex):
        return type(x)
    return np.asarray(x).dtype  # a Python bool, a NumPy scalar, an ndarray, a list: strong


def _as(x: Any, dtype: DType) -> Any:
    """``x`` converted to ``dtype`` as NumPy converts a ufunc's operand to its loop's dtype."""
    if isinstance(x, Tensor):
        return x if x.dtype == dtype else _ns().astype(x, dtype)
    if type(x) in (int, float, complex):
        return x  # weak: the loop's dtype is already the other operands'
    return np.asarray(x).astype(dtype, copy=False)


def _refusal(call: str, e: TypeError) -> TypeError:
    return TypeError(f"{call} on a minilazy Tensor: {e}; " + _host_hint(call))


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
    """``np.exp(t)``, ``ndarray + t``: the namespace's function on NumPy's loop dtypes.

    Example:
        >>> import minilazy as ml
        >>> array_ufunc(np.rint, "__call__", (ml.asarray([1, 2], dtype=ml.int8),), {}).dtype
        dtype('float16')
    """
    name = ufunc.__name__
    fn = getattr(_ns(), UFUNC_NAMES.get(name, name), None)
    if method != "__call__":
        instead = UFUNC_METHODS.get(f"{name}.{method}", "a minilazy function")
        raise TypeError(f"np.{name}.{method} on a minilazy Tensor: write {instead}")
    if kwargs.get("out") is not None:
        raise TypeError(f"np.{name}(..., out=...) with a minilazy Tensor: tensors are "
                        f"lazy and an ndarray cannot hold one; write y = ml.{name}(...)")
    if fn is None or not callable(fn):
        raise TypeError(_unsupported(name, "numpy"))
    if any(k != "out" for k in kwargs):
        extra = ", ".join(f"{k}=" for k in kwargs if k != "out")
        raise TypeError(f"np.{name}(..., {extra}) on a minilazy Tensor: minilazy takes no "
                        f"such option; " + _host_hint(f"np.{name}"))
    try:  # NumPy's own type resolution: its loop's dtypes, or its TypeError (no such loop)
        loop = ufunc.resolve_dtypes((*map(_in_type, inputs), *(None,) * ufunc.nout))
        return fn(*(_as(x, d) for x, d in zip(inputs, loop)))
    except TypeError as e:
        raise _refusal(f"np.{name}", e) from None


def array_function(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``np.sum(t, 0)``, ``np.concatenate([t, a])``: minilazy's function, with NumPy's result.

    Example:
        >>> import minilazy as ml
        >>> array_function(np.clip, (ml.asarray([1, 5], dtype=ml.int8), 0.5, 2.5), {}).tolist()
        [1.0, 2.5]
    """
    name, module = func.__name__, getattr(func, "__module__", "numpy")
    if module == "numpy" and name in ("shape", "ndim", "size") and len(args) == 1:
        return getattr(args[0], name)  # known without running anything
    spec = FUNCTIONS.get(name) if module == "numpy" else None
    if spec is None:
        raise TypeError(_unsupported(name, module))
    target, leading, accepted = spec
    signature = inspect.signature(func)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"np.{name}: {e}") from None
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    params = signature.parameters
    for i, (key, value) in enumerate(bound.arguments.items()):
        param = params[key]
        if param.kind is param.VAR_POSITIONAL:
            positional.extend(value)
        elif i < leading:
            positional.append(value)
        elif value is not param.default and not (value is None and param.default is None):
            keywords[_renamed(name, key, value, accepted)] = value
    keywords.pop("", None)  # accepted and ignored (order="C", optimize=...)
    if name == "where" and len(positional) == 1:
        raise TypeError("np.where(condition) on a minilazy Tensor: write "
                        "ml.nonzero(condition) (its size depends on the data)")
    try:
        if name == "clip":  # a ufunc in NumPy: x and both bounds promote together (NEP 50)
            bounds = [b for b in (keywords.get("min"), keywords.get("max")) if b is not None]
            x = _ns().asarray(positional[0])  # (a Python number by value: weak)
            positional[0] = _as(x, np.result_type(x.dtype, *(
                b if isinstance(_in_type(b), type) else _in_type(b) for b in bounds)))
        if target.startswith("."):
            first = _ns().asarray(positional[0])
            return getattr(first, target[1:])(*positional[1:], **keywords)
        return getattr(_ns(), target)(*positional, **keywords)
    except TypeError as e:
        raise _refusal(f"np.{name}", e) from None


def _renamed(name: str, key: str, value: object, accepted: str) -> str:
    """NumPy's parameter ``key`` as minilazy's keyword ("" to drop it); else ``TypeError``."""
    for entry in accepted.split():
        numpy_name, colon, ours = entry.partition(":")
        if numpy_name == key and not (key == "order" and value not in ("C", "K", "A")):
            return ours if colon else key  # (minilazy's tensors are row-major only)
    raise TypeError(f"np.{name}(..., {key}={value!r}) on a minilazy Tensor: minilazy takes no "
                    f"{key!r} here; " + _host_hint(f"np.{name}"))


def _unsupported(name: str, module: str) -> str:
    """The message for a NumPy function minilazy does not run: what to write instead."""
    where = module.removeprefix("numpy").lstrip(".")  # "linalg", "fft" or ""
    ours = getattr(getattr(_ns(), where, None) if where else _ns(), name, None)
    call = f"np.{where + '.' if where else ''}{name}"
    if name in INSTEAD:
        return f"{call} on a minilazy Tensor: write {INSTEAD[name]}, which runs lazily"
    if callable(ours):
        return f"{call} on a minilazy Tensor: write ml.{call[3:]}(...), which runs lazily"
    return f"{call} has no minilazy equivalent; " + _host_hint(call)
