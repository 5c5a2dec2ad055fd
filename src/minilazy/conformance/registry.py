"""The spec's machine-readable registry (``ops.toml``, ``rules.toml``), shipped in the package."""

from __future__ import annotations

import operator
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np


@dataclass(frozen=True)
class OpSpec:
    """One op of the registry (``ops.toml`` describes the fields).

    Example:
        >>> ops()["add"].numpy, ops()["maximum"].real_only
        ('add', True)
    """

    name: str
    numpy: str
    arity: int
    kind: str
    tolerance: str
    domain: str
    signature: str
    method: str = ""
    real_only: bool = False

    def numpy_callable(self) -> Callable[..., Any]:
        """The NumPy callable that defines the op (a dotted name is looked up from ``numpy``).

        Example:
            >>> ops()["getitem"].numpy_callable()(np.arange(3), 1)
            np.int64(1)
        """
        fn: Callable[..., Any] = operator.attrgetter(self.numpy)(np)
        return fn


def _load(name: str) -> dict[str, Any]:
    return tomllib.loads(resources.files(__package__).joinpath(name).read_text())


@cache
def ops() -> dict[str, OpSpec]:
    """Every op of the registry, by name.

    Example:
        >>> ops()["exp"].tolerance
        'ulp'
    """
    return {name: OpSpec(name=name, **fields) for name, fields in _load("ops.toml")["ops"].items()}


@dataclass(frozen=True)
class RuleSpec:
    """One rule of the spec.

    ``stage`` is the course assignment that implements the rule (``tutorials/build``; 0: none, as
    for implementation-defined rules): the grader checks the rules of stages up to its own.

    Example:
        >>> rules()["LZ-REC-001"].level, rules()["LZ-HASH-002"].stage
        ('MUST', 3)
    """

    id: str
    level: str
    section: str
    summary: str
    capability: str
    stage: int = 0


@cache
def rules() -> dict[str, RuleSpec]:
    """Every rule of the registry, by ID.

    Example:
        >>> rules()["LZ-BAR-001"].section
        'barriers'
    """
    return {rid: RuleSpec(id=rid, **fields) for rid, fields in _load("rules.toml")["rules"].items()}
