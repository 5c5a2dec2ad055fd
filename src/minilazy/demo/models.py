"""The main job's two larger models (``python -m minilazy --model cnn|transformer``).

A small CNN on the seven-segment digits (``minilazy.demo.datasets``) and a character-level,
decoder-only Transformer on a bundled text (``minilazy.demo.corpus``), both written with
``ml.nn`` layers, differentiated with ``ml.value_and_grad`` and trained with ``ml.optim.adam``.
:func:`fit` runs either: one graph per step (forward, backward, update), one compile for the
first step and none after it, with a learning curve and the engine's counters printed.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import minilazy as ml
from minilazy.demo.corpus import characters
from minilazy.demo.datasets import digits

Params = dict[str, ml.Tensor]
Batch = Callable[[int], tuple[ml.Tensor, ml.Tensor]]
LossFn = Callable[[Params, ml.Tensor, ml.Tensor], ml.Tensor]


def _normal(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> ml.Tensor:
    return ml.asarray((rng.standard_normal(shape) * scale).astype(np.float32))


def _zeros(n: int) -> ml.Tensor:  # float32, as the weights: ml.zeros alone would be float64
    return ml.zeros((n,), dtype=ml.float32)


def _ones(n: int) -> ml.Tensor:
    return ml.ones((n,), dtype=ml.float32)


def cnn_params(seed: int = 0) -> Params:
    """Weights of :func:`cnn_logits`: two 3x3 convolutions (1->8->16) and a 784->10 layer.

    Example:
        >>> {k: v.shape for k, v in cnn_params().items()}["c2"]
        (16, 8, 3, 3)
    """
    rng = np.random.default_rng(seed)
    return {"c1": _normal(rng, (8, 1, 3, 3), math.sqrt(2 / 9)), "b1": _zeros(8),
            "c2": _normal(rng, (16, 8, 3, 3), math.sqrt(2 / 72)), "b2": _zeros(16),
            "w": _normal(rng, (16 * 7 * 7, 10), math.sqrt(1 / 784)), "b": _zeros(10)}


def cnn_logits(p: Params, x: ml.Tensor) -> ml.Tensor:
    """Images ``x`` (N, 784) -> class scores (N, 10): (conv, relu, 2x2 max pool) twice, linear.

    Example:
        >>> cnn_logits(cnn_params(), ml.zeros((2, 784))).shape
        (2, 10)
    """
    h = ml.reshape(x, (-1, 1, 28, 28))
    h = ml.nn.max_pool2d(ml.nn.relu(ml.nn.conv2d(h, p["c1"], p["b1"], padding=1)), 2)
    h = ml.nn.max_pool2d(ml.nn.relu(ml.nn.conv2d(h, p["c2"], p["b2"], padding=1)), 2)
    return ml.nn.linear(ml.reshape(h, (h.shape[0], -1)), p["w"], p["b"])


def cnn_loss(p: Params, x: ml.Tensor, y: ml.Tensor) -> ml.Tensor:
    """Mean cross-entropy of :func:`cnn_logits` against integer labels ``y``.

    Example:
        >>> x, y = digits(4)
        >>> 1 < cnn_loss(cnn_params(), ml.asarray(x), ml.asarray(y)).item() < 4
        True
    """
    return ml.nn.cross_entropy(cnn_logits(p, x), y)


@dataclass(frozen=True)
class Config:
    """The Transformer's sizes: layers, width, heads, context (in characters) and alphabet."""

    layers: int = 2
    width: int = 64
    heads: int = 4
    context: int = 32
    vocab: int = len(characters()[0])


