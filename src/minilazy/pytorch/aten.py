"""From aten ops to minilazy ops: the table, read top to bottom.

:data:`ATEN` maps an aten op's name (``"add"``, or ``"sum.default"`` where one overload needs
its own rule) to its *rule* (:mod:`minilazy.pytorch.calls` says what a rule receives):
elementwise ops, reductions and products, creation and layout here, the neural-network layers
and their backward ops in :mod:`minilazy.pytorch.layers`, views in
:mod:`minilazy.pytorch.views`. In-place ops (``add_``) and ``out=`` variants use the rule of
their functional op; ``_foreach_*`` ops run their op on each element (the dispatcher does both).
An aten op with no rule is an error naming it, never a wrong value.

Arithmetic computes in the result's dtype (:func:`~minilazy.pytorch.calls.arith`): PyTorch
converts the operands first, so ``int32 + 1.5`` is float32 and computed in float32.

Example:
    >>> len(ATEN) > 100, "addmm" in ATEN, "t" in VIEWS
    (True, True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

import minilazy as ml
from minilazy.pytorch.calls import (
    Call,
    Value,
    along,
    arith,
    assign,
    compare,
    dims,
    span,
    to,
)
from minilazy.pytorch.layers import LAYERS, gelu
from minilazy.pytorch.views import VIEWS


def _reduce(f: Callable[..., ml.Tensor]) -> Callable[..., Value]:
    """A reduction over ``dim`` (all axes when none), computed in the result's dtype."""
    def rule(c: Call, x: ml.Tensor, dim: Any = None, keepdim: bool = False,
             *rest: Any) -> Value:
        return f(*to(c.dtype, x), axis=dims(dim, x.ndim), keepdims=bool(keepdim))
    return rule



# -- elementwise -------------------------------------------------------------------------------

def _add(c: Call, x: Value, y: Value, alpha: Value = 1) -> Value:
    x, y = to(c.dtype, x, y)
    return x + (y if alpha == 1 else y * alpha)


def _sub(c: Call, x: Value, y: Value, alpha: Value = 1) -> Value:
    bools = [isinstance(v, bool) or getattr(v, "dtype", None) == ml.bool for v in (x, y)]
    if all(bools):  # PyTorch's CPU kernel checks this, its meta kernel does not
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if any(bools):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")
    x, y = to(c.dtype, x, y)
    return x - (y if alpha == 1 else y * alpha)


def _div(c: Call, x: Value, y: Value, rounding_mode: str | None = None) -> Value:
    if rounding_mode is None:
        x, y = to(c.dtype, x, y)
        return x / y
    x, y = to(c.dtype, x, y)
    if rounding_mode == "floor":
        return ml.floor_divide(x, y) if c.dtype.kind in "iu" else ml.floor(x / y)
    if c.dtype.kind in "iu":  # truncation: floor, plus one where the signs differ and it is inexact
        q = ml.floor_divide(x, y)
        return q + ml.astype(((x % y) != 0) & ((x < 0) != (y < 0)), c.dtype)
    return ml.trunc(x / y)


def _clamp(c: Call, x: Value, lo: Value = None, hi: Value = None) -> Value:
    x, lo, hi = to(c.dtype, x, lo, hi)
    return ml.clip(x, lo, hi)


def _where(c: Call, cond: Value, x: Value, y: Value) -> Value:
    return ml.where(cond, *to(c.dtype, x, y))

