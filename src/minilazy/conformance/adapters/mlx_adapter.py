"""MLX (``mlx.core``) on its CPU device as an implementation under test.

    python -m minilazy.conformance --lazy-impl=minilazy.conformance.adapters.mlx_adapter:mlx

MLX is lazy: each op records a node and returns an ``mx.array`` at once, and nothing runs until
``mx.eval`` is called on arrays or a value is read (``np.array(x)``, ``x.item()``), which
evaluates what it needs. So the barrier (``mark_step``) is ``mx.eval`` of every live array this
adapter made (:class:`BaseAdapter` tracks them), ``sync(*xs)`` is ``mx.eval(*xs)``, and an
observation is ``np.array(x)``. Shapes and dtypes are known at record time (``metadata``);
``x[key] = v`` and ``x += y`` rebind the array (``setitem``); float64 exists on the CPU
(``float64``); ``mx.grad`` differentiates lazily (``autodiff``). MLX keeps no count of
compiles or executions and exposes no graph key, IR or pending state: rules needing those skip.

The adapter translates spelling only: NumPy dtypes to MLX's (also on the way in, where
``mx.array`` would turn float64 data into float32), ``correction`` to ``ddof``, ``dtype=`` of
``sum`` and ``prod`` to a cast of the input, ``include_initial`` of ``cumulative_sum`` (MLX's
``cumsum``) to a 0 padded in front, tuples to what MLX takes. It never casts a result,
picks a dtype or converts an exception: MLX's dtype rules are stated in ``DTYPE_POLICY``, and
every other difference is a finding. Convolution and pooling (``conv``) are ``mx.conv2d``,
``nn.MaxPool2d`` and ``nn.AvgPool2d`` with torch's layout transposed to MLX's and back.
``sort``, ``argsort`` and ``linalg`` are ``mx.sort``, ``mx.argsort`` (descending: of the input
reversed, reversed back) and ``mx.linalg`` or the ``mx`` function of the same meaning, but
MLX has no ``matrix_power``, ``matrix_rank`` or ``vecdot`` (``LINALG_MISSING``), so the adapter
does not declare ``linalg`` and LZ-NUM-018 is not checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

import numpy as np

from minilazy.conformance.adapter import DtypePolicy
from minilazy.conformance.base import BaseAdapter

try:
    import mlx.core as mx
    from mlx import optimizers
    from mlx.nn.layers.pooling import AvgPool2d, MaxPool2d
except ImportError as error:  # the suite skips this adapter's tests on ImportError
    raise ImportError("the MLX adapter needs MLX: pip install mlx mlx-cpu") from error

Array = np.ndarray[Any, Any]
NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64")
TO_MLX: dict[np.dtype[Any], Any] = {np.dtype(n): getattr(mx, n if n != "bool" else "bool_")
                                    for n in NAMES}
TO_NUMPY: dict[Any, np.dtype[Any]] = {v: k for k, v in TO_MLX.items()}
# MLX's dtype rules where they differ from NumPy's: float32 is the default float (Python
# floats, int / int, the mean of ints, int64 with uint64) and int32 the default int (arange,
# Python ints, sums of small ints); argmax gives uint32; float functions of bool, int8, uint8
# give float32 (NumPy: float16); an integer with a float keeps the float's dtype (int16 +
# float16 is float16); cumulative sums keep small integer dtypes; matmul and tensordot take
# floats only; conv2d takes no float64, and mx.random draws none.
DTYPE_POLICY = DtypePolicy(
    default_float="float32", default_int="int32", index="uint32",
    promotion={**{f"float16,{i}": "float16" for i in ("int16", "int32", "int64", "uint16",
                                                        "uint32", "uint64")},
               **{small: "float32" for small in ("bool", "int8", "uint8")},
               # sums and products of small unsigned ints are uint32 (NumPy: uint64)
               **{f"{r}:{u}": "uint32" for r in ("sum", "prod") for u in ("uint8", "uint16",
                                                                        "uint32")},
               # cumulative sums keep the integer dtype (NumPy: int64 or uint64)
               **{f"cumulative_sum:{i}": i for i in ("int8", "int16", "uint8", "uint16",
                                                     "uint32")}},
    unsupported=frozenset({f"{op}:{d}" for op in ("matmul", "tensordot") for d in NAMES
                           if not d.startswith("float")}
                | {"conv2d:float64", "uniform:float64", "normal:float64"}))


def _reverse(x: Any, axis: int) -> Any:
    """``x`` reversed along ``axis`` (MLX has no ``flip``: a slice of step -1)."""
    return x[(slice(None),) * (axis % x.ndim) + (slice(None, None, -1),)]


def _svd(x: Any, full_matrices: bool = True) -> tuple[Any, Any, Any]:
    """``mx.linalg.svd`` (full U and Vh); reduced, their first ``min(M, N)`` columns, rows."""
    u, s, vh = mx.linalg.svd(x)
    k = s.shape[-1]
    return (u, s, vh) if full_matrices else (u[..., :, :k], s, vh[..., :k, :])


def _qr(x: Any, mode: str = "reduced") -> tuple[Any, Any]:
    """``mx.linalg.qr``: the reduced factors only."""
    if mode != "reduced":
        raise NotImplementedError(f"MLX's qr has no mode={mode!r}")
    q, r = mx.linalg.qr(x)
    return q, r


def _no_rtol(fn: Callable[[Any], Any]) -> Callable[..., Any]:
    """``fn`` of one matrix, which takes only the default ``rtol``."""
    def call(x: Any, rtol: Any = None) -> Any:
        if rtol is not None:
            raise NotImplementedError("MLX takes no rtol")
        return fn(x)
    return call


def _vector_norm(x: Any, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """``mx.linalg.norm`` of ``x``'s ``axis`` flattened into one, a vector's norm.

    MLX's norm over two axes is a matrix norm, over none of the whole array flattened.
    """
    axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    reduced = sorted(a % x.ndim for a in axes)
    kept = [a for a in range(x.ndim) if a not in reduced]
    y = mx.reshape(mx.transpose(x, kept + reduced), [x.shape[a] for a in kept] + [-1])
    out = mx.linalg.norm(y, ord, axis=-1)
    if keepdims:
        out = mx.reshape(out, [1 if a in reduced else x.shape[a] for a in range(x.ndim)])
    return out


# The linalg functions MLX has outside ``mx.linalg`` or spells differently (the rest are
# ``mx.linalg``'s of the same name), and those it has no function for.
LINALG: dict[str, Callable[..., Any]] = {
    "svd": _svd, "qr": _qr, "vector_norm": _vector_norm,
    "svdvals": lambda x: mx.linalg.svd(x, compute_uv=False),
    "matrix_norm": lambda x, keepdims=False, ord="fro": mx.linalg.norm(
        x, ord, axis=[-2, -1], keepdims=keepdims),
    "pinv": _no_rtol(mx.linalg.pinv),
    "trace": lambda x, offset=0, dtype=None: mx.trace(
        x, offset, -2, -1, dtype=None if dtype is None else TO_MLX[np.dtype(dtype)]),
    "diagonal": lambda x, offset=0: mx.diagonal(x, offset, -2, -1),
    "matrix_transpose": lambda x: mx.swapaxes(x, -2, -1),
    "outer": mx.outer, "matmul": mx.matmul,
    "tensordot": lambda x1, x2, axes=2: mx.tensordot(
        x1, x2, axes=axes if isinstance(axes, int) else list(axes)),
}
LINALG_MISSING = frozenset({"matrix_power", "matrix_rank", "vecdot"})


def _ddof(correction: float) -> int:
    if correction != int(correction):
        raise NotImplementedError(f"MLX's ddof is an integer: no correction={correction}")
    return int(correction)


class MlxAdapter(BaseAdapter):
    """``mlx.core`` on the CPU, as the conformance suite drives it."""

    name, version, namespace = "mlx-cpu", metadata.version("mlx"), mx
    capabilities = frozenset({"sync", "metadata", "float64", "setitem", "autodiff", "conv",
                              "optim", "random"})
    dtype_policy = DTYPE_POLICY
    repro_namespace = "mx"
    repro_prelude = """
