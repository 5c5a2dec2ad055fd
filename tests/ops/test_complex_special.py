"""Complex special values (C99 Annex G, as the Array API standard lists them), issue 28.

Every elementwise function the standard gives complex special cases for is run on the grid of
parts {±0, ±0.5, ±1, ±2.5, ±inf, NaN} x {the same} (121 inputs), complex64 and complex128,
lazily and under ``ml.eager()``. An input a standard case names (directly, or through the
symmetries the standard and C99 state: ``f(conj z) = conj f(z)`` for all, odd ``sinh``,
``tanh``, ``asinh``, ``atanh``, even ``cosh``) must give that case's value: NaN where it says
NaN, the infinity or zero of the sign it says (any sign where it leaves the sign unspecified).
Every other input must match NumPy within a few dozen ulps, NaNs and zeros' signs included.

``SPEC`` transcribes the standard's lists (2024.12, ``elementwise_functions.py`` of
data-apis/array-api), one row per bullet, in their order (the first row that matches wins):
``(a, b, real, imag)`` with ``a = real(x)``, ``b = imag(x)``. Classes of a part: ``+0 -0 ±0
+inf -inf ±inf nan 1 -1``, ``fin`` (finite), ``nzfin`` (nonzero finite), ``pfin`` (> 0 finite),
``nz`` (not equal to 0, NaN included), ``nznum`` (nonzero, not NaN), ``any``. A result part is a
number (``±`` in front: either sign) or ``cis``: ``r * cis(b)`` with ``r`` the row's real part
(``+0`` or ``+inf``), less 1 where ``imag`` says ``-1``. ``sin``, ``cos``, ``tan``, ``asin``
and ``atan`` are, as the standard says, ``-1j * sinh(1j * x)`` etc. (exact rotations);
``log2`` and ``log10`` are ``log(x) / log(base)`` part by part.
"""

from __future__ import annotations

import contextlib
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minilazy as ml
from minilazy.core.ir import Op
from minilazy.introspect import reference
from minilazy.ops.complex import special_values

PI = math.pi
Row = tuple[str, str, str, str]

