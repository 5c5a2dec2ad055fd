"""The rows of ``test_keywords.py``: every keyword of every public function, with values.

A row is a call: the function's qualified name (``sum``, ``linalg.vector_norm``, ``fft.fft``,
``Tensor.mean`` for a NumPy-habit method), its arguments and keywords, and the reference that
decides the answer: NumPy's namesake (``"np"``, the default: minilazy promises NumPy 2's
semantics) or array-api-strict's (``"xp"``, where minilazy's docs say it follows the standard
instead: complex orderings refused, ``clip`` keeping ``x``'s dtype, ``sort(descending=)``...),
or a NumPy formula of :data:`FORMULAS` where NumPy has no such function. ``A("f64")`` stands
for an input array (a tensor on minilazy's side, an ndarray or array-api-strict array on the
reference's); ``DEV`` for the device (``ml.default_device()``; NumPy's ``"cpu"``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

DTYPES = [np.dtype(n) for n in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                "uint32", "uint64", "float16", "float32", "float64", "complex64",
                                "complex128")]
_BASE = np.array([[0.5, -1.5, 2.0], [3.0, 0.25, -0.75]])
_INTS = np.array([[1, -2, 3], [4, 0, -5]])
ARRAYS: dict[str, np.ndarray] = {
    **{d.name: (_BASE != 0.25) & (_BASE > 0) if d.kind == "b" else
       (np.abs(_INTS) if d.kind == "u" else _INTS).astype(d) if d.kind in "iu" else
       (_BASE + 1j * _BASE[::-1]).astype(d) if d.kind == "c" else _BASE.astype(d)
       for d in DTYPES},
    "empty": np.zeros((0, 3)), "empty_int": np.zeros((3, 0), np.int32), "e1": np.zeros(0),
    "empty_sq": np.zeros((2, 0, 0)), "scalar": np.array(2.5), "v3": np.array([1.0, -2.0, 4.0]),
    "v3b": np.array([0.5, 3.0, -1.0]), "cube": np.arange(24.0).reshape(2, 3, 4) / 7,
    "sq": np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]]),
    "sq32": np.array([[4.0, 1.0], [1.0, 3.0]], np.float32),
    "sorted": np.array([1.0, 2.0, 2.0, 5.0]), "order": np.array([2, 0, 1]),
    "sorts_v3": np.array([1, 0, 2]),
    "idx": np.array([2, 0, -1]), "idx2": np.array([[0, 2, 1], [1, 1, 0]]),
    "c8": np.arange(8.0) - 2.5j * np.arange(8.0)[::-1], "r8": np.sin(np.arange(8.0)),
    "r44": np.cos(np.arange(16.0)).reshape(4, 4),
}


@dataclass(frozen=True)
class A:
    """An input array by name (see :data:`ARRAYS`): a tensor on minilazy's side."""

    name: str


class H(A):
    """An input array passed as host data to both sides (an index list known at the call)."""


DEV = object()  # the device keyword's value: minilazy's default device, NumPy's "cpu"


@dataclass
class K:
    """One call, on minilazy and on the reference."""

    fn: str
    args: tuple[Any, ...] = ()
    kw: dict[str, Any] = field(default_factory=dict)
    ref: str = "np"  # "np", "xp", a key of FORMULAS, or "raises:<Error>" (a documented refusal)
    cmp: str = "close"  # "close"; "abs" (factors' signs are free); "shape" (uninitialised)

    @property
    def id(self) -> str:
        args = ", ".join(a.name if isinstance(a, A) else repr(a) for a in self.args)
        kw = ", ".join(f"{k}={'DEV' if v is DEV else v}" for k, v in self.kw.items())
        return f"{self.fn}({args}{', ' if args and kw else ''}{kw})"


