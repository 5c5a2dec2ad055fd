"""From aten ops to minilazy ops: one table, read top to bottom.

:data:`ATEN` maps an aten op's name (``"add"``, or ``"sum.dim_IntList"`` where an overload
needs its own rule) to a *rule*: a function of a :class:`Call` and the op's arguments in the
order of its schema (PyTorch's defaults filled in), minilazy tensors in place of the tensors.
It returns minilazy tensors. The dispatcher (:mod:`minilazy.pytorch.tensor`) has already run
the op on ``meta`` tensors, so a rule reads the result's shape and dtype from the call
(``c.shape``, ``c.dtype``) instead of working PyTorch's rules out again, and casts its result
to that dtype afterwards. In-place ops (``add_``) and ``out=`` factories use the rule of their
functional op; ``_foreach_*`` ops run their op on each element. :data:`VIEWS` maps the ops
whose result is a *view* to a rule returning :class:`View` steps (how to read the view from its
base and how to write it back).

Arithmetic rules compute in the result's dtype (``_to``): PyTorch converts the operands first,
so ``int32 + 1.5`` is float32 and computed in float32.

Example:
    >>> "addmm" in ATEN, "t" in VIEWS
    (True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

import minilazy as ml

Value = Any  # an ml.Tensor or a Python number: what a rule computes with


@dataclass(frozen=True, slots=True)
class View:
    """One step from a tensor to a view of it (``get``), and back (``put``).

    ``put(parent, value)`` is the parent's new value once the view's value is ``value``.

    Example:
        >>> v = View(lambda x: x[0], lambda x, y: _set(x, (0,), y))
        >>> v.put(ml.zeros((2, 2)), ml.ones(2)).tolist()
        [[1.0, 1.0], [0.0, 0.0]]
    """

    get: Callable[[ml.Tensor], ml.Tensor]
    put: Callable[[ml.Tensor, ml.Tensor], ml.Tensor]


class Call:
    """What a rule knows of the op it computes: the meta results, and writes it must make.

    Example:
        >>> c = Call(torch.empty(2, 3, device="meta"), ())
        >>> c.shape, c.dtype
        ((2, 3), dtype('float32'))
    """

    __slots__ = ("metas", "out", "writes")

    def __init__(self, out: Any, metas: Sequence[Any]) -> None:
        self.out, self.metas = out, metas
        self.writes: list[tuple[int, ml.Tensor]] = []  # (argument index, its new value)

    @property
    def shape(self) -> tuple[int, ...]:
        """The (first) result's shape."""
        out = self.out[0] if isinstance(self.out, tuple | list) else self.out
        return tuple(out.shape)

    @property
    def dtype(self) -> Any:
        """The (first) result's dtype, as minilazy's."""
        out = self.out[0] if isinstance(self.out, tuple | list) else self.out
        return ml_dtype(out.dtype)

    @property
    def promoted(self) -> Any:
        """The dtype PyTorch computes a comparison of the first two operands in."""
        return ml_dtype(torch.result_type(*self.metas[:2]))


DTYPES: dict[torch.dtype, Any] = {
    torch.bool: ml.bool, torch.uint8: ml.uint8, torch.int8: ml.int8, torch.int16: ml.int16,
    torch.int32: ml.int32, torch.int64: ml.int64, torch.float16: ml.float16,
    torch.float32: ml.float32, torch.float64: ml.float64, torch.complex64: ml.complex64,
    torch.complex128: ml.complex128}


def ml_dtype(dtype: torch.dtype) -> Any:
    """minilazy's dtype for a torch dtype (``TypeError`` naming it where minilazy has none).

    Example:
        >>> ml_dtype(torch.int32)
        dtype('int32')
    """
    try:
        return DTYPES[dtype]
    except KeyError:
        raise TypeError(f"minilazy.pytorch has no dtype {dtype}") from None


# -- helpers -----------------------------------------------------------------------------------

def _to(dtype: Any, *xs: Value) -> list[Value]:
    """Tensors cast to ``dtype``; Python numbers stay (minilazy types them by the tensor), but
    an integer wraps into an integer ``dtype`` as in PyTorch (``uint8 + -1`` adds 255)."""
    return [ml.astype(x, dtype) if isinstance(x, ml.Tensor) and x.dtype != dtype
            else _wrapped(x, dtype) if type(x) is int and dtype.kind in "iu" else x
            for x in xs]


