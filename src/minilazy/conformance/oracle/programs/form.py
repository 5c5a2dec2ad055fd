"""The program form: leaves, instructions over numbered slots, and the data of the leaves.

The data structures of :mod:`minilazy.conformance.oracle.programs`, small frozen values a
student can print. Everything else (JSON, variants, interpretation, printing) is a function of
these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

Array = np.ndarray[Any, Any]
Scalar: TypeAlias = bool | int | float


@dataclass(frozen=True)
class Leaf:
    """An input: ``dtype`` and ``shape``; its data are :func:`leaf_data` of ``seed``.

    Example:
        >>> Leaf("int8", (2,), seed=3).shape
        (2,)
    """

    dtype: str
    shape: tuple[int, ...]
    seed: int


@dataclass(frozen=True)
class Ref:
    """An operand: the value of slot ``slot``.

    Example:
        >>> Ref(3)
        Ref(slot=3)
    """

    slot: int


@dataclass(frozen=True)
class Refs:
    """A list of operands (``concat``, ``stack``).

    Example:
        >>> Refs((0, 2)).slots
        (0, 2)
    """

    slots: tuple[int, ...]


@dataclass(frozen=True)
class Num:
    """A Python scalar operand (weak, a parameter where the implementation makes it one).

    Example:
        >>> Num(0.5)
        Num(value=0.5)
    """

    value: Scalar


@dataclass(frozen=True)
class Op:
    """``slot[out] = op(*args, **kwargs)``; other arguments are attributes (ints, tuples...).

    Programs are functional: ``setitem`` (an update in place) is not one of their ops.

    Example:
        >>> Op(2, "sum", (Ref(0),), (("axis", 1), ("keepdims", False))).op
        'sum'
    """

    out: int
    op: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Barrier:
    """``mark_step``.

    Example:
        >>> Barrier()
        Barrier()
    """


@dataclass(frozen=True)
class Sync:
    """``sync`` of some slots (a no-op where the implementation has no ``sync``).

    Example:
        >>> Sync((1, 2)).slots
        (1, 2)
    """

    slots: tuple[int, ...]


@dataclass(frozen=True)
class Observe:
    """Read slot ``slot`` on the host: an observation barrier; the value is checked.

    Example:
        >>> Observe(4)
        Observe(slot=4)
    """

    slot: int


@dataclass(frozen=True)
class Assign:
    """``slot[target] = slot[source]`` (same shape and dtype): a loop-carried rebinding.

    Example:
        >>> Assign(0, 5)
        Assign(target=0, source=5)
    """

    target: int
    source: int


@dataclass(frozen=True)
class Branch:
    """Observe ``slot``: ``then`` runs if its values sum above ``threshold``, else ``orelse``.

    Example:
        >>> Branch(1, 0.0, (Observe(1),), ()).threshold
        0.0
    """

    slot: int
    threshold: float
    then: tuple[Instruction, ...]
    orelse: tuple[Instruction, ...]


@dataclass(frozen=True)
class Repeat:
    """Run ``body`` ``times`` times.

    Example:
        >>> Repeat(3, (Barrier(),)).times
        3
    """

    times: int
    body: tuple[Instruction, ...]


Instruction: TypeAlias = Op | Barrier | Sync | Observe | Assign | Branch | Repeat


@dataclass(frozen=True)
class Program:
    """Leaves, a body, and the number of slots it uses.

    Example:
        >>> p = Program((Leaf("float32", (2,), 0),), (Op(1, "add", (Ref(0), Num(1.0))),
        ...                                            Observe(1)), slots=2)
        >>> p.body[0].op, len(p.leaves)
        ('add', 1)
    """

    leaves: tuple[Leaf, ...]
    body: tuple[Instruction, ...]
    slots: int


def leaf_data(dtype: str, shape: Sequence[int], seed: int) -> Array:
    """The data of a leaf: small, readable values (two decimals; integers in ``[-9, 9]``).

    Complex leaves have both parts so drawn.

    Example:
        >>> leaf_data("int8", (3,), seed=1).dtype
        dtype('int8')
    """
    rng = np.random.default_rng(seed)
    d = np.dtype(dtype)
    if d.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if d.kind in "iu":
        return np.asarray(rng.integers(0 if d.kind == "u" else -9, 10, size=shape), d)
    if d.kind == "c":  # both parts drawn: a zero imaginary part would hide complex bugs
        parts = np.round(rng.standard_normal((2, *shape)) * 4, 2)
        return np.asarray(parts[0] + 1j * parts[1], d)
    return np.asarray(np.round(rng.standard_normal(shape) * 4, 2), d)
