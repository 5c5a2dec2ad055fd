"""The systems under test, one class each, and the timed loops they share.

A system says how to put a host array on its device, how to cut a barrier, how to wait for a
value, how to count its compiles and how to take one MLP training step; :class:`System` turns
that into the workloads' timed samplers, so every system runs the same loop around the same
program (``workloads``). Each system's libraries are imported in its constructor: a worker
process imports only its own (the peers live in their own virtual environments).
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from harness import Samples, minor_faults, peak_rss_mib, rss_mib
from workloads import (
    CHAIN_LENGTH,
    CHAINS,
    MOMENTUM,
    PARAM_NAMES,
    SCALAR,
    Array,
    HostArray,
    NumpyMLP,
    chain,
    chain_input,
    graph100,
    graph100_inputs,
    learning_rate,
    loop_add,
    mlp_batches,
    mlp_init,
    record_chains,
)

Sampler = Callable[[], Samples]
CHECK_STEP = 20  # the cold run also reports the loss after step CHECK_STEP + 1
Step = Callable[[int], Array]  # one MLP training step on batch i (transfers it); the loss


class NotApplicable(Exception):
    """The workload means nothing for this system (e.g. recording cost for ``jax.jit``)."""


class System:
    """One system under test. Subclasses set the class attributes and the device hooks."""

    id: ClassVar[str]
    label: ClassVar[str]
    lazy: ClassVar[bool] = False  # has barriers: recording and barrier times are its own
    ns: Any

    def __init__(self, single_thread: bool) -> None:
        self.single_thread = single_thread
        self.batches = mlp_batches()

    # -- hooks ---------------------------------------------------------------------------------
    def versions(self) -> dict[str, str]:
        return {"numpy": np.__version__}

    def put(self, a: HostArray) -> Array:
        """Host array -> device (a transfer, where the system has devices)."""
        return a

    def barrier(self) -> None:
        """Cut the pending graph and launch it (lazy systems only)."""

    def wait(self, t: Array) -> None:
        """Block until ``t``'s value exists."""

    def compiles(self) -> int | None:
        """Programs compiled so far (``None``: the system never compiles)."""
        return None

    def recording(self) -> contextlib.AbstractContextManager[Any]:
        """A context in which a long loop records without any automatic barrier."""
        return contextlib.nullcontext()

    def mlp_step(self) -> Step:
        raise NotImplementedError

    def loss_value(self, loss: Array) -> float:
        return float(loss)

    # -- workloads -----------------------------------------------------------------------------
    def record(self, scalar: bool, ops: int) -> Sampler:
        """Per-op cost of ``y = a + b`` on ``f32[4]``: recording (lazy) or running (eager)."""
        a = self.put(np.arange(4, dtype=np.float32))
        b = SCALAR if scalar else self.put(np.ones(4, dtype=np.float32))
        self.barrier()

        def sample() -> Samples:
            with self.recording():
                start = time.perf_counter()
                y = loop_add(a, b, ops)
                if not self.lazy:
                    self.wait(y)
                seconds = time.perf_counter() - start
            self.barrier()  # untimed: materialises the last y (the others are dead)
            self.wait(y)
            return {"op": [seconds / ops]}
        return sample

    def chains(self, sets: int) -> Sampler:
        """Per-op cost of recording 17 chains of 1000 ops with no barrier, under the system's
        own auto-cut policy: every chain dies before the next, so a lazy system that counts
        only live nodes never cuts (the run's ``compiles_timed`` shows whether it did)."""
        a = self.put(np.arange(4, dtype=np.float32))
        self.barrier()

        def sample() -> Samples:
            start = time.perf_counter()
            for _ in range(sets):
                y = record_chains(a, CHAINS, CHAIN_LENGTH)
            if not self.lazy:
                self.wait(y)
            seconds = time.perf_counter() - start
            return {"op": [seconds / (sets * CHAINS * CHAIN_LENGTH)]}
        return sample

    def graph100(self, scalars: bool, steps: int) -> Sampler:
        """A step on the 100-op graph; lazy systems also time the record and barrier phases."""
        hx, hy = graph100_inputs()
        x, y = self.put(hx), self.put(hy)
        self.barrier()
        ns = self.ns
        if not self.lazy:
            def eager() -> Samples:
                times = []
                for _ in range(steps):
                    start = time.perf_counter()
                    self.wait(graph100(x, y, ns, scalars))
                    times.append(time.perf_counter() - start)
                return {"step": times}
            return eager

        def lazy() -> Samples:
            series: Samples = {"step": [], "record": [], "barrier": [], "barrier+wait": []}
            for _ in range(steps):
                t0 = time.perf_counter()
                out = graph100(x, y, ns, scalars)
                t1 = time.perf_counter()
                self.barrier()
                t2 = time.perf_counter()
                self.wait(out)
                t3 = time.perf_counter()
                del out
                series["step"].append(t3 - t0)
                series["record"].append(t1 - t0)
                series["barrier"].append(t2 - t1)
                series["barrier+wait"].append(t3 - t1)
            return series
        return lazy

    def chain(self, n: int, steps: int) -> Sampler:
        """The 20-op elementwise chain on ``n`` float32: record, barrier and wait (or run)."""
        x = self.put(chain_input(n))
        self.barrier()
        ns = self.ns

        def sample() -> Samples:
            times = []
            for _ in range(steps):
                start = time.perf_counter()
                y = chain(x, ns)
                self.barrier()
                self.wait(y)
                times.append(time.perf_counter() - start)
                del y
            return {"step": times}
        return sample

    def mlp(self, steps: int) -> Sampler:
        """MLP training steps, batch transfer included; per step = (``steps`` + wait) / steps."""
        step = self.mlp_step()
        counter = iter(range(1 << 62))

        def sample() -> Samples:
            start = time.perf_counter()
            loss = None
            for _ in range(steps):
                loss = step(next(counter))
            self.wait(loss)
            return {"step": [(time.perf_counter() - start) / steps]}
        return sample

    def cold(self, steps: int) -> dict[str, float | int | None]:
        """In a fresh process: the first MLP step (compiles), then ``steps`` more; memory."""
        rss_imported = rss_mib()
        step = self.mlp_step()
        rss_setup = rss_mib()
        compiles0 = self.compiles()
        faults0 = minor_faults()
        start = time.perf_counter()
        loss = step(0)
        self.wait(loss)
        first = time.perf_counter() - start
        compiles1 = self.compiles()
        loss_first = self.loss_value(loss)
        start = time.perf_counter()
        checked: float | None = None
        for i in range(1, steps + 1):
            loss = step(i)
            if i == CHECK_STEP:  # (an observation: it costs every system one sync)
                checked = self.loss_value(loss)
        self.wait(loss)
        steady = (time.perf_counter() - start) / steps
        compiles2 = self.compiles()

        def diff(a: int | None, b: int | None) -> int | None:
            return None if a is None or b is None else a - b

        return {
            "first_step_s": first,
            "later_step_s": steady,
            "compiles_first_step": diff(compiles1, compiles0),
            "compiles_later_steps": diff(compiles2, compiles1),
            "steps": steps,
            "rss_imported_mib": rss_imported,
            "rss_setup_mib": rss_setup,
            "rss_end_mib": rss_mib(),
            "peak_rss_mib": peak_rss_mib(),
            "peak_growth_mib": peak_rss_mib() - rss_setup,
            "faults_per_step": (minor_faults() - faults0) / (steps + 1),
            "loss_first": loss_first,
            # Training on random labels is chaotic: rounding differences between systems grow
            # until, after a few hundred steps, the losses differ. Step 21 still agrees.
            "loss_step21": checked,
            "loss_last": self.loss_value(loss),
        }


