"""The benchmark programs, written once over an array namespace (NumPy, jax.numpy, minilazy...).

Every system runs the same source: ``ns`` is the module (``np``, ``jnp``, ``ml``) or a small
adapter with ``tanh`` and ``maximum`` (torch). The MLP's parameters and batches are NumPy arrays
made here from fixed seeds, so every system starts from the same numbers and its losses can be
compared. NumPy only (the peers' worker processes import this module).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

Array = Any  # a NumPy array, a JAX array, a minilazy Tensor or a torch tensor
HostArray = np.ndarray[Any, Any]

# -- recording cost per op ---------------------------------------------------------------------
SCALAR = 0.5  # tensor + scalar: not 0 or 1, which PyTorch/XLA (and special_scalars) bake in


def loop_add(a: Array, b: Array, n: int) -> Array:
    """``y = a + b``, ``n`` times: each result dies at the next iteration."""
    y = a
    for _ in range(n):
        y = a + b
    return y


def loop_only(a: Array, b: Array, n: int) -> Array:
    """The same Python loop without the op, to price the loop alone."""
    y = a
    for _ in range(n):
        y = b
    return y


def record_chains(a: Array, chains: int, length: int) -> Array:
    """``chains`` chains of ``length`` ops from ``a`` (alternately ``* 1.0001`` and ``+ 0.5``),
    with no barrier: each chain dies when the next one starts."""
    y = a
    for _ in range(chains):
        y = a
        for i in range(length):
            y = y + SCALAR if i % 2 else y * 1.0001
    return y


CHAINS, CHAIN_LENGTH = 17, 1000  # 17 000 ops: past minilazy's auto-cut limit of 2048 nodes


# -- a 100-op graph ----------------------------------------------------------------------------
def graph100(x: Array, y: Array, ns: Any, scalars: bool) -> Array:
    """100 elementwise ops: 25 x (mul, add, tanh, maximum), with or without Python scalars."""
    for i in range(25):
        if scalars:  # 2 Python scalars per round: 50 scalar parameters in all
            x = ns.maximum(ns.tanh(x * (0.9 + 0.001 * i) + y), -0.5 + 0.01 * i)
        else:
            x = ns.maximum(ns.tanh(x * y + y), y)
    return x


def graph100_inputs() -> tuple[HostArray, HostArray]:
    """The two ``f32[8]`` inputs of :func:`graph100`."""
    return (np.linspace(-1.0, 1.0, 8, dtype=np.float32),
            np.linspace(0.5, -0.5, 8, dtype=np.float32))


# -- a 20-op elementwise chain -----------------------------------------------------------------
def chain(x: Array, ns: Any, act: str = "maximum") -> Array:
    """``minilazy.demo``'s chain: 5 x (mul, add, maximum, sub); ``act="tanh"`` swaps maximum."""
    for i in range(5):
        z = x * 1.01 + 0.1 * i
        x = (ns.maximum(z, 0.0) if act == "maximum" else ns.tanh(z)) - 0.3
    return x


def chain_input(n: int) -> HostArray:
    """``n`` standard-normal float32 values (seed 0)."""
    return np.random.default_rng(0).standard_normal(n).astype(np.float32)


# -- the MLP training step ---------------------------------------------------------------------
SIZES = (784, 256, 10)  # minilazy.demo's MLP
BATCH = 128
MOMENTUM = 0.9
PARAM_NAMES = ("w1", "b1", "w2", "b2")


def mlp_init(seed: int = 0) -> dict[str, HostArray]:
    """He-initialised weights and zero biases: the same numbers as ``minilazy.demo.init_params``."""
    rng = np.random.default_rng(seed)
    n_in, n_hidden, n_out = SIZES
    return {
        "w1": (rng.standard_normal((n_in, n_hidden)) * math.sqrt(2 / n_in)).astype(np.float32),
        "b1": np.zeros(n_hidden, np.float32),
        "w2": (rng.standard_normal((n_hidden, n_out)) * math.sqrt(2 / n_hidden)).astype(
            np.float32),
        "b2": np.zeros(n_out, np.float32),
    }