def _logsumexp(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    """SciPy's (not a dependency): integers in float64; complex input refused (docs)."""
    if x.dtype.kind == "c":
        raise TypeError("logsumexp: complex input is not supported")
    x = x.astype(np.float64) if x.dtype.kind in "biu" else x
    with np.errstate(all="ignore"):
        return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


def _unpack(flat: np.ndarray, shapes: Any, offset: int = 0) -> list[np.ndarray]:
    out = []
    for s in shapes:
        n = int(np.prod(s))
        out.append(flat[offset:offset + n].reshape(s))
        offset += n
    return out


FORMULAS: dict[str, Any] = {
    "logsumexp": _logsumexp, "unpack": _unpack,
    "pack": lambda xs: np.concatenate([np.ravel(x) for x in xs]),
    "eye": lambda n, m=None, *, k=0, dtype=None, device=None: np.eye(n, m, k, dtype=dtype),
}

REDUCTIONS = ["sum", "prod", "max", "min", "any", "all", "mean", "var", "std", "count_nonzero",
              "logsumexp"]
ORDERINGS = {"max", "min", "argmax", "argmin", "sort", "argsort", "var", "std", "clip"}
_AXES: list[Any] = [None, 0, 1, -1, -2, (0, 1), (), (-1, 0)]
_BAD_AXES: list[Any] = [2, -3, (0, 0), 1.0, (0, 2)]


def _ref(fn: str, dtype: np.dtype) -> str:
    """The standard decides where minilazy's docs say so: complex operands of orderings."""
    if dtype.kind == "c" and fn.split(".")[-1] in ORDERINGS:
        return "xp"
    return fn if fn in FORMULAS else "np"


def reductions() -> list[K]:
    rows = []
    for fn in [*REDUCTIONS, "argmax", "argmin"]:
        ints = fn in ("argmax", "argmin")
        axes = [a for a in _AXES if not ints or not isinstance(a, tuple)]
        for axis, keepdims in itertools.product(axes, (False, True)):
            rows.append(K(fn, (A("float64"),), {"axis": axis, "keepdims": keepdims},
                          _ref(fn, _BASE.dtype)))
        rows += [K(fn, (A("float64"),), {"axis": a}, _ref(fn, _BASE.dtype)) for a in _BAD_AXES]
        rows += [K(fn, (A(d.name),), {}, _ref(fn, d)) for d in DTYPES if d.name != "float64"]
        rows += [K(fn, (A(e),), {"axis": a}, _ref(fn, _BASE.dtype))
                 for e in ("empty", "empty_int") for a in (None, 0, 1)]
        rows += [K(fn, (A("scalar"),), {"axis": a}, _ref(fn, _BASE.dtype))
                 for a in ((None, 0, -1, ()) if fn != "logsumexp" else (None, ()))]
    for fn, x in itertools.product(("var", "std"), ("float64", "int8", "float32", "empty")):
        for c, axis in itertools.product((0, 1, 1.5, 2, 7), (None, 0)):
            rows.append(K(fn, (A(x),), {"correction": c, "axis": axis}))
    for fn in ("sum", "prod", "cumulative_sum", "mean", "var", "std"):
        for x, d in itertools.product(("int8", "bool", "float16"), DTYPES):
            if _in_domain(fn, x, d):
                rows.append(K(fn, (A(x),), {"dtype": d, **({"axis": 1} if "cum" in fn else {})}))
    rows += [K(fn, (A("int8"),), {"dtype": np.dtype("int64"), "axis": 0, "keepdims": k})
             for fn in ("mean", "var", "std") for k in (False, True)]
    return rows


def _in_domain(fn: str, x: str, d: np.dtype) -> bool:
    """Whether NumPy's answer is defined: not for negative numbers made unsigned (undefined in
    C: NumPy's values are the platform's), nor for a variance in or of booleans."""
    signed = x.startswith(("int", "float"))
    return not (d.kind == "u" and signed or fn.split(".")[-1] in ("var", "std") and (
        d.kind == "b" or x == "bool" and d.kind in "iu"))


def methods() -> list[K]:
    """The NumPy-habit methods: NumPy's calling conventions and NumPy's ``dtype=`` meaning."""
    rows = []
    for m in ("sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "any", "all",
              "cumsum"):
        many = m not in ("argmax", "argmin", "cumsum")
        for axis in (None, 0, -1) + (((0, 1),) if many else ()):
            rows.append(K(f"Tensor.{m}", (A("float64"), axis)))
        if m != "cumsum":
            rows.append(K(f"Tensor.{m}", (A("float64"),), {"axis": 1, "keepdims": True}))
        if m in ("sum", "prod", "mean", "var", "std", "cumsum"):
            for x, d in itertools.product(("int8", "float32", "bool"), DTYPES):
                if _in_domain(m, x, d):  # NumPy's positional (axis, dtype)
                    rows.append(K(f"Tensor.{m}", (A(x), 0, d)))
            rows += [K(f"Tensor.{m}", (A("int64"),), {"dtype": np.dtype(d)})
                     for d in ("int64", "float32", "complex128")]
        if m in ("var", "std"):
            rows += [K(f"Tensor.{m}", (A("float64"),), {"ddof": d, "axis": 0}) for d in (1, 2, 5)]
    rows += [K("Tensor.reshape", (A("float64"), 3, 2), {"copy": c}) for c in (None, True, False)]
    rows += [K("Tensor.reshape", (A("float64"), (6,)))]
    rows += [K("Tensor.squeeze", (A("empty_sq"),), {"axis": a}) for a in (None, 0, 1, (1, 2))]
    rows += [K("Tensor.astype", (A("float64"), d), {"copy": c}) for d in ("int8", "float32")
             for c in (True, False)]
    rows += [K("Tensor.clip", (A(x),), kw, "xp") for x in ("int8", "float32")
             for kw in ({"min": 0}, {"max": 1}, {"min": -1, "max": 2})]
    return rows


def creation() -> list[K]:
    rows = []
    for args in ((5,), (2, 7), (5, 1, -1), (0, 1, 0.25), (5, 1, -0.5), (0, 5, 0), (1, 1),
                 (3.5,), (-3,), (0, 10, 3), (0.5, 2, 0.5), (10, 0, -3)):
        rows.append(K("arange", args))
        rows += [K("arange", args, {"dtype": np.dtype(d), "device": DEV})
                 for d in ("int8", "uint8", "int64", "float16", "float32", "float64")]
    rows += [K("arange", (0, 2), {"dtype": np.dtype(bool)}), K("arange", (0, 3),
                                                               {"dtype": np.dtype(bool)})]
    for fn in ("zeros", "ones", "empty"):
        rows += [K(fn, (s,), {"dtype": d, "device": DEV}, cmp="shape" if fn == "empty" else "close")
                 for s in ((2, 3), 0, (0, 4)) for d in (None, np.dtype("int8"), np.dtype(bool))]
    rows += [K("full", ((2, 2), v), {"dtype": d, "device": DEV}) for v in (7, 2.5, True, 1j)
             for d in (None, np.dtype("float32"), np.dtype("int16"), np.dtype("complex64"))
             if not (isinstance(v, complex) and d is not None and d.kind != "c")]
    for fn in ("zeros_like", "ones_like", "empty_like"):
        rows += [K(fn, (A(x),), {"dtype": d, "device": DEV}, cmp="shape" if "empty" in fn else
                   "close") for x in ("int8", "float32", "empty")
                 for d in (None, np.dtype("uint8"), np.dtype("complex64"))]
    rows += [K("full_like", (A(x), v), {"dtype": d, "device": DEV}) for x in ("int8", "float32")
             for v in (3, 1.5, False) for d in (None, np.dtype("float64"), np.dtype("int32"))]
    rows += [K("eye", args, {"k": k, "dtype": d, "device": DEV}, "eye")
             for args in ((3,), (2, 4), (4, 2), (0,)) for k in (0, 1, -2, 5)
             for d in (None, np.dtype("int8"))]
    rows += [K("linspace", (a, b, n), {"endpoint": e, "dtype": d, "device": DEV})
             for a, b, n in ((0, 1, 5), (2, -1, 4), (0, 1, 1), (0, 1, 0), (1j, 2, 3))
             for e in (True, False) for d in (None, np.dtype("float32"), np.dtype("int32"))
             if not (isinstance(a, complex) and d is not None)]
    for x in ("float64", "int8", "scalar"):
        for d, c in itertools.product((None, np.dtype("float32"), np.dtype("int64")),
                                      (None, True, False)):
            rows.append(K("asarray", (A(x),), {"dtype": d, "copy": c, "device": DEV}))
    rows += [K("asarray", (v,), {"copy": c}) for v in ([1, 2], 3.5, [[1.0], [2.0]])
             for c in (None, True, False)]
    rows += [K("astype", (A(x), d), {"copy": c, "device": DEV}) for x in ("float64", "int8")
             for d in (np.dtype("int8"), np.dtype("float32")) for c in (True, False)]
    rows += [K("from_dlpack", (A("float64"),), {"copy": c, "device": DEV})
             for c in (None, True)]
    rows += [K("meshgrid", (A("v3"), A("sorted")), {"indexing": i}) for i in ("xy", "ij", "x")]
    return rows


def shaping() -> list[K]:
    rows = [K("concat", ([A("float64"), A(x)],), {"axis": a}) for x in ("float64", "int8", "empty")
            for a in (0, 1, -1, None, 2)]
    rows += [K("concatenate", ([A("float64"), A("float32")],), {"axis": a}) for a in (0, None, -3)]
    rows += [K("stack", ([A("float64"), A(x)],), {"axis": a}) for x in ("float64", "int8")
             for a in (0, 2, -1, -3, 3)]
    rows += [K("expand_dims", (A("float64"),), {"axis": a}) for a in (0, 2, -1, -3, 3, -4)]
    rows += [K("squeeze", (A("empty_sq"),), {"axis": a}) for a in (1, (1, 2), -1, 0, 3)]
    rows += [K("flip", (A("cube"),), {"axis": a}) for a in (None, 0, -1, (0, 2), (), 3)]
    rows += [K("roll", (A("cube"), s), {"axis": a}) for s, a in
             ((1, None), (-2, 0), (5, -1), ((1, 2), (0, 2)), (1, 3), ((1, 2), 0))]
    rows += [K("reshape", (A("float64"), s), {"copy": c}) for s in ((3, 2), (-1,), (6, 1), (4, 2))
             for c in (None, True, False)]
    rows += [K("repeat", (A("float64"), r), {"axis": a}) for r in (2, 0, A("order"))
             for a in (None, 1, -1, 2) if not (isinstance(r, A) and a != 1)]
    rows += [K("take", (A("float64"), H(i)), {"axis": a}) for i in ("idx", "idx2")
             for a in (None, 0, 1, -1, 2)]
    rows += [K("take_along_axis", (A("float64"), H("idx2")), {"axis": a}) for a in (0, -1, 1, 2)]
    rows += [K(fn, (A(x),), {"k": k}) for fn in ("tril", "triu") for x in ("float64", "cube")
             for k in (0, 1, -1, 5, -5)]
    rows += [K("unstack", (A("cube"),), {"axis": a}) for a in (0, 1, -1, 3)]
    rows += [K("transpose", (A("cube"),), {"axes": a})
             for a in (None, (2, 0, 1), (0, 1), (0, 0, 1))]
    rows += [K("unpack", (A("r8"), ((2, 2), (3,))), {"offset": o}, "unpack") for o in (0, 1, 3)]
    rows += [K("pack", ([A("float64"), A("v3")],), {}, "pack")]
    rows += [K("diff", (A(x),), {"axis": a, "n": n}) for x in ("float64", "int8", "bool")
             for a in (-1, 0, 2) for n in (0, 1, 2, 4, -1)]
    rows += [K("diff", (A("float64"),), kw) for kw in ({"prepend": 0.5}, {"append": A("float64")},
                                                      {"prepend": A("v3"), "append": 1},
                                                      {"prepend": A("int8"), "axis": 0},
                                                      {"append": A("e1")})]
    # the bounds of x's kind (mixing kinds is left to the implementation by the standard: the
    # result keeps x's dtype, docs; np.clip on a tensor promotes, test_numpy_protocols.py)
    rows += [K("clip", (A(x),), kw) for x in ("float64", "int8", "uint8", "empty")
             for kw in ({"min": 0}, {"max": 1}, {"min": -1, "max": 2}, {"min": 2, "max": -1},
                        {"min": A(x)}, {"min": -300, "max": 300}, {"max": A(x), "min": None})]
    rows += [K("clip", (A("float32"),), {"min": A("v3")}, "xp")]
    return rows


def searching() -> list[K]:
    rows = [K("searchsorted", (A("sorted"), A("v3")), {"side": s, "sorter": o})
            for s in ("left", "right") for o in (None,)]
    rows += [K("searchsorted", (A("v3"), A("sorted")), {"sorter": A("sorts_v3"), "side": s})
             for s in ("left", "right")]
    rows += [K("searchsorted", (A("sorted"), A("v3")), {"side": "middle"})]
    for fn in ("sort", "argsort"):
        rows += [K(fn, (A(x),), {"axis": a, "descending": d, "stable": s}, "xp")
                 for x in ("float64", "int8") for a in (-1, 0)
                 for d in (False, True) for s in (True, False)]
        # booleans sort as NumPy sorts them (docs; the standard asks for real numbers only)
        rows += [K(fn, (A("bool"),), {"axis": a, "stable": s}) for a in (-1, 0)
                 for s in (True, False)]
        rows += [K(fn, (A("float64"),), {"axis": a}, "xp") for a in (2, -3)]
        rows += [K(fn, (A("empty"),), {"axis": 0}, "xp"), K(fn, (A("scalar"),), {}, "xp")]
    rows += [K("count_nonzero", (A(x),), {"axis": a, "keepdims": k}) for x in ("float64", "bool")
             for a in (None, 0, (0, 1), -1) for k in (False, True)]
    rows += [K("vecdot", (A("float64"), A(x)), {"axis": a}) for x in ("float64", "int8")
             for a in (-1, 0, -2, 2)]
    rows += [K("tensordot", (A("float64"), A(x)), {"axes": a})
             for x, a in (("float64", 2), ("float64", 0), ("int8", ([1], [1])),
                          ("float64", ((0, 1), (0, 1))))]
    # more axes than dimensions: NumPy's IndexError is an accident of its indexing
    rows += [K("tensordot", (A("float64"), A("float64")), {"axes": 3}, "raises:ValueError")]
    rows += [K("cumulative_sum", (A(x),), {"axis": a, "include_initial": i})
             for x in ("float64", "int8", "empty") for a in (0, 1, -1, None, 2)
             for i in (False, True)]
    return rows


def linalg() -> list[K]:
    rows = []
    for x in ("r44", "cube", "empty", "empty_sq", "float32", "int8", "complex128"):
        ref = "xp" if x == "int8" else "np"  # integers: TypeError, as the standard (docs)
        for o in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf, None, 3):
            rows += [K("linalg.matrix_norm", (A(x),), {"ord": o, "keepdims": k}, ref)
                     for k in (False, True)]
        rows += [K("linalg.vector_norm", (A(x),), {"ord": o}, ref)
                 for o in (2, 1, 0, -1, np.inf, -np.inf, 3.5, None)]
        rows += [K("linalg.vector_norm", (A(x),), {"ord": o, "axis": a, "keepdims": k}, ref)
                 for o in (2, np.inf, -1) for a in (-1, (0, 1), 0) for k in (False, True)
                 if x in ("cube", "empty", "int8")]
    rows += [K("linalg.vector_norm", (A("cube"),), {"axis": a}) for a in ((0, 0), 3, (0, 1, 2))]
    rows += [K("linalg.cholesky", (A(x),), {"upper": u}) for x in ("sq", "sq32", "empty_sq")
             for u in (False, True)]
    rows += [K("linalg.cross", (A("float64"), A("float32")), {"axis": a}) for a in (-1, 0, 1, -2)]
    rows += [K("linalg.cross", (A("v3"), A("v3b")), {"axis": a}) for a in (-1, 0, 1)]
    rows += [K("linalg.diagonal", (A(x),), {"offset": o}) for x in ("float64", "cube", "empty_sq")
             for o in (0, 1, -1, 3, -5)]
    rows += [K("linalg.trace", (A(x),), {"offset": o, "dtype": d})
             for x in ("float64", "cube", "float32") for o in (0, 1, -1, 7)
             for d in (None, np.dtype("float32"), np.dtype("complex128"))]
    rows += [K("linalg.matrix_rank", (A(x),), {"rtol": r}) for x in ("sq", "r44", "empty_sq")
             for r in (None, 0.5, 1e-12)]
    rows += [K("linalg.pinv", (A(x),), {"rtol": r}) for x in ("sq", "float64", "empty_sq")
             for r in (None, 0.5)]
    rows += [K("linalg.qr", (A(x),), {"mode": m}, cmp="abs") for x in ("float64", "sq", "r44")
             for m in ("reduced", "complete")]
    rows += [K("linalg.qr", (A("sq"),), {"mode": m}, "raises:ValueError") for m in ("r", "raw")]
    rows += [K("linalg.svd", (A(x),), {"full_matrices": f}, cmp="abs")
             for x in ("float64", "sq", "empty") for f in (True, False)]
    rows += [K("linalg.tensordot", (A("float64"), A("float64")), {"axes": a}) for a in (0, 2)]
    rows += [K("linalg.vecdot", (A("float64"), A("float64")), {"axis": a}) for a in (-1, 0, 2)]
    return rows