def _wrapped(x: int, dtype: Any) -> int:
    return int(np.array(x, np.int64).astype(dtype))


def _set(x: ml.Tensor, key: Any, value: Value) -> ml.Tensor:
    """``x`` with ``x[key] = value``, as a new tensor (``x`` itself is unchanged)."""
    y = ml.asarray(x, copy=True)
    y[key] = value
    return y


def _axes(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """aten's ``dim`` (None, an int, a list; empty meaning all) as minilazy's ``axis``."""
    if dim is None or (isinstance(dim, Sequence) and len(dim) == 0):
        return None
    dims = [dim] if isinstance(dim, int) else list(dim)
    return tuple(d % max(ndim, 1) for d in dims)


def _at(ndim: int, dim: int, item: Any) -> tuple[Any, ...]:
    """An index tuple that is ``item`` on axis ``dim`` and everything elsewhere."""
    return (slice(None),) * (dim % max(ndim, 1)) + (item,)


def _slice(n: int, start: int | None, end: int | None, step: int) -> slice:
    return slice(*slice(start, end, step).indices(n))


def _arith(f: Callable[..., Value]) -> Callable[..., Value]:
    """A rule that computes ``f`` on its tensor operands cast to the result's dtype."""
    def rule(c: Call, *args: Any) -> Value:
        return f(*_to(c.dtype, *args))
    return rule


def _compare(f: Callable[[Value, Value], Value]) -> Callable[..., Value]:
    """A comparison, computed in the operands' promoted dtype."""
    return lambda c, x, y: f(*_to(c.promoted, x, y))


def _grad(f: Callable[..., ml.Tensor], primals: Sequence[Value], cotangent: ml.Tensor,
          mask: Sequence[bool]) -> list[ml.Tensor | None]:
    """The vector-Jacobian product of ``f`` for the primals ``mask`` asks for (minilazy's
    autodiff, recorded lazily), None for the others."""
    wanted = [i for i, m in enumerate(mask) if m]
    if not wanted:
        return [None] * len(mask)
    grads = ml.grad(lambda *p: ml.sum(f(*p) * cotangent), argnums=tuple(wanted))(*primals)
    out: list[ml.Tensor | None] = [None] * len(mask)
    for i, g in zip(wanted, grads):
        out[i] = g
    return out


def _reduce(f: Callable[..., ml.Tensor]) -> Callable[..., Value]:
    """A reduction over ``dim`` (all axes when none), computed in the result's dtype."""
    def rule(c: Call, x: ml.Tensor, dim: Any = None, keepdim: bool = False,
             *rest: Any) -> Value:
        return f(*_to(c.dtype, x), axis=_axes(dim, x.ndim), keepdims=bool(keepdim))
    return rule


def _pair(v: Sequence[int] | int) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else (v[0], v[-1]) if len(v) else (1, 1)


# -- elementwise -------------------------------------------------------------------------------

def _add(c: Call, x: Value, y: Value, alpha: Value = 1) -> Value:
    x, y = _to(c.dtype, x, y)
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
    x, y = _to(c.dtype, x, y)
    return x - (y if alpha == 1 else y * alpha)


def _div(c: Call, x: Value, y: Value, rounding_mode: str | None = None) -> Value:
    if rounding_mode is None:
        x, y = _to(c.dtype, x, y)
        return x / y
    x, y = _to(c.dtype, x, y)
    if rounding_mode == "floor":
        return ml.floor_divide(x, y) if c.dtype.kind in "iu" else ml.floor(x / y)
    if c.dtype.kind in "iu":  # truncation: floor, plus one where the signs differ and it is inexact
        q = ml.floor_divide(x, y)
        return q + ml.astype(((x % y) != 0) & ((x < 0) != (y < 0)), c.dtype)
    return ml.trunc(x / y)


def _clamp(c: Call, x: Value, lo: Value = None, hi: Value = None) -> Value:
    x, lo, hi = _to(c.dtype, x, lo, hi)
    return ml.clip(x, lo, hi)


def _where(c: Call, cond: Value, x: Value, y: Value) -> Value:
    return ml.where(cond, *_to(c.dtype, x, y))


def _gelu(c: Call, x: ml.Tensor, approximate: str = "none") -> ml.Tensor:
    return ml.nn.gelu(x, approximate="tanh" if approximate == "tanh" else "none")


ELEMENTWISE: dict[str, Callable[..., Value]] = {
    "add": _add, "sub": _sub, "rsub": lambda c, x, y, alpha=1: _sub(c, y, x, alpha),
    "mul": _arith(lambda x, y: x * y), "div": _div,
    "floor_divide": _arith(ml.floor_divide), "remainder": _arith(ml.remainder),
    "pow": _arith(lambda x, y: x ** y), "neg": _arith(ml.negative), "abs": _arith(ml.abs),
    "exp": _arith(ml.exp), "log": _arith(ml.log), "log1p": _arith(ml.log1p),
    "expm1": _arith(ml.expm1), "sqrt": _arith(ml.sqrt), "rsqrt": _arith(lambda x: 1 / ml.sqrt(x)),
    "reciprocal": _arith(lambda x: 1 / x), "sin": _arith(ml.sin), "cos": _arith(ml.cos),
    "tanh": _arith(ml.tanh), "sigmoid": _arith(ml.sigmoid), "sign": _arith(ml.sign),
    "floor": _arith(ml.floor), "ceil": _arith(ml.ceil), "trunc": _arith(ml.trunc),
    "round": _arith(ml.round), "relu": _arith(lambda x: ml.maximum(x, 0)),
    "silu": _arith(lambda x: x * ml.sigmoid(x)), "gelu": _gelu,
    "leaky_relu": _arith(lambda x, slope=0.01: ml.where(x > 0, x, x * slope)),
    "clamp": _clamp, "clamp_min": lambda c, x, lo: _clamp(c, x, lo),
    "clamp_max": lambda c, x, hi: _clamp(c, x, None, hi),
    "maximum": _arith(ml.maximum), "minimum": _arith(ml.minimum),
    "where": _where, "masked_fill": lambda c, x, mask, v: _where(c, mask, v, x),
    "lerp": _arith(lambda x, end, w: x + w * (end - x)),
    "addcmul": _arith(lambda x, a, b, value=1: x + value * a * b),
    "addcdiv": _arith(lambda x, a, b, value=1: x + value * a / b),
    "eq": _compare(ml.equal), "ne": _compare(ml.not_equal), "lt": _compare(ml.less),
    "le": _compare(ml.less_equal), "gt": _compare(ml.greater), "ge": _compare(ml.greater_equal),
    "logical_not": lambda c, x: ml.logical_not(x), "logical_and": _arith(ml.logical_and),
    "logical_or": _arith(ml.logical_or), "isnan": lambda c, x: ml.isnan(x),
    "bitwise_not": _arith(ml.bitwise_invert),
}

# -- reductions and products -------------------------------------------------------------------


def _var(f: Callable[..., ml.Tensor]) -> Callable[..., Value]:
    def rule(c: Call, x: ml.Tensor, dim: Any = None, correction: Value = None,
             keepdim: bool = False) -> Value:
        return f(*_to(c.dtype, x), axis=_axes(dim, x.ndim), keepdims=bool(keepdim),
                 correction=1 if correction is None else correction)
    return rule


def _max_dim(f: Callable[..., ml.Tensor], arg: Callable[..., ml.Tensor]) -> Callable[..., Value]:
    def rule(c: Call, x: ml.Tensor, dim: int, keepdim: bool = False) -> Value:
        return f(x, axis=dim, keepdims=keepdim), arg(x, axis=dim, keepdims=keepdim)
    return rule


def _vector_norm(c: Call, x: ml.Tensor, ord: Value = 2, dim: Any = None, keepdim: bool = False,
                 dtype: Any = None) -> Value:
    a = ml.abs(_to(c.dtype, x)[0])
    axis, keep = _axes(dim, x.ndim), bool(keepdim)
    if ord == float("inf"):
        return ml.max(a, axis=axis, keepdims=keep)
    if ord == 2:
        return ml.sqrt(ml.sum(a * a, axis=axis, keepdims=keep))
    return ml.sum(a ** ord, axis=axis, keepdims=keep) ** (1.0 / ord)


def _addmm(c: Call, x: Value, a: ml.Tensor, b: ml.Tensor, beta: Value = 1,
           alpha: Value = 1) -> Value:
    x, a, b = _to(c.dtype, x, a, b)
    ab = a @ b if alpha == 1 else (a @ b) * alpha
    return ab if beta == 0 else ab + (x if beta == 1 else x * beta)


REDUCTIONS: dict[str, Callable[..., Value]] = {
    "sum": _reduce(ml.sum), "sum.default": lambda c, x, dtype=None: ml.sum(_to(c.dtype, x)[0]),
    "mean.default": lambda c, x, dtype=None: ml.mean(_to(c.dtype, x)[0]),
    "prod.default": lambda c, x, dtype=None: ml.prod(_to(c.dtype, x)[0]), "mean": _reduce(ml.mean), "prod": _reduce(ml.prod),
    "amax": _reduce(ml.max), "amin": _reduce(ml.min), "max": _reduce(ml.max),
    "min": _reduce(ml.min), "any": _reduce(ml.any), "all": _reduce(ml.all),
    "logsumexp": _reduce(ml.logsumexp),
    "max.dim": _max_dim(ml.max, ml.argmax), "min.dim": _max_dim(ml.min, ml.argmin),
    "argmax": lambda c, x, dim=None, keepdim=False: ml.argmax(x, axis=dim, keepdims=keepdim),
    "argmin": lambda c, x, dim=None, keepdim=False: ml.argmin(x, axis=dim, keepdims=keepdim),
    "var": _var(ml.var), "std": _var(ml.std), "linalg_vector_norm": _vector_norm,
    "cumsum": lambda c, x, dim, dtype=None: ml.cumulative_sum(_to(c.dtype, x)[0], axis=dim),
    "mm": _arith(ml.matmul), "bmm": _arith(ml.matmul), "dot": _arith(ml.matmul),
    "mv": _arith(ml.matmul), "addmm": _addmm, "baddbmm": _addmm,
}

# -- creation, copies and layout ---------------------------------------------------------------


def _full(c: Call, value: Value) -> ml.Tensor:
    return ml.full(c.shape, _to(c.dtype, value)[0], dtype=c.dtype)


def _cat(c: Call, xs: Sequence[ml.Tensor], dim: int = 0) -> ml.Tensor:
    xs = [x for x in _to(c.dtype, *xs) if x.shape != (0,)]  # torch skips legacy empty tensors
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
    return _set(out, tuple(dst), x[tuple(src)])


def _index(c: Call, x: ml.Tensor, indices: Sequence[ml.Tensor | None]) -> ml.Tensor:
    return x[tuple(slice(None) if i is None else i for i in indices)]


def _index_put(c: Call, x: ml.Tensor, indices: Sequence[ml.Tensor | None], values: Value,
               accumulate: bool = False) -> ml.Tensor:
    if accumulate:
        raise NotImplementedError("minilazy.pytorch: index_put with accumulate=True")
    key = tuple(slice(None) if i is None else i for i in indices)
    if len(key) == 1 and isinstance(key[0], ml.Tensor) and key[0].dtype == ml.bool:
        mask = key[0]  # x[mask] = v, as where(mask, v, x): its shape is static
        mask = ml.reshape(mask, mask.shape + (1,) * (x.ndim - mask.ndim))
        return ml.where(mask, *_to(x.dtype, values, x))
    return _set(x, key, values)


def _slice_backward(c: Call, g: ml.Tensor, sizes: Sequence[int], dim: int, start: int | None,
                    end: int | None, step: int) -> ml.Tensor:
    key = _at(len(sizes), dim, _slice(sizes[dim], start, end, step))
    return _set(ml.zeros(tuple(sizes), dtype=g.dtype), key, g)


def _select_backward(c: Call, g: ml.Tensor, sizes: Sequence[int], dim: int,
                     index: int) -> ml.Tensor:
    return _set(ml.zeros(tuple(sizes), dtype=g.dtype), _at(len(sizes), dim, index), g)


def _to_copy(c: Call, x: ml.Tensor, *rest: Any) -> ml.Tensor:
    return _to(c.dtype, x)[0]


def _copy(c: Call, x: ml.Tensor, src: Value, non_blocking: bool = False) -> ml.Tensor:
    return ml.broadcast_to(_to(c.dtype, src)[0], c.shape) if isinstance(src, ml.Tensor) \
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

# -- neural network layers and their backward --------------------------------------------------


def _conv(c: Call, x: ml.Tensor, w: ml.Tensor, b: ml.Tensor | None, stride: Sequence[int],
          padding: Sequence[int], dilation: Sequence[int], transposed: bool,
          output_padding: Sequence[int], groups: int) -> ml.Tensor:
    if transposed or x.ndim != 4:
        raise NotImplementedError("minilazy.pytorch: convolution is 2-D and not transposed")
    return ml.nn.conv2d(x, w, b, stride=_pair(stride), padding=_pair(padding),
                        dilation=_pair(dilation), groups=groups)


def _conv_backward(c: Call, g: ml.Tensor, x: ml.Tensor, w: ml.Tensor, bias_sizes: Any,
                   stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                   transposed: bool, output_padding: Sequence[int], groups: int,
                   mask: Sequence[bool]) -> tuple[ml.Tensor | None, ...]:
    f = lambda x_, w_: _conv(c, x_, w_, None, stride, padding, dilation, transposed,  # noqa: E731
                             output_padding, groups)
    dx, dw = _grad(f, (x, w), g, mask[:2])
    return dx, dw, ml.sum(g, axis=(0, 2, 3)) if mask[2] else None


def _max_pool(c: Call, x: ml.Tensor, kernel: Sequence[int], stride: Sequence[int] = (),
              padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,),
              ceil_mode: bool = False) -> Any:
    if _pair(dilation) != (1, 1) or ceil_mode:
        raise NotImplementedError("minilazy.pytorch: max_pool2d with dilation or ceil_mode")
    y = ml.nn.max_pool2d(x, _pair(kernel), _pair(stride or kernel), _pair(padding))
    return y, None  # the indices are not computed: see UNAVAILABLE in tensor.py


