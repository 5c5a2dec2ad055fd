r"""PyTorch's lazy tensors as implementations under test: ``torch._lazy`` and PyTorch/XLA.

Factories ``ltc`` (Lazy Tensor Core with its TorchScript backend, device ``lazy``) and ``xla``
(PyTorch/XLA, on its CPU PJRT client with ``PJRT_DEVICE=CPU``)::

    pytest --pyargs minilazy.conformance --hypothesis-profile=ci \\
        --lazy-impl=minilazy.conformance.adapters.torch_lazy:ltc --spec-report=ltc.json

torch is imported by the factories, never by this module, which imports without it.

What the adapter translates, and what it does not. ``apply`` calls, for each spec op, the torch
function (or Python operator) whose documented meaning is that op's: ``divide`` is ``/`` (true
division), ``floor_divide`` ``//`` (floor rounding), ``remainder`` ``%`` (the divisor's sign),
``round`` ``torch.round`` (half to even), ``take`` the indexing it is defined as,
``cumulative_sum`` ``torch.cumsum`` (a zero row in front for ``include_initial``),
``take_along_axis`` ``torch.take_along_dim``, ``tril``/``triu`` take ``diagonal``. It translates
the call's *spelling* where torch spells the same thing differently: ``axis`` and ``keepdims``
become ``dim`` and ``keepdim``; ``axis=None`` names every axis; ``axis=()`` (no axis at all,
which torch's ``dim=()`` does not mean) reduces a unit axis appended for the purpose;
``prod`` over several axes reduces them flattened into one; ``concat(axis=None)`` flattens
first; ``eye(k=...)`` slices a larger identity; ``linspace(endpoint=False)`` drops the last of
``num + 1`` points; NumPy dtypes become torch dtypes. A Python scalar goes to torch as a Python
scalar wherever torch takes one (every op with a Python operator); where a torch function takes
only tensors (``maximum``, ``minimum``, ``atan2``, ``logical_*``) it becomes a 0-d tensor, the
form torch's type promotion treats as it treats a scalar (a 0-d operand never widens a
dimensioned operand of its own kind).

It never casts values, picks a result dtype, converts an exception, or sets a global default
(``torch.set_default_dtype``) to match NumPy: where torch's result dtype, default dtype, error
type or value differs from NumPy's, the oracle reports it, and that is a finding about the
peer, not about the adapter.

Capabilities are the ones each peer really has: counters (read from its metrics after waiting
for its device), graph keys (its graph hash), IR and compiled-program dumps, pending state (from
the IR), ``sync``, ``setitem`` (torch's in-place ops rebind the tensor), 64-bit dtypes,
metadata, gradients (torch.autograd), convolution and pooling (``conv``:
``torch.nn.functional``'s, whose layout the oracle's is) and the sorts and linalg extension
(``linalg``: ``torch.sort``/``torch.argsort`` with ``stable=True``, ``torch.linalg``, and for
the four functions it lacks a diagonal's sum (``trace``), ``torch.transpose``,
``torch.outer`` and ``torch.tensordot``); PyTorch/XLA also has an eager mode
and buffer donation. Neither can forget its compiled programs (no ``reset``), cuts long graphs
by itself (no ``autocut``), or has two devices here (no ``devices``).

Test coverage: this module runs only where torch is installed (the peers' environments), so
minilazy's own test suite exercises nothing here but the doctests below; the oracle's runs on
the peers (``nox -s conformance_ltc``) are its tests, and their reports are kept in
``docs/_generated/reports/``.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from types import ModuleType
from typing import Any, TypeAlias

import numpy as np

from minilazy.conformance.adapter import Counters
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


class TorchLazyAdapter:
    """A torch lazy device as the conformance suite drives it (the part both peers share).

    Subclasses supply the backend: the barrier, ``sync``, counters, keys, dumps and pending
    state. Everything else is torch's public tensor API on ``device`` (and its autograd).

    Example:
        >>> "add" in SUPPORTED, "cumsum" in SUPPORTED
        (True, False)
    """

    name = "torch"
    version = ""
    capabilities: frozenset[str] = frozenset()

    def __init__(self, torch: ModuleType, device: TorchDevice) -> None:
        self.torch, self.device = torch, device
        self._to_torch: dict[np.dtype[Any], TorchDtype] = {}
        self._to_numpy: dict[TorchDtype, np.dtype[Any]] = {}
        for name in DTYPE_NAMES:
            dtype = np.dtype(name)
            tdt = torch.from_numpy(np.zeros(0, dtype)).dtype
            self._to_torch[dtype], self._to_numpy[tdt] = tdt, dtype

    # -- the backend (subclasses) -------------------------------------------------------------

    def _mark_step(self) -> None:
        raise NotImplementedError

    def _wait(self) -> None:
        """Wait for the device's queued work (and raise an error it left behind)."""

    def _raw_counters(self) -> dict[str, int]:
        """The backend's counters by name."""
        return {}

    # -- data in and out ----------------------------------------------------------------------

    def supports(self, op: str) -> bool:
        """Whether ``apply`` implements ``op`` (every op of today's registry)."""
        return op in SUPPORTED

    def from_numpy(self, array: Array) -> TorchTensor:
        # A C-contiguous copy: torch.from_numpy shares memory and refuses negative strides.
        return self.torch.from_numpy(np.array(array, order="C", copy=True)).to(self.device)

    def to_numpy(self, x: TorchTensor) -> Array:
        # A gradient may require grad (torch's numpy() refuses it); detaching only then keeps
        # the common case free of an extra op (torch._lazy counts aten::detach as a fallback).
        y = x.detach() if x.requires_grad else x
        value: Array = np.asarray(self._drained(lambda: y.cpu().numpy()))
        return value

    def barrier(self) -> None:
        self._drained(self._mark_step)

    def isolate(self) -> None:
        try:  # what earlier tests left pending: materialised now, not in the next test
            self.barrier()
        except Exception:
            pass

    def _drained(self, run: Callable[[], Any]) -> TorchTensor:
        """``run()``, re-raising its error after waiting for the device.

        torch._lazy raises a failed execution's error again at the next execution: waiting
        consumes it, so that it is not blamed on a later, unrelated test.
        """
        try:
            return run()
        except Exception:
            try:
                self._wait()
            except Exception:  # the same error again, now consumed
                pass
            raise

    def grad(self, f: Callable[..., Any], argnums: tuple[int, ...]) -> Callable[..., Any]:
        """``torch.autograd.grad`` of ``f`` with respect to the arguments ``argnums``.

        Tensors of an argument (a tensor, or lists, tuples and dicts of them) are detached
        copies that require grad, unless one already does: then ``f`` runs inside an outer
        ``grad``, and the tensor is used as is, with ``create_graph`` so the outer one can
        differentiate the result.
        """
        pytree = importlib.import_module("torch.utils._pytree")

        def gradient(*args: Any) -> tuple[Any, ...]:
            args_, specs, leaves, nested = list(args), [], [], False
            for i in argnums:
                flat, spec = pytree.tree_flatten(args[i])
                nested = nested or any(x.requires_grad for x in flat)
                flat = [x if x.requires_grad else x.detach().requires_grad_(True) for x in flat]
                args_[i] = pytree.tree_unflatten(flat, spec)
                specs.append((spec, len(flat)))
                leaves.extend(flat)
            # An argument f does not use has a zero gradient (as in ml.grad and jax.grad).
            out = self.torch.autograd.grad(f(*args_), leaves, create_graph=nested,
                                           allow_unused=True, materialize_grads=True)
            grads, start = [], 0
            for spec, n in specs:
                grads.append(pytree.tree_unflatten(list(out[start:start + n]), spec))
                start += n
            return tuple(grads)

        return gradient

    # -- ops ----------------------------------------------------------------------------------

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

    def counters(self) -> Counters:
        self._wait()  # counters are updated as queued executions finish
        c = self._raw_counters()
        fallbacks = sum(v for k, v in c.items() if k.startswith("aten::"))
        return Counters(ops_recorded=c.get("ops", 0), compiles=c.get("UncachedCompile", 0),
                        cache_hits=c.get("CachedCompile", 0),
                        executions=c.get("executions", 0) + fallbacks,
                        donations=c.get("donations", 0))


