"""The protocol methods of ``Tensor``: the Array API's, NumPy's, DLPack, pickle and copy.

Part of the tensor's surface: ``Tensor`` (``tensor.py``) inherits :class:`ArrayAPIMethods`
through ``methods.NumPyMethods``. DLPack goes through NumPy: exporting a tensor is an
observation barrier that materialises it and hands over a host copy, so a consumer always sees a
CPU buffer, whatever device the tensor is on. Pickling is such an observation too; ``copy`` and
``deepcopy`` are new handles on the same (immutable) node.

NumPy's functions follow one policy (``__array_ufunc__``, ``__array_function__``), which lives
with the namespace's functions it calls (``minilazy/api/numpy_policy.py``): NumPy's result,
computed lazily in minilazy, or a ``TypeError`` naming what to write instead. Nothing is pulled
to the host behind the caller's back: ``np.asarray(t)`` and ``t.numpy()`` are the observations.
Never imports jax.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, Self, cast

import numpy as np

from minilazy.api.host import checked
from minilazy.core import dtypes, runtime, tracer
from minilazy.core.infer import describe
from minilazy.core.ir import Device, Node, data_leaf

# The standard's versions whose namespace minilazy's names follow (it ships 2023.12's).
API_VERSIONS: Final = ("2021.12", "2022.12", "2023.12")
# DLPack's device type for host memory (``kDLCPU``): where an exported copy lives.
DLPACK_CPU: Final = 1


class Face:
    """The array namespace above the surface (the ``minilazy`` module) and its NumPy policy.

    ``import minilazy`` hands them over (:func:`install`): the tensor's methods are the
    namespace's functions, and NumPy's protocols follow its policy; nothing looks them up.

    Example:
        >>> import minilazy as ml
        >>> FACE.namespace is ml
        True
    """

    def __init__(self) -> None:
        self.namespace: ModuleType | None = None
        self.numpy_policy: Any = None


FACE: Final = Face()


def install(namespace: ModuleType, numpy_policy: Any) -> None:
    """Hand the surface its namespace and NumPy policy (what ``import minilazy`` does).

    Example:
        >>> import minilazy as ml
        >>> from minilazy.api import numpy_policy
        >>> install(ml, numpy_policy)
    """
    FACE.namespace, FACE.numpy_policy = namespace, numpy_policy


def namespace() -> ModuleType:
    """The array namespace (the ``minilazy`` module) whose functions the tensor's methods are.

    Example:
        >>> import minilazy as ml
        >>> namespace().sum is ml.sum
        True
    """
    if FACE.namespace is None:  # the surface used without its face: say what is missing
        raise RuntimeError("the tensor's methods need the array namespace: import minilazy")
    return FACE.namespace


def check_scalar(t: Any, what: str) -> None:
    """``float()``, ``int()`` and ``complex()`` take a 0-d tensor only, as NumPy 2's arrays.

    Example:
        >>> import minilazy as ml
        >>> check_scalar(ml.ones(()), "float()")
    """
    if t._node.shape:
        raise TypeError(f"{what} needs a 0-d tensor, got shape {t._node.shape}: take x.item() "
                        "of a size-1 tensor, or index one element first")


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
    if TYPE_CHECKING:  # the tensor's constructor, which the methods below call through type()
        def __init__(self, node: Node, device: Device) -> None: ...

    def __pos__(self) -> Any:
        """``+x``: ``x`` itself, but for bool, which NumPy (and ``ml.positive``) refuse.

        Example:
            >>> import minilazy as ml
            >>> (+ml.asarray([1, 2])).tolist()
            [1, 2]
        """
        if self._node.dtype == np.bool_:
            raise TypeError("positive: not defined for dtype bool (NumPy has no loop for it)")
        return self

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
        result: ModuleType = namespace()  # minilazy's face, above core: handed over, not imported
        return result

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
        # The policy is the namespace's (minilazy.api), above core: handed over, not imported.
        return FACE.numpy_policy.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """``np.sum(t, 0)``, ``np.concatenate([t, a])``: minilazy's function where it has one.

        NumPy's arguments are taken by NumPy's names (``np.clip(t, a_min=0)``); an argument
        minilazy does not take (``out=``, ``order="F"``) or a function it does not have
        raise ``TypeError`` naming what to write instead (``numpy_policy.FUNCTIONS`` lists them).

        Example:
            >>> import numpy as np
            >>> import minilazy as ml
            >>> x = ml.asarray([[1.0, 2.0], [3.0, 4.0]])
            >>> np.sum(x, 0).tolist(), np.shape(x), type(np.mean(x)).__name__
            ([4.0, 6.0], (2, 2), 'Tensor')
        """
        return FACE.numpy_policy.array_function(func, args, kwargs)

    def to_device(self, device: Device, /, *, stream: None = None) -> Self:
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
        device = checked(device, "to_device")
        if device == self._device:
            return self
        node = self._node
        buffer = runtime.move(tracer.value(self, "to"), device)
        return type(self)(data_leaf(buffer, node.shape, node.dtype), device)

    # -- Python's conversions and NumPy's array protocol: each an observation barrier --------
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        if copy is False:  # NumPy 2's protocol: the values are on a device, a copy is needed
            raise ValueError("__array__: copy=False, but reading a Tensor's device values copies")
        return np.asarray(tracer.to_host(self, "__array__"), dtype=dtype)

    def tolist(self) -> Any:
        """The values as nested Python lists (an observation barrier).

        Example:
            >>> import minilazy as ml
            >>> (ml.ones((2,)) * 2.0).tolist()
            [2.0, 2.0]
        """
        return tracer.to_host(self, "tolist").tolist()

    def __len__(self) -> int:
        if not self._node.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._node.shape[0]

    def __bool__(self) -> bool:
        if math.prod(shape := self._node.shape) != 1:  # NumPy's error, whatever the rank
            raise ValueError(f"bool() needs a tensor of size 1, got shape {shape} (size "
                             f"{math.prod(shape)}): use x.any() or x.all()")
        return bool(tracer.to_host(self, "bool").item())

    def __int__(self) -> int:
        check_scalar(self, "int()")
        return int(tracer.to_host(self, "int").item())

    def __float__(self) -> float:
        check_scalar(self, "float()")
        return float(tracer.to_host(self, "float").item())

    def __complex__(self, /) -> complex:
        """The single element as a Python ``complex`` (an observation barrier, as ``float()``).

        Example:
            >>> import minilazy as ml
            >>> complex(ml.asarray(2.5)), complex(ml.asarray(1 - 2j))
            ((2.5+0j), (1-2j))
        """
        check_scalar(self, "complex()")
        return complex(tracer.to_host(self, "item").item())

    def __index__(self) -> int:
        if self._node.shape or self._node.dtype not in dtypes.INTEGER:
            raise TypeError(f"only 0-d integer tensors can be used as an index, got "
                            f"{describe(self._node)}")
        return int(tracer.to_host(self, "index").item())

    def __str__(self) -> str:
        return str(tracer.to_host(self, "str"))

    def __format__(self, spec: str) -> str:
        return str(self) if not spec else format(tracer.to_host(self, "item").item(), spec)

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
        """A DLPack capsule of the values on the host (an observation barrier).

        The tensor is materialised, and its values copied to the host, which NumPy exports;
        with ``copy=False``, a tensor on a CPU device exports its own buffer instead, read-only
        (writing through the capsule would change a value minilazy holds), and a tensor
        anywhere else raises ``BufferError``: the host has no copy of it without one.

        Example:
            >>> import numpy as np
            >>> import minilazy as ml
            >>> t = ml.asarray([1, 2]) * 3
            >>> np.from_dlpack(t).tolist(), np.from_dlpack(t, copy=False).flags.writeable
            ([3, 6], False)
        """
        if dl_device is not None and dl_device != (DLPACK_CPU, 0):
            raise BufferError(f"__dlpack__: minilazy exports to the host (1, 0) only, got "
                              f"dl_device={dl_device}")
        if copy is False:
            buffer = None if self._device.platform != "cpu" else tracer.value(self, "__dlpack__")
            if buffer is None or len(buffer.sharding.device_set) > 1:
                raise BufferError(f"__dlpack__: copy=False, but a tensor on {self._device} "
                                  f"{'' if buffer is None else 'split over a mesh '}reaches "
                                  "the host only as a copy")
            return buffer.__dlpack__(max_version=max_version, copy=False)
        host = tracer.to_host(self, "__dlpack__")  # writable, ours alone
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
        return unpickle, (tracer.to_host(self, "pickle"),)

    def __copy__(self) -> Self:
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
        return type(self)(self._node, self._device)  # registered live: mark_step materialises it

    def __deepcopy__(self, memo: dict[int, object], /) -> Self:
        """As :meth:`__copy__`: nodes and device buffers are never written, so sharing is a copy.

        Example:
            >>> import copy
            >>> import minilazy as ml
            >>> copy.deepcopy(ml.arange(2)).tolist()
            [0, 1]
        """
        return self.__copy__()


def unpickle(values: np.ndarray[Any, Any]) -> ArrayAPIMethods:
    """A pickled tensor back from its values: ``ml.asarray(values)`` (see ``__reduce__``).

    Example:
        >>> unpickle(np.arange(2)).tolist()
        [0, 1]
    """
    # asarray is the face's (minilazy.api), above core: handed over, not imported
    return cast(ArrayAPIMethods, namespace().asarray(values))