def _max_pool_backward(c: Call, g: ml.Tensor, x: ml.Tensor, kernel: Sequence[int],
                       stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                       ceil_mode: bool, indices: Any) -> ml.Tensor | None:
    return _grad(lambda x_: _max_pool(c, x_, kernel, stride, padding, dilation, ceil_mode)[0],
                 (x,), g, (True,))[0]


def _avg_pool(c: Call, x: ml.Tensor, kernel: Sequence[int], stride: Sequence[int] = (),
              padding: Sequence[int] = (0,), ceil_mode: bool = False,
              count_include_pad: bool = True, divisor: int | None = None) -> ml.Tensor:
    if ceil_mode or not count_include_pad or divisor is not None:
        raise NotImplementedError("minilazy.pytorch: avg_pool2d with ceil_mode, "
                                  "count_include_pad=False or divisor_override")
    return ml.nn.avg_pool2d(x, _pair(kernel), _pair(stride or kernel), _pair(padding))


def _avg_pool_backward(c: Call, g: ml.Tensor, x: ml.Tensor, *args: Any) -> ml.Tensor | None:
    return _grad(lambda x_: _avg_pool(c, x_, *args), (x,), g, (True,))[0]


def _layer_norm(c: Call, x: ml.Tensor, shape: Sequence[int], w: ml.Tensor | None,
                b: ml.Tensor | None, eps: float) -> tuple[ml.Tensor, ...]:
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mean = ml.mean(x, axis=axes, keepdims=True)
    rstd = 1 / ml.sqrt(ml.var(x, axis=axes, keepdims=True) + eps)
    y = (x - mean) * rstd
    y = y if w is None else y * w
    return (y if b is None else y + b), mean, rstd


