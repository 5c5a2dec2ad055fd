"""Products that contract axes: ``matmul`` (``@``) and ``tensordot``.

In the Array API namespace (``minilazy.api``). Each is one recorded op (``MATMUL`` through the
tensor's ``@``, ``TENSORDOT`` with a :class:`~minilazy.ops.linalg.Contract` of the paired axes);
``vecdot`` (a product and a sum) is composed in :mod:`minilazy.api.composites`. Never imports jax.
"""

from __future__ import annotations

from collections.abc import Sequence

from minilazy.api.axes import normalize_axes
from minilazy.api.creation import tensors
from minilazy.api.keywords import keywords
from minilazy.api.tensor import Tensor, TensorLike, as_node, record
from minilazy.core.ir import Op
from minilazy.ops.linalg import Contract


def matmul(x1: TensorLike, x2: TensorLike, /) -> Tensor:
    """Matrix product with NumPy's rules: 1-D operands promoted, batch dimensions broadcast.

    Example:
        >>> import minilazy as ml
        >>> ml.matmul(ml.asarray([[1.0, 2.0]]), ml.asarray([3.0, 4.0])).tolist()
        [11.0]
    """
    a, b = tensors(x1, x2)
    return a @ b


@keywords
def tensordot(x1: TensorLike, x2: TensorLike, /, *,
              axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Tensor:
    """Contract the last ``axes`` axes of ``x1`` with the first of ``x2`` (or named axes).

    Example:
        >>> import minilazy as ml
        >>> ml.tensordot(ml.ones((2, 3)), ml.ones((3, 4)), axes=1).shape
        (2, 4)
    """
    x1, x2 = tensors(x1, x2)
    if isinstance(axes, int):
        if axes < 0 or axes > x1.ndim or axes > x2.ndim:
            raise ValueError(f"tensordot: axes={axes} is out of range for shapes {x1.shape} "
                             f"and {x2.shape}")
        axes_a = tuple(range(x1.ndim - axes, x1.ndim))
        axes_b = tuple(range(axes))
    else:
        if len(axes[0]) != len(axes[1]):
            raise ValueError(f"tensordot: axes {axes} name different numbers of axes")
        normalize_axes("tensordot", tuple(axes[0]), x1.ndim)  # raises on bad or repeated axes
        normalize_axes("tensordot", tuple(axes[1]), x2.ndim)
        axes_a = tuple(a % x1.ndim for a in axes[0])  # order matters: axes pair up in order
        axes_b = tuple(b % x2.ndim for b in axes[1])
    return record(Op.TENSORDOT, (x1._node, as_node(x2, x1.device)), Contract(axes_a, axes_b),
                  x1.device)