# -- NumPy -------------------------------------------------------------------------------------
class NumpySystem(System):
    id = "numpy"
    label = "NumPy eager"
    ns = np

    def mlp_step(self) -> Step:
        mlp = NumpyMLP()

        def step(i: int) -> float:
            x, y = self.batches[i % len(self.batches)]
            return mlp.step(x, y, learning_rate(i))
        return step


# -- minilazy ----------------------------------------------------------------------------------
class MinilazySystem(System):
    id = "minilazy"
    label = "minilazy"
    lazy = True
    special_scalars = False

    def __init__(self, single_thread: bool) -> None:
        super().__init__(single_thread)
        import minilazy as ml

        self.ml = self.ns = ml
        if self.special_scalars:
            ml.set_policy(ml.BarrierPolicy(special_scalars=True))

    def versions(self) -> dict[str, str]:
        import jax

        return {**super().versions(), "minilazy": self.ml.__version__, "jax": jax.__version__,
                "minilazy_file": self.ml.__file__}

    def put(self, a: HostArray) -> Array:
        return self.ml.asarray(a)

    def barrier(self) -> None:
        self.ml.mark_step()

    def wait(self, t: Array) -> None:
        if t is not None:
            self.ml.wait(t)

    def compiles(self) -> int:
        return self.ml.metrics().compiles

    def recording(self) -> contextlib.AbstractContextManager[Any]:
        return self.ml.policy(max_pending_nodes=10**9)  # no auto-cut in a timed loop

    def mlp_step(self) -> Step:
        from minilazy import demo

        ml = self.ml
        p = {k: ml.asarray(v) for k, v in mlp_init().items()}
        velocity = {k: ml.zeros_like(t) for k, t in p.items()}
        ml.mark_step()  # so that the first step's graph already looks like every later one

        def step(i: int) -> Array:
            x, y = self.batches[i % len(self.batches)]
            return demo.train_step(p, velocity, ml.asarray(x), ml.asarray(y),
                                   lr=learning_rate(i), momentum=MOMENTUM)
        return step