SPEC: dict[str, list[Row]] = {
    "exp": [
        ("±0", "+0", "1", "+0"), ("fin", "+inf", "nan", "nan"), ("fin", "nan", "nan", "nan"),
        ("+inf", "+0", "+inf", "+0"), ("-inf", "fin", "+0", "cis"),
        ("+inf", "nzfin", "+inf", "cis"), ("-inf", "+inf", "±0", "±0"),
        ("+inf", "+inf", "±inf", "nan"), ("-inf", "nan", "±0", "±0"),
        ("+inf", "nan", "±inf", "nan"), ("nan", "+0", "nan", "+0"), ("nan", "nz", "nan", "nan"),
        ("nan", "nan", "nan", "nan")],
    "expm1": [
        ("±0", "+0", "±0", "+0"), ("fin", "+inf", "nan", "nan"), ("fin", "nan", "nan", "nan"),
        ("+inf", "+0", "+inf", "+0"), ("-inf", "fin", "+0", "cis-1"),
        ("+inf", "nzfin", "+inf", "cis-1"), ("-inf", "+inf", "-1", "±0"),
        ("+inf", "+inf", "±inf", "nan"), ("-inf", "nan", "-1", "±0"),
        ("+inf", "nan", "±inf", "nan"), ("nan", "+0", "nan", "+0"), ("nan", "nz", "nan", "nan"),
        ("nan", "nan", "nan", "nan")],
    "log": [
        ("-0", "+0", "-inf", "pi"), ("+0", "+0", "-inf", "+0"), ("fin", "+inf", "+inf", "pi/2"),
        ("fin", "nan", "nan", "nan"), ("-inf", "pfin", "+inf", "pi"),
        ("+inf", "pfin", "+inf", "+0"), ("-inf", "+inf", "+inf", "3pi/4"),
        ("+inf", "+inf", "+inf", "pi/4"), ("±inf", "nan", "+inf", "nan"),
        ("nan", "fin", "nan", "nan"), ("nan", "+inf", "+inf", "nan"), ("nan", "nan", "nan", "nan")],
    "log1p": [
        ("-1", "+0", "-inf", "+0"), ("fin", "+inf", "+inf", "pi/2"), ("fin", "nan", "nan", "nan"),
        ("-inf", "pfin", "+inf", "pi"), ("+inf", "pfin", "+inf", "+0"),
        ("-inf", "+inf", "+inf", "3pi/4"), ("+inf", "+inf", "+inf", "pi/4"),
        ("±inf", "nan", "+inf", "nan"), ("nan", "fin", "nan", "nan"),
        ("nan", "+inf", "+inf", "nan"), ("nan", "nan", "nan", "nan")],
    "sqrt": [
        ("±0", "+0", "+0", "+0"), ("any", "+inf", "+inf", "+inf"), ("fin", "nan", "nan", "nan"),
        ("-inf", "pfin", "+0", "+inf"), ("+inf", "pfin", "+inf", "+0"),
        ("-inf", "nan", "nan", "±inf"), ("+inf", "nan", "+inf", "nan"),
        ("nan", "any", "nan", "nan"), ("nan", "nan", "nan", "nan")],
    "sinh": [
        ("+0", "+0", "+0", "+0"), ("+0", "+inf", "±0", "nan"), ("+0", "nan", "±0", "nan"),
        ("pfin", "+inf", "nan", "nan"), ("pfin", "nan", "nan", "nan"),
        ("+inf", "+0", "+inf", "+0"), ("+inf", "pfin", "+inf", "cis"),
        ("+inf", "+inf", "±inf", "nan"), ("+inf", "nan", "±inf", "nan"),
        ("nan", "+0", "nan", "+0"), ("nan", "nzfin", "nan", "nan"), ("nan", "nan", "nan", "nan")],
    "cosh": [
        ("+0", "+0", "1", "+0"), ("+0", "+inf", "nan", "±0"), ("+0", "nan", "nan", "±0"),
        ("nzfin", "+inf", "nan", "nan"), ("nzfin", "nan", "nan", "nan"),
        ("+inf", "+0", "+inf", "+0"), ("+inf", "nzfin", "+inf", "cis"),
        ("+inf", "+inf", "±inf", "nan"), ("+inf", "nan", "+inf", "nan"),
        ("nan", "±0", "nan", "±0"), ("nan", "nzfin", "nan", "nan"), ("nan", "nan", "nan", "nan")],
    "tanh": [
        ("+0", "+0", "+0", "+0"), ("nzfin", "+inf", "nan", "nan"), ("+0", "+inf", "+0", "nan"),
        ("nzfin", "nan", "nan", "nan"), ("+0", "nan", "+0", "nan"), ("+inf", "pfin", "1", "+0"),
        ("+inf", "+inf", "1", "±0"), ("+inf", "nan", "1", "±0"), ("nan", "+0", "nan", "+0"),
        ("nan", "nznum", "nan", "nan"), ("nan", "nan", "nan", "nan")],
    "asinh": [
        ("+0", "+0", "+0", "+0"), ("pfin", "+inf", "+inf", "pi/2"), ("fin", "nan", "nan", "nan"),
        ("+inf", "pfin", "+inf", "+0"), ("+inf", "+inf", "+inf", "pi/4"),
        ("nan", "+0", "nan", "+0"), ("nan", "nzfin", "nan", "nan"),
        ("nan", "+inf", "±inf", "nan"), ("nan", "nan", "nan", "nan")],
    "acosh": [
        ("±0", "+0", "+0", "pi/2"), ("fin", "+inf", "+inf", "pi/2"),
        ("nzfin", "nan", "nan", "nan"), ("+0", "nan", "nan", "±pi/2"),
        ("-inf", "pfin", "+inf", "pi"), ("+inf", "pfin", "+inf", "+0"),
        ("-inf", "+inf", "+inf", "3pi/4"), ("+inf", "+inf", "+inf", "pi/4"),
        ("±inf", "nan", "+inf", "nan"), ("nan", "fin", "nan", "nan"),
        ("nan", "+inf", "+inf", "nan"), ("nan", "nan", "nan", "nan")],
    "atanh": [
        ("+0", "+0", "+0", "+0"), ("+0", "nan", "+0", "nan"), ("1", "+0", "+inf", "+0"),
        ("pfin", "+inf", "+0", "pi/2"), ("nzfin", "nan", "nan", "nan"),
        ("+inf", "pfin", "+0", "pi/2"), ("+inf", "+inf", "+0", "pi/2"),
        ("+inf", "nan", "+0", "nan"), ("nan", "fin", "nan", "nan"),
        ("nan", "+inf", "±0", "pi/2"), ("nan", "nan", "nan", "nan")],
    "acos": [
        ("±0", "+0", "pi/2", "-0"), ("±0", "nan", "pi/2", "nan"), ("fin", "+inf", "pi/2", "-inf"),
        ("nzfin", "nan", "nan", "nan"), ("-inf", "pfin", "pi", "-inf"),
        ("+inf", "pfin", "+0", "-inf"), ("-inf", "+inf", "3pi/4", "-inf"),
        ("+inf", "+inf", "pi/4", "-inf"), ("±inf", "nan", "nan", "±inf"),
        ("nan", "fin", "nan", "nan"), ("nan", "+inf", "nan", "-inf"), ("nan", "nan", "nan", "nan")],
    "abs": [  # a real result: the imaginary column is unused
        ("±inf", "any", "+inf", ""), ("any", "±inf", "+inf", ""), ("±0", "any", "|b|", ""),
        ("any", "±0", "|a|", ""), ("nan", "fin", "nan", ""), ("fin", "nan", "nan", ""),
        ("nan", "nan", "nan", "")],
    "sign": [
        ("±0", "±0", "+0", "+0"), ("nan", "any", "nan", "nan"), ("any", "nan", "nan", "nan")],
}
ODD: frozenset[str] = frozenset({"sinh", "tanh", "asinh", "atanh"})
EVEN: frozenset[str] = frozenset({"cosh"})
UNSYMMETRIC: frozenset[str] = frozenset({"abs", "sign"})  # their lists cover every sign
# The standard's "as if implemented as": sin(x) = -1j * sinh(1j * x), cos(x) = cosh(1j * x)...
ROTATED: dict[str, str] = {"sin": "sinh", "cos": "cosh", "tan": "tanh", "asin": "asinh",
                           "atan": "atanh"}