def _layer_norm_backward(c: Call, g: ml.Tensor, x: ml.Tensor, shape: Sequence[int],
                         mean: ml.Tensor, rstd: ml.Tensor, w: ml.Tensor | None,
                         b: ml.Tensor | None, mask: Sequence[bool]) -> tuple[Any, ...]:
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    batch = tuple(range(x.ndim - len(shape)))
    xhat = (x - mean) * rstd
    gw = g if w is None else g * w
    dx = rstd * (gw - ml.mean(gw, axis=axes, keepdims=True)
                 - xhat * ml.mean(gw * xhat, axis=axes, keepdims=True))
    dw = ml.sum(g * xhat, axis=batch) if mask[1] and w is not None else None
    db = ml.sum(g, axis=batch) if mask[2] and b is not None else None
    return dx if mask[0] else None, dw, db


def _channels(x: ml.Tensor, v: ml.Tensor) -> ml.Tensor:
    """A per-channel vector shaped to broadcast over ``x`` (channels on axis 1)."""
    return ml.reshape(v, (1, -1) + (1,) * (x.ndim - 2))


def _batch_norm(c: Call, x: ml.Tensor, w: ml.Tensor | None, b: ml.Tensor | None,
                running_mean: ml.Tensor | None, running_var: ml.Tensor | None, training: bool,
                momentum: float, eps: float) -> tuple[ml.Tensor, ...]:
    axes = (0,) + tuple(range(2, x.ndim))
    if training:
        mean, var = ml.mean(x, axis=axes), ml.var(x, axis=axes)
        n = x.size // x.shape[1]
        if running_mean is not None:  # the layer's buffers, updated in place by the kernel
            c.writes.append((3, running_mean * (1 - momentum) + mean * momentum))
        if running_var is not None:
            unbiased = var * (n / max(n - 1, 1))
            c.writes.append((4, running_var * (1 - momentum) + unbiased * momentum))
    else:
        assert running_mean is not None and running_var is not None
        mean, var = running_mean, running_var
    invstd = 1 / ml.sqrt(var + eps)
    y = (x - _channels(x, mean)) * _channels(x, invstd)
    y = y if w is None else y * _channels(x, w)
    y = y if b is None else y + _channels(x, b)
    if c.out[1].shape[0] == 0:  # statistics PyTorch's kernel does not return (some eval modes)
        mean = invstd = ml.zeros((0,), dtype=x.dtype)
    return y, mean, invstd


