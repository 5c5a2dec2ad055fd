"""Sorting functions of the Array API: ``sort`` and ``argsort``, one recorded op each.

In the Array API namespace (``minilazy.api``). Both are lowered to XLA's stable sort, whatever
``stable`` says (the standard lets an unstable sort order ties in any way, so a stable one is
always right, and one program serves both). NaNs sort last, as in NumPy; with
``descending=True`` the order is reversed but ties keep their original order, so NaNs come
first. ``-0.0`` and ``0.0`` are equal keys. Never imports jax.
"""

from __future__ import annotations

from minilazy.api.axes import normalize_axis
from minilazy.api.creation import tensor
from minilazy.api.keywords import keywords
from minilazy.api.tensor import Tensor, TensorLike, record
from minilazy.core.attrs import ToShape
from minilazy.core.ir import Op
from minilazy.ops.sort import Sort


def _sort(op: Op, x: TensorLike, axis: int, descending: bool) -> Tensor:
    x = tensor(x)
    if op is Op.ARGSORT and x.ndim == 0:  # NumPy argsorts a 0-d array as one of shape (1,)
        x = record(Op.RESHAPE, (x._node,), ToShape((1,)), x.device)
    a = normalize_axis(op.value, axis, x.ndim)
    return record(op, (x._node,), Sort(a, bool(descending)), x.device)


@keywords
def sort(x: TensorLike, /, *, axis: int = -1, descending: bool = False, stable: bool = True
         ) -> Tensor:
    """``x`` sorted along ``axis``, ascending (NaNs last) or ``descending`` (NaNs first).

    Always stable: equal elements keep their order, also when descending. Differentiable: the
    gradient is the cotangent taken back through the sorting permutation.

    Example:
        >>> import minilazy as ml
        >>> ml.sort(ml.asarray([3.0, ml.nan, 1.0, 2.0])).tolist()
        [1.0, 2.0, 3.0, nan]
        >>> ml.sort(ml.asarray([[3, 1], [2, 4]]), axis=0, descending=True).tolist()
        [[3, 4], [2, 1]]
    """
    return _sort(Op.SORT, x, axis, descending)


@keywords
def argsort(x: TensorLike, /, *, axis: int = -1, descending: bool = False, stable: bool = True
            ) -> Tensor:
    """The indices (int64) that sort ``x`` along ``axis``, as ``take_along_axis`` reads them.

    Always stable: ties keep their original order, also when ``descending`` (as array-api-strict
    does: reversing an ascending argsort would reverse the ties). NaNs are last when ascending,
    first when descending. Not differentiable (its result is integer).

    Example:
        >>> import minilazy as ml
        >>> ml.argsort(ml.asarray([2, 1, 2, 0])).tolist()
        [3, 1, 0, 2]
        >>> ml.argsort(ml.asarray([2, 1, 2, 0]), descending=True).tolist()
        [0, 2, 1, 3]
    """
    return _sort(Op.ARGSORT, x, axis, descending)
