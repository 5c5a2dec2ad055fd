r"""minilazy.pytorch as an implementation under test: PyTorch's tensors on minilazy's engine.

The same translation of the spec's ops into torch calls as the PyTorch peers' adapters
(``adapters/torch_lazy.py``, ``adapters/torch_ops.py``): so the oracle checks minilazy.pytorch
exactly as it checks ``torch._lazy`` and PyTorch/XLA, and where PyTorch's semantics differ from
NumPy's (type promotion, ``int32 + 1.5`` is float32) it reports them for all three alike. The
engine's view (counters, keys, IR, HLO, pending state, ``sync``, eager mode) is minilazy's,
read through each lazy tensor's minilazy value::

    pytest --pyargs minilazy.conformance --hypothesis-profile=ci \\
        --lazy-impl=minilazy.conformance.adapters.minilazy_pytorch:pytorch

Needs the torch extra (``pip install 'minilazy[torch]'``); torch is imported by the factory.

Example:
    >>> MinilazyTorchAdapter.name
    'minilazy-pytorch'
"""

from __future__ import annotations

import importlib
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any

import minilazy as ml
from minilazy.conformance.adapter import Counters
from minilazy.conformance.adapters.torch_lazy import TorchLazyAdapter
from minilazy.conformance.adapters.torch_ops import TorchTensor


class MinilazyTorchAdapter(TorchLazyAdapter):
    """``minilazy.pytorch`` on the CPU: torch's API, minilazy's engine (device ``minilazy``).

    Example:
        >>> sorted(MinilazyTorchAdapter.capabilities - {"conv", "optim"})[:4]
        ['autodiff', 'counters', 'eager', 'float64']
    """

    name = "minilazy-pytorch"
    capabilities = frozenset({"counters", "keys", "pending", "ir", "hlo", "setitem", "sync",
                              "float64", "metadata", "autodiff", "eager", "reset", "conv",
                              "optim"})

    def __init__(self, torch: ModuleType) -> None:
        self.pytorch = importlib.import_module("minilazy.pytorch")
        super().__init__(torch, self.pytorch.DEVICE)
        self.version = f"{ml.__version__} (torch {torch.__version__})"
        ml.set_cache_dir(None)  # every program compiled here, as for minilazy's own adapter

    def _values(self, xs: tuple[TorchTensor, ...]) -> list[ml.Tensor]:
        return [x.value for x in xs]

    def _mark_step(self) -> None:
        self.pytorch.mark_step()

    def sync(self, *xs: TorchTensor) -> None:
        self._drained(lambda: ml.sync(*self._values(xs)))

    def counters(self) -> Counters:
        m = ml.metrics()
        return Counters(ops_recorded=m.ops_recorded, compiles=m.compiles,
                        cache_hits=m.cache_hits, executions=m.executions, fallbacks=m.fallbacks)

    def reset(self) -> None:
        ml.clear_cache()
        ml.reset_metrics()

    def key(self, *xs: TorchTensor) -> str:
        return str(ml.graph(*self._values(xs)).key)

    def ir(self, *xs: TorchTensor) -> str:
        return str(ml.graph(*self._values(xs)).text())

    def hlo(self, *xs: TorchTensor) -> str:
        return str(ml.graph(*self._values(xs)).hlo())

    def is_pending(self, x: TorchTensor) -> bool:
        return bool(x.value.is_pending)

    def eager(self) -> AbstractContextManager[Any]:
        return ml.eager()


def pytorch() -> MinilazyTorchAdapter:
    """minilazy.pytorch (raises ``ImportError`` without torch).

    Example:
        >>> try:
        ...     pytorch().name
        ... except ImportError:  # torch is not installed here
        ...     'minilazy-pytorch'
        'minilazy-pytorch'
    """
    return MinilazyTorchAdapter(importlib.import_module("torch"))