def _batch_norm_backward(c: Call, g: ml.Tensor, x: ml.Tensor, w: ml.Tensor | None,
                         running_mean: ml.Tensor | None, running_var: ml.Tensor | None,
                         save_mean: ml.Tensor | None, save_invstd: ml.Tensor | None,
                         train: bool, eps: float, mask: Sequence[bool]) -> tuple[Any, ...]:
    axes = (0,) + tuple(range(2, x.ndim))
    if train:
        assert save_mean is not None and save_invstd is not None
        mean, invstd = save_mean, save_invstd
    else:
        assert running_mean is not None and running_var is not None
        mean, invstd = running_mean, 1 / ml.sqrt(running_var + eps)
    xhat = (x - _channels(x, mean)) * _channels(x, invstd)
    gw = g if w is None else g * _channels(x, w)
    if train:
        dx = _channels(x, invstd) * (gw - ml.mean(gw, axis=axes, keepdims=True)
                                     - xhat * ml.mean(gw * xhat, axis=axes, keepdims=True))
    else:
        dx = gw * _channels(x, invstd)
    dw = ml.sum(g * xhat, axis=axes) if mask[1] else None
    db = ml.sum(g, axis=axes) if mask[2] else None
    return dx if mask[0] else None, dw, db


def _classes(x: ml.Tensor) -> int:
    return 1 if x.ndim >= 2 else 0


