"""Neural-network layers as plain functions of tensors: ``ml.nn.linear``, ``conv2d``, ``gelu``...

Built only from recorded ops (no ops of its own), so
every layer is lazy and differentiable through the existing rules: a convolution is one ``conv``
op, average pooling a convolution with a constant filter, max pooling the ``argmax`` element of
the strided slices of the padded input, an embedding an integer-array index (its gradient getitem's
scatter-add), a causal mask an iota comparison, a dropout mask ``ml.random.bernoulli``. Layouts
are torch's: (N, C, H, W) activations, (O, I, kH, kW) filters, but linear weights (in, out), so
``x @ w``. Each layer's Python runs once per call signature: later calls make the same nodes
from its tape (``minilazy.parts.tapes.templated``). Never imports jax.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Literal

import numpy as np

from minilazy.api.axes import normalize_axis
from minilazy.api.convolution import conv
from minilazy.api.creation import arange, device_of, full, tensor, tensors
from minilazy.api.elementwise import abs as absolute
from minilazy.api.elementwise import exp, log, sqrt, tanh, where
from minilazy.api.info import finfo
from minilazy.api.reductions import argmax, mean
from minilazy.api.reductions import max as reduce_max
from minilazy.api.reductions import sum as reduce_sum
from minilazy.api.shaping import (
    concat,
    matrix_transpose,
    permute_dims,
    reshape,
    stack,
    take_along_axis,
)
from minilazy.api.tensor import Tensor, TensorLike
from minilazy.core import dtypes
from minilazy.core.infer import describe
from minilazy.core.ir import ShapeError
from minilazy.parts.tapes import templated
from minilazy.random import bernoulli

Pair = int | Sequence[int]


def _pair(name: str, what: str, value: Pair, least: int) -> tuple[int, int]:
    """Two ints (height, width) from one or two; ValueError naming ``name`` and ``what``."""
    items = tuple(value) if isinstance(value, Sequence) else (value, value)
    if len(items) != 2 or any(operator.index(v) < least for v in items):
        raise ValueError(f"{name}: {what} must be one or two ints >= {least}, got {value!r}")
    return operator.index(items[0]), operator.index(items[1])


def _image(name: str, x: Tensor, least: int = 3) -> None:
    if x.ndim < least or x.dtype not in dtypes.FLOATING:
        raise (ShapeError if x.ndim < least else TypeError)(
            f"{name}: expects a floating tensor with at least {least} dimensions (..., H, W), "
            f"got {describe(x._node)}")


@templated
def conv2d(x: TensorLike, w: TensorLike, b: TensorLike | None = None, *, stride: Pair = 1,
           padding: Pair = 0, dilation: Pair = 1, groups: int = 1) -> Tensor:
    """A 2-d convolution as torch's ``conv2d``, plus an optional bias ``b`` per output channel.

    Layouts: ``x`` (N, C, H, W), ``w`` (O, C / groups, kH, kW), ``b`` (O,).

    Example:
        >>> import minilazy as ml
        >>> x, w = ml.ones((1, 1, 3, 3)), ml.ones((2, 1, 2, 2))
        >>> ml.nn.conv2d(x, w, ml.asarray([0.0, 1.0])).tolist()
        [[[[4.0, 4.0], [4.0, 4.0]], [[5.0, 5.0], [5.0, 5.0]]]]
    """
    device = device_of(x, w, b)
    x, w = tensor(x, device), tensor(w, device)
    if x.ndim != 4:
        raise ShapeError(f"conv2d: expects an input (N, C, H, W), got {describe(x._node)}")
    y = conv(x, w, stride=_pair("conv2d", "stride", stride, 1),
             padding=_pair("conv2d", "padding", padding, 0),
             dilation=_pair("conv2d", "dilation", dilation, 1), groups=groups)
    return y if b is None else y + reshape(tensor(b, x.device), (1, -1, 1, 1))


def _window(name: str, x: Tensor, kernel_size: Pair, stride: Pair | None, padding: Pair
            ) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    _image(name, x, 2)
    kernel = _pair(name, "kernel_size", kernel_size, 1)
    strides = kernel if stride is None else _pair(name, "stride", stride, 1)
    pads = _pair(name, "padding", padding, 0)
    if any(2 * p > k for p, k in zip(pads, kernel)):  # torch's rule: no window of padding only
        raise ValueError(f"{name}: padding {pads} must be at most half the kernel {kernel}")
    if any(n + 2 * p < k for n, p, k in zip(x.shape[-2:], pads, kernel)):
        raise ShapeError(f"{name}: kernel {kernel} does not fit in {describe(x._node)} padded "
                         f"by {pads}")
    return kernel, strides, pads


@templated
def max_pool2d(x: TensorLike, kernel_size: Pair, stride: Pair | None = None, padding: Pair = 0
               ) -> Tensor:
    """The maximum of each window over the last two axes (H, W), as torch's ``max_pool2d``.

    ``stride`` defaults to ``kernel_size``; the padding is -inf. Recorded as the element at the
    ``argmax`` of the window's strided slices, so the gradient reaches the maximum of each window,
    the first of tied maxima (in row-major order) taking all of it, as JAX's and torch's do.

    Example:
        >>> import minilazy as ml
        >>> ml.nn.max_pool2d(ml.reshape(ml.arange(16.0), (1, 1, 4, 4)), 2).tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    x = tensor(x)
    (kh, kw), (sh, sw), (ph, pw) = _window("max_pool2d", x, kernel_size, stride, padding)
    lead, (h, w) = x.shape[:-2], x.shape[-2:]
    oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    # The windows, side by side, before a loop over kh * kw of them: NumPy's size rule.
    if not math.prod(dtypes.sized("max_pool2d", (*lead, oh, ow, kh * kw), x.dtype)):
        return full((*lead, oh, ow), 0, dtype=x.dtype, device=x.device)  # no window to read
    for axis, p in ((-2, ph), (-1, pw)):
        if p:
            edge = full((*x.shape[:axis], p, *x.shape[axis:][1:]), float("-inf"),
                        dtype=x.dtype, device=x.device)
            x = concat([edge, x, edge], axis=x.ndim + axis)
    inner = (slice(None),) * len(lead)
    slices = [x[(*inner, slice(i, i + sh * (oh - 1) + 1, sh), slice(j, j + sw * (ow - 1) + 1, sw))]
              for i in range(kh) for j in range(kw)]
    windows = stack(slices, axis=-1)
    first = argmax(windows, axis=-1, keepdims=True)  # (a max would share a tie's gradient)
    return take_along_axis(windows, first, axis=-1)[..., 0]