class MinilazySpecialSystem(MinilazySystem):
    id = "minilazy-special"
    label = "minilazy special_scalars"
    special_scalars = True


# -- JAX ---------------------------------------------------------------------------------------
class JaxSystem(System):
    """JAX op by op: every ``jnp`` call dispatches (asynchronously) on its own."""

    id = "jax"
    label = "JAX op-by-op"

    def __init__(self, single_thread: bool) -> None:
        super().__init__(single_thread)
        import jax
        import jax.numpy as jnp

        self.jax, self.ns = jax, jnp
        self._compiles = 0

        def count(event: str, duration_secs: float, **kwargs: str | int) -> None:
            if event == "/jax/core/compile/backend_compile_duration":
                self._compiles += 1
        jax.monitoring.register_event_duration_secs_listener(count)

    def versions(self) -> dict[str, str]:
        return {**super().versions(), "jax": self.jax.__version__}

    def put(self, a: HostArray) -> Array:
        return self.jax.device_put(a)

    def wait(self, t: Array) -> None:
        if t is not None:
            self.jax.block_until_ready(t)  # type: ignore[no-untyped-call]

    def compiles(self) -> int:
        return self._compiles

    def train_function(self) -> Callable[..., Any]:
        """``(params, velocity, x, y, lr) -> (params, velocity, loss)``, a pure function."""
        jax, jnp = self.jax, self.ns

        def loss_fn(p: dict[str, Array], x: Array, y: Array) -> Array:
            z = jnp.maximum(x @ p["w1"] + p["b1"], 0.0) @ p["w2"] + p["b2"]
            top = jnp.max(z, axis=1, keepdims=True)
            log_norm = jnp.log(jnp.sum(jnp.exp(z - top), axis=1)) + top[:, 0]
            picked = jnp.take_along_axis(z, y[:, None], axis=1)[:, 0]
            return jnp.mean(log_norm - picked)

        def train(p: dict[str, Array], v: dict[str, Array], x: Array, y: Array, lr: Array
                  ) -> tuple[dict[str, Array], dict[str, Array], Array]:
            loss, g = jax.value_and_grad(loss_fn)(p, x, y)
            v = {k: MOMENTUM * v[k] + g[k] for k in PARAM_NAMES}
            p = {k: p[k] - lr * v[k] for k in PARAM_NAMES}
            return p, v, loss
        return train

    def mlp_step(self) -> Step:
        train = self.train_function()
        state = {"p": {k: self.put(v) for k, v in mlp_init().items()}}
        state["v"] = {k: self.ns.zeros_like(a) for k, a in state["p"].items()}

        def step(i: int) -> Array:
            x, y = self.batches[i % len(self.batches)]
            state["p"], state["v"], loss = train(state["p"], state["v"], self.put(x),
                                                 self.put(y), learning_rate(i))
            return loss
        return step


class JaxJitSystem(JaxSystem):
    """``jax.jit``: each workload is one compiled function (Python scalars become constants)."""

    id = "jax-jit"
    label = "jax.jit"

    def record(self, scalar: bool, ops: int) -> Sampler:
        raise NotApplicable("jax.jit traces once; there is no per-op cost at run time")

    def chains(self, sets: int) -> Sampler:
        raise NotApplicable("jax.jit traces once; there is no per-op cost at run time")

    def graph100(self, scalars: bool, steps: int) -> Sampler:
        hx, hy = graph100_inputs()
        x, y = self.put(hx), self.put(hy)
        jitted = self.jax.jit(functools.partial(graph100, ns=self.ns, scalars=scalars))

        def sample() -> Samples:
            times = []
            for _ in range(steps):
                start = time.perf_counter()
                jitted(x, y).block_until_ready()
                times.append(time.perf_counter() - start)
            return {"step": times}
        return sample

    def chain(self, n: int, steps: int) -> Sampler:
        x = self.put(chain_input(n))
        jitted = self.jax.jit(functools.partial(chain, ns=self.ns))

        def sample() -> Samples:
            times = []
            for _ in range(steps):
                start = time.perf_counter()
                jitted(x).block_until_ready()
                times.append(time.perf_counter() - start)
            return {"step": times}
        return sample

    def train_function(self) -> Callable[..., Any]:
        # Donating the parameters and the velocity updates them in place, as minilazy does.
        jitted: Callable[..., Any] = self.jax.jit(super().train_function(), donate_argnums=(0, 1))
        return jitted