def transformer_params(cfg: Config = Config(), seed: int = 0) -> Params:
    """Weights of :func:`transformer_logits`: embeddings, per-layer blocks, a final norm and head.

    Example:
        >>> p = transformer_params()
        >>> p["tokens"].shape, p["0.up"].shape, len(p)
        ((29, 64), (64, 256), 29)
    """
    rng = np.random.default_rng(seed)
    d = cfg.width
    p = {"tokens": _normal(rng, (cfg.vocab, d), 0.02),
         "positions": _normal(rng, (cfg.context, d), 0.02),
         "norm": _ones(d), "norm_b": _zeros(d),
         "head": _normal(rng, (d, cfg.vocab), 1 / math.sqrt(d))}
    for i in range(cfg.layers):
        for name in ("q", "k", "v", "o"):
            p[f"{i}.{name}"] = _normal(rng, (d, d), 1 / math.sqrt(d))
        p[f"{i}.up"], p[f"{i}.up_b"] = _normal(rng, (d, 4 * d), 1 / math.sqrt(d)), _zeros(4 * d)
        p[f"{i}.down"] = _normal(rng, (4 * d, d), 1 / math.sqrt(4 * d * 2 * cfg.layers))
        p[f"{i}.down_b"] = _zeros(d)
        for norm in ("ln1", "ln2"):
            p[f"{i}.{norm}"], p[f"{i}.{norm}_b"] = _ones(d), _zeros(d)
    return p


def transformer_logits(p: Params, ids: ml.Tensor, cfg: Config = Config()) -> ml.Tensor:
    """Character ids (B, T) -> next-character scores (B, T, vocab); pre-norm blocks.

    Each block: ``x += attention(layer_norm(x))``, then ``x += mlp(layer_norm(x))``, the MLP
    ``linear -> gelu -> linear`` four times as wide.

    Example:
        >>> transformer_logits(transformer_params(), ml.zeros((2, 32), dtype=ml.int32)).shape
        (2, 32, 29)
    """
    x = ml.nn.embedding(ids, p["tokens"]) + p["positions"][:ids.shape[1]]
    for i in range(cfg.layers):
        h = ml.nn.layer_norm(x, p[f"{i}.ln1"], p[f"{i}.ln1_b"])
        x = x + ml.nn.causal_self_attention(h, p[f"{i}.q"], p[f"{i}.k"], p[f"{i}.v"],
                                            p[f"{i}.o"], cfg.heads)
        h = ml.nn.layer_norm(x, p[f"{i}.ln2"], p[f"{i}.ln2_b"])
        h = ml.nn.gelu(ml.nn.linear(h, p[f"{i}.up"], p[f"{i}.up_b"]), approximate="tanh")
        x = x + ml.nn.linear(h, p[f"{i}.down"], p[f"{i}.down_b"])
    return ml.nn.layer_norm(x, p["norm"], p["norm_b"]) @ p["head"]


def transformer_loss(p: Params, ids: ml.Tensor, targets: ml.Tensor, cfg: Config = Config()
                     ) -> ml.Tensor:
    """Mean cross-entropy (nats per character) of the next character at every position.

    Example:
        >>> ids = ml.zeros((1, 32), dtype=ml.int32)
        >>> 2 < transformer_loss(transformer_params(), ids, ids).item() < 5
        True
    """
    return ml.nn.cross_entropy(transformer_logits(p, ids, cfg), targets)


def _tree(params: Params) -> dict[str, ml.optim.Tree]:
    return dict(params)


def _params(tree: ml.optim.Tree) -> Params:
    """``tree``, as ``opt.update`` returns it, typed back as a flat dict of tensors."""
    if not isinstance(tree, dict) or not all(isinstance(v, ml.Tensor) for v in tree.values()):
        raise TypeError("fit: the parameters must be a flat dict of tensors")
    return {k: v for k, v in tree.items() if isinstance(v, ml.Tensor)}


def _leaves(tree: ml.optim.Tree) -> list[ml.Tensor]:
    if isinstance(tree, ml.Tensor):
        return [tree]
    children = tree.values() if isinstance(tree, dict) else tree
    return [leaf for child in children for leaf in _leaves(child)]