def fft() -> list[K]:
    rows = []
    one = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
    for fn in one:
        x = "r8" if fn in ("rfft", "ihfft") else "c8"
        rows += [K(f"fft.{fn}", (A(x),), {"n": n, "axis": a, "norm": m})
                 for n in (None, 5, 12, 0) for a in (-1, 0)
                 for m in ("backward", "ortho", "forward")]
        rows += [K(f"fft.{fn}", (A(x),), {"norm": "bad"}), K(f"fft.{fn}", (A(x),), {"axis": 1})]
    for fn in ("fftn", "ifftn", "rfftn", "irfftn"):
        rows += [K(f"fft.{fn}", (A("r44"),), {"s": s, "axes": a, "norm": m})
                 for s in (None, (3, 6), (4,)) for a in (None, (0,), (1, 0))
                 for m in ("backward", "forward")
                 if s is None or a is None or len(s) == len(a)]
        # repeated axes: a ValueError (docs; the standard leaves them open, NumPy repeats)
        rows.append(K(f"fft.{fn}", (A("r44"),), {"axes": (0, 0)}, "raises:ValueError"))
    for fn in ("fftshift", "ifftshift"):
        rows += [K(f"fft.{fn}", (A(x),), {"axes": a}) for x in ("cube", "r8", "int8")
                 for a in (None, 0, -1, (0, 1))]
    for fn in ("fftfreq", "rfftfreq"):
        rows += [K(f"fft.{fn}", (n,), {"d": d, "dtype": t, "device": DEV}, "xp")
                 for n in (1, 4, 7) for d in (1.0, 0.5, 2) for t in (None, np.dtype("float32"))]
    return rows


def everything() -> list[K]:
    return [*reductions(), *methods(), *creation(), *shaping(), *searching(), *linalg(), *fft()]
