"""The Array API's inspection namespace: what minilazy can do, on which devices, in which dtypes.

Above the runtime, which it asks for devices. ``ml.__array_namespace_info__()`` returns an
:class:`Info`, through which array-API code (array-api-compat, SciPy) asks for the default
dtypes and devices instead of assuming NumPy's; ``ml.finfo`` and ``ml.iinfo`` give a dtype's
limits. Never imports jax.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, TypedDict

import numpy as np

from minilazy.api.composites import KINDS, isdtype
from minilazy.api.scalars import dtype_of
from minilazy.core import dtypes, runtime
from minilazy.core.dtypes import DType
from minilazy.core.ir import Device
from minilazy.scaleout import processes

# The standard's names for the dtypes minilazy has (``bool`` is NumPy's ``bool_``).
# The standard's dtypes: float16 is minilazy's too (``ml.float16``), but not the standard's, so
# the inspection API leaves it out, as NumPy's does (a test suite would draw it for every op).
NAMES: Final[dict[str, DType]] = {str(d): d for d in dtypes.DTYPES if d is not dtypes.float16}

Capabilities = TypedDict("Capabilities", {"boolean indexing": bool,
                                          "data-dependent shapes": bool})


class Info:
    """The answers of ``ml.__array_namespace_info__()``: capabilities, devices and dtypes.

    Example:
        >>> import minilazy as ml
        >>> info = ml.__array_namespace_info__()
        >>> info.default_dtypes()["real floating"]
        dtype('float64')
    """

    __slots__ = ()

    def capabilities(self) -> Capabilities:
        """What minilazy supports of the standard's optional behaviour.

        Both are True, and both are host fallbacks: ``x[mask]`` and the functions whose result
        shape depends on data (``nonzero``, ``unique_*``, ``repeat`` with a tensor) run a
        barrier on their inputs and compute on the host, counted in ``ml.metrics().fallbacks``.
        Under ``BarrierPolicy(fallback="error")`` they raise instead.

        Example:
            >>> import minilazy as ml
            >>> ml.__array_namespace_info__().capabilities()["boolean indexing"]
            True
        """
        return {"boolean indexing": True, "data-dependent shapes": True}

    def default_device(self) -> Device:
        """The device new tensors go to (``ml.default_device()``).

        Example:
            >>> import minilazy as ml
            >>> ml.__array_namespace_info__().default_device() == ml.default_device()
            True
        """
        return runtime.default_device()

    def devices(self) -> list[Device]:
        """The devices of JAX's default platform (``ml.devices()``).

        Example:
            >>> import minilazy as ml
            >>> ml.default_device() in ml.__array_namespace_info__().devices()
            True
        """
        return processes.devices()

    def default_dtypes(self, *, device: Device | None = None) -> dict[str, DType]:
        """The dtypes minilazy picks when none is given: NumPy's, on every device.

        Example:
            >>> import minilazy as ml
            >>> ml.__array_namespace_info__().default_dtypes()["complex floating"]
            dtype('complex128')
        """
        return {"real floating": dtypes.DEFAULT_FLOAT, "complex floating": dtypes.complex128,
                "integral": dtypes.DEFAULT_INT, "indexing": dtypes.DEFAULT_INT}

    def dtypes(self, *, device: Device | None = None,
               kind: str | tuple[str, ...] | None = None) -> dict[str, DType]:
        """The standard's dtypes, by name, optionally only those of ``kind`` (see ``isdtype``).

        Every device supports every dtype (64-bit ones are computed in 64 bits). ``float16``,
        which minilazy has but the standard does not, is not listed (as in NumPy).

        Example:
            >>> import minilazy as ml
            >>> list(ml.__array_namespace_info__().dtypes(kind="real floating"))
            ['float32', 'float64']
            >>> list(ml.__array_namespace_info__().dtypes(kind="complex floating"))
            ['complex64', 'complex128']
        """
        if kind is None:
            return dict(NAMES)
        for k in kind if isinstance(kind, tuple) else (kind,):
            if k not in KINDS:
                raise ValueError(f"dtypes: unknown kind {k!r}; kinds are {sorted(KINDS)}")
        return {name: d for name, d in NAMES.items() if isdtype(d, kind)}


INFO: Final = Info()


def __array_namespace_info__() -> Info:
    """The Array API's inspection object for minilazy (one shared, stateless :class:`Info`).

    Example:
        >>> import minilazy as ml
        >>> ml.__array_namespace_info__().capabilities()["data-dependent shapes"]
        True
    """
    return INFO


@dataclass(frozen=True)
class FInfo:
    """Machine limits of a floating dtype (Array API ``finfo``).

    Example:
        >>> import minilazy as ml
        >>> ml.finfo(ml.float32).bits
        32
    """

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class IInfo:
    """Limits of an integer dtype (Array API ``iinfo``).

    Example:
        >>> import minilazy as ml
        >>> ml.iinfo(ml.uint8).max
        255
    """

    bits: int
    max: int
    min: int
    dtype: DType


def finfo(type: dtypes.DTypeLike | Any, /) -> FInfo:
    """Limits of a floating dtype (or of a tensor's dtype).

    A complex dtype has the limits of its parts, as the standard says: ``finfo(complex64)`` is
    ``finfo(float32)``, ``dtype`` included.

    Example:
        >>> import minilazy as ml
        >>> ml.finfo(ml.float16).max
        65504.0
        >>> ml.finfo(ml.complex64).dtype
        dtype('float32')
    """
    d = dtype_of(type)
    d = dtypes.PART.get(d, d)
    if d not in dtypes.FLOATING:
        raise TypeError(f"finfo() needs a floating dtype, got {d}")
    f = np.finfo(d)
    return FInfo(f.bits, float(f.eps), float(f.max), float(f.min), float(f.smallest_normal), d)


def iinfo(type: dtypes.DTypeLike | Any, /) -> IInfo:
    """Limits of an integer dtype (or of a tensor's dtype).

    Example:
        >>> import minilazy as ml
        >>> ml.iinfo(ml.int8).min
        -128
    """
    d = dtype_of(type)
    if d not in dtypes.INTEGER:
        raise TypeError(f"iinfo() needs an integer dtype, got {d}")
    i = np.iinfo(d)
    return IInfo(i.bits, int(i.max), int(i.min), d)
