"""NumPy's array methods on ``Tensor``: ``x.sum(1)``, ``x.reshape(2, 3)``, ``x.astype(...)``.

An extension beyond the Array API, which has functions, not methods, for these: NumPy and
PyTorch code calls methods, and breaks first where they are missing. Each method is its
namespace function (the namespace is minilazy's face, above core, which ``import minilazy``
hands the engine as it hands it the compile cache's store), with NumPy's calling
conventions: a positional ``axis``, ``ddof`` for the variance's correction, ``reshape(2, 3)``
as well as ``reshape((2, 3))``. Like the functions, each records ops and runs nothing. Never
imports jax.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self, TypeVar, cast

from minilazy.api.axes import normalize_axis
from minilazy.api.interop import ArrayAPIMethods, namespace
from minilazy.core.dtypes import DTypeLike

Axes = int | Sequence[int] | None
T = TypeVar("T")


def _call(name: str, x: T, *args: Any, **kwargs: Any) -> T:
    """The namespace's function ``name`` on ``x``: a tensor of ``x``'s class."""
    return cast(T, getattr(namespace(), name)(x, *args, **kwargs))


def _shape(shape: tuple[Any, ...]) -> Any:
    """NumPy's ``reshape(2, 3)`` and ``reshape((2, 3))`` alike."""
    return shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape


class NumPyMethods(ArrayAPIMethods):
    """NumPy's common array methods, each the namespace function of the same name.

    Example:
        >>> import minilazy as ml
        >>> x = ml.asarray([[1.0, 2.0], [3.0, 4.0]])
        >>> x.sum(0).tolist(), x.mean().item(), float(x.reshape(4).max()), x.T.flatten().tolist()
        ([4.0, 6.0], 2.5, 4.0, [1.0, 3.0, 2.0, 4.0])
    """

    __slots__ = ()

    def sum(self, axis: Axes = None, dtype: DTypeLike | None = None, *,
            keepdims: bool = False) -> Self:
        """:func:`minilazy.sum`, NumPy's ``a.sum(axis, dtype)``.

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([[1, 2], [3, 4]]).sum(1).tolist()
            [3, 7]
        """
        return _call("sum", self, axis=axis, dtype=dtype, keepdims=keepdims)

    def prod(self, axis: Axes = None, dtype: DTypeLike | None = None, *,
             keepdims: bool = False) -> Self:
        """:func:`minilazy.prod`, NumPy's ``a.prod(axis, dtype)``.

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([[1, 2], [3, 4]]).prod().item()
            24
        """
        return _call("prod", self, axis=axis, dtype=dtype, keepdims=keepdims)

    def mean(self, axis: Axes = None, dtype: DTypeLike | None = None, *,
             keepdims: bool = False) -> Self:
        """:func:`minilazy.mean`, NumPy's ``a.mean(axis, dtype)`` (sums and quotient in ``dtype``).

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([[1.0, 2.0], [3.0, 5.0]]).mean(axis=1).tolist()
            [1.5, 4.0]
        """
        return _call("mean", self, axis=axis, keepdims=keepdims, dtype=dtype)

    def var(self, axis: Axes = None, dtype: DTypeLike | None = None, *, ddof: float = 0,
            keepdims: bool = False) -> Self:
        """:func:`minilazy.var` with ``correction=ddof``, NumPy's ``a.var(axis, dtype, ddof=)``.

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([1.0, 2.0, 3.0, 4.0]).var(ddof=1).item()
            1.6666666666666667
        """
        return _call("var", self, axis=axis, correction=ddof, keepdims=keepdims, dtype=dtype)

    def std(self, axis: Axes = None, dtype: DTypeLike | None = None, *, ddof: float = 0,
            keepdims: bool = False) -> Self:
        """:func:`minilazy.std` with ``correction=ddof``, NumPy's ``a.std(axis, dtype, ddof=)``.

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([1.0, 3.0]).std().item()
            1.0
        """
        return _call("std", self, axis=axis, correction=ddof, keepdims=keepdims, dtype=dtype)

    def max(self, axis: Axes = None, *, keepdims: bool = False) -> Self:
        """:func:`minilazy.max`, NumPy's ``a.max(axis)``.

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([[1, 5], [3, 4]]).max(0).tolist()
            [3, 5]
        """
        return _call("max", self, axis=axis, keepdims=keepdims)

    def min(self, axis: Axes = None, *, keepdims: bool = False) -> Self:
        """:func:`minilazy.min`, NumPy's ``a.min(axis)``.

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([[1, 5], [3, 4]]).min(1).tolist()
            [1, 3]
        """
        return _call("min", self, axis=axis, keepdims=keepdims)

    def argmax(self, axis: int | None = None, *, keepdims: bool = False) -> Self:
        """:func:`minilazy.argmax` (the flat index when ``axis`` is None), NumPy's ``a.argmax``.

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([[1, 5], [7, 4]]).argmax().item()
            2
        """
        return _call("argmax", self, axis=axis, keepdims=keepdims)

    def argmin(self, axis: int | None = None, *, keepdims: bool = False) -> Self:
        """:func:`minilazy.argmin`, NumPy's ``a.argmin(axis)``.

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([[1, 5], [7, 4]]).argmin(1).tolist()
            [0, 1]
        """
        return _call("argmin", self, axis=axis, keepdims=keepdims)

    def any(self, axis: Axes = None, *, keepdims: bool = False) -> Self:
        """:func:`minilazy.any`, NumPy's ``a.any(axis)``.

        Example:
            >>> import minilazy as ml
            >>> bool(ml.asarray([0, 0, 3]).any())
            True
        """
        return _call("any", self, axis=axis, keepdims=keepdims)

    def all(self, axis: Axes = None, *, keepdims: bool = False) -> Self:
        """:func:`minilazy.all`, NumPy's ``a.all(axis)``.

        Example:
            >>> import minilazy as ml
            >>> bool(ml.asarray([0, 0, 3]).all())
            False
        """
        return _call("all", self, axis=axis, keepdims=keepdims)

    def cumsum(self, axis: int | None = None, dtype: DTypeLike | None = None) -> Self:
        """:func:`minilazy.cumulative_sum`; over the flattened tensor when ``axis`` is None.

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([[1, 2], [3, 4]]).cumsum().tolist()
            [1, 3, 6, 10]
        """
        x = self.reshape(-1) if axis is None else self
        return _call("cumulative_sum", x, axis=0 if axis is None else axis, dtype=dtype)

    def reshape(self, *shape: Any, copy: bool | None = None) -> Self:
        """:func:`minilazy.reshape`: ``a.reshape(2, 3)`` or ``a.reshape((2, 3))``.

        Example:
            >>> import minilazy as ml
            >>> ml.arange(6).reshape(2, -1).shape
            (2, 3)
        """
        return _call("reshape", self, _shape(shape), copy=copy)

    def flatten(self) -> Self:
        """The tensor as one axis, in row-major order (NumPy's ``a.flatten()``).

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([[1, 2], [3, 4]]).flatten().tolist()
            [1, 2, 3, 4]
        """
        return _call("reshape", self, (-1,))

    def ravel(self) -> Self:
        """As :meth:`flatten` (a lazy tensor has no views to share).

        Example:
            >>> import minilazy as ml
            >>> ml.ones((2, 2)).ravel().shape
            (4,)
        """
        return _call("reshape", self, (-1,))

    def transpose(self, *axes: Any) -> Self:
        """:func:`minilazy.permute_dims`; every axis reversed when none is given (NumPy's).

        Example:
            >>> import minilazy as ml
            >>> x = ml.ones((2, 3, 4))
            >>> x.transpose().shape, x.transpose(0, 2, 1).shape, x.transpose((1, 0, 2)).shape
            ((4, 3, 2), (2, 4, 3), (3, 2, 4))
        """
        order = _shape(axes) if axes else tuple(range(len(self._node.shape)))[::-1]
        return _call("permute_dims", self, tuple(order))

    def swapaxes(self, axis1: int, axis2: int) -> Self:
        """The tensor with two axes exchanged (NumPy's ``a.swapaxes``).

        Example:
            >>> import minilazy as ml
            >>> ml.ones((2, 3, 4)).swapaxes(0, -1).shape
            (4, 3, 2)
        """
        return _call("permute_dims", self, _swapped(len(self._node.shape), axis1, axis2))

    def squeeze(self, axis: Axes = None) -> Self:
        """:func:`minilazy.squeeze`; every axis of length 1 when ``axis`` is None (NumPy's).

        Example:
            >>> import minilazy as ml
            >>> ml.ones((1, 3, 1)).squeeze().shape, ml.ones((1, 3, 1)).squeeze(0).shape
            ((3,), (3, 1))
        """
        if axis is None:
            axis = tuple(i for i, n in enumerate(self._node.shape) if n == 1)
        return _call("squeeze", self, axis=axis)

    def astype(self, dtype: DTypeLike, *, copy: bool = True) -> Self:
        """:func:`minilazy.astype`, NumPy's ``a.astype(dtype)``.

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([1.7, -1.7]).astype(ml.int32).tolist()
            [1, -1]
        """
        return _call("astype", self, dtype, copy=copy)

    def clip(self, min: Any = None, max: Any = None) -> Self:
        """:func:`minilazy.clip`, NumPy's ``a.clip(min, max)``.

        Example:
            >>> import minilazy as ml
            >>> ml.asarray([-2.0, 0.5, 3.0]).clip(0, 1).tolist()
            [0.0, 0.5, 1.0]
        """
        return _call("clip", self, min=min, max=max)

    def detach(self) -> Self:
        """:func:`minilazy.stop_gradient`: the value, without a gradient (PyTorch's ``detach``).

        Example:
            >>> import minilazy as ml
            >>> ml.grad(lambda w: ml.sum(w * w.detach()))(ml.asarray([2.0])).tolist()
            [2.0]
        """
        return _call("stop_gradient", self)

    def copy(self) -> Self:
        """A new tensor with the same values (NumPy's ``a.copy()``): nothing runs.

        Nodes and buffers are never written, so a new handle is a copy; an in-place op on one
        rebinds only that one.

        Example:
            >>> import minilazy as ml
            >>> x = ml.ones((2,))
            >>> y = x.copy()
            >>> y += 1
            >>> x.tolist(), y.tolist()
            ([1.0, 1.0], [2.0, 2.0])
        """
        return type(self)(self._node, self._device)


def _swapped(ndim: int, axis1: int, axis2: int) -> tuple[int, ...]:
    order = list(range(ndim))
    a, b = normalize_axis("swapaxes", axis1, ndim), normalize_axis("swapaxes", axis2, ndim)
    order[a], order[b] = order[b], order[a]
    return tuple(order)
