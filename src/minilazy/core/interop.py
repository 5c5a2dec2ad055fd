"""The protocol methods of ``Tensor``: the Array API's, NumPy's, DLPack, pickle and copy.

Just below the tensor, which mixes :class:`ArrayAPIMethods` into ``Tensor`` (a separate module
keeps ``tensor.py`` a one-afternoon read). DLPack goes through NumPy: exporting a tensor is an
observation barrier that materialises it and hands over a host copy, so a consumer always sees a
CPU buffer, whatever device the tensor is on. Pickling is such an observation too; ``copy`` and
``deepcopy`` are new handles on the same (immutable) node.

NumPy's functions follow one policy (``__array_ufunc__``, ``__array_function__``): a NumPy
function called on a tensor runs lazily in minilazy where minilazy has the op (``np.exp(t)``,
``np.sum(t, 0)``, ``ndarray + t``: recorded, a Tensor back), and otherwise raises ``TypeError``
naming what to write instead. Nothing is pulled to the host behind the caller's back:
``np.asarray(t)`` and ``t.numpy()`` are the observations. Never imports jax.
"""

from __future__ import annotations

import inspect
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, cast

import numpy as np

from minilazy.core import barrier, runtime
from minilazy.core.device import checked
from minilazy.core.ir import Device, Node, data_leaf

if TYPE_CHECKING:  # the tensor imports this module: only the type checker looks up
    from minilazy.core.tensor import Tensor

# The standard's versions whose namespace minilazy's names follow (it ships 2023.12's).
API_VERSIONS: Final = ("2021.12", "2022.12", "2023.12")
# DLPack's device type for host memory (``kDLCPU``): where an exported copy lives.
DLPACK_CPU: Final = 1

# NumPy's ufunc names where the namespace's (the Array API's) differ.
UFUNC_NAMES: Final = {
    "true_divide": "divide", "mod": "remainder", "power": "pow", "absolute": "abs",
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh", "rint": "round", "invert": "bitwise_invert",
    "bitwise_not": "bitwise_invert", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "conjugate": "conj",
}
# What a ufunc's other methods are in minilazy, for the error that names it.
UFUNC_METHODS: Final = {
    "add.reduce": "ml.sum(x, axis=...)", "multiply.reduce": "ml.prod(x, axis=...)",
    "maximum.reduce": "ml.max(x, axis=...)", "minimum.reduce": "ml.min(x, axis=...)",
    "logical_and.reduce": "ml.all(x, axis=...)", "logical_or.reduce": "ml.any(x, axis=...)",
    "add.accumulate": "ml.cumulative_sum(x, axis=...)", "multiply.outer": "x[:, None] * y",
}
# NumPy functions that run in minilazy: NumPy's name -> (minilazy's, a leading "." for the
# tensor method; how many leading arguments pass by position; NumPy's other parameters that
# minilazy takes, "numpy:minilazy" where the names differ, "numpy:" where it is ignored).
FUNCTIONS: Final = {
    **{n: (f".{n}", 1, "axis dtype keepdims") for n in ("sum", "prod", "mean")},
    **{n: (f".{n}", 1, "axis dtype ddof keepdims") for n in ("var", "std")},
    **{n: (f".{m}", 1, "axis keepdims") for n, m in (("max", "max"), ("amax", "max"),
       ("min", "min"), ("amin", "min"), ("any", "any"), ("all", "all"), ("argmax", "argmax"),
       ("argmin", "argmin"))},
    "cumsum": (".cumsum", 1, "axis dtype"), "reshape": (".reshape", 2, "copy order:"),
    "ravel": (".ravel", 1, "order:"), "squeeze": (".squeeze", 1, "axis"),
    "swapaxes": (".swapaxes", 3, ""), "copy": (".copy", 1, "order:"),
    "transpose": ("transpose", 1, "axes"), "concatenate": ("concatenate", 1, "axis"),
    "stack": ("stack", 1, "axis"), "where": ("where", 3, ""),
    "clip": ("clip", 1, "a_min:min a_max:max min max"), "expand_dims": ("expand_dims", 1, "axis"),
    "moveaxis": ("moveaxis", 3, ""), "flip": ("flip", 1, "axis"), "roll": ("roll", 2, "axis"),
    "sort": ("sort", 1, "axis stable"), "argsort": ("argsort", 1, "axis stable"),
    "tile": ("tile", 2, ""), "repeat": ("repeat", 2, "axis"),
    "broadcast_to": ("broadcast_to", 2, ""), "einsum": ("einsum", 1, "optimize:"),
    "tensordot": ("tensordot", 2, "axes"),
    **{n: (n, 1, "dtype") for n in ("zeros_like", "ones_like", "empty_like")},
    "full_like": ("full_like", 2, "dtype"), "round": ("round", 1, ""),
    "around": ("round", 1, ""), "result_type": ("result_type", 1, ""),
}


