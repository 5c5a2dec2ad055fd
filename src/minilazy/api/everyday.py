"""Everyday functions beyond the Array API: sigmoid, logsumexp, stop_gradient, pack, aliases.

In the namespace (``minilazy.api``), as extensions: what NumPy, SciPy, PyTorch and JAX code
calls every day and the standard leaves out. Each is recorded as ops already in the tables,
chosen to be stable (no overflow in either branch, no NaN in a gradient), so each has a
gradient without a rule of its own. Never imports jax.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from minilazy.api.axes import integers, normalize_axes
from minilazy.api.composites import logaddexp
from minilazy.api.creation import tensor, tensors
from minilazy.api.elementwise import astype, exp, isinf, log, where
from minilazy.api.keywords import keywords
from minilazy.api.reductions import max as reduce_max
from minilazy.api.reductions import sum as reduce_sum
from minilazy.api.shaping import concat, permute_dims, reshape, squeeze
from minilazy.api.tensor import Tensor, TensorLike, record
from minilazy.core import dtypes
from minilazy.core.attrs import NONE
from minilazy.core.ir import Op
from minilazy.ops.shaping import Piece


def _floating(name: str, x: TensorLike) -> Tensor:
    """``x`` as a real floating tensor: integers and booleans become the default float."""
    t = tensor(x)
    if t.dtype in dtypes.COMPLEX:
        raise TypeError(f"{name}: complex input is not supported, got {t.dtype}")
    return t if t.dtype in dtypes.FLOATING else astype(t, dtypes.DEFAULT_FLOAT)


def sigmoid(x: TensorLike, /) -> Tensor:
    """The logistic function ``1 / (1 + exp(-x))``, element by element.

    Computed from ``z = exp(-|x|)``, which never overflows: ``1 / (1 + z)`` where ``x >= 0``,
    else ``z / (1 + z)``; so ``sigmoid(-800.0)`` is ``exp(-800)`` rounded, not NaN, and so is
    its gradient ``s * (1 - s)``.

    Example:
        >>> import minilazy as ml
        >>> ml.sigmoid(ml.asarray([0.0, 800.0, -800.0])).tolist()
        [0.5, 1.0, 0.0]
    """
    t = _floating("sigmoid", x)
    z = exp(-abs(t))
    return where(t >= 0, 1.0 / (1.0 + z), z / (1.0 + z))


def softplus(x: TensorLike, /) -> Tensor:
    """``log(1 + exp(x))``, element by element, as ``logaddexp(x, 0)``: stable for any ``x``.

    Example:
        >>> import minilazy as ml
        >>> ml.softplus(ml.asarray([0.0, 1000.0, -1000.0])).tolist()
        [0.6931471805599453, 1000.0, 0.0]
    """
    return logaddexp(_floating("softplus", x), 0.0)


@keywords
def logsumexp(x: TensorLike, /, *, axis: int | Sequence[int] | None = None,
              keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis`` (all axes when None), as SciPy's, stably.

    The maximum is subtracted before ``exp`` and added back (an infinite maximum is not, so
    ``-inf`` rows give ``-inf`` and ``inf`` gives ``inf``, not NaN); a sum of no element is
    ``-inf``, as SciPy's. Integers become the default float.

    Example:
        >>> import minilazy as ml
        >>> ml.logsumexp(ml.asarray([[1000.0, 1000.0], [0.0, -1e9]]), axis=1).tolist()
        [1000.6931471805599, 0.0]
    """
    t = _floating("logsumexp", x)
    axes = normalize_axes("logsumexp", axis, t.ndim)
    if any(t.shape[a] == 0 for a in axes):  # no maximum to subtract: log(0) = -inf
        return log(reduce_sum(exp(t), axis=axes, keepdims=keepdims))
    top = reduce_max(t, axis=axes, keepdims=True)
    top = where(isinf(top), 0.0, top)  # a row of infinities: no inf - inf
    out = log(reduce_sum(exp(t - top), axis=axes, keepdims=True)) + top
    return out if keepdims else squeeze(out, axis=axes)