def _nll_parts(x: ml.Tensor, target: ml.Tensor, weight: ml.Tensor | None,
               ignore: int) -> tuple[ml.Tensor, ml.Tensor]:
    """The one-hot of each target over the class axis, and each target's weight (0 where
    ignored)."""
    axis = _classes(x)
    keep = target != ignore
    ids = ml.reshape(ml.arange(x.shape[axis]), (-1,) + (1,) * (x.ndim - axis - 1))
    onehot = ml.expand_dims(target, axis=axis) == ids
    w = ml.astype(keep, x.dtype)
    if weight is not None:
        w = w * ml.take(weight, ml.where(keep, target, 0), axis=0)
    return onehot, w


def _nll_loss(c: Call, x: ml.Tensor, target: ml.Tensor, weight: ml.Tensor | None,
              reduction: int, ignore: int) -> tuple[ml.Tensor, ml.Tensor]:
    onehot, w = _nll_parts(x, target, weight, ignore)
    picked = ml.sum(ml.where(onehot, x, 0), axis=_classes(x))
    losses, total = -picked * w, ml.sum(w)
    if reduction == 0:
        return losses, total
    return (ml.sum(losses) / total if reduction == 1 else ml.sum(losses)), total


def _nll_loss_backward(c: Call, g: ml.Tensor, x: ml.Tensor, target: ml.Tensor,
                       weight: ml.Tensor | None, reduction: int, ignore: int,
                       total: ml.Tensor) -> ml.Tensor:
    onehot, w = _nll_parts(x, target, weight, ignore)
    scale = -w * g if reduction == 0 else -w * (g / total if reduction == 1 else g)
    return ml.where(onehot, ml.expand_dims(scale, axis=_classes(x)), 0)