@templated
def avg_pool2d(x: TensorLike, kernel_size: Pair, stride: Pair | None = None, padding: Pair = 0
               ) -> Tensor:
    """The mean of each window over the last two axes (H, W), as torch's ``avg_pool2d``.

    ``stride`` defaults to ``kernel_size``; padded zeros count in the mean.
    Recorded as one convolution with a constant filter, so its gradient is a convolution too.

    Example:
        >>> import minilazy as ml
        >>> ml.nn.avg_pool2d(ml.reshape(ml.arange(16.0), (1, 1, 4, 4)), 2).tolist()
        [[[[2.5, 4.5], [10.5, 12.5]]]]
    """
    x = tensor(x)
    kernel, strides, pads = _window("avg_pool2d", x, kernel_size, stride, padding)
    lead, (h, w) = x.shape[:-2], x.shape[-2:]
    ones = full((1, 1, *kernel), 1.0 / (kernel[0] * kernel[1]), dtype=x.dtype,
                device=x.device)
    y = conv(reshape(x, (-1, 1, h, w)), ones, stride=strides, padding=pads)
    return reshape(y, (*lead, *y.shape[-2:]))


@templated
def linear(x: TensorLike, w: TensorLike, b: TensorLike | None = None) -> Tensor:
    """``x @ w + b``: a dense layer with weights ``w`` laid out (in, out) and bias ``b`` (out,).

    Example:
        >>> import minilazy as ml
        >>> ml.nn.linear(ml.ones((1, 2)), ml.ones((2, 3)), ml.asarray([0.0, 1.0, 2.0])).tolist()
        [[2.0, 3.0, 4.0]]
    """
    device = device_of(x, w, b)
    x, w = tensor(x, device), tensor(w, device)
    y = x @ w
    return y if b is None else y + b


@templated
def relu(x: TensorLike) -> Tensor:
    """``max(x, 0)``, element by element; its gradient at 0 is 0 (as torch's and ``jax.nn``'s).

    Example:
        >>> import minilazy as ml
        >>> ml.nn.relu(ml.asarray([-1.0, 0.0, 2.0])).tolist()
        [0.0, 0.0, 2.0]
    """
    x = tensor(x)
    return where(x <= 0, 0, x)  # NaN stays NaN


# Numerical Recipes' erfc(z) for z >= 0, t * exp(-z^2 + P(t)) with t = 1 / (1 + z/2): fractional
# error under 1.2e-7 everywhere (W. H. Press et al., Numerical Recipes, 2nd ed., section 6.2).
_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398,
         1.48851587, -0.82215223, 0.17087277)


