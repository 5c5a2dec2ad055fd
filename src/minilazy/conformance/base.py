"""The generic parts of an adapter, so that one for a new library is a few dozen lines.

:class:`BaseAdapter` implements the protocol (``adapter.py``) from a handful of hooks a library
fills in: how to make a tensor from a NumPy array (``array``), how to read one back (``host``),
where its functions live (``namespace``, with ``renames`` for names that differ from the Array
API's), and, for a lazy library, how to materialise tensors (``realize``). It tracks the live
tensors through weak references (``barrier`` realises them all, for libraries without a
``mark_step``), keeps 0-d results 0-d, copies host data on the way in and out, and dispatches
``apply`` to an ``op_<name>`` method where one is defined, else to the namespace.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from minilazy.conformance.adapter import DtypePolicy
from minilazy.conformance.registry import ops

Array = np.ndarray[Any, Any]
# Spec ops that are Python operators on most libraries' tensors (either operand a number).
OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "divide": operator.truediv, "floor_divide": operator.floordiv, "remainder": operator.mod,
    "pow": operator.pow, "equal": operator.eq, "not_equal": operator.ne, "less": operator.lt,
    "less_equal": operator.le, "greater": operator.gt, "greater_equal": operator.ge,
    "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
    "bitwise_left_shift": operator.lshift, "bitwise_right_shift": operator.rshift,
}
# ``x op= y`` for each binary op with an in-place operator (the ``inplace`` method's ops).
INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.iadd, "subtract": operator.isub, "multiply": operator.imul,
    "divide": operator.itruediv, "floor_divide": operator.ifloordiv,
    "remainder": operator.imod, "pow": operator.ipow, "bitwise_and": operator.iand,
    "bitwise_or": operator.ior, "bitwise_xor": operator.ixor,
    "bitwise_left_shift": operator.ilshift, "bitwise_right_shift": operator.irshift,
    "matmul": operator.imatmul,
}


class BaseAdapter:
    """An adapter from hooks: subclass it, set ``namespace``, override ``array``.

    Example:
        >>> class NumpyAdapter(BaseAdapter):
        ...     name, version, namespace = "numpy", np.__version__, np
        ...     renames = {"pow": "power", "atan2": "arctan2", "concat": "concatenate"}
        ...     def array(self, host):
        ...         return host
        >>> a = NumpyAdapter()
        >>> a.to_numpy(a.apply("add", a.from_numpy(np.ones(2)), 1.0)).tolist()
        [2.0, 2.0]
    """

    name: ClassVar[str] = "base"
    version: ClassVar[str] = "0"
    capabilities: frozenset[str] = frozenset()
    dtype_policy: DtypePolicy = DtypePolicy()
    namespace: Any = None  # the module (or class) whose functions implement the ops
    renames: ClassVar[Mapping[str, str]] = {}  # op -> the namespace's name for it
    # For bug reports without minilazy (``python -m minilazy.conformance.tools.repro``): the
    # library's import as Python source, defining ``array(host)`` and ``value(x)`` like the hooks
    # below, and the name the namespace is imported as.
    repro_prelude: ClassVar[str] = ""
    repro_namespace: ClassVar[str] = ""

    def __init__(self) -> None:
        self._live: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()

    # -- hooks ---------------------------------------------------------------------------------
    def array(self, host: Array) -> Any:
        """A tensor of the library holding ``host`` (a fresh NumPy array, its to keep)."""
        raise NotImplementedError("an adapter must say how to make a tensor: override array()")

    def host(self, x: Any) -> Any:
        """``x``'s value on the host, as anything ``np.asarray`` takes (an observation)."""
        return x

    def realize(self, xs: list[Any]) -> None:
        """Materialise ``xs`` (a lazy library's ``realize``/``eval``); eager ones do nothing."""

    def is_tensor(self, x: Any) -> bool:
        """Whether ``x`` is one of the library's tensors (what ``apply`` results are tracked)."""
        return not isinstance(x, (np.ndarray, np.generic, int, float, bool, list, tuple))

    # -- the protocol --------------------------------------------------------------------------
    def from_numpy(self, array: Array) -> Any:
        return self._track(self.array(np.array(array)))

    def to_numpy(self, x: Any) -> Array:
        out = np.array(self.host(x))  # a copy: the caller may write to it
        shape = getattr(x, "shape", None)
        if shape is not None and tuple(shape) == () and out.shape != ():
            out = out.reshape(())  # some libraries give 0-d values as 1-element arrays
        return out

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        custom = getattr(self, f"op_{op}", None)
        if custom is not None:
            result = custom(*args, **kwargs)
        elif op == "getitem":
            result = args[0][args[1]]
        elif op == "setitem":
            x, key, value = args
            x[key] = value
            result = x
        else:
            result = getattr(self.namespace, self.renames.get(op, op))(*args, **kwargs)
        return self._track(result) if self.is_tensor(result) else result

    def barrier(self) -> None:
        self.realize(list(self._live.values()))

    def inplace(self, op: str, x: Any, other: Any) -> Any:
        return self._track(INPLACE[op](x, other))  # rebinds x where the library can

    def isolate(self) -> None:
        self._live = weakref.WeakValueDictionary()  # earlier tests' tensors: never realised

    def supports(self, op: str) -> bool:
        if hasattr(self, f"op_{op}") or op in ("getitem", "setitem"):
            return True
        return op in ops() and hasattr(self.namespace, self.renames.get(op, op))

    def spell(self, op: str, args: list[str], kwargs: Mapping[str, str]) -> str | None:
        """Source of the library call ``apply(op, ...)`` makes, for a standalone script.

        ``args`` and ``kwargs`` are source texts. ``None`` where an ``op_<name>`` method does
        more than call the namespace (override this to spell those too).

        Example:
            >>> class A(BaseAdapter):
            ...     repro_namespace, renames = "np", {"pow": "power"}
            >>> A().spell("pow", ["x", "2"], {})
            'np.power(x, 2)'
        """
        if hasattr(self, f"op_{op}") or op in ("getitem", "setitem"):
            return None
        params = [*args, *(f"{k}={v}" for k, v in kwargs.items())]
        return f"{self.repro_namespace}.{self.renames.get(op, op)}({', '.join(params)})"

    def _track(self, x: Any) -> Any:
        try:
            self._live[id(x)] = x
        except TypeError:  # not weakly referenceable: cannot be tracked, so never realised
            pass
        return x