def _mse(c: Call, x: ml.Tensor, y: ml.Tensor, reduction: int = 1) -> ml.Tensor:
    d = (x - y) * (x - y)
    return d if reduction == 0 else ml.mean(d) if reduction == 1 else ml.sum(d)


def _mse_backward(c: Call, g: ml.Tensor, x: ml.Tensor, y: ml.Tensor,
                  reduction: int = 1) -> ml.Tensor:
    scale = 2 / x.size if reduction == 1 else 2
    return ml.broadcast_to((x - y) * (g * scale), c.shape)


def _dropout(c: Call, x: ml.Tensor, p: float, train: bool | None) -> tuple[ml.Tensor, ...]:
    if not train or p == 0:
        return x, ml.ones(x.shape, dtype=ml.bool)
    mask = _bernoulli(1 - p, x.shape)
    return ml.where(mask, x * (1 / (1 - p)), 0), mask


def _seed() -> int:
    """A seed from PyTorch's default generator: ``torch.manual_seed`` makes runs repeat."""
    return int(torch.randint(0, 2**31 - 1, ()).item())


def _bernoulli(p: Value, shape: tuple[int, ...]) -> ml.Tensor:
    return ml.random.bernoulli(ml.random.key(_seed()), p, shape)


def _embedding_backward(c: Call, g: ml.Tensor, ids: ml.Tensor, n: int, padding_idx: int,
                        scale_grad_by_freq: bool) -> ml.Tensor:
    if scale_grad_by_freq:
        raise NotImplementedError("minilazy.pytorch: embedding with scale_grad_by_freq")
    table = ml.zeros((n, g.shape[-1]), dtype=g.dtype)
    dt = _grad(lambda t: ml.nn.embedding(ids, t), (table,), g, (True,))[0]
    assert dt is not None
    return dt if padding_idx < 0 else _set(dt, padding_idx, 0)


def _safe_softmax(c: Call, x: ml.Tensor, dim: int, dtype: Any = None) -> ml.Tensor:
    """Softmax, 0 on a row that is all ``-inf`` (attention masked out entirely), not NaN."""
    x = _to(c.dtype, x)[0]
    empty = ml.all(x == -ml.inf, axis=dim, keepdims=True)
    return ml.where(empty, 0, ml.nn.softmax(x, axis=dim))


def _attention(c: Call, q: ml.Tensor, k: ml.Tensor, v: ml.Tensor, *rest: Any) -> int:
    """``scaled_dot_product_attention`` picks its math form: matmuls and softmax, recorded."""
    return int(torch.nn.attention.SDPBackend.MATH)


