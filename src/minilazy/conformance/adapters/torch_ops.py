"""How each op of the spec is spelled in torch: the calls the torch adapters make.

The translations ``adapters/torch_lazy.py`` describes (its module docstring says what is
translated and what is not), as a mixin both peers' adapters share: ``apply`` and the
extension methods (convolution and pooling, sorts, linalg, fft, optimizers, creation). torch
is never imported here: the adapter hands over its module (``self.torch``) and device.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any, TypeAlias

import numpy as np

from minilazy.conformance.base import INPLACE, OPERATORS

Array = np.ndarray[Any, Any]
# torch is optional and never installed where mypy runs: its objects are opaque to the types here,
# so these names say what each one is.
TorchTensor: TypeAlias = Any
TorchDtype: TypeAlias = Any
TorchDevice: TypeAlias = Any
AxisArg: TypeAlias = "int | Sequence[int] | None"
ShapeArg: TypeAlias = "int | Sequence[int]"
DTypeArg: TypeAlias = "np.dtype[Any] | str | None"
Number: TypeAlias = bool | int | float
PairArg: TypeAlias = "int | tuple[int, int]"
# The dtypes the suite draws (strategies.DTYPES), by name: torch has each of them.
DTYPE_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "float16", "float32", "float64")
# Binary spec ops whose torch function takes tensors only (a scalar becomes a 0-d tensor).
TENSOR_ONLY = {"maximum": "maximum", "minimum": "minimum", "atan2": "atan2",
               "logical_and": "logical_and", "logical_or": "logical_or",
               "logical_xor": "logical_xor"}
# Unary spec ops: the torch function of the same meaning.
UNARY = {"negative": "negative", "abs": "abs", "sign": "sign", "sqrt": "sqrt",
         "square": "square", "exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p",
         "log2": "log2", "log10": "log10", "sin": "sin", "cos": "cos", "tan": "tan",
         "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh", "cosh": "cosh",
         "tanh": "tanh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
         "floor": "floor", "ceil": "ceil", "round": "round", "trunc": "trunc",
         "logical_not": "logical_not", "bitwise_invert": "bitwise_not", "isnan": "isnan",
         "isinf": "isinf", "isfinite": "isfinite", "stop_gradient": "detach"}
# Reductions taking `dim` (a tuple of axes) and `keepdim`.
REDUCE_DIMS = {"sum": "sum", "mean": "mean", "max": "amax", "min": "amin", "any": "any",
               "all": "all"}
# Every op of the registry that `apply` implements.
SUPPORTED = frozenset({*OPERATORS, *TENSOR_ONLY, *UNARY, *REDUCE_DIMS, "var", "std", "prod",
                       "argmax", "argmin", "where", "clip", "astype", "matmul", "tensordot",
                       "reshape", "permute_dims", "expand_dims", "squeeze", "broadcast_to",
                       "flip", "matrix_transpose", "concat", "stack", "take", "getitem",
                       "cumulative_sum", "tril", "triu", "take_along_axis",
                       "setitem", "asarray", "zeros", "ones", "full", "eye", "arange",
                       "linspace", "zeros_like", "ones_like", "full_like"})

# The linalg extension's keywords torch spells differently (``torch.linalg``'s ``dim``, ...).
LINALG_KEYWORDS = {"axis": "dim", "keepdims": "keepdim"}
FFT_KEYWORDS = {"axis": "dim", "axes": "dim"}


def _axes(ndim: int, axis: AxisArg) -> tuple[int, ...]:
    """The axes ``axis`` names (``None``: all of them), non-negative, as a tuple.

    Example:
        >>> _axes(3, None), _axes(3, -1), _axes(3, (0, -2))
        ((0, 1, 2), (2,), (0, 1))
    """
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a + ndim if a < 0 and ndim else a for a in axes)


class TorchOps:
    """The spec's ops in torch on ``device``: what ``TorchLazyAdapter.apply`` calls.

    Example:
        >>> "add" in SUPPORTED, "cumsum" in SUPPORTED
        (True, False)
    """

    torch: ModuleType
    device: TorchDevice
    name: str
    _to_torch: dict[np.dtype[Any], TorchDtype]
    _to_numpy: dict[TorchDtype, np.dtype[Any]]

    def _dtype(self, dtype: DTypeArg) -> TorchDtype:
        return None if dtype is None else self._to_torch[np.dtype(dtype)]

    def _tensor(self, value: Any) -> TorchTensor:
        """A tensor for a tensor-only torch argument: a Python scalar becomes a 0-d tensor."""
        if isinstance(value, bool | int | float):
            return self.torch.tensor(value, device=self.device)
        return value

    def _reduce(self, x: TorchTensor, axis: AxisArg, keepdims: bool) -> tuple[Any, dict[str, Any]]:
        """``(x, {dim, keepdim})`` for a torch reduction over the spec's ``axis``.

        The axes are spelled as the spec call spells them (one axis as an int, several as a
        tuple, all of them by leaving ``dim`` out). torch's ``dim=()`` means every axis, so no
        axis at all is a unit axis appended to ``x`` and reduced (which also drops it).
        """
        if isinstance(axis, tuple | list) and not axis:
            return x.unsqueeze(-1), {"dim": -1}
        if axis is None:
            if keepdims and x.dim():
                return x, {"dim": tuple(range(x.dim())), "keepdim": True}
            return x, {}
        return x, {"dim": axis if isinstance(axis, int) else tuple(axis), "keepdim": keepdims}

    def apply(self, op: str, *args: Any, **kwargs: Any) -> TorchTensor:
        torch = self.torch
        if op in OPERATORS:
            return OPERATORS[op](*args)
        if op in TENSOR_ONLY:
            return getattr(torch, TENSOR_ONLY[op])(*map(self._tensor, args))
        if op in UNARY:
            return getattr(torch, UNARY[op])(*args)
        if op in REDUCE_DIMS or op in ("var", "std"):
            x, kw = self._reduce(args[0], kwargs.get("axis"), kwargs.get("keepdims", False))
            if op in ("var", "std"):
                kw["correction"] = kwargs.get("correction", 0)
            return getattr(torch, REDUCE_DIMS.get(op, op))(x, **kw)
        if op == "prod":
            return self._prod(args[0], kwargs.get("axis"), kwargs.get("keepdims", False))
        if op in ("argmax", "argmin"):
            return getattr(torch, op)(args[0], dim=kwargs.get("axis"),
                                      keepdim=kwargs.get("keepdims", False))
        method = getattr(self, f"_{op}", None)
        if method is None:
            raise NotImplementedError(f"{self.name}: no translation of op {op!r}")
        return method(*args, **kwargs)

    def _prod(self, x: TorchTensor, axis: AxisArg, keepdims: bool) -> TorchTensor:
        x, kw = self._reduce(x, axis, keepdims)
        dims = kw.get("dim", ())
        if isinstance(dims, int) or not kw:
            return self.torch.prod(x, **kw)
        # torch.prod takes one axis: move the reduced axes last and flatten them into one.
        dims = _axes(x.dim(), dims)
        kept = tuple(a for a in range(x.dim()) if a not in dims)
        flat = x.permute(kept + dims).reshape(*(x.shape[a] for a in kept), -1)
        out = self.torch.prod(flat, dim=-1)
        if kw.get("keepdim"):
            out = out.reshape(tuple(1 if a in dims else n for a, n in enumerate(x.shape)))
        return out

    def _where(self, condition: TorchTensor, x1: TorchTensor, x2: TorchTensor) -> TorchTensor:
        return self.torch.where(condition, x1, x2)

    def _clip(self, x: TorchTensor, min: Number | None = None,
              max: Number | None = None) -> TorchTensor:
        return self.torch.clamp(x, min, max)

    def _astype(self, x: TorchTensor, dtype: DTypeArg, copy: bool = True) -> TorchTensor:
        return x.to(self._dtype(dtype), copy=copy)

    def _matmul(self, x1: TorchTensor, x2: TorchTensor) -> TorchTensor:
        return self.torch.matmul(x1, x2)

    def _tensordot(self, x1: TorchTensor, x2: TorchTensor,
                   axes: int | Sequence[Sequence[int]] = 2) -> TorchTensor:
        dims = axes if isinstance(axes, int) else [list(a) for a in axes]
        return self.torch.tensordot(x1, x2, dims=dims)

    def _reshape(self, x: TorchTensor, shape: ShapeArg, copy: bool | None = None) -> TorchTensor:
        return self.torch.reshape(x, tuple(shape) if not isinstance(shape, int) else (shape,))

    def _permute_dims(self, x: TorchTensor, axes: Sequence[int]) -> TorchTensor:
        return self.torch.permute(x, tuple(axes))

    def _expand_dims(self, x: TorchTensor, axis: int | Sequence[int] = 0) -> TorchTensor:
        if isinstance(axis, int):
            return self.torch.unsqueeze(x, axis)
        ndim = x.dim() + len(axis)  # several new axes, placed in the result as NumPy does
        for a in sorted(a + ndim if a < 0 else a for a in axis):
            x = self.torch.unsqueeze(x, a)
        return x

    def _squeeze(self, x: TorchTensor, axis: AxisArg = None) -> TorchTensor:
        if axis is None:
            return self.torch.squeeze(x)
        return self.torch.squeeze(x, _axes(x.dim(), axis))

    def _broadcast_to(self, x: TorchTensor, shape: Sequence[int]) -> TorchTensor:
        return self.torch.broadcast_to(x, tuple(shape))

    def _flip(self, x: TorchTensor, axis: AxisArg = None) -> TorchTensor:
        return self.torch.flip(x, _axes(x.dim(), axis))

    def _matrix_transpose(self, x: TorchTensor) -> TorchTensor:
        return self.torch.transpose(x, -2, -1)

    def _concat(self, arrays: Sequence[TorchTensor], axis: int | None = 0) -> TorchTensor:
        if axis is None:
            return self.torch.cat([a.reshape(-1) for a in arrays])
        return self.torch.cat(list(arrays), dim=axis)

    def _stack(self, arrays: Sequence[TorchTensor], axis: int = 0) -> TorchTensor:
        return self.torch.stack(list(arrays), dim=axis)

    def _take(self, x: TorchTensor, indices: Any, axis: int | None = None) -> TorchTensor:
        if axis is None:
            return self.torch.take(x, indices)
        # The Array API defines take(x, i, axis=a) as x[:, ..., :, i] with a slices before i.
        return x[(slice(None),) * _axes(x.dim(), axis)[0] + (indices,)]

    def _cumulative_sum(self, x: TorchTensor, axis: int | None = None, dtype: DTypeArg = None,
                        include_initial: bool = False) -> TorchTensor:
        if axis is None:  # 1-d x only (NumPy flattens): the flattened tensor
            x, axis = x.reshape(-1), 0
        y = self.torch.cumsum(x, dim=axis, dtype=self._dtype(dtype))
        if not include_initial:
            return y
        zeros = list(y.shape)
        zeros[_axes(y.dim(), axis)[0]] = 1
        return self.torch.cat([y.new_zeros(zeros), y], dim=axis)

    def _tril(self, x: TorchTensor, k: int = 0) -> TorchTensor:
        return self.torch.tril(x, diagonal=k)

    def _triu(self, x: TorchTensor, k: int = 0) -> TorchTensor:
        return self.torch.triu(x, diagonal=k)

    def _take_along_axis(self, x: TorchTensor, indices: TorchTensor,
                         axis: int = -1) -> TorchTensor:
        return self.torch.take_along_dim(x, indices, dim=axis)

    # -- convolution and pooling (capability ``conv``): torch.nn.functional, the oracle's layout --

    def conv2d(self, x: TorchTensor, w: TorchTensor, b: TorchTensor | None = None, *,
               stride: PairArg = 1, padding: PairArg = 0, dilation: PairArg = 1,
               groups: int = 1) -> TorchTensor:
        """``torch.nn.functional.conv2d``."""
        return self.torch.nn.functional.conv2d(x, w, b, stride=stride, padding=padding,
                                               dilation=dilation, groups=groups)

    def max_pool2d(self, x: TorchTensor, kernel_size: PairArg, stride: PairArg | None = None,
                   padding: PairArg = 0) -> TorchTensor:
        """``torch.nn.functional.max_pool2d``."""
        return self.torch.nn.functional.max_pool2d(x, kernel_size, stride, padding)

    def avg_pool2d(self, x: TorchTensor, kernel_size: PairArg, stride: PairArg | None = None,
                   padding: PairArg = 0) -> TorchTensor:
        """``torch.nn.functional.avg_pool2d`` (padded zeros count, its default)."""
        return self.torch.nn.functional.avg_pool2d(x, kernel_size, stride, padding)

    # -- sorts and the linalg extension (capability ``linalg``): torch's, spelled as torch does --

    def sort(self, x: TorchTensor, *, axis: int = -1, descending: bool = False) -> TorchTensor:
        """``torch.sort(stable=True)``'s values (NaNs sort above every number, as the spec's)."""
        return self.torch.sort(x, dim=axis, descending=descending, stable=True).values

    def argsort(self, x: TorchTensor, *, axis: int = -1, descending: bool = False
                ) -> TorchTensor:
        """``torch.argsort(stable=True)``: ties keep their order, also descending."""
        return self.torch.argsort(x, dim=axis, descending=descending, stable=True)

    def linalg(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """``torch.linalg.<name>``, its arguments spelled as torch's (``LINALG_KEYWORDS``).

        ``axis``/``keepdims`` become ``dim``/``keepdim``; ``solve``'s ``x2`` of ``x1.ndim - 1``
        dimensions, a stack of matrices to the standard, gets a unit batch axis in front, since
        torch would take it for a stack of vectors; the few functions ``torch.linalg`` lacks
        are the torch functions of the same meaning; several results come back as a tuple.
        """
        torch = self.torch
        kwargs = {LINALG_KEYWORDS.get(k, k): v for k, v in kwargs.items()}
        if name == "solve" and args[1].dim() > 1 and args[1].dim() == args[0].dim() - 1:
            args = (args[0], args[1].unsqueeze(0))
        if name == "trace":
            diagonal = torch.diagonal(args[0], kwargs.get("offset", 0), -2, -1)
            return diagonal.sum(-1, dtype=self._dtype(kwargs.get("dtype")))
        if name == "matrix_transpose":
            return torch.transpose(args[0], -2, -1)
        if name == "outer":
            return torch.outer(*args)
        if name == "tensordot":
            return self._tensordot(*args, **kwargs)
        out = getattr(torch.linalg, name)(*args, **kwargs)
        return tuple(out) if isinstance(out, tuple) else out

    def fft(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """``torch.fft.<name>``, ``axis``/``axes`` spelled ``dim`` (``FFT_KEYWORDS``).

        ``fftfreq`` and ``rfftfreq`` get torch's dtype and this adapter's device.
        """
        kwargs = {FFT_KEYWORDS.get(k, k): v for k, v in kwargs.items()}
        if name in ("fftfreq", "rfftfreq"):
            kwargs.update(dtype=self._dtype(kwargs.get("dtype")), device=self.device)
        return getattr(self.torch.fft, name)(*args, **kwargs)

    def optim(self, name: str, params: Sequence[TorchTensor], grads: Sequence[TorchTensor],
              state: Any, **hyper: float) -> tuple[list[TorchTensor], Any]:
        """``torch.optim``'s ``SGD``, ``Adam`` or ``AdamW`` (the state), stepping in place."""
        if state is None:
            optim, lr = self.torch.optim, hyper["lr"]
            betas, eps = (hyper.get("b1", 0.9), hyper.get("b2", 0.999)), hyper.get("eps", 1e-8)
            decay = hyper.get("weight_decay", 0.0)
            state = (optim.SGD(list(params), lr, momentum=hyper.get("momentum", 0.0))
                     if name == "sgd" else optim.AdamW(list(params), lr, betas, eps, decay)
                     if decay else optim.Adam(list(params), lr, betas, eps))
        for group in state.param_groups:
            group["lr"] = hyper["lr"]
        for p, g in zip(params, grads):
            p.grad = g
        with self.torch.no_grad():
            state.step()
        return list(params), state

    def _getitem(self, x: TorchTensor, key: Any) -> TorchTensor:
        return x[key]

    def _setitem(self, x: TorchTensor, key: Any, value: Any) -> TorchTensor:
        x[key] = value
        return x

    # -- creation -----------------------------------------------------------------------------

    def _asarray(self, obj: Any, dtype: DTypeArg = None, device: object = None,
                 copy: bool | None = None) -> TorchTensor:
        return self.torch.asarray(obj, dtype=self._dtype(dtype), device=self.device)

    def _zeros(self, shape: ShapeArg, dtype: DTypeArg = None, device: object = None) -> TorchTensor:
        return self.torch.zeros(shape, dtype=self._dtype(dtype), device=self.device)

    def _ones(self, shape: ShapeArg, dtype: DTypeArg = None, device: object = None) -> TorchTensor:
        return self.torch.ones(shape, dtype=self._dtype(dtype), device=self.device)

    def _full(self, shape: ShapeArg, fill_value: Number, dtype: DTypeArg = None,
              device: object = None) -> TorchTensor:
        return self.torch.full(shape, fill_value, dtype=self._dtype(dtype), device=self.device)

    def _eye(self, n_rows: int, n_cols: int | None = None, k: int = 0, dtype: DTypeArg = None,
             device: object = None) -> TorchTensor:
        m = n_rows if n_cols is None else n_cols
        kw = {"dtype": self._dtype(dtype), "device": self.device}
        if k >= 0:  # torch.eye has no diagonal offset: a taller identity, its first k rows cut
            return self.torch.eye(n_rows + k, m, **kw)[k:]
        return self.torch.eye(n_rows, m - k, **kw)[:, -k:]

    def _arange(self, start: Number, stop: Number | None = None, step: Number = 1,
                dtype: DTypeArg = None,
                device: object = None) -> TorchTensor:
        kw = {"dtype": self._dtype(dtype), "device": self.device}
        if stop is None:
            return self.torch.arange(start, **kw)
        return self.torch.arange(start, stop, step, **kw)

    def _linspace(self, start: Number, stop: Number, num: int, dtype: DTypeArg = None,
                  device: object = None, endpoint: bool = True) -> TorchTensor:
        kw = {"dtype": self._dtype(dtype), "device": self.device}
        if endpoint:
            return self.torch.linspace(start, stop, num, **kw)
        # The same step, (stop - start) / num: num + 1 points with the endpoint, less the last.
        return self.torch.linspace(start, stop, num + 1, **kw)[:num]

    def _zeros_like(self, x: TorchTensor, dtype: DTypeArg = None,
                    device: object = None) -> TorchTensor:
        return self.torch.zeros_like(x, dtype=self._dtype(dtype))

    def _ones_like(self, x: TorchTensor, dtype: DTypeArg = None,
                   device: object = None) -> TorchTensor:
        return self.torch.ones_like(x, dtype=self._dtype(dtype))

    def _full_like(self, x: TorchTensor, fill_value: Number, dtype: DTypeArg = None,
                   device: object = None) -> TorchTensor:
        return self.torch.full_like(x, fill_value, dtype=self._dtype(dtype))

    # -- optional methods ---------------------------------------------------------------------

    def inplace(self, op: str, x: TorchTensor, other: Any) -> TorchTensor:
        return INPLACE[op](x, other)

    def shape(self, x: TorchTensor) -> tuple[int, ...]:
        return tuple(int(n) for n in x.shape)

    def dtype(self, x: TorchTensor) -> np.dtype[Any]:
        return self._to_numpy[x.dtype]
