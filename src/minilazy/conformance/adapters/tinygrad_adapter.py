"""tinygrad on its ``CPU`` device (kernels compiled by clang) as an implementation under test.

``--lazy-impl=minilazy.conformance.adapters.tinygrad_adapter:tinygrad``. How tinygrad's laziness
maps onto the protocol: every ``Tensor`` op records a ``UOp`` graph and runs nothing;
``Tensor.realize(*xs)`` schedules, compiles and runs the kernels of ``xs`` (``sync``); the
barrier realises every live tensor the adapter made (tinygrad has no ``mark_step``); an
observation is tinygrad's own ``Tensor.numpy()``; a tensor is pending while the buffer under its
``UOp`` is unrealised; the only count tinygrad keeps, ``GlobalCounters.kernel_count`` (kernel
launches, copies included), is capability ``executions``; ``Tensor.gradient`` records gradients.

The adapter translates spelling only (``keepdims`` is ``keepdim``, ``concat`` is ``Tensor.cat``,
NumPy dtypes become tinygrad's); it never casts values, picks a dtype or converts an exception.
``tril``/``triu`` take ``diagonal``, ``cumulative_sum`` is ``cumsum`` on the input cast to
``dtype`` with a 0 padded in front for ``include_initial``. Ops tinygrad has no function for
(``expm1``, ``log1p``, ``atan2``, ``tensordot``, ``take_along_axis``: ``Tensor.gather``
neither broadcasts nor wraps negative indices) are unsupported. ``TINYGRAD_POLICY`` states
tinygrad's dtype rules. Convolution and pooling (``conv``) are ``Tensor.conv2d``,
``max_pool2d`` and ``avg_pool2d``, in torch's layout already. No capability ``linalg``:
tinygrad has ``Tensor.sort``, ``argsort``, ``qr`` and ``svd`` but no ``cholesky``, ``inv``,
``det``, ``slogdet``, ``solve``, ``eigh`` or ``eigvalsh``, so the adapter maps none of them.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from typing import Any

import numpy as np

from minilazy.conformance.adapter import Counters, DtypePolicy
from minilazy.conformance.base import OPERATORS as BASE_OPERATORS
from minilazy.conformance.base import BaseAdapter
from minilazy.conformance.oracle.windows import pair

try:
    from tinygrad.device import Device
    from tinygrad.dtype import dtypes
    from tinygrad.helpers import DEV, Context, GlobalCounters
    from tinygrad.nn import optim
    from tinygrad.tensor import Tensor
except ImportError as error:
    raise ImportError("the tinygrad adapter needs tinygrad (`pip install tinygrad`) and, for its "
                      "CPU backend, a C compiler (Debian package `clang`)") from error

_settings: Callable[..., Any] = Context  # tinygrad's Context, untyped: called typed here

NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64")
TO_NUMPY = {getattr(dtypes, n): np.dtype(n) for n in NAMES}
# Weak dtypes (an int tensor times a Python float) materialise as the default ones.
TO_NUMPY.update({dtypes.weakfloat: TO_NUMPY[dtypes.default_float],
                 dtypes.weakint: TO_NUMPY[dtypes.default_int]})
# Spec ops that are Python operators on tinygrad tensors (either operand may be a Python scalar);
# ``x op= y`` is the operator's in-place form (INPLACE).
OPERATORS = {**BASE_OPERATORS, "matmul": operator.matmul}
# Keyword arguments tinygrad spells differently.
KEYWORDS = {"keepdims": "keepdim", "min": "min_", "max": "max_"}
# The logical ops: the bitwise ones on the operands' truth values.
LOGICAL = {"logical_and": operator.and_, "logical_or": operator.or_, "logical_xor": operator.xor}
# tinygrad's dtype rules where they differ from NumPy's and a policy can say so: floats default
# to float32 (Python floats, creation, int / int, the mean of ints, a signed int with uint64),
# ints to int32 (arange, Python ints, sums of small ints, argmax) but a signed int with uint32
# still makes int64, an integer with float16 stays float16, and bools do not shift.
TINYGRAD_POLICY = DtypePolicy(
    default_float="float32", default_int="int32", index="int32",
    promotion={**{f"{i},uint32": "int64" for i in ("int8", "int16", "int32")},
               **{f"{i},float16": "float16" for i in ("int16", "uint16", "int32", "uint32",
                                                       "int64", "uint64")}},
    unsupported=frozenset({"bitwise_left_shift:bool", "bitwise_right_shift:bool"}))


def _map(tree: Any, fn: Callable[[Any], Any]) -> Any:
    """``tree`` (a tensor, or lists, tuples and dicts of them) with ``fn`` applied to each."""
    if isinstance(tree, dict):
        return {k: _map(v, fn) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_map(v, fn) for v in tree)
    return fn(tree)


def _padding(padding: Any) -> Any:
    """Torch's (H, W) padding as tinygrad's per-side padding (left, right, top, bottom)."""
    ph, pw = pair(padding)
    return (pw, pw, ph, ph)


class TinygradAdapter(BaseAdapter):
    """tinygrad's ``Tensor`` on the ``CPU`` device, as the conformance suite drives it."""

    name, version, namespace = "tinygrad-cpu", metadata.version("tinygrad"), Tensor
    capabilities = frozenset({"executions", "pending", "metadata", "float64", "setitem",
                              "sync", "autodiff", "conv", "optim"})
    dtype_policy = TINYGRAD_POLICY
    renames = {"negative": "neg", "bitwise_invert": "bitwise_not", "astype": "cast",
               "permute_dims": "permute", "broadcast_to": "expand", "stop_gradient": "detach"}
    repro_namespace = "Tensor"
    repro_prelude = """
import operator
from tinygrad import Tensor, dtypes
def array(a): return Tensor(a, device="CPU")
def value(x): return x.numpy()
"""

    def spell(self, op: str, args: list[str], kwargs: Mapping[str, str]) -> str | None:
        kwargs = {KEYWORDS.get(k, k): v for k, v in kwargs.items()}
        if op in OPERATORS:
            return f"operator.{OPERATORS[op].__name__}({', '.join(args)})"
        return None if op in LOGICAL else super().spell(op, args, kwargs)

    def array(self, host: np.ndarray[Any, Any]) -> Any:
        return Tensor(host, device="CPU")  # a lazy copy from the host, run at the next barrier

    def host(self, x: Any) -> Any:
        return x.numpy()

    def realize(self, xs: list[Any]) -> None:
        if xs:
            Tensor.realize(*xs)

    def supports(self, op: str) -> bool:
        return op in OPERATORS or op in LOGICAL or super().supports(op)

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        args = tuple(self._argument(a) for a in args)
        kwargs = {KEYWORDS.get(k, k): self._argument(v) for k, v in kwargs.items()
                  if k not in ("device", "copy")}
        if op in OPERATORS:
            return self._track(OPERATORS[op](*args))
        if op in LOGICAL:
            return self._track(LOGICAL[op](*(a.cast(dtypes.bool) if isinstance(a, Tensor)
                                             else bool(a) for a in args)))
        if op in ("maximum", "minimum") and not isinstance(args[0], Tensor):
            args = args[::-1]  # symmetric methods: called on the operand that is a tensor
        if op in ("var", "std"):
            kwargs.setdefault("correction", 0)  # the Array API's default; tinygrad's is 1
        return super().apply(op, *args, **kwargs)

    def optim(self, name: str, params: Sequence[Any], grads: Sequence[Any], state: Any,
              **hyper: float) -> tuple[list[Any], Any]:
        """``nn.optim``'s ``SGD``, ``Adam`` or ``AdamW``: its step scheduled, not realized.

        The parameters are updated in place (``assign``) and realized at the next barrier with
        what the step schedules (``schedule_step``: ``step()`` would realize them at once).
        """
        if state is None:
            if name == "sgd":
                state = optim.SGD(list(params), hyper["lr"], hyper.get("momentum", 0.0))
            else:
                extra = {k: hyper[k] for k in ("b1", "b2", "eps") if k in hyper}
                decay = hyper.get("weight_decay", 0.0)
                state = (optim.AdamW(list(params), hyper["lr"], weight_decay=decay, **extra)
                         if decay else optim.Adam(list(params), hyper["lr"], **extra))
        state.lr.assign(Tensor([hyper["lr"]], device="CPU", dtype=state.lr.dtype))
        for p, g in zip(params, grads):
            p.grad = g
        with _settings(TRAINING=1):  # (an optimizer steps only in training)
            for t in state.schedule_step():
                self._track(t)
        return list(params), state

    def _argument(self, a: Any) -> Any:
        """``a`` as tinygrad takes it: a NumPy dtype as tinygrad's, a NumPy scalar as 0-d data."""
        if isinstance(a, np.dtype):
            return getattr(dtypes, a.name)
        return self.from_numpy(np.asarray(a)) if isinstance(a, np.generic) else a

    def op_expand_dims(self, x: Any, axis: int = 0) -> Any:
        return x.unsqueeze(axis)

    def op_squeeze(self, x: Any, axis: Any) -> Any:
        axes = (axis,) if isinstance(axis, int) else axis
        for a in sorted((a % x.ndim for a in axes), reverse=True):  # one axis at a time
            x = x.squeeze(a)
        return x

    def op_flip(self, x: Any, axis: Any = None) -> Any:
        return x.flip(tuple(range(x.ndim)) if axis is None else axis)

    def op_matrix_transpose(self, x: Any) -> Any:
        return x.transpose(-2, -1)

    def op_concat(self, arrays: list[Any], axis: int | None = 0) -> Any:
        if axis is None:
            return Tensor.cat(*(a.flatten() for a in arrays))
        return Tensor.cat(*arrays, dim=axis)

    def op_stack(self, arrays: list[Any], axis: int = 0) -> Any:
        return Tensor.stack(*arrays, dim=axis)

    def op_take(self, x: Any, indices: Any, axis: int | None = None) -> Any:
        if axis is None:
            return x.flatten()[indices]
        return x[(slice(None),) * (axis % x.ndim) + (indices,)]

    def op_cumulative_sum(self, x: Any, axis: int | None = None, dtype: Any = None,
                          include_initial: bool = False) -> Any:
        if axis is None:  # 1-d x only: flattened, as NumPy does
            x, axis = x.flatten(), 0
        x = x if dtype is None else x.cast(dtype)
        axis %= x.ndim
        y = x.cumsum(axis)
        if not include_initial:
            return y
        return y.pad(tuple((1, 0) if i == axis else (0, 0) for i in range(y.ndim)))

    def op_tril(self, x: Any, k: int = 0) -> Any:
        return x.tril(diagonal=k)

    def op_triu(self, x: Any, k: int = 0) -> Any:
        return x.triu(diagonal=k)

    def conv2d(self, x: Any, w: Any, b: Any = None, *, stride: Any = 1, padding: Any = 0,
               dilation: Any = 1, groups: int = 1) -> Any:
        return self._track(x.conv2d(w, b, groups=groups, stride=stride, dilation=dilation,
                                    padding=_padding(padding)))

    def max_pool2d(self, x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Any:
        return self._track(x.max_pool2d(pair(kernel_size), stride=stride,
                                        padding=_padding(padding)))

    def avg_pool2d(self, x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Any:
        return self._track(x.avg_pool2d(pair(kernel_size), stride=stride,
                                        padding=_padding(padding)))

    def op_asarray(self, obj: Any, dtype: Any = None) -> Any:
        return Tensor(obj, dtype=dtype, device="CPU")

    def op_eye(self, n_rows: int, n_cols: int | None = None, k: int = 0, dtype: Any = None
               ) -> Any:
        m = n_rows if n_cols is None else n_cols
        if k >= 0:  # tinygrad's eye has no diagonal offset: a taller identity, k rows cut
            return Tensor.eye(n_rows + k, m, dtype=dtype)[k:]
        return Tensor.eye(n_rows, m - k, dtype=dtype)[:, -k:]

    def op_linspace(self, start: Any, stop: Any, num: int, dtype: Any = None,
                    endpoint: bool = True) -> Any:
        # Without the endpoint: the same step, (stop - start) / num; num + 1 points less the last.
        return Tensor.linspace(start, stop, num + (not endpoint), dtype=dtype)[:num]

    def sync(self, *xs: Any) -> None:
        self.realize(list(xs))

    def is_pending(self, x: Any) -> bool:
        return not x.uop.is_realized

    def counters(self) -> Counters:
        return Counters(executions=GlobalCounters.kernel_count)

    def shape(self, x: Any) -> tuple[int, ...]:
        return tuple(int(n) for n in x.shape)

    def dtype(self, x: Any) -> np.dtype[Any]:
        return TO_NUMPY[x.dtype]

    def grad(self, f: Callable[..., Any], argnums: tuple[int, ...]) -> Callable[..., Any]:
        """``Tensor.gradient`` of ``f``'s result with respect to the arguments ``argnums``."""

        def gradient(*args: Any) -> tuple[Any, ...]:
            leaves: list[Any] = []
            _map([args[i] for i in argnums], leaves.append)
            grads = iter([self._track(g) for g in f(*args).gradient(*leaves)])
            return tuple(_map(args[i], lambda _: next(grads)) for i in argnums)

        return gradient


def tinygrad() -> TinygradAdapter:
    """The tinygrad adapter on the CPU (makes ``CPU`` tinygrad's default device).

    Example:
        >>> a = tinygrad()
        >>> y = a.apply("multiply", a.from_numpy(np.arange(3.0)), 2.0)
        >>> a.is_pending(y), a.to_numpy(y).tolist()
        (True, [0.0, 2.0, 4.0])
    """
    if Device.DEFAULT != "CPU":
        DEV.value = "CPU"  # creation functions (arange, eye, ...) take no device
    return TinygradAdapter()