def mlp_batches(count: int = 8, seed: int = 1) -> list[tuple[HostArray, HostArray]]:
    """``count`` batches of uniform ``f32[128, 784]`` images and int32 labels in ``0..9``."""
    rng = np.random.default_rng(seed)
    return [(rng.random((BATCH, SIZES[0]), dtype=np.float32),
             rng.integers(0, SIZES[-1], BATCH).astype(np.int32)) for _ in range(count)]


def learning_rate(step: int, steps: int = 1000, peak: float = 0.05) -> float:
    """A cosine schedule: a new Python float every step (a lazy system must not recompile)."""
    return peak * 0.5 * (1 + math.cos(math.pi * (step % steps) / steps))


class NumpyMLP:
    """The MLP step in NumPy eager, with a hand-written backward pass (updates in place)."""

    def __init__(self) -> None:
        self.p = mlp_init()
        self.v = {k: np.zeros_like(a) for k, a in self.p.items()}
        self._rows = np.arange(BATCH)

    def step(self, x: HostArray, y: HostArray, lr: float) -> float:
        """One SGD-with-momentum step on the mean softmax cross-entropy; returns the loss."""
        p, rows = self.p, self._rows
        pre = x @ p["w1"] + p["b1"]
        h = np.maximum(pre, 0.0)
        z = h @ p["w2"] + p["b2"]
        e = np.exp(z - z.max(axis=1, keepdims=True))
        total = e.sum(axis=1, keepdims=True)
        softmax = e / total
        loss = float(np.mean(np.log(total[:, 0]) + z.max(axis=1) - z[rows, y]))
        dz = softmax
        dz[rows, y] -= 1.0
        dz /= len(y)
        dh = dz @ p["w2"].T
        dh[pre <= 0] = 0.0
        grads = {"w1": x.T @ dh, "b1": dh.sum(axis=0), "w2": h.T @ dz, "b2": dz.sum(axis=0)}
        for k, g in grads.items():
            v = self.v[k]
            v *= MOMENTUM
            v += g
            p[k] -= lr * v
        return loss


# -- the main job's models: a CNN and a character Transformer (minilazy.demo.models) ---------------
# The sizes, initial scales and draw order of minilazy.demo.models.cnn_params / transformer_params,
# so that (with seed 0) these are the very numbers minilazy's own init makes; the data are
# random from fixed seeds (the peers' workers cannot import minilazy's datasets or corpus).
CNN_BATCH = 64
CNN_CHANNELS = (1, 8, 16)  # two 3x3 convolutions, padding 1, each followed by relu and 2x2 pool
CNN_CLASSES = 10
TF_LAYERS, TF_WIDTH, TF_HEADS, TF_CONTEXT = 2, 64, 4, 32
TF_VOCAB = 29  # len(minilazy.demo.corpus.characters()[0]), checked by tests/docs/test_benchmarks.py
TF_BATCH = 16
TF_WEIGHT_DECAY = 0.01  # AdamW, as minilazy.demo.models.main_transformer trains it
MODEL_LR = 3e-3  # the peak of the cosine schedule, as models.fit uses it
ADAM_BETAS, ADAM_EPS = (0.9, 0.999), 1e-8  # ml.optim.adam's and torch.optim.Adam's defaults
MODELS = ("mlp", "cnn", "transformer")