def check_scalar(t: ArrayAPIMethods, what: str) -> None:
    """``float()``, ``int()`` and ``complex()`` take a 0-d tensor only, as NumPy 2's arrays.

    Example:
        >>> import minilazy as ml
        >>> check_scalar(ml.ones(()), "float()")
    """
    shape = t._node.shape
    if shape:
        raise TypeError(f"{what} needs a 0-d tensor, got shape {shape}: take x.item() of a "
                        "size-1 tensor, or index one element first")


class ArrayAPIMethods:
    """What the Array API asks of an array object beyond arithmetic, for ``Tensor`` to inherit.

    Example:
        >>> import minilazy as ml
        >>> x = ml.asarray([1.0, 2.0])
        >>> x.__array_namespace__() is ml
        True
        >>> x.to_device(ml.default_device()) is x
        True
    """

    __slots__ = ()
    _node: Node
    _device: Device

    def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType:
        """The ``minilazy`` module: the namespace whose functions work on this tensor.

        Raises:
            ValueError: ``api_version`` is not a version of the standard minilazy follows.

        Example:
            >>> import minilazy as ml
            >>> ml.ones((2,)).__array_namespace__(api_version="2023.12").__name__
            'minilazy'
        """
        if api_version is not None and api_version not in API_VERSIONS:
            raise ValueError(f"api_version must be one of {API_VERSIONS} or None, got "
                             f"{api_version!r}")
        # Looked up, not imported: the namespace is minilazy's face, above core.
        return sys.modules["minilazy"]

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """``np.exp(t)``, ``ndarray + t``: the namespace's function, recorded (a Tensor back).

        A ufunc minilazy has no op for, ``out=``, ``where=`` or a ufunc method such as
        ``np.add.reduce`` raise ``TypeError`` naming what to write instead.

        Example:
            >>> import numpy as np
            >>> import minilazy as ml
            >>> y = np.exp(ml.asarray([0.0])) + np.ones(1)
            >>> type(y).__name__, y.tolist()
            ('Tensor', [2.0])
        """
        name = getattr(ufunc, "__name__", str(ufunc))
        fn = getattr(sys.modules["minilazy"], UFUNC_NAMES.get(name, name), None)
        if method != "__call__":
            instead = UFUNC_METHODS.get(f"{name}.{method}", "a minilazy function")
            raise TypeError(f"np.{name}.{method} on a minilazy Tensor: write {instead}")
        if kwargs.get("out") is not None:
            raise TypeError(f"np.{name}(..., out=...) with a minilazy Tensor: tensors are "
                            f"lazy and an ndarray cannot hold one; write y = ml.{name}(...)")
        if fn is None or not callable(fn):
            raise TypeError(_unsupported(name, "numpy"))
        if any(k != "out" for k in kwargs):
            extra = ", ".join(f"{k}=" for k in kwargs if k != "out")
            raise TypeError(f"np.{name}(..., {extra}) on a minilazy Tensor: minilazy takes no "
                            f"such option; " + _host_hint(f"np.{name}"))
        return fn(*inputs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """``np.sum(t, 0)``, ``np.concatenate([t, a])``: minilazy's function where it has one.

        NumPy's arguments are taken by NumPy's names (``np.clip(t, a_min=0)``); an argument
        minilazy does not take (``out=``, ``order="F"``) or a function it does not have
        raise ``TypeError`` naming what to write instead (:data:`FUNCTIONS` lists them).

        Example:
            >>> import numpy as np
            >>> import minilazy as ml
            >>> x = ml.asarray([[1.0, 2.0], [3.0, 4.0]])
            >>> np.sum(x, 0).tolist(), np.shape(x), type(np.mean(x)).__name__
            ([4.0, 6.0], (2, 2), 'Tensor')
        """
        name, module = func.__name__, getattr(func, "__module__", "numpy")
        if module == "numpy" and name in ("shape", "ndim", "size") and len(args) == 1:
            return getattr(args[0], name)  # known without running anything
        spec = FUNCTIONS.get(name) if module == "numpy" else None
        if spec is None:
            raise TypeError(_unsupported(name, module))
        target, leading, accepted = spec
        signature = inspect.signature(func)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"np.{name}: {e}") from None
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        params = signature.parameters
        for i, (key, value) in enumerate(bound.arguments.items()):
            param = params[key]
            if param.kind is param.VAR_POSITIONAL:
                positional.extend(value)
            elif i < leading:
                positional.append(value)
            elif value is not param.default and not (value is None and param.default is None):
                keywords[_renamed(name, key, value, accepted)] = value
        keywords.pop("", None)  # accepted and ignored (order="C", optimize=...)
        if name == "where" and len(positional) == 1:
            raise TypeError("np.where(condition) on a minilazy Tensor: write "
                            "ml.nonzero(condition) (its size depends on the data)")
        if target.startswith("."):
            first = sys.modules["minilazy"].asarray(positional[0])
            return getattr(first, target[1:])(*positional[1:], **keywords)
        return getattr(sys.modules["minilazy"], target)(*positional, **keywords)

    def to_device(self, device: Device, /, *, stream: None = None) -> Tensor:
        """This tensor on ``device`` (itself when already there); the Array API's ``.to()``.

        ``stream`` must be ``None``: transfers are ordered by the runtime, not by the caller.

        Example:
            >>> import minilazy as ml
            >>> x = ml.ones((2,))
            >>> x.to_device(ml.devices()[-1]).device == ml.devices()[-1]
            True
        """
        if stream is not None:
            raise ValueError(f"to_device: minilazy has no streams, got stream={stream!r}")
        me = cast("Tensor", self)
        device = checked(device, "to_device")
        if device == self._device:
            return me
        node = me._node
        buffer = runtime.move(barrier.value(me, "to"), device)
        return type(me)(data_leaf(buffer, node.shape, node.dtype), device)

    def __complex__(self, /) -> complex:
        """The single element as a Python ``complex`` (an observation barrier, as ``float()``).

        Example:
            >>> import minilazy as ml
            >>> complex(ml.asarray(2.5)), complex(ml.asarray(1 - 2j))
            ((2.5+0j), (1-2j))
        """
        check_scalar(self, "complex()")
        return complex(cast("Tensor", self).item())

    def __dlpack_device__(self, /) -> tuple[int, int]:
        """Where :meth:`__dlpack__` hands the data over: always the host (``kDLCPU``, 0).

        Never a barrier: the answer does not depend on the tensor's state.

        Example:
            >>> import minilazy as ml
            >>> ml.ones((2,)).__dlpack_device__()
            (1, 0)
        """
        return (DLPACK_CPU, 0)

    def __dlpack__(self, /, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """A DLPack capsule of a host copy of the values (an observation barrier).

        The tensor is materialised and copied to the host, and NumPy exports that copy; so the
        capsule never aliases the device buffer, and ``copy=False`` raises ``BufferError``.

        Example:
            >>> import numpy as np
            >>> import minilazy as ml
            >>> np.from_dlpack(ml.asarray([1, 2]) * 3).tolist()
            [3, 6]
        """
        if copy is False:
            raise BufferError("__dlpack__: a minilazy tensor is exported as a host copy, so "
                              "copy=False cannot be honoured")
        if dl_device is not None and dl_device != (DLPACK_CPU, 0):
            raise BufferError(f"__dlpack__: minilazy exports to the host (1, 0) only, got "
                              f"dl_device={dl_device}")
        host = barrier.to_host(cast("Tensor", self), "__dlpack__")  # writable, ours alone
        # The copy is already made: NumPy exports it as it is (stream is a no-op for the CPU).
        return host.__dlpack__(stream=stream, max_version=max_version)

    def __reduce__(self) -> tuple[Any, tuple[np.ndarray[Any, Any]]]:
        """Pickle the values (an observation barrier): a pending tensor is materialised first.

        The tensor unpickles onto the loading process's default device, unsplit, as a JAX
        array does: the device it was on may not exist there.

        Example:
            >>> import pickle
            >>> import minilazy as ml
            >>> (pickle.loads(pickle.dumps(ml.arange(3) * 2)) + 1).tolist()
            [1, 3, 5]
        """
        return unpickle, (barrier.to_host(cast("Tensor", self), "pickle"),)

    def __copy__(self) -> Tensor:
        """A new handle on the same node (nothing runs): ``copy.copy``; in-place ops rebind one.

        Example:
            >>> import copy
            >>> import minilazy as ml
            >>> x = ml.ones((2,))
            >>> y = copy.copy(x)
            >>> y += 1
            >>> x.tolist(), y.tolist()
            ([1.0, 1.0], [2.0, 2.0])
        """
        me = cast("Tensor", self)
        return type(me)(me._node, me._device)  # registered live: mark_step materialises it

    def __deepcopy__(self, memo: dict[int, object], /) -> Tensor:
        """As :meth:`__copy__`: nodes and device buffers are never written, so sharing is a copy.

        Example:
            >>> import copy
            >>> import minilazy as ml
            >>> copy.deepcopy(ml.arange(2)).tolist()
            [0, 1]
        """
        return self.__copy__()


def _renamed(name: str, key: str, value: object, accepted: str) -> str:
    """NumPy's parameter ``key`` as minilazy's keyword ("" to drop it); else ``TypeError``."""
    for entry in accepted.split():
        numpy_name, colon, ours = entry.partition(":")
        if numpy_name == key and not (key == "order" and value not in ("C", "K", "A")):
            return ours if colon else key  # (minilazy's tensors are row-major only)
    raise TypeError(f"np.{name}(..., {key}={value!r}) on a minilazy Tensor: minilazy takes no "
                    f"{key!r} here; " + _host_hint(f"np.{name}"))


# Where NumPy's name is not minilazy's and the fix is more than a rename.
INSTEAD: Final = {
    "dot": "ml.matmul(a, b) (ml.tensordot for other axes)", "unique": "ml.unique_values(x)",
    "outer": "ml.reshape(a, (-1, 1)) * ml.reshape(b, (1, -1))",
    "allclose": "ml.all(ml.abs(a - b) <= atol + rtol * ml.abs(b))",
    "isclose": "ml.abs(a - b) <= atol + rtol * ml.abs(b)", "array_equal": "ml.all(a == b)",
    "norm": "ml.linalg.vector_norm(x) or ml.linalg.matrix_norm(x)",
}


def _unsupported(name: str, module: str) -> str:
    """The message for a NumPy function minilazy does not run: what to write instead."""
    where = module.removeprefix("numpy").lstrip(".")  # "linalg", "fft" or ""
    ns = sys.modules["minilazy"]
    ours = getattr(getattr(ns, where, None) if where else ns, name, None)
    call = f"np.{where + '.' if where else ''}{name}"
    if name in INSTEAD:
        return f"{call} on a minilazy Tensor: write {INSTEAD[name]}, which runs lazily"
    if callable(ours):
        return f"{call} on a minilazy Tensor: write ml.{call[3:]}(...), which runs lazily"
    return f"{call} has no minilazy equivalent; " + _host_hint(call)


def _host_hint(call: str) -> str:
    return f"{call}(x.numpy(), ...) computes it in NumPy (x.numpy() is an observation barrier)"


def unpickle(values: np.ndarray[Any, Any]) -> Tensor:
    """A pickled tensor back from its values: ``ml.asarray(values)`` (see ``__reduce__``).

    Example:
        >>> unpickle(np.arange(2)).tolist()
        [0, 1]
    """
    # Looked up, not imported: asarray is the face's (minilazy.api), above core.
    return cast("Tensor", sys.modules["minilazy"].asarray(values))
