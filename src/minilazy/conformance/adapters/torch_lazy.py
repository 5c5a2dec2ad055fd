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
from typing import Any

import numpy as np

from minilazy.conformance.adapter import Counters
from minilazy.conformance.adapters.torch_ops import (
    DTYPE_NAMES,
    SUPPORTED,
    Array,
    TorchDevice,
    TorchDtype,
    TorchOps,
    TorchTensor,
)


class TorchLazyAdapter(TorchOps):
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
