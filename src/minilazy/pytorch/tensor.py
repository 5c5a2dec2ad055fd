"""The lazy ``torch.Tensor``: a wrapper that holds a minilazy tensor, and the dispatcher under it.

PyTorch calls ``__torch_dispatch__`` for every aten op on a :class:`LazyTensor`, *below* its
autograd: the forward, the backward that ``loss.backward()`` runs and ``torch.optim``'s updates
arrive here as aten ops, each recorded as minilazy ops on the tensors' values. Nothing runs until
a barrier (:func:`mark_step`, or ``.item()``, ``.cpu()``, ``.tolist()``, ``.numpy()``, printing).
One op (:func:`dispatch`):

1. **Shapes, dtypes and errors are PyTorch's**: the op runs first on ``meta`` tensors (no data).
2. **Values are minilazy's**: its rule (:data:`minilazy.pytorch.aten.ATEN`) records it; the
   result must have the meta result's shape (a rule that disagrees raises, never a wrong value).
3. **Writes are rebindings (functionalization)**: a view shares its base's :class:`Storage` and
   keeps the :class:`View` steps that made it. A write through it computes the base's new value
   (each step's ``put``) and bumps the storage's version; every view of it reads itself again
   from the base: ``x[0].add_(1)`` changes ``x``, with no memory shared underneath.

Example:
    >>> import torch
    >>> from minilazy.pytorch import lazy, mark_step
    >>> x = lazy(torch.arange(6.0).reshape(2, 3))
    >>> row = x[1]
    >>> _ = row.mul_(10)        # a write through a view: recorded, not run
    >>> x.sum().item()          # an observation: x sees the write
    123.0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

import minilazy as ml
from minilazy.pytorch.aten import Aten, foreach
from minilazy.pytorch.calls import DTYPES, Call, View, described, ml_dtype
from minilazy.pytorch.device import BACKEND, DEVICE
from minilazy.pytorch.views import IDENTITY

TORCH_DTYPES = {np.dtype(v): k for k, v in DTYPES.items()}


class Storage:
    """What a tensor and all its views share: the base tensor's value, and its version."""

    __slots__ = ("value", "version")

    def __init__(self, value: ml.Tensor) -> None:
        self.value, self.version = value, 0


class LazyTensor(torch.Tensor):
    """A ``torch.Tensor`` on device ``minilazy:0`` whose value is a lazy minilazy tensor.

    Made by :func:`minilazy.pytorch.lazy`, by factories given ``device=x.device``, and by every
    op on lazy tensors. ``.item()``, ``.cpu()``, ``.tolist()``, ``.numpy()`` and printing are
    observations: barriers that run what is pending.

    Example:
        >>> import torch
        >>> from minilazy.pytorch import lazy
        >>> y = lazy(torch.ones(2, dtype=torch.int32)) + 1.5   # PyTorch's promotion
        >>> y.dtype, y.device, y.tolist()
        (torch.float32, device(type='minilazy', index=0), [2.5, 2.5])
    """

    storage_: Storage
    views_: tuple[View, ...]
    value_: ml.Tensor
    seen_: int
    missing_: str = ""  # what this tensor would be, where minilazy does not compute it
    error_: Exception | None = None  # the error it holds, where the op that made it failed
    sig_: tuple[Any, ...]

    @staticmethod
    def __new__(cls, value: ml.Tensor, storage: Storage | None = None,
                views: tuple[View, ...] = (), requires_grad: bool = False,
                missing: str = "", error: Exception | None = None,
                strides: tuple[int, ...] | None = None) -> LazyTensor:
        dtype = TORCH_DTYPES[value.dtype]
        t: LazyTensor = torch.Tensor._make_wrapper_subclass(
            cls, value.shape, device=DEVICE, dtype=dtype, requires_grad=requires_grad,
            strides=strides)
        t.storage_ = storage if storage is not None else Storage(value)
        t.views_, t.value_, t.seen_ = views, value, t.storage_.version
        if missing or error is not None:
            t.missing_, t.error_ = missing, error
        t.sig_ = (value.shape, dtype, BACKEND)  # what the meta results depend on
        return t

    @property
    def value(self) -> ml.Tensor:
        """The current value: read again from the base when a write has made it stale."""
        if self.seen_ != self.storage_.version:
            v = self.storage_.value
            for view in self.views_:
                v = view.get(v)
            self.value_, self.seen_ = v, self.storage_.version
        return self.value_

    def write(self, value: ml.Tensor) -> None:
        """Rebind this tensor, and so its base and every view of it, to ``value``."""
        shape, dtype = tuple(self.shape), ml_dtype(self.dtype)
        if value.dtype != dtype:
            value = ml.astype(value, dtype)
        if value.shape != shape:
            value = ml.broadcast_to(value, shape)
        new, storage = value, self.storage_
        if self.views_:  # the base's new value: each step's put, from this view back to it
            parents = [storage.value]
            for view in self.views_[:-1]:
                parents.append(view.get(parents[-1]))
            for view, parent in zip(reversed(self.views_), reversed(parents)):
                new = view.put(parent, new)
        storage.value = new
        storage.version += 1
        self.value_, self.seen_ = value, storage.version

    def numpy(self, *, force: bool = False) -> np.ndarray[Any, Any]:
        """The value as a NumPy array (a barrier); refused with grad, as for any tensor."""
        host: np.ndarray[Any, Any] = self.cpu().numpy(force=force)
        return host

    def tolist(self) -> Any:
        """The value as nested Python lists (a barrier)."""
        return self.detach().cpu().tolist()

    def __repr__(self, *args: Any, **kwargs: Any) -> str:
        text = repr(self.detach().cpu())  # an observation: printing reads the value
        tail = f", device='{self.device}'"
        if self.grad_fn is not None:
            tail += f", grad_fn=<{type(self.grad_fn).__name__}>"
        elif self.requires_grad:
            tail += ", requires_grad=True"
        return text[:-1] + tail + ")"

    @classmethod
    def __torch_dispatch__(cls, func: torch._ops.OpOverload, types: Any,
                           args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None) -> Any:
        try:
            return dispatch(func, tuple(args), kwargs or {})
        except Exception as error:
            if torch._C._current_autograd_node() is None:
                raise
            return _failed(func, tuple(args), kwargs or {}, error)


