"""tinygrad (its ``CPU`` device, kernels compiled by clang) as an implementation under test.

``--lazy-impl=minilazy.conformance.adapters.tinygrad_adapter:tinygrad``.

How tinygrad's laziness maps onto the protocol. Every ``Tensor`` op records a ``UOp`` graph and
runs nothing; ``Tensor.realize(*xs)`` schedules, compiles and runs the kernels that materialise
``xs`` (``sync``), and the barrier realises every live tensor the adapter made (tinygrad has no
``mark_step``). An observation is ``Tensor.numpy()``, tinygrad's own, which runs the graph into
a copy. A tensor is pending while the buffer under its ``UOp`` is unrealised. The only count
tinygrad keeps is ``GlobalCounters.kernel_count``, kernel launches (copies included): capability
``executions``. Gradients are ``Tensor.gradient``, which records the backward graph lazily.

The adapter translates spelling only (``keepdims`` is ``keepdim``, ``concat`` is ``Tensor.cat``,
NumPy dtypes become tinygrad's); it never casts values, picks a dtype or converts an exception.
Ops tinygrad has no function for (``expm1``, ``log1p``, ``atan2``, ``tensordot``) are
unsupported, and their tests skip. ``TINYGRAD_POLICY`` states tinygrad's dtype rules.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from importlib import metadata
from typing import Any

import numpy as np

from minilazy.conformance.adapter import Counters, DtypePolicy
from minilazy.conformance.base import BaseAdapter

try:
    from tinygrad.device import Device
    from tinygrad.dtype import dtypes
    from tinygrad.helpers import DEV, GlobalCounters
    from tinygrad.tensor import Tensor
except ImportError as error:
    raise ImportError("the tinygrad adapter needs tinygrad (`pip install tinygrad`) and, for its "
                      "CPU backend, a C compiler (Debian package `clang`)") from error

NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64")
TO_NUMPY = {getattr(dtypes, n): np.dtype(n) for n in NAMES}
# Weak dtypes (an int tensor times a Python float) materialise as the default ones.
TO_NUMPY.update({dtypes.weakfloat: TO_NUMPY[dtypes.default_float],
                 dtypes.weakint: TO_NUMPY[dtypes.default_int]})
OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "divide": operator.truediv, "floor_divide": operator.floordiv, "remainder": operator.mod,
    "pow": operator.pow, "equal": operator.eq, "not_equal": operator.ne, "less": operator.lt,
    "less_equal": operator.le, "greater": operator.gt, "greater_equal": operator.ge,
    "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
    "bitwise_left_shift": operator.lshift, "bitwise_right_shift": operator.rshift,
    "matmul": operator.matmul}
INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.iadd, "subtract": operator.isub, "multiply": operator.imul,
    "divide": operator.itruediv, "floor_divide": operator.ifloordiv,
    "remainder": operator.imod, "pow": operator.ipow, "bitwise_and": operator.iand,
    "bitwise_or": operator.ior, "bitwise_xor": operator.ixor,
    "bitwise_left_shift": operator.ilshift, "bitwise_right_shift": operator.irshift,
    "matmul": operator.imatmul}
LOGICAL = {"logical_and": operator.and_, "logical_or": operator.or_, "logical_xor": operator.xor}
# tinygrad's dtype rules where they differ from NumPy's and a policy can say so: floats default
# to float32 (Python floats, creation, int / int, the mean of ints, a signed int with uint64), an
# integer with float16 stays float16, and bools do not shift.
TINYGRAD_POLICY = DtypePolicy(
    default_float="float32",
    promotion={f"{i},float16": "float16" for i in ("int16", "uint16", "int32", "uint32", "int64",
                                                    "uint64")},
    unsupported=frozenset({"bitwise_left_shift:bool", "bitwise_right_shift:bool"}))


def _leaves(tree: Any) -> Iterator[Any]:
    """The tensors of ``tree`` (a tensor, or lists, tuples and dicts of them), in order."""
    if isinstance(tree, dict):
        tree = list(tree.values())
    if isinstance(tree, (list, tuple)):
        for item in tree:
            yield from _leaves(item)
    else:
        yield tree


def _rebuild(tree: Any, leaves: Iterator[Any]) -> Any:
    """``tree`` with its tensors replaced, in order, by ``leaves``."""
    if isinstance(tree, dict):
        return {k: _rebuild(v, leaves) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_rebuild(v, leaves) for v in tree)
    return next(leaves)


class TinygradAdapter(BaseAdapter):
    """tinygrad's ``Tensor`` on the ``CPU`` device, as the conformance suite drives it."""

    name, version, namespace = "tinygrad-cpu", metadata.version("tinygrad"), Tensor
    capabilities = frozenset({"executions", "pending", "metadata", "float64", "setitem",
                              "sync", "autodiff"})
    dtype_policy = TINYGRAD_POLICY
    renames = {"negative": "neg", "bitwise_invert": "bitwise_not", "astype": "cast",
               "permute_dims": "permute", "broadcast_to": "expand"}

    def array(self, host: np.ndarray[Any, Any]) -> Any:
        return Tensor(host, device="CPU")  # a lazy copy from the host, run at the next barrier

    def host(self, x: Any) -> Any:
        return x.numpy()

    def realize(self, xs: list[Any]) -> None:
        if xs:
            xs[0].realize(*xs[1:])

    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, Tensor)

    def supports(self, op: str) -> bool:
        return op in OPERATORS or super().supports(op)

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        # A NumPy scalar operand (the suite makes some from 0-d arrays) is a 0-d array.
        args = tuple(self.from_numpy(np.asarray(a)) if isinstance(a, np.generic) else a
                     for a in args)
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        if kwargs.get("dtype") is not None:
            kwargs["dtype"] = getattr(dtypes, np.dtype(kwargs["dtype"]).name)
        for unused in ("device", "copy"):
            kwargs.pop(unused, None)
        if op in OPERATORS:
            return self._track(OPERATORS[op](*args))
        if op in ("var", "std"):
            kwargs.setdefault("correction", 0)
        return super().apply(op, *args, **kwargs)

    # -- ops spelled differently -----------------------------------------------------------------
    def _pair(self, method: str, x1: Any, x2: Any) -> Any:
        """A symmetric binary method, called on whichever operand is a tensor."""
        return getattr(x1, method)(x2) if isinstance(x1, Tensor) else getattr(x2, method)(x1)

    def op_maximum(self, x1: Any, x2: Any) -> Any:
        return self._pair("maximum", x1, x2)

    def op_minimum(self, x1: Any, x2: Any) -> Any:
        return self._pair("minimum", x1, x2)

    def op_logical_and(self, x1: Any, x2: Any) -> Any:
        return self._logical("logical_and", x1, x2)

    def op_logical_or(self, x1: Any, x2: Any) -> Any:
        return self._logical("logical_or", x1, x2)

    def op_logical_xor(self, x1: Any, x2: Any) -> Any:
        return self._logical("logical_xor", x1, x2)

    def _logical(self, op: str, x1: Any, x2: Any) -> Any:
        """A logical op: the bitwise one on the operands' truth values (``cast(bool)``)."""
        return LOGICAL[op](*(x.cast(dtypes.bool) if isinstance(x, Tensor) else bool(x)
                             for x in (x1, x2)))

    def op_astype(self, x: Any, dtype: Any, copy: bool = True) -> Any:
        return x.cast(getattr(dtypes, np.dtype(dtype).name))

    def op_clip(self, x: Any, min: Any = None, max: Any = None) -> Any:
        return x.clip(min, max)

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
        if endpoint:
            return Tensor.linspace(start, stop, num, dtype=dtype)
        return Tensor.linspace(start, stop, num + 1, dtype=dtype)[:num]

    # -- optional methods ------------------------------------------------------------------------
    def inplace(self, op: str, x: Any, other: Any) -> Any:
        return self._track(INPLACE[op](x, other))

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
            leaves = [x for i in argnums for x in _leaves(args[i])]
            grads = iter([self._track(g) for g in f(*args).gradient(*leaves)])
            return tuple(_rebuild(args[i], grads) for i in argnums)

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