@dataclass(frozen=True)
class Run:
    """What :func:`fit` measured: losses per step, first and later step times, engine counts."""

    params: Params
    losses: list[float]
    first_seconds: float
    step_seconds: float
    first_compiles: int
    later_compiles: int
    cache_hits: int
    nodes: int
    ops_per_step: float
    first_loads: int = 0  # programs of the first step loaded from the disk cache, not compiled


def fit(loss_fn: LossFn, params: Params, batch: Batch, steps: int, lr: float,
        weight_decay: float = 0.0, log_every: int = 0) -> Run:
    """Train ``params`` with Adam(W) for ``steps`` steps, one lazy graph (and barrier) per step.

    The loss of every step is kept as a tensor and read only at the end (and every
    ``log_every`` steps), so reading it never stalls the loop. The learning rate follows a
    cosine schedule: a new Python float per step, a parameter of the program, never a recompile.
    Pass ``params`` without keeping a reference (the old buffers are donated every step).

    Example:
        >>> x, y = digits(64)
        >>> xs, ys = ml.asarray(x), ml.asarray(y)
        >>> run = fit(cnn_loss, cnn_params(), lambda i: (xs, ys), steps=3, lr=1e-2)
        >>> run.first_compiles, run.later_compiles, run.losses[-1] < run.losses[0]
        (1, 0, True)
    """
    opt = ml.optim.adam(lr, weight_decay=weight_decay)
    state = opt.init(_tree(params))
    ml.mark_step()  # materialise the initial state, so step 0's graph looks like every later one
    losses: list[ml.Tensor] = []
    compute = ml.value_and_grad(loss_fn)
    first = later = 0.0
    first_compiles = first_loads = nodes = ops = 0
    ml.reset_metrics()
    if log_every:  # the first step compiles for seconds: say so before it starts
        print("  step    0  recording the step and compiling it, once...", flush=True)
    start = time.perf_counter()
    for i in range(steps):
        x, y = batch(i)
        loss, grads = compute(params, x, y)
        opt = ml.optim.adam(lr * 0.5 * (1 + math.cos(math.pi * i / steps)),
                            weight_decay=weight_decay)
        new, state = opt.update(grads, state, _tree(params))
        params = _params(new)
        del grads  # dead before the barrier: never materialised, only fused into the update
        if i == 0:
            nodes = ml.graph(loss, *_leaves(new), *_leaves(state)).num_nodes
        ml.mark_step()
        losses.append(loss)
        if log_every and (i % log_every == 0 or i == steps - 1):
            print(f"  step {i:4d}  loss {loss.item():.4f}")
        if i == 0:
            ml.wait(loss)
            first = time.perf_counter() - start
            first_compiles, ops = ml.metrics().compiles, ml.metrics().ops_recorded
            first_loads = ml.metrics().disk_hits
            ml.reset_metrics()
            start = time.perf_counter()
    ml.wait(losses[-1])
    later = (time.perf_counter() - start) / max(steps - 1, 1)
    m = ml.metrics()
    return Run(params, [float(t) for t in losses], first, later, first_compiles, m.compiles,
               m.cache_hits, nodes, m.ops_recorded / max(steps - 1, 1) if steps > 1 else ops,
               first_loads)


def report(run: Run) -> None:
    """Print the counters and timings of ``run``, and whether the steady state compiled."""
    later = len(run.losses) - 1
    steady = ("one step only: run 2 or more (--steps) to see the steady state" if not later else
              f"0 compiles in the steady state (a cache hit at each of the {later} later steps)"
              if run.cache_hits == later else
              f"0 compiles in the steady state ({run.cache_hits} cache hits in {later} steps)"
              if run.later_compiles == 0 else
              f"{run.later_compiles} compiles after the first step (expected 0)")
    plural = "" if run.first_compiles == 1 else "s"
    loaded = f", {run.first_loads} loaded from the disk cache" if run.first_loads else ""
    steps = f"; later steps {run.step_seconds * 1e3:.1f} ms/step" if later else ""
    print(f"first step {run.first_seconds * 1e3:8.1f} ms (records, {run.first_compiles} "
          f"compile{plural}{loaded}){steps}\ngraph: {run.nodes} nodes per step, "
          f"{run.ops_per_step:.0f} ops recorded per step; {steady}")