# -- the dispatcher ----------------------------------------------------------------------------

# Ops that may take a CPU tensor of any shape beside lazy ones (as PyTorch's CUDA ops do): the
# value is sent to the device. Elsewhere only a 0-d CPU tensor may (as a scalar).
TAKES_HOST = frozenset({"copy", "index", "index_put"})
# The results of an op that minilazy does not compute (max_pool2d's indices): reading one is an
# error, passing it back to the op's backward is not.
MISSING_OK = frozenset({"max_pool2d_with_indices_backward"})


# The meta results of each op by its arguments' signature: PyTorch's meta kernels cost 50 to 300
# us a call (many are Python), a lookup 2 us. A Python number the schema types ``Scalar`` (or
# passes for a Tensor) counts by its type alone: a changing learning rate is one entry. Any
# other number counts by its type and value (``False == 0`` as dict keys: not the same here).
METAS: dict[Any, tuple[Any, list[Any], tuple[tuple[int, ...], Any]]] = {}
METAS_KEPT = 4096


def _signature(a: Any) -> Any:
    """What of an argument the meta result depends on."""
    if type(a) is LazyTensor:
        return a.sig_
    if isinstance(a, torch.Tensor):
        return (a.shape, a.dtype, a.device.type)
    if isinstance(a, list | tuple):
        return tuple(_signature(x) for x in a)
    return (type(a), a)


def _meta(a: Any, op: Aten) -> Any:
    """An argument as PyTorch's meta device sees it: shape and dtype, no data."""
    if isinstance(a, LazyTensor):
        return torch.empty(a.shape, dtype=a.dtype, device="meta")
    if isinstance(a, torch.Tensor):
        if a.ndim and op.name not in TAKES_HOST:
            raise RuntimeError("Expected all tensors to be on the same device, but found at "
                               f"least two devices, {DEVICE} and {a.device}! (in aten."
                               f"{op.func.overloadpacket.__name__})")
        return a.to("meta")
    if isinstance(a, list | tuple):
        return type(a)(_meta(x, op) for x in a)
    return a


def _value(a: Any, op: Aten) -> Any:
    """An argument as a rule computes with it: a minilazy tensor, or a Python number."""
    if type(a) is LazyTensor and not a.missing_:
        return a.value
    if isinstance(a, LazyTensor):
        if a.error_ is not None:
            raise a.error_
        if a.missing_:
            if op.name in MISSING_OK:
                return None
            raise NotImplementedError(f"minilazy.pytorch does not compute {a.missing_}, so "
                                      f"aten.{op.name} cannot read it")
        return a.value
    if isinstance(a, torch.Tensor):  # on the host: a 0-d one is a scalar parameter
        return a.item() if a.ndim == 0 else ml.asarray(a.detach().numpy())
    if isinstance(a, list | tuple):
        return type(a)(_value(x, op) for x in a)
    return a