ELEMENTWISE: dict[str, Callable[..., Value]] = {
    "add": _add, "sub": _sub, "rsub": lambda c, x, y, alpha=1: _sub(c, y, x, alpha),
    "mul": arith(lambda x, y: x * y), "div": _div,
    "floor_divide": arith(ml.floor_divide), "remainder": arith(ml.remainder),
    "pow": arith(lambda x, y: x ** y), "neg": arith(ml.negative), "abs": arith(ml.abs),
    "exp": arith(ml.exp), "log": arith(ml.log), "log1p": arith(ml.log1p),
    "expm1": arith(ml.expm1), "sqrt": arith(ml.sqrt), "rsqrt": arith(lambda x: 1 / ml.sqrt(x)),
    "reciprocal": arith(lambda x: 1 / x), "sin": arith(ml.sin), "cos": arith(ml.cos),
    "tanh": arith(ml.tanh), "sigmoid": arith(ml.sigmoid), "sign": arith(ml.sign),
    "sgn": arith(ml.sign),
    "floor": arith(ml.floor), "ceil": arith(ml.ceil), "trunc": arith(ml.trunc),
    "round": arith(ml.round), "relu": arith(lambda x: ml.maximum(x, 0)),
    "silu": arith(lambda x: x * ml.sigmoid(x)), "gelu": gelu,
    "leaky_relu": arith(lambda x, slope=0.01: ml.where(x > 0, x, x * slope)),
    "clamp": _clamp, "clamp_min": lambda c, x, lo: _clamp(c, x, lo),
    "clamp_max": lambda c, x, hi: _clamp(c, x, None, hi),
    "maximum": arith(ml.maximum), "minimum": arith(ml.minimum),
    "where": _where, "masked_fill": lambda c, x, mask, v: _where(c, mask, v, x),
    "lerp": arith(lambda x, end, w: x + w * (end - x)),
    "addcmul": arith(lambda x, a, b, value=1: x + value * a * b),
    "addcdiv": arith(lambda x, a, b, value=1: x + value * a / b),
    "eq": compare(ml.equal), "ne": compare(ml.not_equal), "lt": compare(ml.less),
    "le": compare(ml.less_equal), "gt": compare(ml.greater), "ge": compare(ml.greater_equal),
    "logical_not": lambda c, x: ml.logical_not(x), "logical_and": arith(ml.logical_and),
    "logical_or": arith(ml.logical_or), "isnan": lambda c, x: ml.isnan(x),
    "bitwise_not": arith(ml.bitwise_invert), "bitwise_and": arith(ml.bitwise_and),
    "bitwise_or": arith(ml.bitwise_or), "bitwise_xor": arith(ml.bitwise_xor),
    "logical_xor": lambda c, x, y: ml.logical_xor(x, y), "atan2": arith(ml.atan2),
    "isinf": lambda c, x: ml.isinf(x), "isfinite": lambda c, x: ml.isfinite(x),
    "log2": arith(ml.log2), "log10": arith(ml.log10), "tan": arith(ml.tan),
    "asin": arith(ml.asin), "acos": arith(ml.acos), "atan": arith(ml.atan),
    "sinh": arith(ml.sinh), "cosh": arith(ml.cosh), "asinh": arith(ml.asinh),
    "acosh": arith(ml.acosh), "atanh": arith(ml.atanh), "square": arith(ml.square),
    "fmod": arith(lambda x, y: x - ml.trunc(x / y) * y if x.dtype.kind == "f" else
                  ml.where((x % y != 0) & ((x < 0) != (y < 0)), x % y - y, x % y)),
}

# -- reductions and products -------------------------------------------------------------------


def _var(f: Callable[..., ml.Tensor]) -> Callable[..., Value]:
    def rule(c: Call, x: ml.Tensor, dim: Any = None, correction: Value = None,
             keepdim: bool = False) -> Value:
        return f(*to(c.dtype, x), axis=dims(dim, x.ndim), keepdims=bool(keepdim),
                 correction=1 if correction is None else correction)
    return rule


def _nonempty(name: str) -> Callable[..., None]:
    """The check of a reduction with no identity (max, argmax): over no elements, an error.

    As PyTorch's CPU kernels raise it; its meta kernels raise another type, or nothing.
    """
    def check(x: Any, dim: Any = None, *rest: Any) -> None:
        if x.numel() == 0:
            axes = dims(dim, x.ndim)
            if axes is None:
                kind = IndexError if name.startswith("arg") else RuntimeError
                raise kind(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
            for d in axes:
                if x.shape[d] == 0:
                    raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero "
                                     "size.")
    return check