# -- PyTorch: eager, Lazy Tensor Core, PyTorch/XLA ---------------------------------------------
class TorchNamespace:
    """What the workloads need from an array namespace, for torch tensors."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch

    def tanh(self, x: Array) -> Array:
        return self.torch.tanh(x)

    def maximum(self, x: Array, y: Array) -> Array:
        if isinstance(y, float | int):
            return self.torch.clamp_min(x, y)
        return self.torch.maximum(x, y)


class TorchSystem(System):
    """Plain PyTorch eager on the CPU (a reference row: what the peers start from)."""

    id = "torch"
    label = "torch eager (CPU)"

    def __init__(self, single_thread: bool) -> None:
        super().__init__(single_thread)
        import torch

        self.torch = torch
        self.ns = TorchNamespace(torch)
        if single_thread:
            torch.set_num_threads(1)
            with contextlib.suppress(RuntimeError):  # only before any inter-op work
                torch.set_num_interop_threads(1)
        self.batches = [(x, y.astype(np.int64)) for x, y in self.batches]  # cross_entropy: long
        self.device = self.make_device()

    def make_device(self) -> Any:
        return self.torch.device("cpu")

    def versions(self) -> dict[str, str]:
        return {**super().versions(), "torch": self.torch.__version__,
                "torch_threads": str(self.torch.get_num_threads())}

    def put(self, a: HostArray) -> Array:
        return self.torch.from_numpy(a).to(self.device)

    def loss_value(self, loss: Array) -> float:
        return float(loss.detach().cpu())

    def mlp_step(self) -> Step:
        torch = self.torch
        params = {k: self.put(v).requires_grad_() for k, v in mlp_init().items()}
        optimizer = torch.optim.SGD(list(params.values()), lr=learning_rate(0),
                                    momentum=MOMENTUM)
        w1, b1, w2, b2 = (params[k] for k in PARAM_NAMES)
        cross_entropy = torch.nn.functional.cross_entropy
        self.barrier()

        def step(i: int) -> Array:
            x, y = self.batches[i % len(self.batches)]
            x, y = self.put(x), self.put(y)
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(i)  # a new Python float every step
            optimizer.zero_grad()
            loss = cross_entropy(torch.relu(x @ w1 + b1) @ w2 + b2, y)
            loss.backward()
            optimizer.step()
            self.barrier()
            return loss
        return step


class TorchLazySystem(TorchSystem):
    """PyTorch's Lazy Tensor Core with its TorchScript backend (``torch._lazy``)."""

    id = "torch-lazy"
    label = "torch._lazy"
    lazy = True

    def make_device(self) -> Any:
        import torch._lazy
        import torch._lazy.metrics
        import torch._lazy.ts_backend

        torch._lazy.ts_backend.init()
        self.ltc = torch._lazy
        return self.torch.device("lazy")

    def barrier(self) -> None:
        self.ltc.mark_step()

    def wait(self, t: Array) -> None:
        self.ltc.wait_device_ops()

    def compiles(self) -> int:
        return int(self.ltc.metrics.counter_value("UncachedCompile") or 0)


class TorchXlaSystem(TorchSystem):
    """PyTorch/XLA on its CPU PJRT client (``PJRT_DEVICE=CPU``)."""

    id = "torch-xla"
    label = "PyTorch/XLA"
    lazy = True

    def make_device(self) -> Any:
        import torch_xla
        import torch_xla.core.xla_model
        import torch_xla.debug.metrics

        self.xla = torch_xla
        self.xm = torch_xla.core.xla_model
        self.met = torch_xla.debug.metrics
        return torch_xla.device()

    def versions(self) -> dict[str, str]:
        return {**super().versions(), "torch_xla": self.xla.__version__}

    def barrier(self) -> None:
        self.xla.sync()

    def wait(self, t: Array) -> None:
        self.xm.wait_device_ops()

    def compiles(self) -> int:
        return int(self.met.counter_value("UncachedCompile") or 0)


SYSTEMS: dict[str, type[System]] = {s.id: s for s in (
    MinilazySystem, MinilazySpecialSystem, NumpySystem, JaxSystem, JaxJitSystem, TorchSystem,
    TorchLazySystem, TorchXlaSystem)}