CHANGE_OF_BASE: dict[str, float] = {"log2": math.log(2.0), "log10": math.log(10.0)}
NUMPY_NAME = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
              "acosh": "arccosh", "atanh": "arctanh"}

PARTS = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 4.0, -4.0, math.inf, -math.inf, math.nan]
GRID = np.array([complex(a, b) for a in PARTS for b in PARTS])


def _is(cls: str, v: float) -> bool:
    """Whether the part ``v`` belongs to the standard's class ``cls``."""
    fin, neg = math.isfinite(v), math.copysign(1.0, v) < 0
    return {
        "+0": v == 0 and not neg, "-0": v == 0 and neg, "±0": v == 0,
        "+inf": v == math.inf, "-inf": v == -math.inf, "±inf": math.isinf(v),
        "nan": math.isnan(v), "1": v == 1, "-1": v == -1, "fin": fin,
        "nzfin": fin and v != 0, "pfin": fin and v > 0, "nz": v != 0,
        "nznum": v != 0 and not math.isnan(v), "any": True}[cls]


# An expected part: its value and whether its sign is left open (NaN: any NaN).
Part = tuple[float, bool]
_NUMBERS = {"pi": PI, "pi/2": PI / 2, "pi/4": PI / 4, "3pi/4": 3 * PI / 4, "inf": math.inf,
            "0": 0.0, "1": 1.0, "nan": math.nan}


def _number(token: str) -> Part:
    free = token.startswith("±")
    sign = -1.0 if token.startswith("-") else 1.0
    return math.copysign(_NUMBERS[token.lstrip("±+-")], sign), free


def _case(name: str, a: float, b: float) -> tuple[Part, Part] | None:
    """The standard's value of ``name`` at ``a + bj``, from its first matching row, or None."""
    for ca, cb, re, im in SPEC[name]:
        if not (_is(ca, a) and _is(cb, b)):
            continue
        if re == "|a|" or re == "|b|":
            return (abs(a if re == "|a|" else b), False), (0.0, False)
        if im.startswith("cis"):  # r * cis(b) = r cos b + i r sin b, less 1 for expm1
            r = _number(re)[0]
            return (r * math.cos(b) - (1.0 if im == "cis-1" else 0.0), False), \
                (r * math.sin(b), False)
        return _number(re), _number(im or "0")  # abs: a real result
    return None