@templated
def gelu(x: TensorLike, *, approximate: Literal["none", "tanh"] = "none") -> Tensor:
    """``x * Phi(x)``, Phi the standard normal CDF, as torch's ``gelu`` (exact by default).

    minilazy has no ``erf`` op, so the default computes Phi from an erfc approximation with a
    relative error under 1.2e-7 on every input (float32's rounding, as torch's exact GELU in
    float32), in about 30 recorded ops. ``approximate="tanh"`` is torch's (and GPT-2's) cheaper
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``, in 8.

    Example:
        >>> import minilazy as ml
        >>> [round(v, 6) for v in ml.nn.gelu(ml.asarray([-1.0, 0.0, 1.0])).tolist()]
        [-0.158655, 0.0, 0.841345]
        >>> round(ml.nn.gelu(ml.asarray(1.0), approximate="tanh").item(), 6)
        0.841192
    """
    x = tensor(x)
    if approximate == "tanh":
        return 0.5 * x * (1.0 + tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)))
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    z = absolute(x) * math.sqrt(0.5)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = t * _ERFC[-1] + _ERFC[-2]
    for c in reversed(_ERFC[:-2]):
        poly = poly * t + c
    tail = 0.5 * t * exp(poly - z * z)  # Phi(-|x|) = erfc(|x| / sqrt 2) / 2, relatively exact
    return x * where(x >= 0, 1.0 - tail, tail)


def _softmax_axis(name: str, x: Tensor, axis: int) -> None:
    if x.dtype not in dtypes.FLOATING:
        raise TypeError(f"{name}: expects a floating tensor, got {describe(x._node)}")
    normalize_axis(name, axis, x.ndim)  # one int axis, or NumPy's TypeError / AxisError


@templated
def softmax(x: TensorLike, axis: int = -1) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis``, stable: the maximum is subtracted first.

    Example:
        >>> import minilazy as ml
        >>> ml.nn.softmax(ml.asarray([0.0, 0.0, 1000.0])).tolist()
        [0.0, 0.0, 1.0]
    """
    x = tensor(x)
    _softmax_axis("softmax", x, axis)
    e = exp(x - reduce_max(x, axis=axis, keepdims=True))
    return e / reduce_sum(e, axis=axis, keepdims=True)


@templated
def log_softmax(x: TensorLike, axis: int = -1) -> Tensor:
    """``x - log(sum(exp(x)))`` along ``axis``, stable: the maximum is subtracted first.

    Example:
        >>> import minilazy as ml
        >>> ml.nn.log_softmax(ml.asarray([0.0, 1000.0])).tolist()
        [-1000.0, 0.0]
    """
    x = tensor(x)
    _softmax_axis("log_softmax", x, axis)
    shifted = x - reduce_max(x, axis=axis, keepdims=True)
    return shifted - log(reduce_sum(exp(shifted), axis=axis, keepdims=True))


@templated
def cross_entropy(logits: TensorLike, labels: TensorLike) -> Tensor:
    """The mean over the batch of ``-log_softmax(logits)[label]``, as torch's ``cross_entropy``.

    ``logits`` (..., C), ``labels`` (...) integer class ids in [0, C). The label is picked by a
    one-hot mask (``labels == arange(C)``), recorded on the device: no fallback, no host data.

    Example:
        >>> import minilazy as ml
        >>> round(ml.nn.cross_entropy(ml.zeros((2, 4)), ml.asarray([1, 3])).item(), 6)
        1.386294
    """
    logits, labels = tensors(logits, labels)
    if labels.dtype not in dtypes.INTEGER or logits.shape[:-1] != labels.shape:
        raise (TypeError if labels.dtype not in dtypes.INTEGER else ShapeError)(
            f"cross_entropy: expects integer labels of shape {logits.shape[:-1]} for logits "
            f"{describe(logits._node)}, got {describe(labels._node)}")
    one_hot = reshape(labels, (*labels.shape, 1)) == arange(logits.shape[-1], device=logits.device)
    picked = reduce_sum(where(one_hot, log_softmax(logits), 0), axis=-1)
    return -mean(picked)


@templated
def layer_norm(x: TensorLike, weight: TensorLike | None = None, bias: TensorLike | None = None,
               eps: float = 1e-5) -> Tensor:
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last axis (biased variance).

    As torch's ``layer_norm`` with ``normalized_shape=x.shape[-1:]``; no batch statistics.

    Example:
        >>> import minilazy as ml
        >>> [round(v, 4) for v in ml.nn.layer_norm(ml.asarray([1.0, 3.0])).tolist()]
        [-1.0, 1.0]
    """
    x = tensor(x, device_of(x, weight, bias))
    centred = x - mean(x, axis=-1, keepdims=True)
    y = centred / sqrt(mean(centred * centred, axis=-1, keepdims=True) + eps)
    y = y if weight is None else y * weight
    return y if bias is None else y + bias