def _counters(names: Sequence[str], value: Callable[[str], Any]) -> dict[str, int]:
    return {name: int(value(name) or 0) for name in names}


class LtcAdapter(TorchLazyAdapter):
    """``torch._lazy`` (Lazy Tensor Core) on its TorchScript backend, device ``lazy``.

    Counters come from ``torch._lazy.metrics``: compiles are ``UncachedCompile``, cache hits
    ``CachedCompile``, executions one per compile or hit plus one per op that fell back to
    eager CPU (the ``aten::*`` counters), ops recorded the ``lazy::*`` counters. Keys are
    ``get_graph_hash``; ``ir`` is the LTC IR and ``hlo`` the TorchScript graph the backend
    compiles; a tensor is pending while its IR is more than a ``device_data`` node.

    Example:
        >>> LtcAdapter.name
        'torch-lazy'
    """

    name = "torch-lazy"
    capabilities = frozenset({"counters", "keys", "pending", "ir", "hlo", "setitem", "sync",
                              "float64", "metadata", "autodiff", "conv", "linalg", "fft",
                              "optim"})

    def __init__(self, torch: ModuleType) -> None:
        self.lazy = importlib.import_module("torch._lazy")
        importlib.import_module("torch._lazy.ts_backend").init()
        importlib.import_module("torch._lazy.metrics")
        super().__init__(torch, torch.device("lazy"))
        self.version = str(torch.__version__)

    def _mark_step(self) -> None:
        self.lazy.mark_step(wait=True)

    def sync(self, *xs: TorchTensor) -> None:
        self._drained(lambda: self.lazy.sync_multi(list(xs), [str(self.device)]))

    def _wait(self) -> None:
        self.lazy.wait_device_ops()

    def _raw_counters(self) -> dict[str, int]:
        c = _counters(self.lazy.metrics.counter_names(), self.lazy.metrics.counter_value)
        c["ops"] = sum(v for k, v in c.items() if k.startswith("lazy::"))
        c["executions"] = c.get("UncachedCompile", 0) + c.get("CachedCompile", 0)
        return c

    def key(self, *xs: TorchTensor) -> str:
        return str(self.torch._C._lazy._get_graph_hash(list(xs)).hex())

    def ir(self, *xs: TorchTensor) -> str:
        return str(self.torch._C._lazy._get_tensors_text(list(xs)))

    def hlo(self, *xs: TorchTensor) -> str:
        return str(self.torch._C._lazy._get_tensors_backend(list(xs)))

    def is_pending(self, x: TorchTensor) -> bool:
        nodes = [line for line in self.ir(x).splitlines() if line.strip().startswith("%")]
        return any("device_data" not in line for line in nodes)