def _neg(p: Part) -> Part:
    return -p[0], p[1]


def standard(name: str, a: float, b: float) -> tuple[Part, Part] | None:
    """The standard's value at ``a + bj``, through its symmetries; None where it is silent."""
    if name in ROTATED:  # f(x) = -1j * g(1j * x): rotate in, apply g, rotate back
        inner = standard(ROTATED[name], -b, a)
        if inner is None or name == "cos":  # cos(x) = cosh(1j * x)
            return inner
        return inner[1], _neg(inner[0])
    if name in CHANGE_OF_BASE:
        inner = standard("log", a, b)
        k = CHANGE_OF_BASE[name]
        return None if inner is None else ((inner[0][0] / k, inner[0][1]),
                                           (inner[1][0] / k, inner[1][1]))
    # The lists cover the upper half-plane (the right quarter for odd and even functions); move
    # there, then back: f(z) = conj f(conj z); odd f(z) = -f(-z); even f(z) = f(-z).
    sa = -1.0 if name in ODD | EVEN and math.copysign(1.0, a) < 0 and a == a else 1.0
    sb = -1.0 if math.copysign(1.0, b) < 0 and b == b and name not in UNSYMMETRIC else 1.0
    found = _case(name, sa * a, sb * b)
    if found is None:
        return None
    (re, free_re), (im, free_im) = found
    odd = name in ODD
    return (re * (sa if odd else 1.0), free_re), (im * (sb if odd else sa * sb), free_im)


def _same(got: float, want: Part, tol: float) -> bool:
    """``got`` is ``want``: any NaN for NaN, infinities and zeros with their sign, else close."""
    value, free = want
    if math.isnan(value) or math.isnan(got):
        return math.isnan(value) and math.isnan(got)
    if free:
        got, value = abs(got), abs(value)
    if value == 0 or math.isinf(value):
        return got == value and math.copysign(1.0, got) == math.copysign(1.0, value)
    return abs(got - value) <= tol * (abs(value) + 1.0)


NAMES = [*SPEC, *ROTATED, *CHANGE_OF_BASE]
DTYPES = ["complex64", "complex128"]
TOL = {"complex64": 2e-5, "complex128": 1e-12}  # a few dozen ulps, as in test_complex.py