def _wrap(value: Any, meta: Any, op: Aten) -> Any:
    """A rule's result as lazy tensors of the meta result's shapes and dtypes."""
    if isinstance(meta, torch.Tensor):
        if value is None:  # a result minilazy does not compute (a placeholder of its shape)
            zeros = ml.zeros(tuple(meta.shape), dtype=ml_dtype(meta.dtype))
            return LazyTensor(zeros, missing=f"the {op.name} result {tuple(meta.shape)}")
        if not isinstance(value, ml.Tensor):
            value = ml.asarray(value)
        dtype = ml_dtype(meta.dtype)
        if value.dtype != dtype:
            value = ml.astype(value, dtype)
        if value.shape != tuple(meta.shape):
            raise AssertionError(f"minilazy.pytorch's rule for aten.{op.name} made shape "
                                 f"{value.shape}; PyTorch's is {tuple(meta.shape)}")
        return LazyTensor(value)
    if isinstance(meta, list | tuple):
        return type(meta)(_wrap(v, m, op) for v, m in zip(value, meta))
    return value if meta is None else meta  # a number PyTorch computed from shapes alone


def _failed(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any],
            error: Exception) -> Any:
    """An op that failed inside one of autograd's C++ backward functions: results holding it.

    An exception out of such a function aborts the process (PyTorch's device guard for a Python
    backend calls Python while it unwinds): ``loss.backward()`` completes, and the gradients it
    could not compute raise the error at their first use (or of anything made from them).
    """
    try:
        op = Aten.of(func)
        meta = func(*_meta(args, op), **{k: _meta(v, op) for k, v in kwargs.items()})
    except Exception:
        meta = next(a for a in args if isinstance(a, torch.Tensor)).to("meta")

    name = f"aten.{func.overloadpacket.__name__}"
    written = [arg for a, arg in zip(func._schema.arguments, [*args, *kwargs.values()])
               if a.alias_info is not None and a.alias_info.is_write]
    for target in written:  # an in-place op's target (a gradient accumulated): stale otherwise
        if isinstance(target, LazyTensor):
            target.missing_, target.error_ = name, error
    if len(written) == 1 and isinstance(written[0], LazyTensor):
        return written[0]

    def hold(m: Any) -> Any:
        if isinstance(m, torch.Tensor):
            zeros = ml.zeros(tuple(m.shape), dtype=ml_dtype(m.dtype))
            return LazyTensor(zeros, missing=name, error=error)
        return type(m)(hold(x) for x in m) if isinstance(m, list | tuple) else m
    return hold(meta)