def _normal(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> HostArray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def cnn_init(seed: int = 0) -> dict[str, HostArray]:
    """The CNN's weights (conv ``c1``, ``c2`` as (O, C, 3, 3); ``w`` (784, 10)): as
    ``minilazy.demo.models.cnn_params(seed)``."""
    rng = np.random.default_rng(seed)
    return {"c1": _normal(rng, (8, 1, 3, 3), math.sqrt(2 / 9)), "b1": np.zeros(8, np.float32),
            "c2": _normal(rng, (16, 8, 3, 3), math.sqrt(2 / 72)),
            "b2": np.zeros(16, np.float32),
            "w": _normal(rng, (16 * 7 * 7, 10), math.sqrt(1 / 784)),
            "b": np.zeros(10, np.float32)}


def cnn_batches(count: int = 8, seed: int = 2) -> list[tuple[HostArray, HostArray]]:
    """``count`` batches of ``f32[64, 784]`` noisy images (N(0.3, 0.5)) and int32 labels."""
    rng = np.random.default_rng(seed)
    return [((0.3 + 0.5 * rng.standard_normal((CNN_BATCH, 784))).astype(np.float32),
             rng.integers(0, CNN_CLASSES, CNN_BATCH).astype(np.int32)) for _ in range(count)]


def transformer_init(seed: int = 0) -> dict[str, HostArray]:
    """The Transformer's weights, (in, out) layouts: as ``minilazy.demo.models.transformer_params``
    with the default ``Config`` (2 layers, width 64, 4 heads, context 32, 29 characters)."""
    rng = np.random.default_rng(seed)
    d = TF_WIDTH
    ones, zeros = np.ones(d, np.float32), np.zeros(d, np.float32)
    p = {"tokens": _normal(rng, (TF_VOCAB, d), 0.02),
         "positions": _normal(rng, (TF_CONTEXT, d), 0.02),
         "norm": ones.copy(), "norm_b": zeros.copy(),
         "head": _normal(rng, (d, TF_VOCAB), 1 / math.sqrt(d))}
    for i in range(TF_LAYERS):
        for name in ("q", "k", "v", "o"):
            p[f"{i}.{name}"] = _normal(rng, (d, d), 1 / math.sqrt(d))
        p[f"{i}.up"] = _normal(rng, (d, 4 * d), 1 / math.sqrt(d))
        p[f"{i}.up_b"] = np.zeros(4 * d, np.float32)
        p[f"{i}.down"] = _normal(rng, (4 * d, d), 1 / math.sqrt(4 * d * 2 * TF_LAYERS))
        p[f"{i}.down_b"] = zeros.copy()
        for norm in ("ln1", "ln2"):
            p[f"{i}.{norm}"], p[f"{i}.{norm}_b"] = ones.copy(), zeros.copy()
    return p


def transformer_batches(count: int = 8, seed: int = 3) -> list[tuple[HostArray, HostArray]]:
    """``count`` batches of int32 ids (16, 32) and their next-character targets, cut from one
    random text of ids in ``0..28``."""
    rng = np.random.default_rng(seed)
    text = rng.integers(0, TF_VOCAB, 4096).astype(np.int32)
    out = []
    for _ in range(count):
        starts = rng.integers(0, len(text) - TF_CONTEXT - 1, TF_BATCH)
        windows = np.stack([text[s:s + TF_CONTEXT + 1] for s in starts])
        out.append((np.ascontiguousarray(windows[:, :-1]), np.ascontiguousarray(windows[:, 1:])))
    return out


def model_init(model: str) -> dict[str, HostArray]:
    """The initial weights of ``model`` (``mlp``, ``cnn`` or ``transformer``)."""
    return {"mlp": mlp_init, "cnn": cnn_init, "transformer": transformer_init}[model]()


def model_batches(model: str) -> list[tuple[HostArray, HostArray]]:
    """The batches (inputs, integer labels or targets) of ``model``, cycled through in order."""
    return {"mlp": mlp_batches, "cnn": cnn_batches, "transformer": transformer_batches}[model]()


def model_lr(step: int) -> float:
    """The models' cosine schedule (peak :data:`MODEL_LR`): a new Python float every step."""
    return learning_rate(step, peak=MODEL_LR)