# Checks an op's arguments get before its meta kernel runs: where PyTorch's eager kernels raise
# and its meta kernels do not (or raise another type).
CHECKS: dict[str, Callable[..., None]] = {
    name: _nonempty(name) for name in ("max", "min", "amax", "amin", "argmax", "argmin")}


def _max_dim(f: Callable[..., ml.Tensor], arg: Callable[..., ml.Tensor]) -> Callable[..., Value]:
    def rule(c: Call, x: ml.Tensor, dim: int, keepdim: bool = False) -> Value:
        return f(x, axis=dim, keepdims=keepdim), arg(x, axis=dim, keepdims=keepdim)
    return rule


def _vector_norm(c: Call, x: ml.Tensor, ord: Value = 2, dim: Any = None, keepdim: bool = False,
                 dtype: Any = None) -> Value:
    a = ml.abs(to(c.dtype, x)[0])
    axis, keep = dims(dim, x.ndim), bool(keepdim)
    if ord == float("inf"):
        return ml.max(a, axis=axis, keepdims=keep)
    if ord == 2:
        return ml.sqrt(ml.sum(a * a, axis=axis, keepdims=keep))
    return ml.sum(a ** ord, axis=axis, keepdims=keep) ** (1.0 / ord)


def _addmm(c: Call, x: Value, a: ml.Tensor, b: ml.Tensor, beta: Value = 1,
           alpha: Value = 1) -> Value:
    x, a, b = to(c.dtype, x, a, b)
    ab = a @ b if alpha == 1 else (a @ b) * alpha
    return ab if beta == 0 else ab + (x if beta == 1 else x * beta)


REDUCTIONS: dict[str, Callable[..., Value]] = {
    "sum": _reduce(ml.sum), "mean": _reduce(ml.mean), "prod": _reduce(ml.prod),
    # these overloads take (self, dtype): no dim
    "sum.default": lambda c, x, dtype=None: ml.sum(to(c.dtype, x)[0]),
    "mean.default": lambda c, x, dtype=None: ml.mean(to(c.dtype, x)[0]),
    "prod.default": lambda c, x, dtype=None: ml.prod(to(c.dtype, x)[0]),
    "amax": _reduce(ml.max), "amin": _reduce(ml.min),
    "max": _reduce(ml.max), "min": _reduce(ml.min),
    "any": _reduce(ml.any), "all": _reduce(ml.all),
    "logsumexp": _reduce(ml.logsumexp),
    "max.dim": _max_dim(ml.max, ml.argmax), "min.dim": _max_dim(ml.min, ml.argmin),
    "argmax": lambda c, x, dim=None, keepdim=False: ml.argmax(x, axis=dim, keepdims=keepdim),
    "argmin": lambda c, x, dim=None, keepdim=False: ml.argmin(x, axis=dim, keepdims=keepdim),
    "var": _var(ml.var), "std": _var(ml.std), "linalg_vector_norm": _vector_norm,
    "cumsum": lambda c, x, dim, dtype=None: ml.cumulative_sum(to(c.dtype, x)[0], axis=dim),
    "mm": arith(ml.matmul), "bmm": arith(ml.matmul), "dot": arith(ml.matmul),
    "mv": arith(ml.matmul), "addmm": _addmm, "baddbmm": _addmm,
}

# -- creation, copies and layout ---------------------------------------------------------------


def _full(c: Call, value: Value) -> ml.Tensor:
    return ml.full(c.shape, to(c.dtype, value)[0], dtype=c.dtype)


def _cat(c: Call, xs: Sequence[ml.Tensor], dim: int = 0) -> ml.Tensor:
    xs = [x for x in to(c.dtype, *xs) if x.shape != (0,)]  # torch skips legacy empty tensors
    return ml.concat(xs, axis=dim % len(c.shape)) if xs else ml.zeros(c.shape, dtype=c.dtype)


