"""The main job (``python -m minilazy``): train a small MLP lazily, and show what laziness buys.

A 784-256-10 MLP learns seven-segment digits (``minilazy.demo.datasets``) with softmax cross-entropy
and SGD with momentum, written with plain minilazy ops and ``ml.value_and_grad``. The script
times a step op by op (eager) and lazily, counts compiles, programs loaded from the persistent cache
and cache hits, and ends with the loss and the accuracy on held-out images.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import minilazy as ml
from minilazy.demo.datasets import digits

Params = dict[str, ml.Tensor]
SIZES = (784, 256, 10)
MLP_BATCH = 128  # the main job's batch: --devices N must divide it
MAX_EXAMPLES = 1 << 14  # training images at most: a long run goes round them again


def init_params(seed: int = 0) -> dict[str, np.ndarray[Any, Any]]:
    """He-initialised weights and zero biases, as NumPy float32 arrays.

    Example:
        >>> {k: v.shape for k, v in init_params().items()}
        {'w1': (784, 256), 'b1': (256,), 'w2': (256, 10), 'b2': (10,)}
    """
    rng = np.random.default_rng(seed)
    (n_in, n_hidden, n_out) = SIZES
    return {
        "w1": (rng.standard_normal((n_in, n_hidden)) * math.sqrt(2 / n_in)).astype(np.float32),
        "b1": np.zeros(n_hidden, np.float32),
        "w2": (rng.standard_normal((n_hidden, n_out)) * math.sqrt(2 / n_hidden)).astype(
            np.float32),
        "b2": np.zeros(n_out, np.float32),
    }


def logits(p: Params, x: ml.Tensor) -> ml.Tensor:
    """The MLP: ``relu(x @ w1 + b1) @ w2 + b2``.

    Example:
        >>> p = {k: ml.asarray(v) for k, v in init_params().items()}
        >>> logits(p, ml.zeros((2, 784), dtype=ml.float32)).shape
        (2, 10)
    """
    h = ml.maximum(x @ p["w1"] + p["b1"], 0.0)
    return h @ p["w2"] + p["b2"]


def loss_fn(p: Params, x: ml.Tensor, y: ml.Tensor) -> ml.Tensor:
    """Mean softmax cross-entropy of the MLP on a batch (labels ``y`` are integers).

    Example:
        >>> p = {k: ml.asarray(v) for k, v in init_params().items()}
        >>> x, y = digits(8)
        >>> 0 < loss_fn(p, ml.asarray(x), ml.asarray(y)).item() < 10
        True
    """
    z = logits(p, x)
    top = ml.max(z, axis=1, keepdims=True)
    log_norm = ml.log(ml.sum(ml.exp(z - top), axis=1)) + top[:, 0]
    one_hot = ml.astype(y[:, None] == ml.arange(SIZES[-1]), z.dtype)
    return ml.mean(log_norm - ml.sum(z * one_hot, axis=1))


def train_step(p: Params, velocity: Params, x: ml.Tensor, y: ml.Tensor, lr: float,
               momentum: float = 0.9, cut: bool = True) -> ml.Tensor:
    """Record one SGD-with-momentum step (forward, backward, update) and cut it: one graph.

    ``cut=False`` leaves the step pending (to look at its graph before the barrier).

    Example:
        >>> p = {k: ml.asarray(v) for k, v in init_params().items()}
        >>> v = {k: ml.zeros_like(t) for k, t in p.items()}
        >>> x, y = digits(16)
        >>> loss = train_step(p, v, ml.asarray(x), ml.asarray(y), lr=0.1)
        >>> loss.is_pending
        False
    """
    loss, grads = ml.value_and_grad(loss_fn)(p, x, y)
    for k in p:
        velocity[k] = momentum * velocity[k] + grads[k]
        p[k] -= lr * velocity[k]  # in place: the buffer is donated at the barrier
    del grads  # dead before the barrier: fused into the update, never materialised
    if cut:
        ml.mark_step()
    return loss


def accuracy(p: Params, x: np.ndarray[Any, Any], y: np.ndarray[Any, Any]) -> float:
    """Fraction of ``x`` the MLP classifies as ``y`` (an observation barrier)."""
    predicted = ml.argmax(logits(p, ml.asarray(x)), axis=1).numpy()
    return float(np.mean(predicted == y))


def comparison(lazy: float, eager: float) -> str:
    """Both per-step timings (in seconds) and their ratio, in words that are true either way.

    Example:
        >>> comparison(0.0041, 0.0052)
        'per step, lazy 4.10 ms, op by op 5.20 ms: lazy took 0.79x the time of op by op (faster)'
        >>> comparison(0.0052, 0.0041)
        'per step, lazy 5.20 ms, op by op 4.10 ms: lazy took 1.3x the time of op by op (slower)'
        >>> comparison(0.0005, 0.25)
        'per step, lazy 0.500 ms, op by op 250 ms: lazy took 0.0020x the time of op by op (faster)'
    """
    verdict = "faster" if lazy < eager else "slower" if lazy > eager else "as fast"
    return (f"per step, lazy {_significant(lazy * 1e3, 3)} ms, op by op "
            f"{_significant(eager * 1e3, 3)} ms: lazy took {_significant(lazy / eager, 2)}x the "
            f"time of op by op ({verdict})")


def made(m: ml.Metrics) -> str:
    """How the first step's program was made: compiled by XLA, or loaded from the disk cache.

    Example:
        >>> from dataclasses import replace
        >>> m = ml.metrics()
        >>> made(replace(m, compiles=1, disk_hits=0))
        'compiles: 1 compile of the whole step'
        >>> made(replace(m, compiles=0, disk_hits=1))
        'loads: 1 program of the whole step from the disk cache (an earlier run compiled it)'
        >>> made(replace(m, compiles=2, disk_hits=1))
        'compiles: 2 compiles, and 1 program loaded from the disk cache, for the whole step'
    """
    plural = "" if m.compiles == 1 else "s"
    loaded = f"{m.disk_hits} program{'' if m.disk_hits == 1 else 's'}"
    if not m.disk_hits:
        return f"compiles: {m.compiles} compile{plural} of the whole step"
    if not m.compiles:
        return f"loads: {loaded} of the whole step from the disk cache (an earlier run compiled it)"
    return (f"compiles: {m.compiles} compile{plural}, and {loaded} loaded from the disk cache, "
            "for the whole step")


def _counts(m: ml.Metrics) -> str:
    loaded = f", {m.disk_hits} loaded from disk" if m.disk_hits else ""
    return f"{m.compiles} compiles{loaded}"


def _significant(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, without an exponent (``1234.5`` -> ``1235``)."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    decimals = digits - 1 - math.floor(math.log10(abs(x)))
    return f"{x:.{max(decimals, 0)}f}"


def _lr(step: int, steps: int, peak: float = 0.05) -> float:
    return peak * 0.5 * (1 + math.cos(math.pi * step / steps))  # a new value every step


def placer(devices: int) -> Callable[[np.ndarray[Any, Any], bool], ml.Tensor]:
    """``place(array, split)``: on one device, or data-parallel over ``devices`` CPU devices.

    Data parallel: a batch (``split``) is split along its first axis, one part per device;
    parameters are replicated. XLA's GSPMD partitions the step and sums the gradients.

    Example:
        >>> placer(1)(np.ones(4), True).sharding is None
        True
    """
    if devices == 1:
        return lambda a, split: ml.asarray(a)
    mesh = ml.Mesh(ml.devices("cpu")[:devices], ("data",))
    return lambda a, split: ml.asarray(
        a, sharding=(mesh, (("data",) if split else (None,)) + (None,) * (a.ndim - 1)))


def main(steps: int = 300, batch: int = MLP_BATCH, eager_steps: int = 3, devices: int = 1
         ) -> None:
    """Train, and print timings, compile counts, the graph's size and the final loss and accuracy.

    ``devices`` > 1 trains data-parallel over that many CPU devices (see :func:`placer`).
    """
    if steps < 1 or devices < 1 or batch % devices:
        raise ValueError(f"main: steps and devices must be >= 1 and devices must divide the "
                         f"batch, got steps={steps}, devices={devices}, batch={batch}")
    x_train, y_train = digits(min(max(steps * batch // 4, 2 * batch), MAX_EXAMPLES), seed=1)
    x_test, y_test = digits(2000, seed=2)
    place = placer(devices)
    where = f"{devices} CPU devices, data-parallel" if devices > 1 else ml.default_device()
    print(f"minilazy {ml.__version__} on {where}: a {'-'.join(map(str, SIZES))} "
          f"MLP, batch {batch}, SGD with momentum, {steps} steps on seven-segment digits\n")

    def batches(i: int) -> tuple[ml.Tensor, ml.Tensor]:
        lo = (i * batch) % (len(x_train) - batch)
        return place(x_train[lo:lo + batch], True), place(y_train[lo:lo + batch], True)

    def fresh() -> tuple[Params, Params]:
        p = {k: place(v, False) for k, v in init_params().items()}
        velocity = {k: place(np.zeros_like(v), False) for k, v in init_params().items()}
        ml.mark_step()  # so that the first step's graph already looks like every later one
        return p, velocity

    p, v = fresh()
    with ml.eager():
        train_step(p, v, *batches(0), lr=_lr(0, steps))  # warm-up: compiles each op once
        ml.reset_metrics()
        start = time.perf_counter()
        for i in range(eager_steps):
            train_step(p, v, *batches(i), lr=_lr(i, steps))
    eager = (time.perf_counter() - start) / eager_steps
    m = ml.metrics()
    print(f"eager (op by op)  {eager * 1e3:8.1f} ms/step   {m.executions // eager_steps} "
          f"executions/step, {_counts(m)}, {m.cache_hits} cache hits (after warm-up)")

    p, v = fresh()
    ml.reset_metrics()
    print("lazy, first step: recording the whole step, and compiling it once (or loading it "
          "from the persistent cache)...", flush=True)
    start = time.perf_counter()
    loss = train_step(p, v, *batches(0), lr=_lr(0, steps), cut=False)
    nodes = ml.graph(loss, *p.values(), *v.values()).num_nodes
    ml.mark_step()
    ml.wait(loss)
    first = time.perf_counter() - start
    print(f"lazy, first step  {first * 1e3:8.1f} ms        (records, {made(ml.metrics())}: "
          f"{nodes} nodes)")
    if steps == 1:
        print("\none step only: run 2 or more (--steps) to see the later steps hit the cache")
        print(f"final loss {loss.item():.4f}, test accuracy {accuracy(p, x_test, y_test):.1%}")
        return
    ml.reset_metrics()
    start = time.perf_counter()
    for i in range(1, steps):
        loss = train_step(p, v, *batches(i), lr=_lr(i, steps))
        if i % 100 == 0:
            print(f"  step {i:4d}  loss {loss.item():.4f}")
    ml.wait(loss)
    lazy = (time.perf_counter() - start) / (steps - 1)
    m = ml.metrics()
    print(f"lazy, later steps {lazy * 1e3:8.1f} ms/step   {m.executions // (steps - 1)} "
          f"execution/step, {_counts(m)}, {m.cache_hits} cache hits, "
          f"{m.donations // (steps - 1)} buffers donated/step")
    schedule = ("without a recompile (Python scalars are parameters)"
                if m.compiles + m.disk_hits == 0 else
                f"and the later steps needed {m.compiles + m.disk_hits} new programs")
    print(f"\n{comparison(lazy, eager)}; the learning rate changed every step {schedule}")
    print(f"final loss {loss.item():.4f}, test accuracy {accuracy(p, x_test, y_test):.1%}")


if __name__ == "__main__":
    main()
