"""Random well-typed programs, generated (and shrunk) by Hypothesis.

:func:`programs` draws a :class:`~minilazy.conformance.oracle.programs.Program`: leaves, then ops on
earlier values and Python scalars, barriers, syncs, observations, branches on observed values and
repeated blocks whose loop-carried values keep their type. Every op is checked as it is drawn by
running NumPy on zero-filled dummies of the operands' shapes and dtypes (NumPy's own shape and
dtype rules: what NumPy rejects is never emitted). Ops are those whose results are exact in every
dtype (``ops.toml`` tolerance ``exact``), so a program's observations can be compared with NumPy's
exactly, however long the chain: rounding errors of inexact ops would compound.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.oracle import numpy_apply
from minilazy.conformance.oracle.programs import (
    Assign,
    Barrier,
    Branch,
    Instruction,
    Leaf,
    Num,
    Observe,
    Op,
    Program,
    Ref,
    Refs,
    Repeat,
    Sync,
)
from minilazy.conformance.registry import ops

Array = np.ndarray[Any, Any]
Draw = Callable[[st.SearchStrategy[Any]], Any]
# Exact on every dtype: elementwise ops of the `exact` class on their whole domain...
ELEMENTWISE = tuple(sorted(n for n, s in ops().items() if s.kind == "elementwise"
                           and s.tolerance == "exact" and not s.domain))
BINARY = tuple(n for n in ELEMENTWISE if ops()[n].arity == 2)
# ...selection, and the reductions and shape functions that only move or compare values.
STRUCTURAL = ("where", "max", "min", "argmax", "argmin", "any", "all", "sum", "prod", "reshape",
              "permute_dims", "flip", "expand_dims", "squeeze", "matrix_transpose",
              "broadcast_to", "concat", "stack", "getitem")
# Results a wrong lowering hides from an observation of themselves alone (a dropped keepdims,
# a broadcast along the wrong axis, an index off by one come out right once reshaped): they are
# usually read at once, by an elementwise op of the same graph.
CONSUMED = frozenset({"max", "min", "argmax", "argmin", "any", "all", "sum", "prod",
                      "broadcast_to", "expand_dims", "getitem", "reshape", "permute_dims"})
# Small scalars fit every dtype (NEP 50 raises on a Python int out of the tensor's range).
SCALARS = st.one_of(st.booleans(), st.integers(0, 3), st.sampled_from([0.5, -1.5, 2.0, 0.25]))


def program_ops(elementwise_only: bool = False) -> tuple[str, ...]:
    """The ops programs are made of (the elementwise ones keep programs shape-polymorphic).

    Example:
        >>> "add" in program_ops(True) and "sum" not in program_ops(True)
        True
    """
    return ELEMENTWISE + (("where",) if elementwise_only else STRUCTURAL)


class _Builder:
    """Draws instructions, keeping each slot's NumPy dummy (its shape and dtype)."""

    def __init__(self, draw: Draw, names: Sequence[str], size: int, control: bool,
                 barriers: bool) -> None:
        self.draw, self.names, self.size = draw, names, size
        self.control, self.barriers = control, barriers
        self.dummies: list[Array] = []

    def slot(self, value: Array) -> int:
        self.dummies.append(np.zeros(value.shape, value.dtype))
        return len(self.dummies) - 1

    def operand(self, visible: Sequence[int]) -> Ref | Num:
        if self.draw(st.integers(0, 3)) == 0:
            return Num(self.draw(SCALARS))
        return Ref(self.draw(st.sampled_from(visible)))

    def arguments(self, name: str, x: int, visible: Sequence[int]
                  ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        draw, spec, shape = self.draw, ops()[name], self.dummies[x].shape
        ndim, kind = len(shape), self.dummies[x].dtype.kind
        if spec.kind == "elementwise":
            if spec.arity == 1:
                return (Ref(x),), {}
            other = self.operand(visible)
            return ((other, Ref(x)) if isinstance(other, Num) and draw(st.booleans())
                    else (Ref(x), other)), {}
        if name == "where":
            return (Ref(x), self.operand(visible), self.operand(visible)), {}
        if spec.kind == "reduction":
            if name in ("sum", "prod") and kind == "f":
                return None  # float sums depend on the order of accumulation: not exact
            one = st.integers(-ndim, ndim - 1) if ndim else st.nothing()
            axis = draw(st.one_of(st.none(), one) if name.startswith("arg") else
                        st.one_of(st.none(), one, st.lists(one, unique_by=lambda a: a % ndim,
                                                           max_size=ndim).map(tuple)))
            return (Ref(x),), {"axis": axis, "keepdims": draw(st.booleans())}
        if name == "flip":  # axis is keyword-only (ops.toml: "x, /, *, axis=None")
            one = st.integers(-ndim, ndim - 1) if ndim else st.nothing()
            return (Ref(x),), {"axis": draw(st.one_of(st.none(), one))}
        if name == "getitem":
            return (Ref(x), draw(hnp.basic_indices(shape, allow_newaxis=True))), {}
        if name in ("concat", "stack"):
            y = draw(st.sampled_from(visible))
            return (Refs((x, y)),), {"axis": draw(st.integers(-ndim - 1, ndim))}
        attribute = {
            "reshape": st.sampled_from([(-1,), shape[::-1], (*shape, 1)]),
            "permute_dims": st.permutations(range(ndim)).map(tuple),
            "expand_dims": st.integers(-ndim - 1, ndim),
            "squeeze": st.just(tuple(i for i, n in enumerate(shape) if n == 1)),
            "broadcast_to": st.just((2, *shape)),
        }.get(name)
        return (Ref(x),) if attribute is None else (Ref(x), draw(attribute)), {}

    def op(self, visible: Sequence[int], names: Sequence[str] | None = None,
           x: int | None = None) -> Op | None:
        name = self.draw(st.sampled_from(names or self.names))
        if x is None:
            x = self.draw(st.sampled_from(visible))
        elif name == "where":
            return None
        if name == "where":  # the condition must be boolean: pick a boolean slot, if any
            bools = [s for s in visible if self.dummies[s].dtype == np.bool_]
            if not bools:
                return None
            x = self.draw(st.sampled_from(bools))
        drawn = self.arguments(name, x, visible)
        if drawn is None:
            return None
        args, kwargs = drawn

        def dummy(a: Any) -> Any:
            if isinstance(a, Ref):
                return self.dummies[a.slot]
            if isinstance(a, Refs):
                return [self.dummies[s] for s in a.slots]
            return a.value if isinstance(a, Num) else a

        try:  # NumPy's rules decide what is well-typed
            out = numpy_apply(name, *map(dummy, args), **{k: dummy(v) for k, v in kwargs.items()})
        except Exception:
            return None
        return Op(self.slot(out), name, args, tuple(sorted(kwargs.items())))

    def block(self, visible: list[int], depth: int, budget: int) -> tuple[Instruction, ...]:
        body: list[Instruction] = []
        for _ in range(budget):
            roll = self.draw(st.integers(0, 19))
            if roll < 12:
                i = self.op(visible)
                if i is not None:
                    body.append(i)
                    visible = [*visible, i.out]
                    if i.op in CONSUMED and self.draw(st.integers(0, 3)):  # 3 times in 4
                        user = self.op(visible, BINARY, x=i.out)
                        if user is not None:
                            body.append(user)
                            visible = [*visible, user.out]
            elif roll < 14 and self.barriers:
                body.append(Barrier())
            elif roll < 15 and self.barriers:
                body.append(Sync(tuple(self.draw(st.lists(st.sampled_from(visible), min_size=1,
                                                          max_size=2, unique=True)))))
            elif roll < 17:
                body.append(Observe(self.draw(st.sampled_from(visible))))
            elif roll < 18 and depth < 2 and self.control:
                threshold = self.draw(st.sampled_from([-1.0, 0.0, 0.5, 4.0]))
                body.append(Branch(self.draw(st.sampled_from(visible)), threshold,
                                   self.block(visible, depth + 1, budget // 2),
                                   self.block(visible, depth + 1, budget // 2)))
            elif depth < 2:
                body.append(self.repeat(visible, depth))
        return tuple(body)

    def repeat(self, visible: list[int], depth: int) -> Repeat:
        carried = self.draw(st.sampled_from(visible))
        body = list(self.block(visible, depth + 1, 3))
        inner = visible + [i.out for i in body if isinstance(i, Op)]
        kind = (self.dummies[carried].shape, self.dummies[carried].dtype)
        for _ in range(3):  # a step of the carried value that keeps its shape and dtype
            step = self.op(inner, ELEMENTWISE, x=carried)
            if step is not None and (self.dummies[step.out].shape,
                                     self.dummies[step.out].dtype) == kind:
                body += [step, Assign(carried, step.out)]
                break
        return Repeat(self.draw(st.integers(1, 3)), tuple(body))


@st.composite
def programs(draw: Draw, dtypes: Sequence[np.dtype[Any]], size: int = 8,
             elementwise_only: bool = False, control: bool = True,
             barriers: bool = True) -> Program:
    """A well-typed random program over leaves of ``dtypes``.

    Args:
        draw: Hypothesis's draw function (supplied by ``st.composite``).
        dtypes: the leaves' dtypes are drawn from these.
        size: the most instructions of the top-level block.
        elementwise_only: only elementwise ops and ``where``, on leaves of one shape: valid on
            leaves of any other shape (:func:`~minilazy.conformance.oracle.programs.with_shape`).
        control: allow branches (without, a program's structure never depends on its data).
        barriers: allow ``mark_step`` and ``sync`` (without, only observations cut).

    Example:
        >>> from hypothesis import find
        >>> p = find(programs([np.dtype("int32")]), lambda p: len(p.body) > 2)
        >>> isinstance(p.body[-1], Observe)
        True
    """
    names = program_ops(elementwise_only)
    builder = _Builder(draw, names, size, control, barriers)
    base = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    leaves = []
    for _ in range(draw(st.integers(1, 3))):
        dtype = draw(st.sampled_from(list(dtypes)))
        shape = base if elementwise_only else draw(st.sampled_from([base, base[1:], ()]))
        leaves.append(Leaf(dtype.name, tuple(shape), draw(st.integers(0, 2**16))))
        builder.slot(np.zeros(shape, dtype))
    body = builder.block(list(range(len(leaves))), 0, draw(st.integers(1, size)))
    last = max((i.out for i in body if isinstance(i, Op)), default=len(leaves) - 1)
    return Program(tuple(leaves), (*body, Observe(last)), len(builder.dummies))