def embedding(ids: TensorLike, table: TensorLike) -> Tensor:
    """The rows of ``table`` (V, D) picked by integer ``ids`` (...): a result (..., D).

    Recorded as one integer-array index, ``table[ids]``; the gradient adds into the picked rows
    (getitem's scatter-add: a repeated id gets the sum). Ids known on the host (a list, a NumPy
    array) are checked at the call (``IndexError``, as ``table[ids]``); ids on the device are
    data, clamped into range when read (LZ-NUM-005).

    Example:
        >>> import minilazy as ml
        >>> table = ml.reshape(ml.arange(6.0), (3, 2))
        >>> ml.nn.embedding(ml.asarray([[2, 0]]), table).tolist()
        [[[4.0, 5.0], [0.0, 1.0]]]
    """
    key = ids if isinstance(ids, Tensor) else np.asarray(ids)  # host ids stay host-known
    if key.dtype == object:
        tensor(ids)  # what is no array: the one TypeError that names its type
    table = tensor(table, key.device if isinstance(key, Tensor) else None)
    if key.dtype not in dtypes.INTEGER or table.ndim != 2:
        shown = describe(key._node) if isinstance(key, Tensor) else f"{key.dtype}{list(key.shape)}"
        raise TypeError(f"embedding: expects integer ids and a table (V, D), got "
                        f"{shown} and {describe(table._node)}")
    return table[key]


def dropout(x: TensorLike, p: float, key: Tensor) -> Tensor:
    """Inverted dropout: each element zeroed with probability ``p``, the others scaled by 1/(1-p).

    The mask is ``ml.random.bernoulli(key, 1 - p, x.shape)``: the same key gives the same mask,
    and a new key (one per step: ``ml.random.split`` or ``fold_in``) is new data for the same
    program. ``p`` is a parameter too, except that ``p=0`` returns ``x`` itself (no op recorded:
    evaluation) and ``p=1`` gives ``x * 0``. The gradient is the same mask, scaled.

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((1000,), dtype=ml.float32)
        >>> y = ml.nn.dropout(x, 0.5, ml.random.key(0))
        >>> sorted(set(y.tolist())), 400 < int(ml.sum(y == 0)) < 600
        ([0.0, 2.0], True)
        >>> ml.nn.dropout(x, 0.0, ml.random.key(0)) is x
        True
    """
    x = tensor(x, device_of(x, key))
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: p must be in [0, 1], got {p!r}")
    if p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0  # zeros, and a zero gradient
    return where(bernoulli(key, 1.0 - p, x.shape), x * (1.0 / (1.0 - p)), 0)


@templated
def causal_self_attention(x: TensorLike, wq: TensorLike, wk: TensorLike, wv: TensorLike,
                          wo: TensorLike, n_heads: int) -> Tensor:
    """Multi-head self-attention over ``x`` (B, T, D) where position i sees positions <= i.

    ``wq``, ``wk``, ``wv``, ``wo`` are (D, D) weights laid out (in, out), no biases; the heads
    split D into ``n_heads`` parts of D / n_heads. Per head, ``softmax(q k^T / sqrt(D / H) +
    mask) v``; the causal mask is an iota comparison (recorded, never transferred), masked scores
    are the dtype's lowest finite value rather than -inf, so no NaN can reach a gradient.

    Example:
        >>> import minilazy as ml
        >>> w = ml.eye(4)
        >>> y = ml.nn.causal_self_attention(ml.ones((2, 3, 4)), w, w, w, w, n_heads=2)
        >>> y.shape, y[0, 0].tolist()
        ((2, 3, 4), [1.0, 1.0, 1.0, 1.0])
    """
    x, wq, wk, wv, wo = tensors(x, wq, wk, wv, wo)
    if x.ndim != 3 or n_heads < 1 or x.shape[-1] % n_heads:
        raise ShapeError(f"causal_self_attention: expects x (B, T, D) with D divisible by "
                         f"n_heads={n_heads}, got {describe(x._node)}")
    (b, t, d), h = x.shape, n_heads

    def heads(y: Tensor) -> Tensor:  # (B, T, D) -> (B, H, T, D / H)
        return permute_dims(reshape(y, (b, t, h, d // h)), (0, 2, 1, 3))

    q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
    scores = (q @ matrix_transpose(k)) * (1.0 / math.sqrt(d // h))
    position = arange(t, device=x.device)
    causal = reshape(position, (t, 1)) >= position  # (T, T): query i sees keys j <= i
    scores = where(causal, scores, float(finfo(scores.dtype).min))
    y = softmax(scores) @ v  # (B, H, T, D / H)
    return reshape(permute_dims(y, (0, 2, 1, 3)), (b, t, d)) @ wo
