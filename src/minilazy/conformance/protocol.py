"""The oracle's process protocol: an implementation in any language, driven over JSON lines.

The oracle (the *client*) starts the implementation's *server* as a child process and writes one
JSON object per line to its stdin; the server answers each with one line on its stdout. A request
calls one method of the adapter interface (:mod:`minilazy.conformance.adapter`) by name::

    {"id": 3, "call": "apply", "args": ["add", {"ref": 1}, {"float": "2.0"}], "kwargs": {},
     "free": [2]}
    {"id": 3, "result": {"ref": 4}}
    {"id": 4, "error": {"type": "ValueError", "message": "shapes (3,) and (4,) ..."}}

Values travel in the tagged encoding below, so that what JSON cannot say survives the trip: a
Python float (``{"float": "-0.0"}``, ``"nan"``, ``"inf"``) against an int (a bare JSON integer);
a tuple against a list; slices, ``...``, dtypes; and arrays, whose bytes go base64-encoded on the
same line (little-endian, C order). Base64 rather than a side file: one message stays one line
(no files to name, clean up, or race on); every language has it in its standard library; and
the arrays the oracle sends are small (a few KB), so the third more bytes cost nothing. Objects
the server keeps (tensors, devices) are ``{"ref": n}`` handles; the client lists the handles it
dropped in the next request's ``free``, so the server's live set is the client's.

``spec/protocol.md`` is the normative text and ``spec/protocol.schema.json`` its schema; this
module is the codec both Python ends share.
"""

from __future__ import annotations

import base64
import builtins
import collections
import dataclasses
import operator
from collections.abc import Callable
from typing import Any, Final

import numpy as np

VERSION: Final = "1.0"
# The adapter methods a request may call, besides hello, enter and exit (contexts by name).
METHODS: Final = frozenset({
    "from_numpy", "to_numpy", "apply", "barrier", "counters", "key", "is_pending", "ir", "hlo",
    "reset", "isolate", "sync", "inplace", "devices", "to_device", "shape", "dtype", "conv2d",
    "max_pool2d", "avg_pool2d", "sort", "argsort", "linalg", "fft"})
CONTEXTS: Final = frozenset({"eager", "no_fallback"})
# What Python asks of a tensor itself (``float(x)``, ``len(x)``): the ``convert`` call's kinds.
CONVERSIONS: Final[dict[str, Callable[[Any], Any]]] = {
    "float": float, "int": int, "bool": bool, "index": operator.index, "len": len,
    "item": lambda x: x.item()}
# Capabilities that cannot cross a process: grad(f) takes a Python function.
NOT_CARRIED: Final = frozenset({"autodiff"})

Json = Any  # what json.loads returns