def _pad(c: Call, x: ml.Tensor, pad: Sequence[int], value: Value = 0) -> ml.Tensor:
    """``constant_pad_nd``: (left, right) pairs from the last axis back; negative crops."""
    out = ml.full(c.shape, value, dtype=c.dtype)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for i in range(len(pad) // 2):
        axis, lo, hi = x.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]
        n = x.shape[axis]
        src[axis] = slice(max(-lo, 0), n - max(-hi, 0))
        dst[axis] = slice(max(lo, 0), max(lo, 0) + src[axis].stop - src[axis].start)
    return assign(out, tuple(dst), x[tuple(src)])


def _index(c: Call, x: ml.Tensor, indices: Sequence[ml.Tensor | None]) -> ml.Tensor:
    y: ml.Tensor = x[tuple(slice(None) if i is None else i for i in indices)]
    return y


def _index_put(c: Call, x: ml.Tensor, indices: Sequence[ml.Tensor | None], values: Value,
               accumulate: bool = False) -> ml.Tensor:
    if accumulate:
        raise NotImplementedError("minilazy.pytorch: index_put with accumulate=True")
    key = tuple(slice(None) if i is None else i for i in indices)
    if len(key) == 1 and isinstance(key[0], ml.Tensor) and key[0].dtype == ml.bool:
        mask = key[0]  # x[mask] = v, as where(mask, v, x): its shape is static
        mask = ml.reshape(mask, mask.shape + (1,) * (x.ndim - mask.ndim))
        return ml.where(mask, *to(x.dtype, values, x))
    return assign(x, key, values)


def _slice_backward(c: Call, g: ml.Tensor, sizes: Sequence[int], dim: int, start: int | None,
                    end: int | None, step: int) -> ml.Tensor:
    key = along(len(sizes), dim, span(sizes[dim], start, end, step))
    return assign(ml.zeros(tuple(sizes), dtype=g.dtype), key, g)


def _select_backward(c: Call, g: ml.Tensor, sizes: Sequence[int], dim: int,
                     index: int) -> ml.Tensor:
    return assign(ml.zeros(tuple(sizes), dtype=g.dtype), along(len(sizes), dim, index), g)


def _to_copy(c: Call, x: ml.Tensor, *rest: Any) -> Value:
    return to(c.dtype, x)[0]


def _copy(c: Call, x: ml.Tensor, src: Value, non_blocking: bool = False) -> ml.Tensor:
    return ml.broadcast_to(to(c.dtype, src)[0], c.shape) if isinstance(src, ml.Tensor) \
        else _full(c, src)


LAYOUT: dict[str, Callable[..., Value]] = {
    "clone": lambda c, x, memory_format=None: ml.asarray(x, copy=True),
    "lift_fresh": lambda c, x: x, "_to_copy": _to_copy, "copy": _copy,
    "_unsafe_view": lambda c, x, size: ml.reshape(x, c.shape),
    "zero": lambda c, x: ml.zeros(c.shape, dtype=c.dtype),
    "fill": lambda c, x, v: _copy(c, x, v),
    "empty_like": lambda c, *a, **k: _full(c, 0), "zeros_like": lambda c, *a, **k: _full(c, 0),
    "ones_like": lambda c, *a, **k: _full(c, 1),
    "full_like": lambda c, x, value, *rest: _full(c, value),
    "new_empty": lambda c, *a: _full(c, 0), "new_empty_strided": lambda c, *a: _full(c, 0),
    "new_zeros": lambda c, *a: _full(c, 0), "new_ones": lambda c, *a: _full(c, 1),
    "new_full": lambda c, x, size, value, *rest: _full(c, value),
    "cat": _cat, "constant_pad_nd": _pad,
    "flip": lambda c, x, dims: ml.flip(x, axis=tuple(dims)),
    "roll": lambda c, x, shifts, dims=(): ml.roll(x, tuple(shifts), axis=tuple(dims) or None),
    "repeat": lambda c, x, reps: ml.tile(x, tuple(reps)),
    "tril": lambda c, x, k=0: ml.tril(x, k=k), "triu": lambda c, x, k=0: ml.triu(x, k=k),
    "index": _index, "index_put": _index_put,
    "index_select": lambda c, x, dim, i: ml.take(x, i, axis=dim % max(x.ndim, 1)),
    "gather": lambda c, x, dim, i, sparse_grad=False: ml.take_along_axis(x, i, axis=dim),
    "slice_backward": _slice_backward, "select_backward": _select_backward,
    "expand_copy": lambda c, x, size, implicit=False: ml.broadcast_to(x, c.shape),
}