def _numpy(name: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(getattr(np, NUMPY_NAME.get(name, name))(x))


def _wrong(name: str, x: np.ndarray, got: np.ndarray) -> list[str]:
    """The inputs where ``got`` is not the standard's value (NumPy's where it is silent)."""
    ref = _numpy(name, x)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    wrong = []
    for z, g, r in zip(x.tolist(), got.tolist(), ref.tolist()):
        g, r = complex(g), complex(r)
        want = standard(name, z.real, z.imag) or ((r.real, False), (r.imag, False))
        parts = [(g.real, want[0])] + ([(g.imag, want[1])] if name != "abs" else [])
        if not all(_same(p, w, TOL[x.dtype.name]) for p, w in parts):
            wrong.append(f"{name}({z}) = {g}, want {want}")
    return wrong


@pytest.mark.parametrize("mode", ["lazy", "eager"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_special_values_are_the_standards(name: str, dtype: str, mode: str) -> None:
    x = GRID.astype(dtype)
    with ml.eager() if mode == "eager" else contextlib.nullcontext():
        got = getattr(ml, name)(ml.asarray(x))
    assert _wrong(name, x, got.numpy()) == []


# Finite parts past where XLA switches to its large-|z| formulas (about 1e19 in complex64),
# up to the largest: those formulas read no NaN part.
HUGE = {"complex64": [1e19, 1e30, 3e38], "complex128": [1e19, 1e300, 1.7e308]}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_huge_finite_parts_keep_the_standards_special_values(name: str, dtype: str) -> None:
    """Every case the standard names, with huge finite parts: ``asinh(NaN + 1e300j)`` is
    ``NaN + NaN j`` ("a is NaN and b is a nonzero finite number"; it was ``691.47 + NaN j``),
    and so ``asin``, ``acosh`` and ``acos`` with a NaN beside a huge part."""
    parts = [0.0, -0.0, 1.0, math.inf, -math.inf, math.nan, *HUGE[dtype],
             *(-h for h in HUGE[dtype])]
    x = np.array([complex(a, b) for a in parts for b in parts]).astype(dtype)
    got = getattr(ml, name)(ml.asarray(x)).numpy()
    named = [i for i, z in enumerate(x.tolist()) if standard(name, z.real, z.imag) is not None]
    assert len(named) > 20
    assert _wrong(name, x[named], got[named]) == []


@pytest.mark.parametrize("name", NAMES)
def test_the_reference_interpreter_gives_the_standards_values_too(name: str) -> None:
    for dtype in DTYPES:
        x = GRID.astype(dtype)
        (got,) = reference.run(getattr(ml, name)(ml.asarray(x)))
        assert _wrong(name, x, got) == []


def test_numpy_departs_from_the_standard_only_where_the_docs_say() -> None:
    """Where NumPy 2 is not the standard, minilazy follows the standard (docs/api.md)."""
    x = GRID.astype("complex128")
    departs = {name: len(_wrong(name, x, _numpy(name, x))) for name in NAMES}
    # expm1 at infinities and at NaN + 0j (NumPy computes it as exp(z) - 1 part by part);
    # tanh(±inf ± bj) = ±1 ± 0j with b's sign, not sin(2b)'s; tan by rotation; sign with a NaN
    assert {k: v for k, v in departs.items() if v} == {"expm1": 10, "tanh": 4, "tan": 4,
                                                        "sign": 4}


def test_zero_to_a_power_with_a_positive_real_part_is_zero() -> None:
    y = GRID.astype("complex128")
    for base in (0.0, complex(-0.0, 0.0), complex(0.0, -0.0)):
        x = np.full(y.shape, base, y.dtype)
        with np.errstate(all="ignore"):
            want = np.power(x, y)
        for mode in ("lazy", "eager"):
            with ml.eager() if mode == "eager" else contextlib.nullcontext():
                got = ml.pow(ml.asarray(x), ml.asarray(y)).numpy()
            np.testing.assert_array_equal(got, want)


FNS = {Op.EXP: jnp.exp, Op.EXPM1: jnp.expm1, Op.LOG: jnp.log, Op.LOG1P: jnp.log1p,
       Op.LOG2: jnp.log2, Op.LOG10: jnp.log10, Op.SQRT: jnp.sqrt, Op.SIN: jnp.sin,
       Op.COS: jnp.cos, Op.TAN: jnp.tan, Op.ASIN: jnp.arcsin, Op.ACOS: jnp.arccos,
       Op.ATAN: jnp.arctan, Op.SINH: jnp.sinh, Op.COSH: jnp.cosh, Op.TANH: jnp.tanh,
       Op.ASINH: jnp.arcsinh, Op.ACOSH: jnp.arccosh, Op.ATANH: jnp.arctanh, Op.ABS: jnp.abs,
       Op.SIGN: jnp.sign}


@pytest.mark.parametrize("op", list(FNS), ids=lambda op: op.value)
def test_real_programs_are_unchanged(op: Op) -> None:
    """On a real operand the mended function traces to exactly the plain one."""
    fn = FNS[op]
    x = jnp.linspace(0.1, 0.9, 4, dtype=jnp.float32)
    assert str(jax.make_jaxpr(special_values(op, fn, jnp))(x)) == str(jax.make_jaxpr(fn)(x))


def _kernels(hlo: str) -> int:
    return hlo[hlo.index("ENTRY"):].count(" fusion(")


@pytest.mark.parametrize("name", NAMES)
def test_the_mending_fuses_into_the_functions_own_kernels(name: str) -> None:
    """Elementwise selects XLA fuses: no more kernels than XLA's own (asinh and asin, ten
    kernels of their own, read their operand moved to the canonical quarter from one more)."""
    x = np.ones(8, np.complex64)
    mended = ml.graph(getattr(ml, name)(ml.asarray(x))).hlo()
    plain = jax.jit(getattr(jnp, NUMPY_NAME.get(name, name))).lower(x).compile().as_text()
    assert _kernels(mended) <= _kernels(plain) + (name in ("asinh", "asin"))