def _item(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``.item()``, ``float(x)``, ``bool(x)``: a barrier, and the value on the host."""
    return _value(args[0], Aten.of(func)).item()


def _to_copy(func: torch._ops.OpOverload, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
    """``.cpu()``, ``.to("cpu")``: a barrier, and an ordinary CPU tensor; else a cast."""
    if torch.device(kwargs.get("device") or DEVICE).type != "cpu":
        return _record(func, args, kwargs)
    x = args[0]
    data = np.array(_value(x, Aten.of(func)), copy=True)
    return torch.from_numpy(data).to(kwargs.get("dtype") or x.dtype)


def _alias(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``detach``, ``alias``: a new tensor on the same storage and chain.

    Autograd detaches each tensor it saves for the backward pass: the commonest op of all.
    """
    x = args[0]
    return LazyTensor(x.value, x.storage_, x.views_, missing=x.missing_, error=x.error_)


# Ops handled before the table, by name: observations (barriers), the cheap aliases, and every
# ``_foreach_*`` op.
SPECIAL: dict[str, Callable[..., Any]] = {
    "_local_scalar_dense": _item, "_to_copy": _to_copy, "detach": _alias, "alias": _alias}
HANDLERS: dict[Any, Callable[..., Any]] = {}  # by overload, worked out on its first call


def _handler(func: torch._ops.OpOverload) -> Callable[..., Any]:
    name = func.overloadpacket.__name__
    return foreach if name.startswith("_foreach_") else SPECIAL.get(name, _record)


def dispatch(func: torch._ops.OpOverload, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
    """Record one aten op on lazy tensors (see the module's docstring for the steps).

    Example:
        >>> import torch
        >>> from minilazy.pytorch import lazy, tensor
        >>> x = lazy(torch.tensor([1.0, 2.0]))
        >>> tensor.dispatch(torch.ops.aten.mul.Tensor, (x, 3), {}).tolist()
        [3.0, 6.0]
    """
    handler = HANDLERS.get(func)
    if handler is None:
        handler = HANDLERS[func] = _handler(func)
    return handler(func, args, kwargs)


def _record(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    op = Aten.of(func)
    rule, view = op.rule, op.view
    if rule is None and view is None:
        if op.decomposition is not None:  # its ops come back here, one by one
            return op.decomposition(*args, **kwargs)
        decomposed = func.decompose(*args, **kwargs)  # an op PyTorch writes with others
        if decomposed is not NotImplemented:
            return decomposed
        raise NotImplementedError(f"minilazy.pytorch has no rule for {func.namespace}."
                                  f"{op.name} ({func}); see minilazy.pytorch.aten.ATEN")
    bound = op.bind(args, kwargs)
    scalars = op.scalars
    key = (func, tuple([type(b) if i in scalars and not isinstance(b, torch.Tensor)
                        else _signature(b) for i, b in enumerate(bound)]))
    known = METAS.get(key)
    if known is None:  # PyTorch's shapes, dtypes and errors, from its meta kernels
        if op.check is not None:
            op.check(*bound)
        meta_kwargs = {k: _meta(v, op) for k, v in kwargs.items()}
        meta = func(*_meta(args, op), **meta_kwargs)
        known = meta, [_meta(b, op) for b in bound[:2]], described(meta)
        if len(METAS) >= METAS_KEPT:
            METAS.clear()
        METAS[key] = known
    meta, metas, shape_dtype = known
    if view is not None:
        return _view(view, op, bound, meta)
    assert rule is not None
    outs = op.outs
    values = [_value(b, op) for i, b in enumerate(bound) if i not in outs]
    call = Call(meta, metas, shape_dtype)
    result = rule(call, *values)
    for i, new in call.writes:  # arguments the op updates besides its result
        bound[i].write(new)
    targets = [bound[i] for i in outs] if outs else [bound[0]] if op.inplace else []
    if not targets:
        if type(result) is ml.Tensor and isinstance(meta, torch.Tensor):  # the common case
            shape, dtype = shape_dtype
            if result.dtype != dtype:
                result = ml.astype(result, dtype)
            if result.shape == shape:
                return LazyTensor(result)
        return _wrap(result, meta, op)
    for target, new in zip(targets, result if len(targets) > 1 else (result,)):
        if tuple(target.shape) != tuple(new.shape) and outs:
            raise NotImplementedError(f"minilazy.pytorch: aten.{op.name} with out= of "
                                      "another shape (a resize)")
        target.write(new if isinstance(new, ml.Tensor) else ml.asarray(new))
    return targets[0] if len(targets) == 1 else tuple(targets)


def _view(view: Callable[..., View | list[View]], op: Aten, bound: list[Any], meta: Any) -> Any:
    """A view: shares its base's storage, one step further along its chain."""
    base = bound[0]
    steps = view(Call(meta, ()), *_value(bound, op))
    if isinstance(steps, list):
        return [_viewed(base, s) for s in steps]
    return _viewed(base, steps)


def _viewed(base: LazyTensor, step: View) -> LazyTensor:
    if step is IDENTITY:
        return LazyTensor(base.value, base.storage_, base.views_)
    value = step.get(base.value)
    strides = None
    if step.expanded:  # stride 0 where it repeats, as PyTorch's: autograd then copies such a
        # gradient before accumulating into it, where a contiguous one would be written in place
        shape, source = value.shape, (1,) * (value.ndim - base.ndim) + tuple(base.shape)
        dense = [int(np.prod(source[i + 1:])) for i in range(len(source))]
        strides = tuple(0 if n != m else d for n, m, d in zip(source, shape, dense))
    return LazyTensor(value, base.storage_, base.views_ + (step,), strides=strides)


def lazy_tensor(x: torch.Tensor) -> LazyTensor:
    """A CPU tensor's value as a new lazy tensor (a transfer); ``requires_grad`` kept."""
    if isinstance(x, LazyTensor):
        return x
    if x.device.type != "cpu":
        raise ValueError(f"lazy() takes CPU tensors; this one is on {x.device}")
    data = x.detach().resolve_conj().resolve_neg().contiguous().numpy()
    return LazyTensor(ml.asarray(data), requires_grad=x.requires_grad)