LAYERS: dict[str, Callable[..., Value]] = {
    "convolution": _conv, "convolution_backward": _conv_backward,
    "max_pool2d_with_indices": _max_pool, "max_pool2d_with_indices_backward": _max_pool_backward,
    "avg_pool2d": _avg_pool, "avg_pool2d_backward": _avg_pool_backward,
    "native_layer_norm": _layer_norm, "native_layer_norm_backward": _layer_norm_backward,
    "native_batch_norm": _batch_norm, "native_batch_norm_backward": _batch_norm_backward,
    "_softmax": lambda c, x, dim, half: ml.nn.softmax(x, axis=dim),
    "_log_softmax": lambda c, x, dim, half: ml.nn.log_softmax(x, axis=dim),
    "_safe_softmax": _safe_softmax,
    "_softmax_backward_data": lambda c, g, y, dim, dt: y * (g - ml.sum(g * y, axis=dim,
                                                                        keepdims=True)),
    "_log_softmax_backward_data": lambda c, g, y, dim, dt: g - ml.exp(y) * ml.sum(
        g, axis=dim, keepdims=True),
    "threshold_backward": lambda c, g, x, t: ml.where(x > t, g, 0),
    "tanh_backward": lambda c, g, y: g * (1 - y * y),
    "sigmoid_backward": lambda c, g, y: g * y * (1 - y),
    "gelu_backward": lambda c, g, x, approximate="none": _grad(
        lambda x_: _gelu(c, x_, approximate), (x,), g, (True,))[0],
    "nll_loss_forward": _nll_loss, "nll_loss_backward": _nll_loss_backward,
    "mse_loss": _mse, "mse_loss_backward": _mse_backward,
    "native_dropout": _dropout,
    "native_dropout_backward": lambda c, g, mask, scale: ml.where(mask, g * scale, 0),
    "bernoulli.p": lambda c, x, p=0.5, generator=None: ml.astype(_bernoulli(p, c.shape),
                                                                  c.dtype),
    "bernoulli.float": lambda c, x, p=0.5, generator=None: ml.astype(_bernoulli(p, c.shape),
                                                                      c.dtype),
    "uniform": lambda c, x, lo=0.0, hi=1.0, generator=None: ml.random.uniform(
        ml.random.key(_seed()), c.shape, c.dtype, lo, hi),
    "normal": lambda c, x, mean=0.0, std=1.0, generator=None: mean + std * ml.random.normal(
        ml.random.key(_seed()), c.shape, c.dtype),
    "embedding": lambda c, w, ids, *rest: ml.nn.embedding(ids, w),
    "embedding_dense_backward": _embedding_backward,
    "_fused_sdp_choice": _attention,
}

ATEN: dict[str, Callable[..., Any]] = {**ELEMENTWISE, **REDUCTIONS, **LAYOUT, **LAYERS}

# -- views -------------------------------------------------------------------------------------


def _reshaped(c: Call, x: ml.Tensor, *rest: Any) -> View:
    """A view with the same elements in another shape (view, squeeze, unsqueeze, ...)."""
    shape, base = c.shape, x.shape
    return View(lambda x_: ml.reshape(x_, shape), lambda x_, y: ml.reshape(y, base))


def _permuted(axes: Sequence[int]) -> View:
    back = tuple(int(i) for i in np.argsort(axes))
    axes = tuple(axes)
    return View(lambda x: ml.permute_dims(x, axes), lambda x, y: ml.permute_dims(y, back))


def _transpose(c: Call, x: ml.Tensor, a: int = 0, b: int = 1) -> View:
    axes = list(range(x.ndim))
    if axes:
        axes[a % x.ndim], axes[b % x.ndim] = axes[b % x.ndim], axes[a % x.ndim]
    return _permuted(axes)


def _indexed(key: tuple[Any, ...]) -> View:
    return View(lambda x: x[key], lambda x, y: _set(x, key, y))


def _expanded(c: Call, x: ml.Tensor, size: Any, implicit: bool = False) -> View:
    shape = c.shape

    def put(x_: ml.Tensor, y: ml.Tensor) -> ml.Tensor:
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    return View(lambda x_: ml.broadcast_to(x_, shape), put)


def _split(c: Call, x: ml.Tensor, sizes: Any, dim: int = 0) -> list[View]:
    dim %= x.ndim
    starts = np.cumsum([0] + [o.shape[dim] for o in c.out])
    return [_indexed(_at(x.ndim, dim, slice(int(a), int(b))))
            for a, b in zip(starts[:-1], starts[1:])]


IDENTITY = View(lambda x: x, lambda x, y: y)

VIEWS: dict[str, Callable[..., View | list[View]]] = {
    "view": _reshaped, "_reshape_alias": _reshaped, "unsqueeze": _reshaped,
    "squeeze": _reshaped, "view_as": _reshaped,
    "t": _transpose, "transpose": _transpose, "permute": lambda c, x, dims: _permuted(dims),
    "expand": _expanded,
    "slice": lambda c, x, dim=0, start=None, end=None, step=1: _indexed(
        _at(x.ndim, dim, _slice(x.shape[dim % x.ndim], start, end, step))),
    "select": lambda c, x, dim, index: _indexed(_at(x.ndim, dim, index % x.shape[dim])),
    "split": _split, "split_with_sizes": _split,
    "unbind": lambda c, x, dim=0: [_indexed(_at(x.ndim, dim, i))
                                   for i in range(x.shape[dim % x.ndim])],
    "alias": lambda c, x: IDENTITY, "detach": lambda c, x: IDENTITY,
}