import mlx.core as mx
mx.set_default_device(mx.cpu)
def array(a): return mx.array(a, dtype=getattr(mx, "bool_" if a.dtype == bool else a.dtype.name))
def value(x): return np.array(x)
"""

    def array(self, host: Array) -> Any:
        return mx.array(host, dtype=TO_MLX[host.dtype])

    def realize(self, xs: list[Any]) -> None:
        mx.eval(*xs)

    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, mx.array)

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("device", None)  # one device: the default, the CPU
        if kwargs.get("dtype") is not None:
            kwargs["dtype"] = TO_MLX[np.dtype(kwargs["dtype"])]
        return super().apply(op, *args, **kwargs)

    # -- optional methods ---------------------------------------------------------------------
    def sync(self, *xs: Any) -> None:
        mx.eval(*xs)

    def shape(self, x: Any) -> tuple[int, ...]:
        return tuple(x.shape)

    def dtype(self, x: Any) -> np.dtype[Any]:
        return TO_NUMPY[x.dtype]

    def grad(self, f: Callable[..., Any], argnums: tuple[int, ...]) -> Callable[..., Any]:
        g = mx.grad(f, argnums=list(argnums))  # one argnum: the gradient itself, not a tuple
        return lambda *xs: (g(*xs),) if len(argnums) == 1 else tuple(g(*xs))

    # -- optimizers and random keys: mlx.optimizers, mx.random -----------------------------------
    def optim(self, name: str, params: Sequence[Any], grads: Sequence[Any], state: Any,
              **hyper: float) -> tuple[list[Any], Any]:
        """``SGD``, ``Adam`` or ``AdamW`` (torch's: with its bias correction), kept as the state."""
        if state is None:
            if name == "sgd":
                state = optimizers.SGD(hyper["lr"], momentum=hyper.get("momentum", 0.0))
            else:
                betas = [hyper.get("b1", 0.9), hyper.get("b2", 0.999)]
                decay, eps = hyper.get("weight_decay", 0.0), hyper.get("eps", 1e-8)
                state = (optimizers.AdamW(hyper["lr"], betas, eps, decay, bias_correction=True)
                         if decay else optimizers.Adam(hyper["lr"], betas, eps,
                                                       bias_correction=True))
        state.learning_rate = hyper["lr"]
        found = state.apply_gradients({str(i): g for i, g in enumerate(grads)},
                                      {str(i): p for i, p in enumerate(params)})
        return [self._track(found[str(i)]) for i in range(len(params))], state

    def random(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "key":
            return self._track(mx.random.key(*args))
        if name == "split":
            return tuple(self._track(k) for k in mx.random.split(*args))
        key, shape, dtype = args
        draw = mx.random.uniform if name == "uniform" else mx.random.normal
        return self._track(draw(shape=shape, dtype=TO_MLX[np.dtype(dtype)], key=key))

    # -- convolution and pooling: MLX's layout is (N, H, W, C), filters (O, kH, kW, C / groups) --
    def conv2d(self, x: Any, w: Any, b: Any = None, *, stride: Any = 1, padding: Any = 0,
               dilation: Any = 1, groups: int = 1) -> Any:
        y = mx.conv2d(mx.transpose(x, (0, 2, 3, 1)), mx.transpose(w, (0, 2, 3, 1)),
                      stride=stride, padding=padding, dilation=dilation, groups=groups)
        y = mx.transpose(y, (0, 3, 1, 2))
        return self._track(y if b is None else y + mx.reshape(b, (1, -1, 1, 1)))

    def max_pool2d(self, x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Any:
        return self._pool(MaxPool2d(kernel_size, stride, padding), x)

    def avg_pool2d(self, x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Any:
        return self._pool(AvgPool2d(kernel_size, stride, padding), x)

    def _pool(self, pool: Callable[[Any], Any], x: Any) -> Any:
        return self._track(mx.transpose(pool(mx.transpose(x, (0, 2, 3, 1))), (0, 3, 1, 2)))

    # -- sorts and the linalg extension: mx.sort, mx.argsort, mx.linalg (no capability ``linalg``:
    # MLX has no matrix_power, matrix_rank or vecdot, which LINALG_MISSING names) --
    def sort(self, x: Any, *, axis: int = -1, descending: bool = False) -> Any:
        """``mx.sort`` (stable, NaNs last); descending is its result reversed, NaNs first."""
        y = mx.sort(x, axis=axis)
        return self._track(_reverse(y, axis) if descending else y)

    def argsort(self, x: Any, *, axis: int = -1, descending: bool = False) -> Any:
        """``mx.argsort`` (stable); descending, of ``x`` reversed, reversed back (ties in order).

        Its indices are MLX's ``uint32``, as ``argmax``'s (``DTYPE_POLICY.index``).
        """
        if not descending:
            return self._track(mx.argsort(x, axis=axis))
        last = x.shape[axis] - 1
        return self._track(last - _reverse(mx.argsort(_reverse(x, axis), axis=axis), axis))

    def linalg(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """``mx.linalg.<name>``, or the ``mx`` function of the same meaning (``LINALG``).

        Raises ``NotImplementedError`` for the functions MLX lacks (``LINALG_MISSING``) and the
        options it has no spelling for.
        """
        if name in LINALG_MISSING:
            raise NotImplementedError(f"MLX has no linalg.{name}")
        function = LINALG.get(name) or getattr(mx.linalg, name)
        out = function(*args, **kwargs)
        if isinstance(out, tuple | list):
            return tuple(self._track(o) for o in out)
        return self._track(out)

    # -- ops MLX spells differently -----------------------------------------------------------
    def op_clip(self, x: Any, min: Any = None, max: Any = None) -> Any:
        return mx.clip(x, min, max)

    def op_astype(self, x: Any, dtype: Any, copy: bool = True) -> Any:
        return mx.astype(x, TO_MLX[np.dtype(dtype)])

    def op_sum(self, x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        return mx.sum(x if dtype is None else x.astype(dtype), axis=axis, keepdims=keepdims)

    def op_prod(self, x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        return mx.prod(x if dtype is None else x.astype(dtype), axis=axis, keepdims=keepdims)

    def op_cumulative_sum(self, x: Any, axis: int | None = None, dtype: Any = None,
                          include_initial: bool = False) -> Any:
        """``mx.cumsum``; with ``include_initial``, a 0 padded before the first sum."""
        y = mx.cumsum(x, axis, dtype=dtype)
        if not include_initial:
            return y
        widths = [(0, 0)] * y.ndim
        widths[(0 if axis is None else axis) % y.ndim] = (1, 0)  # axis None: y is 1-d
        return mx.pad(y, widths)

    def op_var(self, x: Any, axis: Any = None, correction: float = 0.0,
               keepdims: bool = False) -> Any:
        return mx.var(x, axis=axis, keepdims=keepdims, ddof=_ddof(correction))

    def op_std(self, x: Any, axis: Any = None, correction: float = 0.0,
               keepdims: bool = False) -> Any:
        return mx.std(x, axis=axis, keepdims=keepdims, ddof=_ddof(correction))

    def op_tensordot(self, x1: Any, x2: Any, axes: Any = 2) -> Any:
        return mx.tensordot(x1, x2, axes=axes if isinstance(axes, int) else list(axes))

    def op_reshape(self, x: Any, shape: Any, copy: Any = None) -> Any:
        return mx.reshape(x, (shape,) if isinstance(shape, int) else tuple(shape))

    def op_expand_dims(self, x: Any, axis: Any = 0) -> Any:
        return mx.expand_dims(x, axis)

    def op_arange(self, start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Any:
        return mx.arange(0 if stop is None else start, start if stop is None else stop, step,
                         dtype=dtype)


def mlx() -> MlxAdapter:
    """The MLX adapter on MLX's CPU device (which becomes MLX's default device).

    Example:
        >>> a = mlx()
        >>> y = a.apply("multiply", a.from_numpy(np.arange(3.0)), 2.0)
        >>> a.dtype(y), a.to_numpy(y).tolist()
        (dtype('float64'), [0.0, 2.0, 4.0])
    """
    mx.set_default_device(mx.cpu)
    return MlxAdapter()
