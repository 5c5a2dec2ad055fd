"""Mutants made by rule: one realistic slip, applied at every site of one of minilazy's tables.

The hand-written catalogue (:mod:`.engine`, :mod:`.seams`) has one mutant per kind of bug. A
*family* applies one kind of slip at every site it can land on, as mutation-testing tools do:
every row of the lowering table reads its neighbour's rule, every binary op uses its first
operand's loop, every VJP loses its sign. So that each spec test about one op (``[exp]``,
``[sum]``...) has a bug of *that* op to catch. A site is named by the registry name the suite
parametrises its tests with; the factory finds the ``Op`` it records by recording it once.

Factories are looked up by name, ``families:<family>__<site>`` (module ``__getattr__``), so the
catalogue can list every site without a function per site.

Example:
    >>> callable(__getattr__("vjp_negated__exp"))
    True
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import minilazy as ml
from minilazy.api import scalars
from minilazy.api import tensor as surface
from minilazy.autodiff import vjps
from minilazy.conformance.adapters.minilazy_adapter import MinilazyAdapter, cpu
from minilazy.conformance.mutate.engine import _set, _set_table
from minilazy.conformance.mutate.seams import restructured
from minilazy.conformance.mutate.slips import slip
from minilazy.conformance.registry import ops
from minilazy.core import cut as cutting
from minilazy.core import infer, lowering
from minilazy.core.dtypes import DType
from minilazy.core.ir import Node, Op

A = np.arange(1.0, 7.0).reshape(2, 3)  # the probes' operand: f64[2,3], no zeros, no ties


def _setitem(x: ml.Tensor) -> ml.Tensor:
    y = x + 0.0
    y[0] = x[1]
    return y


# How to record each non-elementwise site once (elementwise ones are called on A, or on ints).
PROBES: dict[str, Callable[[ml.Tensor], Any]] = {
    "sum": ml.sum, "prod": ml.prod, "max": ml.max, "min": ml.min, "mean": ml.mean,
    "std": ml.std, "var": ml.var, "argmax": ml.argmax, "argmin": ml.argmin,
    "any": ml.any, "all": ml.all, "cumulative_sum": lambda x: ml.cumulative_sum(x, axis=1),
    "reshape": lambda x: ml.reshape(x, (3, 2)), "permute_dims": lambda x: ml.permute_dims(
        x, (1, 0)), "expand_dims": lambda x: ml.expand_dims(x, axis=0),
    "squeeze": lambda x: ml.squeeze(x[None], axis=0), "flip": ml.flip,
    "broadcast_to": lambda x: ml.broadcast_to(x, (2, 2, 3)), "matrix_transpose": lambda x: x.mT,
    "concat": lambda x: ml.concat([x, x]), "stack": lambda x: ml.stack([x, x]),
    "tril": ml.tril, "triu": ml.triu, "clip": lambda x: ml.clip(x, 2.0, 5.0),
    "where": lambda x: ml.where(x > 2.0, x, -x), "astype": lambda x: ml.astype(x, ml.float32),
    "take": lambda x: ml.take(x, ml.asarray([1, 0]), axis=1),
    "take_along_axis": lambda x: ml.take_along_axis(x, ml.asarray([[1], [0]]), axis=1),
    "getitem": lambda x: x[0], "setitem": _setitem, "matmul": lambda x: x @ x.mT,
    "tensordot": lambda x: ml.tensordot(x, x.mT, axes=1), "sort": ml.sort, "argsort": ml.argsort,
    "searchsorted": lambda x: ml.searchsorted(x[0], x[1]),
    "conv2d": lambda x: ml.nn.conv2d(x[None, None], x[None, None, :, :2]),
    "max_pool2d": lambda x: ml.nn.max_pool2d(x[None, None], 2, 1),
    "avg_pool2d": lambda x: ml.nn.avg_pool2d(x[None, None], 2, 1),
    "diagonal": ml.linalg.diagonal, "vector_norm": ml.linalg.vector_norm,
    "matrix_norm": ml.linalg.matrix_norm, "cholesky": lambda x: ml.linalg.cholesky(x @ x.mT),
    "matrix_power": lambda x: ml.linalg.matrix_power(x @ x.mT, 2),
    "rfft": ml.fft.rfft, "irfft": ml.fft.irfft, "arange": lambda x: ml.arange(3.0),
    "eye": lambda x: ml.eye(3), "full": lambda x: ml.full((2,), 3.0),
    "full_like": lambda x: ml.full_like(x, 3.0), "linspace": lambda x: ml.linspace(0.0, 1.0, 5),
}


def probe(site: str) -> list[Node]:
    """The nodes ``site`` records when called once, the result's own first.

    Example:
        >>> probe("exp")[0].op.name
        'EXP'
    """
    spec = ops().get(site)
    if site in PROBES:
        out = PROBES[site](ml.asarray(A))
    else:
        assert spec is not None and spec.kind == "elementwise", site
        out = None
        for dtype in (np.float64, np.int64, np.bool_):  # the first dtype it has a loop for
            try:
                out = getattr(ml, site)(*[ml.asarray(A.astype(dtype))] * spec.arity)
                break
            except TypeError:
                continue
    first = out[0] if isinstance(out, tuple) else out
    assert isinstance(first, ml.Tensor), site
    seen: dict[int, Node] = {}
    stack = [first._node]
    while stack:  # the recorded graph, down to (not into) the probe's data
        n = stack.pop()
        if id(n) not in seen and n.op not in (Op.DATA, Op.SCALAR):
            seen[id(n)] = n
            stack.extend(n.operands)
    return list(seen.values())


def _op(site: str) -> Op:
    return probe(site)[0].op


# -- lowering: a table row that reads its neighbour's rule --------------------------------------
def lowering_row(site: str) -> MinilazyAdapter:
    """The lowering table's row of ``site``'s op holds the rule of the next op of its kind.

    A copy-paste slip in the table (``Op.SINH: _elementwise(jnp.cosh)``): the op records right,
    with NumPy's shape and dtype, and computes another function.
    """
    op, spec = _op(site), ops()[site]
    kin = [o for n, s in sorted(ops().items()) if s.kind == "elementwise"
           and s.arity == spec.arity for o in [_op(n)] if _boolean(o) == _boolean(op)]
    twin = kin[(kin.index(op) + 1) % len(kin)]
    _set_table(lowering.LOWER, op, lowering.LOWER[twin])
    return cpu()


def _boolean(op: Op) -> bool:
    return op.name.startswith(("IS", "LOGICAL")) or op in (
        Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE)


# -- promotion: a binary op that uses its first operand's loop ----------------------------------
def first_loop(site: str) -> MinilazyAdapter:
    """``site`` with operands of two dtypes computes in the first one's (no promotion).

    As ``x.dtype`` taken for the result where ``result_type(x, y)`` was meant.
    """
    op, real = _op(site), infer.signature

    @functools.lru_cache(maxsize=4096)
    def signature(o: Op, *types: Any) -> tuple[DType, ...]:
        if o is op and len(types) == 2 and all(isinstance(t, np.dtype) for t in types):
            return real(o, types[0], types[0])
        return real(o, *types)

    for module in (infer, lowering, scalars):
        _set(module, "signature", signature)
    return cpu()


# -- Python scalars: strong in one op ------------------------------------------------------------
def strong_scalar(site: str) -> MinilazyAdapter:
    """A Python scalar operand of ``site`` takes NumPy 1's strong dtype (float64, int64).

    One op's scalar path forgetting NEP 50, as when it builds its own constant.
    """
    op, real = _op(site), scalars.weak_scalar

    def weak_scalar(o: Op, value: Any, other: DType, scalar_first: bool) -> Node:
        if o is op:
            return scalars.scalar(value, np.asarray(value).dtype)
        return real(o, value, other, scalar_first)

    _set(surface, "weak_scalar", weak_scalar)
    return cpu()


def scalar_refused(site: str) -> MinilazyAdapter:
    """``site`` refuses a Python scalar operand (``TypeError``): it takes tensors only."""
    op, real = _op(site), scalars.weak_scalar

    def weak_scalar(o: Op, value: Any, other: DType, scalar_first: bool) -> Node:
        if o is op:
            raise TypeError(f"{site}: operands must be tensors, got {type(value).__name__}")
        return real(o, value, other, scalar_first)

    _set(surface, "weak_scalar", weak_scalar)
    return cpu()


def same_dtypes_only(site: str) -> MinilazyAdapter:
    """``site`` refuses operands of two dtypes (``TypeError``): no implicit promotion."""
    op, real = _op(site), infer.signature

    @functools.lru_cache(maxsize=4096)
    def signature(o: Op, *types: Any) -> tuple[DType, ...]:
        if o is op and len(set(types)) > 1 and all(isinstance(t, np.dtype) for t in types):
            raise TypeError(f"{site}: operands of dtypes {types} (cast one first)")
        return real(o, *types)

    for module in (infer, lowering, scalars):
        _set(module, "signature", signature)
    return cpu()


# -- autodiff: a VJP that loses its sign ----------------------------------------------------------
def vjp_negated(site: str) -> MinilazyAdapter:
    """The VJP of the op ``site`` records returns its cotangents negated.

    A sign slip in one rule (``-g`` for ``g``); where the rule's cotangents are zero (floor,
    sign), it passes ``g`` through instead, as a straight-through estimator would; a product's
    cotangents are swapped between its operands; a sum's cotangent is broadcast to its operand
    without the reduced axes put back (a test's outer sum would cancel a sign).
    """
    op = _op(site)
    real = vjps.VJP[op]

    def negated(g: ml.Tensor, y: ml.Tensor, xs: tuple[ml.Tensor, ...], n: Node) -> Any:
        if real is vjps._zero:
            return tuple(ml.broadcast_to(g, x.shape) if x.shape == g.shape else ml.zeros_like(x)
                         for x in xs)
        if op is Op.MUL:  # swapped instead: two negated products (a test's x*y*w) cancel out
            return real(g, y, xs[::-1], n)
        if op is Op.SUM:  # a test's outer sum cancels a sign: g broadcast without its axes put back
            return (ml.broadcast_to(g, xs[0].shape),)
        return tuple(None if c is None else -c for c in real(g, y, xs, n))

    _set_table(vjps.VJP, op, negated)
    return cpu()


# -- the cache key: one op's attributes left out -------------------------------------------------
def key_without_attrs(site: str) -> MinilazyAdapter:
    """The key and the structure check describe the ops ``site`` records by name and operands.

    Their attributes are left out, and with them what the attributes decide: the result's shape
    and dtype (a key of ``(op, operand keys)``, trusting the operands to fix the rest). A hit
    then runs the program of another axis, shape, index, dtype or option.
    """
    kinds = {n.op for n in probe(site) if n.attrs}

    def structure(c: cutting.Cut) -> tuple[Any, ...]:
        digests: dict[Node, int] = {}
        for n in c.order:  # operands first: each digest over its operands', as the real ones
            mine = tuple(digests[o] for o in n.operands)
            digests[n] = hash((n.op.value, mine)) if n.op in kinds else n.digest if not (
                n.operands) else hash((n.op.value, n.attrs, n.shape, str(n.dtype), mine))
        return (tuple(digests[n] for n in c.order), *c.structure[1:])

    return restructured(structure)


# -- the namespace: a name bound to its twin's function ------------------------------------------
TWINS: dict[str, str] = {
    "sum": "prod", "prod": "sum", "max": "min", "min": "max", "argmax": "argmin",
    "argmin": "argmax", "any": "all", "all": "any", "mean": "sum", "var": "std", "std": "var",
    "tril": "triu", "triu": "tril", "zeros": "ones", "ones": "zeros", "zeros_like": "ones_like",
    "ones_like": "zeros_like", "matrix_transpose": "flip", "flip": "matrix_transpose",
}


def twin(site: str) -> MinilazyAdapter:
    """The namespace binds ``site`` to its twin's function (``sum`` to ``prod``).

    A slip in the table the namespace is built from: everything records, with the right shape.
    """
    _set(ml, site, getattr(ml, TWINS[site]))
    return cpu()


FAMILIES: dict[str, Callable[[str], MinilazyAdapter]] = {
    "lowering-row": lowering_row, "first-loop": first_loop, "strong-scalar": strong_scalar,
    "scalar-refused": scalar_refused, "same-dtypes-only": same_dtypes_only,
    "vjp-negated": vjp_negated, "key-without-attrs": key_without_attrs, "twin": twin,
    "slip": slip,
}


def __getattr__(name: str) -> Callable[[], MinilazyAdapter]:
    """``<family>__<site>``: the factory of one site's mutant (``vjp_negated__exp``)."""
    family, sep, site = name.partition("__")
    maker = FAMILIES.get(family.replace("_", "-"))
    if not sep or maker is None:
        raise AttributeError(name)
    return functools.partial(maker, site)