ATEN: dict[str, Callable[..., Any]] = {**ELEMENTWISE, **REDUCTIONS, **LAYOUT, **LAYERS}


def _decompositions() -> dict[Any, Callable[..., Any]]:
    """PyTorch's Python decompositions of aten ops into other aten ops (``torch._decomp``)."""
    from torch._decomp import decomposition_table  # about 0.3 s to import: on the first miss

    table: dict[Any, Callable[..., Any]] = decomposition_table
    return table


class Aten:
    """What is known of one aten overload, worked out once: its rule and how it writes.

    Example:
        >>> op = Aten.of(torch.ops.aten.add_.Tensor)
        >>> op.name, op.inplace, op.rule is ATEN["add"]
        ('add', True, True)
    """

    __slots__ = ("check", "decomposition", "defaults", "func", "inplace", "name", "names",
                 "outs", "rule", "scalars", "view")
    cache: dict[Any, Aten] = {}

    def __init__(self, func: torch._ops.OpOverload[..., Any]) -> None:
        schema, packet = func._schema, func.overloadpacket.__name__
        first = schema.arguments[0].alias_info if schema.arguments else None
        self.func = func
        self.inplace = packet.endswith("_") and first is not None and first.is_write
        self.name = packet[:-1] if self.inplace else packet
        self.names = [a.name for a in schema.arguments]
        self.defaults = [a.default_value if a.has_default_value() else None
                         for a in schema.arguments]
        self.outs = [i for i, a in enumerate(schema.arguments) if a.is_out]
        # where a Python number counts by its type alone: a Scalar, or a number passed for a
        # Tensor (a "wrapped number"); its value never changes a result's shape or dtype
        self.scalars = frozenset(i for i, a in enumerate(schema.arguments) if str(a.type) in (
            "Scalar", "Optional[Scalar]", "Tensor", "Optional[Tensor]"))
        aten = func.namespace == "aten"  # a prims op named as an aten one is not that op
        self.view = None if self.inplace or self.outs or not aten else VIEWS.get(self.name)
        self.rule = (ATEN.get(f"{self.name}.{func._overloadname}") or ATEN.get(self.name)) \
            if aten else None
        self.check = CHECKS.get(self.name)
        # no rule here: PyTorch's own decomposition into ops that have one, where it has one
        self.decomposition = None if self.rule or self.view else _decompositions().get(func)

    @classmethod
    def of(cls, func: torch._ops.OpOverload[..., Any]) -> Aten:
        """The overload's entry (made on its first call)."""
        op = cls.cache.get(func)
        if op is None:
            op = cls.cache[func] = cls(func)
        return op

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """The arguments in schema order, defaults filled in."""
        if not kwargs:
            return [*args, *self.defaults[len(args):]]
        return list(args) + [kwargs.get(n, d) for n, d in
                             zip(self.names[len(args):], self.defaults[len(args):])]


def foreach(func: torch._ops.OpOverload, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
    """``_foreach_op(lists...)``: ``op`` on each element (torch.optim's foreach updates).

    Example:
        >>> out = foreach(torch.ops.aten._foreach_add.Scalar, ([torch.ones(1)] * 2, 1), {})
        >>> [t.tolist() for t in out]
        [[2.0], [2.0]]
    """
    name = func.overloadpacket.__name__[len("_foreach_"):]
    each = getattr(torch.ops.aten, name)
    n = next(len(a) for a in args if isinstance(a, list | tuple))
    results = []
    for i in range(n):
        row = [a[i] if isinstance(a, list | tuple) else a for a in args]
        kw = dict(kwargs)
        if name.startswith(("addcmul", "addcdiv")) and len(row) == 4:
            kw["value"] = row.pop()  # a list of scalars: the element's is the op's value
        results.append(each(*row, **kw))
    return None if name.endswith("_") else results
