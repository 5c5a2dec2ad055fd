"""A dtype policy: how an implementation's dtypes differ from NumPy's, declared once.

An adapter may carry one (``dtype_policy``, see ``adapter.py``); the oracle then checks values
under it and reports each deviation once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class DtypePolicy:
    """How an implementation's dtypes differ from NumPy's, declared once (``dtype_policy``).

    Libraries that default to float32 or promote like JAX would otherwise fail hundreds of
    tests on the dtype alone, before any value is looked at. With a policy the oracle checks
    values under it, and the report lists each deviation once (its ``policy`` section). A
    policy declares behaviour, never a wrong value. It applies where the caller names no dtype.

    Attributes:
        dtypes: the dtypes it has, by name (``None``: NumPy's twelve; 64-bit ones still need
            capability ``float64``).
        default_float: the dtype of a float result NumPy makes ``float64`` from no ``float64``
            input (Python floats, float creation, ``int + float32``, the mean of ints).
        default_int: likewise for ``int64`` results from no ``int64`` input (``arange``,
            Python ints, the sum of small ints).
        index: the dtype of the indices ``argmax``/``argmin`` return.
        promotion: other results that differ, by input dtypes: ``"int8,uint8": "int8"`` (two
            inputs, either order), ``"int8": "float32"`` (one input: ``sin`` of ``int8``), or
            for one op only, ``"sum:uint8": "uint32"``. An entry applies where NumPy's result
            is of the same kind (``divide`` of two ints is a float whatever an int entry says);
            boolean results are never affected.
        unsupported: ``"op:dtype"`` pairs it does not implement (``"floor_divide:float16"``).

    Example:
        >>> p = DtypePolicy(default_float="float32", unsupported=frozenset({"sin:float16"}))
        >>> p.allows("sin", np.dtype("float16")), p.allows("sin", np.dtype("float32"))
        (False, True)
    """

    dtypes: tuple[str, ...] | None = None
    default_float: str = "float64"
    default_int: str = "int64"
    index: str = "int64"
    promotion: Mapping[str, str] = field(default_factory=dict)
    unsupported: frozenset[str] = frozenset()

    def allows(self, op: str, *dtypes: np.dtype[Any]) -> bool:
        """Whether ``op`` on operands of ``dtypes`` is implemented."""
        return not any(f"{op}:{d}" in self.unsupported for d in dtypes) and (
            self.dtypes is None or all(d.name in self.dtypes for d in dtypes))

    def result(self, op: str, want: np.dtype[Any], inputs: Sequence[np.dtype[Any]]
               ) -> np.dtype[Any]:
        """The result dtype of ``op`` under this policy, where NumPy's is ``want``.

        Example:
            >>> p = DtypePolicy(default_float="float32", promotion={"sum:uint8": "uint32"})
            >>> p.result("add", np.dtype("float64"), [np.dtype("int64")])
            dtype('float32')
            >>> p.result("sum", np.dtype("uint64"), [np.dtype("uint8")])
            dtype('uint32')
        """
        if want == np.bool_:
            return want
        if op in ("argmax", "argmin"):
            return np.dtype(self.index)
        names, backwards = ",".join(d.name for d in inputs), ",".join(d.name for d in inputs[::-1])
        for key in (f"{op}:{names}", f"{op}:{backwards}", names, backwards):
            found = self.promotion.get(key)
            if found is not None and np.dtype(found).kind == want.kind:  # not int for divide
                return np.dtype(found)
        for wide, default in ((np.float64, self.default_float), (np.int64, self.default_int)):
            if want == wide and np.dtype(wide) not in inputs:
                return np.dtype(default)
        return want