def main_cnn(steps: int = 200, batch: int = 64) -> Run:
    """Train the CNN on the digits; print the learning curve, counters and test accuracy."""
    x_train, y_train = digits(4096, seed=1)
    x_test, y_test = digits(1000, seed=2)
    print(f"minilazy {ml.__version__} on {ml.default_device()}: a CNN (conv 1-8, conv 8-16, "
          f"linear 784-10), batch {batch}, Adam, {steps} steps on seven-segment digits\n")

    def batches(i: int) -> tuple[ml.Tensor, ml.Tensor]:
        lo = (i * batch) % (len(x_train) - batch)
        return ml.asarray(x_train[lo:lo + batch]), ml.asarray(y_train[lo:lo + batch])

    run = fit(cnn_loss, cnn_params(), batches, steps, lr=3e-3, log_every=max(steps // 5, 1))
    report(run)
    scores = cnn_logits(run.params, ml.asarray(x_test))
    accuracy = float(np.mean(ml.argmax(scores, axis=1).numpy() == y_test))
    print(f"final loss {run.losses[-1]:.4f}, test accuracy {accuracy:.1%} (target > 90%)")
    return run


def sample(p: Params, prompt: str, n: int, cfg: Config = Config()) -> str:
    """``prompt`` continued by ``n`` characters, each the most likely next one (greedy).

    Every character is one observation of the same program: the window is always the last
    ``cfg.context`` characters, left-padded with spaces, so decoding compiles once.

    Example:
        >>> len(sample(transformer_params(), "a lazy ", 3))
        10
    """
    alphabet, _ = characters()
    index = {c: i for i, c in enumerate(alphabet)}
    text = prompt
    for _ in range(n):
        window = text[-cfg.context:].rjust(cfg.context)
        ids = ml.asarray(np.array([[index[c] for c in window]], np.int32))
        text += alphabet[int(ml.argmax(transformer_logits(p, ids, cfg)[0, -1]))]
    return text


def main_transformer(steps: int = 300, batch: int = 16) -> Run:
    """Train the character Transformer; print the learning curve, counters and a sample."""
    cfg = Config()
    _, ids = characters()
    rng = np.random.default_rng(1)
    print(f"minilazy {ml.__version__} on {ml.default_device()}: a character Transformer "
          f"({cfg.layers} layers, width {cfg.width}, {cfg.heads} heads, context {cfg.context}, "
          f"{cfg.vocab} characters), batch {batch}, AdamW, {steps} steps on {len(ids)} "
          f"characters\n")

    def batches(i: int) -> tuple[ml.Tensor, ml.Tensor]:
        starts = rng.integers(0, len(ids) - cfg.context - 1, batch)
        windows = np.stack([ids[s:s + cfg.context + 1] for s in starts])
        return ml.asarray(windows[:, :-1]), ml.asarray(windows[:, 1:])

    loss = functools.partial(transformer_loss, cfg=cfg)
    run = fit(loss, transformer_params(cfg), batches, steps, lr=3e-3, weight_decay=0.01,
              log_every=max(steps // 6, 1))
    report(run)
    print(f"final loss {run.losses[-1]:.4f} nats/char, from {run.losses[0]:.4f} "
          f"(target < 2.0)")
    start = time.perf_counter()
    before = ml.metrics()
    text = sample(run.params, "a lazy tensor ", 40)
    compiles, loads = (ml.metrics().compiles - before.compiles,
                       ml.metrics().disk_hits - before.disk_hits)
    print(f"greedy sample ({(time.perf_counter() - start) * 1e3:.0f} ms, {compiles} compile"
          f"{'' if compiles == 1 else 's'}{f', {loads} loaded' if loads else ''} for 40 "
          f"characters): {text!r}")
    return run
