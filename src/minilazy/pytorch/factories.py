"""PyTorch's factories on the ``minilazy`` device: ``torch.zeros(..., device=x.device)``.

A factory given ``device=x.device`` (``torch.arange(n, device=x.device)``, the causal mask of
an attention layer) runs no tensor op PyTorch could hand to ``__torch_dispatch__``: it reaches
the device's own kernels. ``empty`` is enough for most (``zeros`` is ``empty`` then ``zero_``,
which then reaches the dispatcher); ``arange`` and ``eye`` get kernels of their own, because
PyTorch writes them as ``empty`` then an ``out=`` op that resizes, which a wrapper cannot.

Example:
    >>> import torch
    >>> import minilazy.pytorch
    >>> torch.arange(3, device="minilazy").tolist(), torch.zeros(2, device="minilazy").device
    ([0, 1, 2], device(type='minilazy', index=0))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import minilazy as ml
from minilazy.pytorch.calls import ml_dtype
from minilazy.pytorch.device import BACKEND
from minilazy.pytorch.tensor import LazyTensor


def _dtype(dtype: torch.dtype | None) -> Any:
    return ml_dtype(dtype or torch.get_default_dtype())


def empty(size: Sequence[int], dtype: torch.dtype | None = None, layout: Any = None,
          device: Any = None, pin_memory: Any = None, memory_format: Any = None) -> LazyTensor:
    """``torch.empty(..., device="minilazy")``: zeros (an empty tensor's values are any).

    Example:
        >>> empty([2]).tolist()
        [0.0, 0.0]
    """
    return LazyTensor(ml.zeros(tuple(size), dtype=_dtype(dtype)))


def arange(*args: Any, dtype: torch.dtype | None = None, **kwargs: Any) -> LazyTensor:
    """``torch.arange(..., device="minilazy")``, with the dtype and length PyTorch gives.

    Example:
        >>> arange(1, 2, 0.25).tolist()
        [1.0, 1.25, 1.5, 1.75]
    """
    meta = torch.arange(*args, dtype=dtype, device="meta")
    start, end, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    value = ml.arange(start, end, step, dtype=ml_dtype(meta.dtype))
    if value.shape != tuple(meta.shape):
        raise RuntimeError(f"arange{args}: minilazy makes {value.shape[0]} values, PyTorch "
                           f"{meta.shape[0]}")
    return LazyTensor(value)


def eye(n: int, m: int | None = None, *, dtype: torch.dtype | None = None,
        **kwargs: Any) -> LazyTensor:
    """``torch.eye(..., device="minilazy")``.

    Example:
        >>> eye(2).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    return LazyTensor(ml.eye(n, n if m is None else m, dtype=_dtype(dtype)))


KERNELS: dict[str, Any] = {
    "empty.memory_format": empty,
    "empty_strided": lambda size, stride, dtype=None, *rest, **kw: empty(size, dtype),
    "arange": arange, "arange.start": arange, "arange.start_step": arange,
    "eye": eye, "eye.m": eye}
for _name, _kernel in KERNELS.items():  # once: the registrations stay for the process
    if not torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{_name}", "PrivateUse1"):
        torch.library.impl(f"aten::{_name}", BACKEND, _kernel)