class XlaAdapter(TorchLazyAdapter):
    """PyTorch/XLA on its PJRT client (``PJRT_DEVICE=CPU``: the CPU), device ``xla:0``.

    Counters come from ``torch_xla.debug.metrics``: compiles ``UncachedCompile``, cache hits
    ``CachedCompile``, executions ``ExecuteComputation`` plus one per op that fell back to
    eager CPU (``aten::*``), ops recorded the ``xla::*`` counters, donations the buffers
    aliased to outputs (the ``InputOutputAliasCount`` metric). Keys are ``_get_graph_hash``,
    ``ir`` the lazy IR, ``hlo`` the HLO module; a tensor is pending while it has IR and no
    device data. Eager mode is ``torch_xla.experimental.eager_mode_context``.

    Example:
        >>> sorted(XlaAdapter.capabilities - LtcAdapter.capabilities)
        ['donation', 'eager']
    """

    name = "torch-xla"
    capabilities = frozenset({"counters", "keys", "pending", "ir", "hlo", "setitem", "sync",
                              "float64", "metadata", "autodiff", "eager", "donation", "conv",
                              "linalg", "fft", "optim"})

    def __init__(self, torch: ModuleType) -> None:
        self.xla = importlib.import_module("torch_xla")
        self.xm = importlib.import_module("torch_xla.core.xla_model")
        self.met = importlib.import_module("torch_xla.debug.metrics")
        self.experimental = importlib.import_module("torch_xla.experimental")
        super().__init__(torch, self.xla.device())
        self.version = f"{self.xla.__version__} (torch {torch.__version__})"

    def _mark_step(self) -> None:
        self.xla.sync(wait=True)

    def barrier(self) -> None:
        """``mark_step``, once more after a garbage collection when a dead tensor failed it.

        torch cuts every tensor Python has not freed yet. A tensor whose execution failed in an
        earlier test, kept only by a reference cycle of that test's traceback, is dead (spec,
        "Terms"), but PyTorch/XLA's mark_step fails on it ("Check failed: tensor_data") for as
        long as it exists: that failure is blamed on the test that made it, not the next ones.
        Only that failure is retried: a live tensor's (out of memory, a failed lowering) must be
        raised, and a retry would hide it, since the failed graph is dropped (torch._lazy drops
        it too, and never fails on dead tensors: it does not retry).
        """
        try:
            super().barrier()
        except Exception as error:
            if "Check failed: tensor_data" not in str(error) or not gc.collect():
                raise
            super().barrier()

    def sync(self, *xs: TorchTensor) -> None:
        self._drained(lambda: self.xla._XLAC._xla_sync_multi(list(xs), [str(self.device)],
                                                              wait=True))

    def _wait(self) -> None:
        self.xm.wait_device_ops()

    def _raw_counters(self) -> dict[str, int]:
        c = _counters(self.met.counter_names(), self.met.counter_value)
        c["ops"] = sum(v for k, v in c.items() if k.startswith("xla::"))
        c["executions"] = c.get("ExecuteComputation", 0)
        aliased = self.met.metric_data("InputOutputAliasCount")
        c["donations"] = int(aliased[1]) if aliased else 0
        return c

    def key(self, *xs: TorchTensor) -> str:
        return str(self.xla._XLAC._get_graph_hash(list(xs)).hex())

    def ir(self, *xs: TorchTensor) -> str:
        return str(self.xla._XLAC._get_xla_tensors_text(list(xs)))

    def hlo(self, *xs: TorchTensor) -> str:
        return str(self.xla._XLAC._get_xla_tensors_hlo(list(xs)))

    def is_pending(self, x: TorchTensor) -> bool:
        info = str(self.xla._XLAC._get_xla_tensor_debug_info(x))
        return "XLAData: None" in info

    def eager(self) -> AbstractContextManager[Any]:
        return self._eager()

    @contextmanager
    def _eager(self) -> Iterator[None]:
        with self.experimental.eager_mode_context(True):
            yield


def ltc() -> LtcAdapter:
    """``torch._lazy`` on its TorchScript backend (raises ``ImportError`` without torch).

    Example:
        >>> try:
        ...     ltc().name
        ... except ImportError:  # torch is not installed here
        ...     'torch-lazy'
        'torch-lazy'
    """
    return LtcAdapter(importlib.import_module("torch"))


def xla() -> XlaAdapter:
    """PyTorch/XLA on ``PJRT_DEVICE``'s client (raises ``ImportError`` without torch_xla).

    Example:
        >>> try:
        ...     xla().name
        ... except ImportError:  # torch_xla is not installed here
        ...     'torch-xla'
        'torch-xla'
    """
    return XlaAdapter(importlib.import_module("torch"))
