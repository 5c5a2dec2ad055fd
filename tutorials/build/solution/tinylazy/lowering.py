"""Lowering: a cut becomes one XLA program through JAX, compiled once per key.

Each node becomes the ``jax.numpy`` function of the same name, so the whole cut is one Python
function of its parameters that ``jax.jit`` traces, XLA fuses and compiles. Results are cast to
the dtype NumPy gave at record time: the compiler computes, NumPy decides what the types are.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tinylazy.graph import Cut
from tinylazy.ir import STATE, fill
from tinylazy.ops import cast, jax_function, weak

Program = Callable[..., list[Any]]
# XLA:CPU's fusion emitters take memory that grows faster than the chain of ops they fuse: a
# 600-op elementwise chain exhausts 6 GiB. The classic emitters compile it in a second.
OPTIONS: dict[str, dict[str, Any]] = {"cpu": {"xla_cpu_use_fusion_emitters": False}}


@contextlib.contextmanager
def x64() -> Iterator[None]:
    """64-bit dtypes in JAX for this block only: never a global change of JAX's configuration.

    Example:
        >>> with x64():
        ...     jnp.asarray(np.int64(2**40)).dtype
        dtype('int64')
    """
    with jax.enable_x64(True):
        yield


def function(op: str, template: Any, dtype: np.dtype[Any]) -> Callable[..., Any]:
    """The JAX function that computes one node from its inputs' values.

    Assignment 4, "Lower to XLA and cache": LZ-LOW-002 (and LZ-NUM-002 on the device).

    Call :func:`~tinylazy.ops.jax_function` on the filled template and cast the result to
    ``dtype``. JAX promotes mixed dtypes differently from NumPy (``int64 + uint64``), so the
    operands of an elementwise op are first cast to NumPy's common dtype of its tensors (weak
    scalars excepted: they take the tensor's dtype, as NEP 50 says). The op ``"vjp"`` (assignment
    7) is the vector-Jacobian product of the node ``template[:3]`` describes with respect to its
    input ``template[3]``: its inputs are the forward node's inputs, then the cotangent.
    """
    if op == "vjp":
        forward, i = function(*template[:3]), template[3]

        def vjp(*ins: Any) -> Any:
            *primals, cotangent = ins
            alone = lambda x: forward(*primals[:i], x, *primals[i + 1:])
            return jax.vjp(alone, primals[i])[1](cotangent)[0].astype(dtype)
        return vjp
    fn, promote = jax_function(op), weak(op) and op != "where"

    def run(*ins: Any) -> Any:
        if promote:
            ins = _promoted(ins, dtype, op.endswith("="))
        elif op in ("mean", "var", "std", "matmul", "tensordot") and dtype.kind == "f":
            ins = tuple(cast(x, dtype) for x in ins)  # mean of ints: in float64, as NumPy
        return cast(jnp.asarray(fn(*fill(template[0], list(ins)), **fill(template[1], list(ins)))),
                    dtype)
    return run


def _promoted(ins: tuple[Any, ...], dtype: np.dtype[Any], inplace: bool) -> tuple[Any, ...]:
    """The operands of an elementwise op, cast to the dtype NumPy's loop computes in."""
    weak_type = [jax.typeof(x).weak_type for x in ins]
    strong = [x.dtype for x, w in zip(ins, weak_type) if not w]
    loop = np.result_type(*strong) if strong else dtype
    if dtype.kind == "f" and not inplace:  # a float result is computed in its dtype: atan2(i, 3)
        loop = dtype
    if loop.kind == "f":
        return tuple(cast(jnp.asarray(x), loop) for x in ins)
    if dtype == np.bool_ and loop.kind in "iu" and any(weak_type):
        loop = np.result_type(loop, np.int64)  # uint8 < 1000 is compared exactly (NEP 50)
    return tuple(x if w else cast(x, loop) for x, w in zip(ins, weak_type))


def build(c: Cut) -> Program:
    """The cut as one Python function of its parameters (leaves in order), for ``jax.jit``.

    Assignment 4, "Lower to XLA and cache": LZ-LOW-001, LZ-LOW-003.

    Data and scalars are parameters, never constants (a new batch or learning rate must reuse
    the program). The function must not hold the cut's nodes: the cache keeps it, and nodes hold
    data.
    """
    steps = [None if not n.pending else (function(n.op, n.template, n.dtype), ins)
             for n, ins in zip(c.order, c.wiring)]
    outputs = list(c.outputs)

    def program(*params: Any) -> list[Any]:
        env: list[Any] = []
        feed = iter(params)
        for step in steps:
            if step is None:
                env.append(next(feed))
            else:
                env.append(step[0](*(env[i] for i in step[1])))
        return [env[i] for i in outputs]
    return program


def compile(c: Cut, params: list[Any], donate: tuple[bool, ...]) -> Any:
    """The compiled program of ``c`` for ``params``' types: from the cache, else compiled.

    Assignment 4, "Lower to XLA and cache": LZ-CACHE-001, LZ-CACHE-002, LZ-CACHE-005.

    Keyed by the cut's key and the donation mask (donated parameters are part of the compiled
    program). A miss is ``jax.jit(build(c), donate_argnums=...).lower(*params)``, compiled with
    ``.compile(OPTIONS.get(jax.default_backend()))`` (without those options XLA:CPU takes
    gigabytes on long chains), and counts a compile; a hit counts a cache hit. Call it within
    :func:`x64`.
    """
    key = (c.key, donate)
    program = STATE.cache.get(key)
    if program is None:
        donated = tuple(i for i, d in enumerate(donate) if d)
        lowered = jax.jit(build(c), donate_argnums=donated).lower(*params)
        program = lowered.compile(OPTIONS.get(jax.default_backend()))
        STATE.cache[key] = program
        STATE.counts["compiles"] += 1
    else:
        STATE.counts["cache_hits"] += 1
    return program


def hlo(c: Cut, params: list[Any]) -> str:
    """The program of ``c`` as StableHLO text (given)."""
    with x64():
        text: str = jax.jit(build(c)).lower(*params).as_text()
    return text