def stop_gradient(x: TensorLike, /) -> Tensor:
    """``x``'s value, through which no gradient flows (JAX's ``stop_gradient``, torch's ``detach``).

    One recorded op (``stop_gradient``), the identity when the program runs; the backward pass
    gives its operand a zero gradient. For targets computed from parameters (a TD target, a
    moving average, a straight-through estimator). ``x.detach()`` is the same.

    Example:
        >>> import minilazy as ml
        >>> f = lambda w: ml.sum(w * ml.stop_gradient(w))  # d/dw = stop_gradient(w), not 2w
        >>> ml.grad(f)(ml.asarray([1.0, 3.0])).tolist()
        [1.0, 3.0]
    """
    t = tensor(x)
    return record(Op.STOP_GRADIENT, (t._node,), NONE, t.device)


def pack(xs: Sequence[TensorLike], /) -> Tensor:
    """Tensors of one dtype laid end to end in one 1-D tensor, each in C order.

    One recorded op (``pack``), as JAX's ``ravel_pytree`` and torch's ``parameters_to_vector``
    compute. With :func:`unpack` it is the *multi-tensor* trick of fused optimizers
    (``torch._foreach_*``, optax's ``flatten``): ``ml.optim`` updates a whole group of weights
    with a few ops on one vector, not a few ops per weight.

    Example:
        >>> import minilazy as ml
        >>> ml.pack([ml.ones((2, 2)), ml.zeros(3)]).tolist()
        [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    """
    ts = tensors(*xs)
    if not ts:
        raise TypeError("pack: takes one or more tensors of one dtype, got none")
    return record(Op.PACK, tuple([t._node for t in ts]), NONE, ts[0].device)


def unpack(flat: TensorLike, shapes: Sequence[int | Sequence[int]], /, offset: int = 0
           ) -> list[Tensor]:
    """The tensors that :func:`pack` laid end to end in ``flat``: one per shape, in order.

    Each is one recorded op (``unpack``), read from ``offset`` on (``ShapeError`` past the end).

    Example:
        >>> import minilazy as ml
        >>> a, b = ml.unpack(ml.arange(7.0), [(2, 2), 3])
        >>> a.tolist(), b.tolist()
        ([[0.0, 1.0], [2.0, 3.0]], [4.0, 5.0, 6.0])
    """
    t, out = tensor(flat), []
    if isinstance(offset, np.integer):  # NumPy's ints are ints here (bools and floats are not)
        offset = int(offset)
    for s in shapes:
        shape = integers("unpack", s)
        out.append(record(Op.UNPACK, (t._node,), Piece(offset, shape), t.device))
        offset += math.prod(shape)
    return out


def concatenate(arrays: Sequence[TensorLike], axis: int | None = 0) -> Tensor:
    """NumPy's name for :func:`concat`, with NumPy's positional ``axis`` (None: flattened).

    Example:
        >>> import minilazy as ml
        >>> ml.concatenate([ml.ones((1, 2)), ml.zeros((1, 2))], None).tolist()
        [1.0, 1.0, 0.0, 0.0]
    """
    if axis is None:
        return concat([reshape(t, (-1,)) for t in tensors(*arrays)], axis=0)
    return concat(arrays, axis=axis)


def transpose(x: TensorLike, axes: Sequence[int] | None = None) -> Tensor:
    """NumPy's ``transpose``: :func:`permute_dims`, every axis reversed when ``axes`` is None.

    Example:
        >>> import minilazy as ml
        >>> ml.transpose(ml.ones((2, 3, 4))).shape, ml.transpose(ml.ones((2, 3)), (1, 0)).shape
        ((4, 3, 2), (3, 2))
    """
    t = tensor(x)
    return permute_dims(t, tuple(range(t.ndim))[::-1] if axes is None else tuple(axes))
