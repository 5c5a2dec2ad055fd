"""PyTorch on minilazy: unmodified ``torch.nn``, autograd and ``torch.optim`` code, run lazily.

The part of PyTorch/XLA that is hardest to see from the outside, on minilazy's engine: a
``torch.Tensor`` subclass (:class:`LazyTensor`) whose every aten op PyTorch hands to
``__torch_dispatch__`` *below* its autograd, where the op is recorded as minilazy ops
(:mod:`minilazy.pytorch.aten`'s table). ``loss.backward()`` records the backward graph the same
way; ``torch.optim``'s in-place updates become rebindings; :func:`mark_step` is the barrier.
Needs the ``torch`` extra: ``pip install 'minilazy[torch]'``.

Example:
    >>> import torch
    >>> import minilazy as ml
    >>> from minilazy.pytorch import lazy, mark_step
    >>> model = lazy(torch.nn.Linear(3, 1))
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> loss = model(lazy(torch.ones(4, 3))).square().mean()
    >>> loss.backward(); opt.step(); opt.zero_grad()
    >>> mark_step()
    >>> model.weight.device, ml.metrics().compiles >= 1
    (device(type='minilazy', index=0), True)
"""

from __future__ import annotations

from typing import TypeVar

import torch

import minilazy as ml
from minilazy.pytorch import factories  # noqa: F401  (the device's factory kernels)
from minilazy.pytorch.aten import ATEN
from minilazy.pytorch.device import DEVICE
from minilazy.pytorch.tensor import LazyTensor, lazy_tensor
from minilazy.pytorch.views import VIEWS

__all__ = ["ATEN", "DEVICE", "VIEWS", "LazyTensor", "lazy", "mark_step"]

T = TypeVar("T", torch.Tensor, torch.nn.Module)


def lazy(x: T) -> T:
    """A CPU tensor as a lazy one; a module with its parameters and buffers made lazy in place.

    A module is returned, as ``module.to(xla_device)`` returns it; make the optimizer after,
    so that it holds the lazy parameters. A parameter two modules share stays shared.

    Args:
        x: a ``torch.Tensor`` on the CPU, or a ``torch.nn.Module``.

    Example:
        >>> import torch
        >>> lazy(torch.zeros(2)).device
        device(type='minilazy', index=0)
        >>> net = lazy(torch.nn.Linear(2, 2))
        >>> type(net.weight).__name__, net.weight.requires_grad
        ('LazyTensor', True)
    """
    if isinstance(x, torch.nn.Module):
        made: dict[int, torch.nn.Parameter] = {}
        for module in x.modules():
            for name, p in module._parameters.items():
                if p is not None and not isinstance(p, LazyTensor):
                    if id(p) not in made:
                        made[id(p)] = torch.nn.Parameter(lazy_tensor(p.detach()),
                                                         requires_grad=p.requires_grad)
                    module._parameters[name] = made[id(p)]
            for name, b in module._buffers.items():
                if b is not None and not isinstance(b, LazyTensor):
                    module._buffers[name] = lazy_tensor(b)
        return x
    if isinstance(x, torch.Tensor):
        return lazy_tensor(x)
    raise TypeError(f"lazy() takes a torch.Tensor or a torch.nn.Module, not {type(x).__name__}")


def mark_step() -> None:
    """The barrier: every live lazy tensor's pending work runs, as one program where it can.

    Example:
        >>> import torch
        >>> x = lazy(torch.ones(3)) * 2
        >>> mark_step()
        >>> x.tolist()
        [2.0, 2.0, 2.0]
    """
    ml.mark_step()