def encode(value: Any, ref: Callable[[Any], int]) -> Json:
    """``value`` in the protocol's encoding; ``ref`` numbers an object the encoding has no tag for.

    Example:
        >>> encode((1, 2.0, slice(None, 3), ...), ref=id)
        {'tuple': [1, {'float': '2.0'}, {'slice': [None, 3, None]}, {'ellipsis': True}]}
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and not isinstance(value, np.integer):
        return value
    if isinstance(value, float) and not isinstance(value, np.floating):
        return {"float": repr(value)}
    if isinstance(value, complex) and not isinstance(value, np.complexfloating):
        return {"complex": [repr(value.real), repr(value.imag)]}
    if isinstance(value, list):
        return [encode(v, ref) for v in value]
    if isinstance(value, tuple):
        fields = getattr(value, "_fields", None)  # a named tuple: (eigenvalues, eigenvectors)
        items = {"tuple": [encode(v, ref) for v in value]}
        return items if fields is None else {**items, "names": list(fields)}
    if isinstance(value, dict):
        return {"dict": {str(k): encode(v, ref) for k, v in value.items()}}
    if isinstance(value, slice):
        return {"slice": [encode(v, ref) for v in (value.start, value.stop, value.step)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return {"dtype": np.dtype(value).name}  # np.float32, the type, is a dtype's name too
    if isinstance(value, (np.ndarray, np.generic)):
        return {"array": encode_array(np.asarray(value)), "scalar": isinstance(value, np.generic)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return encode(dataclasses.asdict(value), ref)
    return {"ref": ref(value)}


def decode(data: Json, deref: Callable[[int], Any]) -> Any:
    """The value ``data`` encodes; ``deref`` gives the object behind a ``{"ref": n}``.

    Example:
        >>> decode({"tuple": [1, {"float": "nan"}, [True, None]]}, deref=str)
        (1, nan, [True, None])
    """
    if data is None or isinstance(data, (bool, int, str)):
        return data
    if isinstance(data, float):  # 2.0 and 2 are one JSON number in JavaScript: tags tell them
        raise ValueError(f"an untagged float {data!r}: a float is {{'float': '{data!r}'}}")
    if isinstance(data, list):
        return [decode(v, deref) for v in data]
    if not isinstance(data, dict) or len(data) == 0:
        raise ValueError(f"not a value of the protocol: {data!r}")
    if "float" in data:
        return float(data["float"])
    if "complex" in data:
        return complex(float(data["complex"][0]), float(data["complex"][1]))
    if "tuple" in data:
        items = tuple(decode(v, deref) for v in data["tuple"])
        if "names" in data:
            return _named(tuple(data["names"]))(*items)
        return items
    if "dict" in data:
        return {k: decode(v, deref) for k, v in data["dict"].items()}
    if "slice" in data:
        return slice(*(decode(v, deref) for v in data["slice"]))
    if "ellipsis" in data:
        return Ellipsis
    if "dtype" in data:
        return np.dtype(data["dtype"])
    if "array" in data:
        array = decode_array(data["array"])
        return array[()] if data.get("scalar") else array
    if "ref" in data:
        return deref(int(data["ref"]))
    raise ValueError(f"not a value of the protocol: {data!r}")


def encode_array(array: np.ndarray[Any, Any]) -> dict[str, Any]:
    """An array as ``{"dtype", "shape", "data"}``: its bytes little-endian, C order, base64.

    Example:
        >>> encode_array(np.array([1, 2], np.int16))
        {'dtype': 'int16', 'shape': [2], 'data': 'AQACAA=='}
    """
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    return {"dtype": array.dtype.name, "shape": list(array.shape),
            "data": base64.b64encode(little.tobytes()).decode("ascii")}


def decode_array(data: dict[str, Any]) -> np.ndarray[Any, Any]:
    """The array :func:`encode_array` encoded (a writable copy, in native byte order).

    Example:
        >>> decode_array({"dtype": "int16", "shape": [2], "data": "AQACAA=="})
        array([1, 2], dtype=int16)
    """
    dtype = np.dtype(data["dtype"])
    shape = tuple(int(n) for n in data["shape"])
    raw = np.frombuffer(base64.b64decode(data["data"]), dtype=dtype.newbyteorder("<"))
    if raw.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError(f"array data of {raw.size} elements for shape {shape}")
    return raw.reshape(shape).astype(dtype)  # a copy in native order


def error_of(e: BaseException) -> dict[str, str]:
    """An exception as the protocol's error: the nearest built-in type, and the message.

    Library errors subclass the built-in ones (``jax``'s ``TypeError``s); the oracle's rules
    name those built-in kinds, so they are what crosses.

    Example:
        >>> class ShapeError(ValueError): ...
        >>> error_of(ShapeError("shapes (3,) and (4,)"))
        {'type': 'ValueError', 'message': 'shapes (3,) and (4,)'}
    """
    kind = next(c for c in type(e).__mro__ if getattr(builtins, c.__name__, None) is c)
    return {"type": kind.__name__, "message": str(e)}


def exception_of(error: dict[str, Any]) -> Exception:
    """The exception a protocol error stands for (``RuntimeError`` for an unknown type).

    Example:
        >>> exception_of({"type": "IndexError", "message": "index 5 is out of bounds"})
        IndexError('index 5 is out of bounds')
    """
    kind = getattr(builtins, str(error.get("type", "")), None)
    if not (isinstance(kind, type) and issubclass(kind, Exception)):
        kind = RuntimeError  # never SystemExit or KeyboardInterrupt from a server's word
    return kind(str(error.get("message", "")))


_NAMED: dict[tuple[str, ...], Any] = {}


def _named(fields: tuple[str, ...]) -> Any:
    """A named tuple type with ``fields``: the Array API's results (``EighResult``...) are."""
    if fields not in _NAMED:
        make: Any = collections.namedtuple  # fields known at run time only
        _NAMED[fields] = make("Result", fields)
    return _NAMED[fields]
