"""The systems under test, one class each, and the timed loops they share.

A system says how to put a host array on its device, how to cut a barrier, how to wait for a
value, how to count its compiles and how to take one training step of each model (the MLP, the
CNN and the Transformer of ``minilazy.demo.models``); :class:`System` turns that into the workloads'
timed samplers, so every system runs the same loop around the same program (``workloads``).
Each system's libraries are imported in its constructor: a worker process imports only its own
(the peers live in their own virtual environments).
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
import time
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from harness import Samples, minor_faults, peak_rss_mib, rss_mib, thread_waits
from workloads import (
    ADAM_BETAS,
    ADAM_EPS,
    CHAIN_LENGTH,
    CHAINS,
    MODEL_LR,
    MOMENTUM,
    PARAM_NAMES,
    SCALAR,
    TF_CONTEXT,
    TF_HEADS,
    TF_LAYERS,
    TF_WEIGHT_DECAY,
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
    model_batches,
    model_init,
    model_lr,
    record_chains,
)

Sampler = Callable[[], Samples]
CHECK_STEP = 20  # the cold run also reports the loss after step CHECK_STEP + 1
Step = Callable[[int], Array]  # one training step on batch i (transfers it); the loss
Outputs = Callable[[], list[Array]]  # what a step's barrier materialises (for graph_nodes)
IR_NODE = re.compile(r"^\s*%\d+ = ", re.MULTILINE)  # a node of torch._lazy's or XLA's IR text


def weight_decay(model: str) -> float:
    """The Transformer trains with AdamW (as ``minilazy.demo.models.main_transformer``), the CNN
    with plain Adam."""
    return TF_WEIGHT_DECAY if model == "transformer" else 0.0


def _tensors(tree: Any) -> list[Array]:
    """The leaves of a tree of dicts, lists and tuples (a model's state)."""
    if isinstance(tree, (dict, list, tuple)):
        return [t for v in (tree.values() if isinstance(tree, dict) else tree)
                for t in _tensors(v)]
    return [tree]


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
        self.count_nodes = False  # set: the next step's cut counts its graph's nodes first
        self.nodes: int | None = None

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

    def graph_nodes(self, outputs: list[Array]) -> int | None:
        """Nodes of the pending graph of ``outputs``, as the next barrier cuts it (lazy only)."""
        return None

    def cut(self, outputs: Outputs) -> None:
        """A step's barrier; first counts the graph's nodes when :attr:`count_nodes` is set."""
        if self.count_nodes:
            self.nodes = self.graph_nodes(outputs())
            self.count_nodes = False
        self.barrier()

    def mlp_step(self) -> Step:
        raise NotImplementedError

    def cnn_step(self) -> Step:
        raise NotApplicable("no CNN step for this system")

    def transformer_step(self) -> Step:
        raise NotApplicable("no Transformer step for this system")

    def model_step(self, model: str) -> Step:
        """The training step of ``model`` (``mlp``, ``cnn`` or ``transformer``)."""
        step: Step = getattr(self, f"{model}_step")()
        return step

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
        return self.model("mlp", steps)

    def model(self, model: str, steps: int) -> Sampler:
        """``model``'s training steps, batch transfer included: (``steps`` + wait) / steps.

        Also ``host``: the time inside the step calls, per step (a lazy system records the step
        and starts its program there; the device runs it meanwhile and after). With the device
        time of the same program (jax.jit's step), ``host + device - step`` is what the host's
        work hid behind the device's. ``cpu``: the process's CPU time per step, every thread's
        (the host's and the device's on a CPU backend): on ``k`` cores no step is shorter than
        ``cpu / k``. ``waits``: how often per step the step call gave up the CPU to wait (a
        count, not seconds): a lazy step that never waits for its device shows ~0.
        """
        step = self.model_step(model)
        counter = iter(range(1 << 62))

        def sample() -> Samples:
            start, cpu, waits = time.perf_counter(), time.process_time(), 0
            loss, host = None, 0.0
            for _ in range(steps):
                began, waited = time.perf_counter(), thread_waits()
                loss = step(next(counter))
                host += time.perf_counter() - began
                waits += thread_waits() - waited
            self.wait(loss)
            return {"step": [(time.perf_counter() - start) / steps], "host": [host / steps],
                    "cpu": [(time.process_time() - cpu) / steps], "waits": [waits / steps]}
        return sample

    def cold(self, steps: int, model: str = "mlp") -> dict[str, str | float | int | None]:
        """In a fresh process: ``model``'s first step (compiles), then ``steps`` more; memory;
        then one more step (untimed) whose graph's nodes are counted before its barrier."""
        rss_imported = rss_mib()
        step = self.model_step(model)
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

        loss_last = self.loss_value(loss)
        peak = peak_rss_mib()
        rss_end = rss_mib()
        faults_per_step = (minor_faults() - faults0) / (steps + 1)
        self.count_nodes, self.nodes = True, None
        self.wait(step(steps + 1))
        self.count_nodes = False

        def diff(a: int | None, b: int | None) -> int | None:
            return None if a is None or b is None else a - b

        return {
            "model": model,
            "first_step_s": first,
            "later_step_s": steady,
            "compiles_first_step": diff(compiles1, compiles0),
            "compiles_later_steps": diff(compiles2, compiles1),
            "steps": steps,
            "rss_imported_mib": rss_imported,
            "rss_setup_mib": rss_setup,
            "rss_end_mib": rss_end,
            "peak_rss_mib": peak,
            "peak_growth_mib": peak - rss_setup,
            "faults_per_step": faults_per_step,
            "loss_first": loss_first,
            # Training on random labels is chaotic: rounding differences between systems grow
            # until, after a few hundred steps, the losses differ. Step 21 still agrees.
            "loss_step21": checked,
            "loss_last": loss_last,
            "nodes_per_step": self.nodes,
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

    def graph_nodes(self, outputs: list[Array]) -> int:
        return int(self.ml.graph(*outputs).num_nodes)

    def mlp_step(self) -> Step:
        from minilazy import demo

        ml = self.ml
        p = {k: ml.asarray(v) for k, v in mlp_init().items()}
        velocity = {k: ml.zeros_like(t) for k, t in p.items()}
        ml.mark_step()  # so that the first step's graph already looks like every later one

        def counted(x: Array, y: Array, lr: float) -> Array:
            # demo.train_step's body: it cuts inside, too early to count the graph's nodes
            loss, grads = ml.value_and_grad(demo.loss_fn)(p, x, y)
            for k in p:
                velocity[k] = MOMENTUM * velocity[k] + grads[k]
                p[k] -= lr * velocity[k]
            del grads
            self.cut(lambda: [loss, *p.values(), *velocity.values()])
            return loss

        def step(i: int) -> Array:
            x, y = self.batches[i % len(self.batches)]
            if self.count_nodes:
                return counted(ml.asarray(x), ml.asarray(y), learning_rate(i))
            return demo.train_step(p, velocity, ml.asarray(x), ml.asarray(y),
                                   lr=learning_rate(i), momentum=MOMENTUM)
        return step

    def cnn_step(self) -> Step:
        from minilazy.demo import models

        return self.adam_step("cnn", models.cnn_loss)

    def transformer_step(self) -> Step:
        from minilazy.demo import models

        return self.adam_step("transformer", models.transformer_loss)

    def adam_step(self, model: str, loss_fn: Callable[..., Array]) -> Step:
        """As ``minilazy.demo.models.fit``: ``ml.value_and_grad``, then ``ml.optim.adam`` with this
        step's learning rate, one barrier per step (the old buffers are donated)."""
        ml = self.ml
        wd = weight_decay(model)
        batches = model_batches(model)
        params = {k: ml.asarray(v) for k, v in model_init(model).items()}
        state = {"params": params, "opt": ml.optim.adam(MODEL_LR, weight_decay=wd).init(params)}
        compute = ml.value_and_grad(loss_fn)
        ml.mark_step()  # materialise the initial state: step 0's graph is every later one's

        def step(i: int) -> Array:
            x, y = batches[i % len(batches)]
            loss, grads = compute(state["params"], ml.asarray(x), ml.asarray(y))
            opt = ml.optim.adam(model_lr(i), *ADAM_BETAS, ADAM_EPS, weight_decay=wd)
            state["params"], state["opt"] = opt.update(grads, state["opt"], state["params"])
            del grads  # dead before the barrier: fused into the update, never materialised
            self.cut(lambda: [loss, *_tensors(state)])
            return loss
        return step


class MinilazySpecialSystem(MinilazySystem):
    id = "minilazy-special"
    label = "minilazy special_scalars"
    special_scalars = True


class MinilazyCapturedSystem(MinilazySystem):
    """minilazy with each model's step under ``ml.capture``: written as a pure function of its
    state (``(state, x, y, lr) -> (loss, state)``), recorded twice, then its program called."""

    id = "minilazy-captured"
    label = "minilazy captured"

    def record(self, scalar: bool, ops: int) -> Sampler:
        raise NotApplicable("capture is for a whole step: recording is minilazy's")

    def chains(self, sets: int) -> Sampler:
        raise NotApplicable("capture is for a whole step: recording is minilazy's")

    def graph100(self, scalars: bool, steps: int) -> Sampler:
        raise NotApplicable("capture is for a whole step: the barrier is minilazy's")

    def chain(self, n: int, steps: int) -> Sampler:
        raise NotApplicable("capture is for a whole step: a chain is minilazy's")

    def captured(self, fn: Callable[..., Any], state: Any, batches: Any,
                 lr: Callable[[int], float]) -> Step:
        """The step of ``fn`` under ``ml.capture``; the graph's nodes counted when asked."""
        ml, captured, held = self.ml, self.ml.capture(fn), [state]
        ml.mark_step()

        def step(i: int) -> Array:
            x, y = batches[i % len(batches)]
            if self.count_nodes:  # recorded as the plain system does, to count its graph
                loss, new = fn(held[0], ml.asarray(x), ml.asarray(y), lr(i))
                self.cut(lambda: [loss, *_tensors(new)])
            else:
                loss, new = captured(held[0], ml.asarray(x), ml.asarray(y), lr(i))
            held[0] = new
            return loss
        return step

    def mlp_step(self) -> Step:
        from minilazy import demo

        ml = self.ml
        p = {k: ml.asarray(v) for k, v in mlp_init().items()}

        def fn(state: Any, x: Array, y: Array, lr: float) -> tuple[Array, Any]:
            params, velocity = state
            loss, grads = ml.value_and_grad(demo.loss_fn)(params, x, y)
            velocity = {k: MOMENTUM * velocity[k] + grads[k] for k in params}
            return loss, ({k: params[k] - lr * velocity[k] for k in params}, velocity)
        return self.captured(fn, (p, {k: ml.zeros_like(t) for k, t in p.items()}), self.batches,
                             learning_rate)

    def adam_step(self, model: str, loss_fn: Callable[..., Array]) -> Step:
        ml = self.ml
        wd = weight_decay(model)
        params = {k: ml.asarray(v) for k, v in model_init(model).items()}
        compute = ml.value_and_grad(loss_fn)

        def fn(state: Any, x: Array, y: Array, lr: float) -> tuple[Array, Any]:
            loss, grads = compute(state["params"], x, y)
            opt = ml.optim.adam(lr, *ADAM_BETAS, ADAM_EPS, weight_decay=wd)
            new, opt_state = opt.update(grads, state["opt"], state["params"])
            return loss, {"params": new, "opt": opt_state}
        state = {"params": params, "opt": ml.optim.adam(MODEL_LR, weight_decay=wd).init(params)}
        return self.captured(fn, state, model_batches(model), model_lr)


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

    # The models in JAX op by op would dispatch some hundreds of ops per step, forward and
    # backward, for minutes per run: only jax.jit runs them (JaxJitSystem.models).
    models = False

    def cnn_step(self) -> Step:
        return self.adam_step("cnn", self.cnn_loss)

    def transformer_step(self) -> Step:
        return self.adam_step("transformer", self.transformer_loss)

    @staticmethod
    def cross_entropy(jax: Any, logits: Array, labels: Array) -> Array:
        picked = jax.numpy.take_along_axis(jax.nn.log_softmax(logits), labels[..., None], -1)
        return -jax.numpy.mean(picked)

    def cnn_loss(self, p: dict[str, Array], x: Array, y: Array) -> Array:
        """``minilazy.demo.models.cnn_loss`` in JAX: (conv 3x3, relu, 2x2 pool) twice, linear."""
        jax = self.jax
        h = x.reshape(-1, 1, 28, 28)
        for w, b in (("c1", "b1"), ("c2", "b2")):
            h = jax.lax.conv_general_dilated(h, p[w], (1, 1), ((1, 1), (1, 1)),
                                             dimension_numbers=("NCHW", "OIHW", "NCHW"))
            h = jax.nn.relu(h + p[b][None, :, None, None])
            n, c, height, width = h.shape
            h = h.reshape(n, c, height // 2, 2, width // 2, 2).max(axis=(3, 5))
        return self.cross_entropy(jax, h.reshape(h.shape[0], -1) @ p["w"] + p["b"], y)

    def transformer_loss(self, p: dict[str, Array], ids: Array, targets: Array) -> Array:
        """``minilazy.demo.models.transformer_loss`` in JAX: pre-norm blocks, causal attention."""
        jax, jnp = self.jax, self.ns

        def layer_norm(x: Array, w: Array, b: Array) -> Array:
            centred = x - jnp.mean(x, axis=-1, keepdims=True)
            return centred / jnp.sqrt(jnp.mean(centred * centred, axis=-1, keepdims=True)
                                      + 1e-5) * w + b

        def attention(x: Array, i: int) -> Array:
            (b, t, d), h = x.shape, TF_HEADS

            def heads(y: Array) -> Array:
                return y.reshape(b, t, h, d // h).transpose(0, 2, 1, 3)

            q, k, v = (heads(x @ p[f"{i}.{n}"]) for n in "qkv")
            scores = (q @ jnp.swapaxes(k, -1, -2)) * (1.0 / math.sqrt(d // h))
            position = jnp.arange(t)
            scores = jnp.where(position[:, None] >= position, scores,
                               jnp.finfo(scores.dtype).min)
            y = jax.nn.softmax(scores, axis=-1) @ v
            return y.transpose(0, 2, 1, 3).reshape(b, t, d) @ p[f"{i}.o"]

        x = p["tokens"][ids] + p["positions"][:ids.shape[1]]
        for i in range(TF_LAYERS):
            x = x + attention(layer_norm(x, p[f"{i}.ln1"], p[f"{i}.ln1_b"]), i)
            h = layer_norm(x, p[f"{i}.ln2"], p[f"{i}.ln2_b"])
            h = jax.nn.gelu(h @ p[f"{i}.up"] + p[f"{i}.up_b"], approximate=True)
            x = x + h @ p[f"{i}.down"] + p[f"{i}.down_b"]
        logits = layer_norm(x, p["norm"], p["norm_b"]) @ p["head"]
        return self.cross_entropy(jax, logits, targets)

    def adam_function(self, loss_fn: Callable[..., Array], wd: float) -> Callable[..., Any]:
        """``(params, state, x, y, lr) -> (params, state, loss)``: ``ml.optim.adam``'s update,
        written out (the same formula, bias corrections from the step count)."""
        jax, jnp = self.jax, self.ns
        (b1, b2), eps = ADAM_BETAS, ADAM_EPS

        def train(p: dict[str, Array], s: dict[str, Any], x: Array, y: Array, lr: Array
                  ) -> tuple[dict[str, Array], dict[str, Any], Array]:
            loss, g = jax.value_and_grad(loss_fn)(p, x, y)
            count = s["count"] + 1
            t = count.astype(jnp.float32)
            c1, c2 = 1.0 / (1.0 - b1 ** t), 1.0 / (1.0 - b2 ** t)
            mu = {k: b1 * s["mu"][k] + (1.0 - b1) * g[k] for k in p}
            nu = {k: b2 * s["nu"][k] + (1.0 - b2) * (g[k] * g[k]) for k in p}
            new = {}
            for k in p:
                direction = (mu[k] * c1) / (jnp.sqrt(nu[k] * c2) + eps)
                new[k] = p[k] - lr * (direction + wd * p[k] if wd else direction)
            return new, {"count": count, "mu": mu, "nu": nu}, loss
        return train

    def adam_step(self, model: str, loss_fn: Callable[..., Array]) -> Step:
        if not self.models:
            raise NotApplicable("op by op, the models take minutes per run: jax.jit only")
        jnp = self.ns
        train = self.jax.jit(self.adam_function(loss_fn, weight_decay(model)),
                             donate_argnums=(0, 1))
        batches = model_batches(model)
        params = {k: self.put(v) for k, v in model_init(model).items()}
        state = {"params": params, "opt": {
            "count": jnp.zeros((), jnp.int32),
            "mu": {k: jnp.zeros_like(a) for k, a in params.items()},
            "nu": {k: jnp.zeros_like(a) for k, a in params.items()}}}

        def step(i: int) -> Array:
            x, y = batches[i % len(batches)]
            state["params"], state["opt"], loss = train(state["params"], state["opt"],
                                                        self.put(x), self.put(y), model_lr(i))
            return loss
        return step


class JaxJitSystem(JaxSystem):
    """``jax.jit``: each workload is one compiled function (Python scalars become constants)."""

    id = "jax-jit"
    label = "jax.jit"
    models = True

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
            self.cut(lambda: [loss, *params.values(), *self.optimizer_tensors(optimizer)])
            return loss
        return step

    def optimizer_tensors(self, optimizer: Any) -> list[Array]:
        """The optimizer's state tensors on the device (Adam keeps its step count on the CPU)."""
        return [t for state in optimizer.state.values() for t in state.values()
                if isinstance(t, self.torch.Tensor) and t.device == self.device]

    def cnn_step(self) -> Step:
        F = self.torch.nn.functional

        def loss_fn(p: dict[str, Array], x: Array, y: Array) -> Array:
            h = x.reshape(-1, 1, 28, 28)
            h = F.max_pool2d(F.relu(F.conv2d(h, p["c1"], p["b1"], padding=1)), 2)
            h = F.max_pool2d(F.relu(F.conv2d(h, p["c2"], p["b2"], padding=1)), 2)
            return F.cross_entropy(F.linear(h.flatten(1), p["w"].t(), p["b"]), y)
        return self.adam_step("cnn", loss_fn)

    def transformer_step(self) -> Step:
        torch = self.torch
        F = torch.nn.functional
        causal = self.put(np.tril(np.ones((TF_CONTEXT, TF_CONTEXT), bool)))  # once, not per step

        def attention(x: Array, p: dict[str, Array], i: int) -> Array:
            (b, t, d), h = x.shape, TF_HEADS

            def heads(y: Array) -> Array:
                return y.reshape(b, t, h, d // h).transpose(1, 2)

            q, k, v = (heads(x @ p[f"{i}.{n}"]) for n in "qkv")
            scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(d // h))
            scores = scores.masked_fill(~causal[:t, :t], torch.finfo(scores.dtype).min)
            y = torch.softmax(scores, dim=-1) @ v
            return y.transpose(1, 2).reshape(b, t, d) @ p[f"{i}.o"]

        def loss_fn(p: dict[str, Array], ids: Array, targets: Array) -> Array:
            d = p["tokens"].shape[1]
            x = F.embedding(ids, p["tokens"]) + p["positions"][:ids.shape[1]]
            for i in range(TF_LAYERS):
                h = F.layer_norm(x, (d,), p[f"{i}.ln1"], p[f"{i}.ln1_b"], eps=1e-5)
                x = x + attention(h, p, i)
                h = F.layer_norm(x, (d,), p[f"{i}.ln2"], p[f"{i}.ln2_b"], eps=1e-5)
                h = F.gelu(F.linear(h, p[f"{i}.up"].t(), p[f"{i}.up_b"]), approximate="tanh")
                x = x + F.linear(h, p[f"{i}.down"].t(), p[f"{i}.down_b"])
            logits = F.layer_norm(x, (d,), p["norm"], p["norm_b"], eps=1e-5) @ p["head"]
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return self.adam_step("transformer", loss_fn)

    def adam_step(self, model: str, loss_fn: Callable[..., Array]) -> Step:
        """``loss.backward()`` and ``torch.optim.Adam`` (``AdamW`` with weight decay) with this
        step's learning rate, one barrier per step on the lazy devices."""
        torch = self.torch
        wd = weight_decay(model)
        params = {k: self.put(v).requires_grad_() for k, v in model_init(model).items()}
        kind = torch.optim.AdamW if wd else torch.optim.Adam
        optimizer = kind(list(params.values()), lr=MODEL_LR, betas=ADAM_BETAS, eps=ADAM_EPS,
                         weight_decay=wd)
        batches = [(x.astype(np.int64) if x.dtype.kind == "i" else x, y.astype(np.int64))
                   for x, y in model_batches(model)]  # ids and labels: long, as torch wants
        self.barrier()

        def step(i: int) -> Array:
            x, y = batches[i % len(batches)]
            x, y = self.put(x), self.put(y)
            for group in optimizer.param_groups:
                group["lr"] = model_lr(i)  # a new Python float every step
            optimizer.zero_grad()
            loss = loss_fn(params, x, y)
            loss.backward()
            optimizer.step()
            self.cut(lambda: [loss, *params.values(), *self.optimizer_tensors(optimizer)])
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

    def graph_nodes(self, outputs: list[Array]) -> int:
        import torch._lazy.debug

        return len(IR_NODE.findall(torch._lazy.debug.dump_ir(outputs, "text")))


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

    def graph_nodes(self, outputs: list[Array]) -> int:
        return len(IR_NODE.findall(self.xla._XLAC._get_xla_tensors_text(outputs)))


class MinilazyTorchSystem(TorchSystem):
    """The peers' PyTorch code, unmodified, on ``minilazy.pytorch`` (device ``minilazy``)."""

    id = "minilazy-torch"
    label = "minilazy.pytorch"
    lazy = True

    def make_device(self) -> Any:
        import minilazy as ml
        import minilazy.pytorch

        self.ml, self.pytorch = ml, minilazy.pytorch
        return minilazy.pytorch.DEVICE

    def versions(self) -> dict[str, str]:
        return {**super().versions(), "minilazy": self.ml.__version__}

    def barrier(self) -> None:
        self.pytorch.mark_step()

    def wait(self, t: Array) -> None:
        if t is not None:
            self.ml.wait(t.value)

    def compiles(self) -> int:
        return self.ml.metrics().compiles

    def recording(self) -> contextlib.AbstractContextManager[Any]:
        return self.ml.policy(max_pending_nodes=10**9)  # no auto-cut in a timed loop

    def graph_nodes(self, outputs: list[Array]) -> int:
        return int(self.ml.graph(*[t.value for t in outputs]).num_nodes)


SYSTEMS: dict[str, type[System]] = {s.id: s for s in (
    MinilazySystem, MinilazySpecialSystem, MinilazyCapturedSystem, NumpySystem, JaxSystem,
    JaxJitSystem, TorchSystem, TorchLazySystem, TorchXlaSystem, MinilazyTorchSystem)}
