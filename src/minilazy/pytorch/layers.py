"""The rules of neural-network layers, their backward ops and random numbers.

PyTorch's autograd calls a layer's backward op by name (``convolution_backward``,
``native_layer_norm_backward``, ...). Where the formula is short it is written out; where it is
not (convolution, pooling, GELU, embedding) the rule asks minilazy's own autodiff for the
vector-Jacobian product of the forward rule (:func:`~minilazy.pytorch.calls.vjp`), recorded
lazily like everything else. Random ops draw a seed from PyTorch's default generator, so that
``torch.manual_seed`` repeats a run, and make minilazy random numbers from it.

Example:
    >>> sorted(LAYERS)[:3]
    ['_fused_sdp_choice', '_log_softmax', '_log_softmax_backward_data']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

import minilazy as ml
from minilazy.pytorch.calls import (
    Call,
    Value,
    assign,
    pair,
    to,
    vjp,
)


def gelu(c: Call, x: ml.Tensor, approximate: str = "none") -> ml.Tensor:
    """GELU, exact (erf) or PyTorch's ``tanh`` approximation.

    Example:
        >>> round(gelu(None, ml.asarray(1.0)).item(), 4)
        0.8413
    """
    return ml.nn.gelu(x, approximate="tanh" if approximate == "tanh" else "none")


def _conv(c: Call, x: ml.Tensor, w: ml.Tensor, b: ml.Tensor | None, stride: Sequence[int],
          padding: Sequence[int], dilation: Sequence[int], transposed: bool,
          output_padding: Sequence[int], groups: int) -> ml.Tensor:
    if transposed or x.ndim not in (3, 4) or isinstance(padding, str):
        raise NotImplementedError("minilazy.pytorch: convolution is 1-d or 2-d, not transposed, "
                                  "with numbers for padding")
    if x.ndim == 3:  # 1-d: a 2-d convolution over a height of one
        y = ml.nn.conv2d(ml.expand_dims(x, axis=2), ml.expand_dims(w, axis=2), b,
                         stride=(1, stride[0]), padding=(0, padding[0]),
                         dilation=(1, dilation[0]), groups=groups)
        return ml.squeeze(y, axis=2)
    return ml.nn.conv2d(x, w, b, stride=pair(stride), padding=pair(padding),
                        dilation=pair(dilation), groups=groups)


def _conv_backward(c: Call, g: ml.Tensor, x: ml.Tensor, w: ml.Tensor, bias_sizes: Any,
                   stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                   transposed: bool, output_padding: Sequence[int], groups: int,
                   mask: Sequence[bool]) -> tuple[ml.Tensor | None, ...]:
    f = lambda x_, w_: _conv(c, x_, w_, None, stride, padding, dilation, transposed,  # noqa: E731
                             output_padding, groups)
    dx, dw = vjp(f, (x, w), g, mask[:2])
    return dx, dw, ml.sum(g, axis=(0, *range(2, g.ndim))) if mask[2] else None


def _max_pool(c: Call, x: ml.Tensor, kernel: Sequence[int], stride: Sequence[int] = (),
              padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,),
              ceil_mode: bool = False) -> Any:
    if pair(dilation) != (1, 1) or ceil_mode:
        raise NotImplementedError("minilazy.pytorch: max_pool2d with dilation or ceil_mode")
    y = ml.nn.max_pool2d(x, pair(kernel), pair(stride or kernel), pair(padding))
    return y, None  # the indices are not computed: see UNAVAILABLE in tensor.py


def _max_pool_backward(c: Call, g: ml.Tensor, x: ml.Tensor, kernel: Sequence[int],
                       stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                       ceil_mode: bool, indices: Any) -> ml.Tensor | None:
    return vjp(lambda x_: _max_pool(c, x_, kernel, stride, padding, dilation, ceil_mode)[0],
                 (x,), g, (True,))[0]


def _avg_pool(c: Call, x: ml.Tensor, kernel: Sequence[int], stride: Sequence[int] = (),
              padding: Sequence[int] = (0,), ceil_mode: bool = False,
              count_include_pad: bool = True, divisor: int | None = None) -> ml.Tensor:
    if ceil_mode or not count_include_pad or divisor is not None:
        raise NotImplementedError("minilazy.pytorch: avg_pool2d with ceil_mode, "
                                  "count_include_pad=False or divisor_override")
    return ml.nn.avg_pool2d(x, pair(kernel), pair(stride or kernel), pair(padding))


def _avg_pool_backward(c: Call, g: ml.Tensor, x: ml.Tensor, *args: Any) -> ml.Tensor | None:
    return vjp(lambda x_: _avg_pool(c, x_, *args), (x,), g, (True,))[0]


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
    """Each target's one-hot over the class axis, and its weight (0 where ignored)."""
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
    dt = vjp(lambda t: ml.nn.embedding(ids, t), (table,), g, (True,))[0]
    assert dt is not None
    return dt if padding_idx < 0 else assign(dt, padding_idx, 0)


def _safe_softmax(c: Call, x: ml.Tensor, dim: int, dtype: Any = None) -> ml.Tensor:
    """Softmax, 0 on a row that is all ``-inf`` (attention masked out entirely), not NaN."""
    x = to(c.dtype, x)[0]
    empty = ml.all(x == -ml.inf, axis=dim, keepdims=True)
    return ml.where(empty, 0, ml.nn.softmax(x, axis=dim))


def _attention(c: Call, q: ml.Tensor, k: ml.Tensor, v: ml.Tensor, *rest: Any) -> int:
    """``scaled_dot_product_attention`` picks its math form: matmuls and softmax, recorded."""
    return int(torch.nn.attention.SDPBackend.MATH.value)


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
    "gelu_backward": lambda c, g, x, approximate="none": vjp(
        lambda x_: gelu(c, x_, approximate), (x,), g, (True,))[0],
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
