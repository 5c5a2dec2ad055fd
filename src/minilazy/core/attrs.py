"""Where data lives, and op attributes: one small frozen type per op family.

At the bottom of core, beside dtypes; never imports jax (the runtime maps a :class:`Device` to
JAX's). Attributes are static: part of a node's digest and so of the cache key. Each family is a
``NamedTuple`` (named, typed fields; a tuple's hashing and equality, in C) of ints (>= 0 but for
a convolution's padding), bools or tuples of them (or a mesh, hashed as a stable CRC), so an
attribute's hash is the same in every process. Core's families are here; an op family defines
its own in its module (``minilazy.ops``; a placement's ``Sharding`` is ``minilazy.scaleout``'s).
Which an op takes is :data:`minilazy.core.ir.FAMILY`, checked when a node is made; rules read
the fields by name, with ``match``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Final, NamedTuple, TypeAlias


@dataclass(frozen=True)
class Device:
    """A device by name: a JAX platform (``cpu``, ``gpu``, ``tpu``) and an index on it.

    A plain value (not a JAX object) so that the modules before the runtime can carry it.

    Example:
        >>> str(Device("cpu", 0))
        'cpu:0'
    """

    platform: str
    index: int
    code: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", zlib.crc32(f"{self.platform}:{self.index}".encode()))

    def __str__(self) -> str:
        return f"{self.platform}:{self.index}"


class NoAttrs(NamedTuple):
    """No attributes: leaves that are parameters, elementwise ops, ``where``, ``matmul``."""


NONE: Final = NoAttrs()


class Constant(NamedTuple):
    """A ``SCALAR`` baked into the program (0 or 1): its value is in the key."""

    value: int


class Iota(NamedTuple):
    """``IOTA``: a ``shape`` counting along ``axis``, of the dtype with code ``dtype``."""

    shape: tuple[int, ...]
    axis: int
    dtype: int  # a dtype's code (dtypes.CODE), stable across processes


class Cast(NamedTuple):
    """``CONVERT``: the target dtype's code."""

    dtype: int


class Reduce(NamedTuple):
    """A reduction: the ``axes`` it folds (sorted, non-negative) and whether it keeps them."""

    axes: tuple[int, ...]
    keepdims: bool


class ToShape(NamedTuple):
    """``RESHAPE`` and ``BROADCAST``: the result shape."""

    shape: tuple[int, ...]


class Permute(NamedTuple):
    """``TRANSPOSE``: result axis ``i`` is operand axis ``perm[i]``."""

    perm: tuple[int, ...]


# Any op's attributes: a NamedTuple of one family (core's here, an op family's in its module).
Attrs: TypeAlias = tuple[object, ...]


def mismatch(op: object, attrs: object) -> TypeError:
    """The error for attributes of the wrong family (a bug in the caller, not user input)."""
    return TypeError(f"{getattr(op, 'value', op)}: attributes {attrs!r} are of the wrong family")
