"""Hypothesis strategies for the suite: dtypes, shapes, axes, and arrays in an op's input domain.

Values are drawn from each op's ``domain`` (``ops.toml``; spec "Input domains"): everywhere NumPy
defines the op, except where NumPy itself is undefined or order-dependent. Nothing here imports
minilazy's engine.
"""

from __future__ import annotations

from typing import Any, Literal, cast

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import Adapter, OptionalAdapter, policy_of, supports
from minilazy.conformance.registry import OpSpec

Array = np.ndarray[Any, Any]
DTYPES = tuple(np.dtype(n) for n in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                     "uint32", "uint64", "float16", "float32", "float64"))
COMPLEX = (np.dtype("complex64"), np.dtype("complex128"))  # with capability `complex`
WIDE = frozenset(np.dtype(n) for n in ("int64", "uint64", "float64", "complex128"))
# The parts of a drawn complex number: zero, or a magnitude in [1/16, 8] (1 in domain `unit`).
# Smaller ones are no reference: NumPy's complex log1p is log(1 + z) (log1p(1e-8+1e-8j) in
# complex64 is 1e-8j), and XLA's complex sinh is as inexact. Larger ones overflow exp and pow
# into infinities whose parts the standard leaves to the implementation.
PARTS = (1 / 16, 8.0)
# Largest magnitude of a `bounded` float: no partial sum of a few dozen terms (or squares of
# differences, for variances) overflows, so every summation order stays within the bound.
BOUND = {np.dtype("float16"): 10.0, np.dtype("float32"): 1e6, np.dtype("float64"): 1e6}


_WIDTHS: dict[int, Literal[16, 32, 64]] = {2: 16, 4: 32, 8: 64}


def _width(dtype: np.dtype[Any]) -> Literal[16, 32, 64]:
    return _WIDTHS[dtype.itemsize]  # Hypothesis's floats() takes the width as a literal


def dtypes_for(adapter: Adapter, complex_too: bool = False) -> list[np.dtype[Any]]:
    """The dtypes the suite checks ``adapter`` on (64-bit ones need capability ``float64``).

    With ``complex_too``, also the complex ones, where the adapter declares ``complex``.

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> len(dtypes_for(toy())), len(dtypes_for(toy(), complex_too=True))
        (12, 12)
    """
    return [d for d in (*DTYPES, *(COMPLEX if complex_too else ())) if not undeclared(adapter, d)]


def examples_independent_of_local_code() -> None:
    """Keep Hypothesis from drawing literals it mined from the code around the run.

    Hypothesis (6.131 and later) biases a few draws towards constants found in *local* modules,
    those outside ``site-packages``: the adapter under test, the project the oracle runs in,
    minilazy itself when installed editable. The examples, and so a report, would depend on
    where things are installed (an MLX ``sign(nan)`` bug was found from a checkout and missed
    from a wheel). The oracle draws from Hypothesis's global constants only. Hypothesis has no
    setting for it: where its internals differ, this does nothing. The corpus export calls it
    too, so that a seed writes the same programs wherever it runs.

    Example:
        >>> examples_independent_of_local_code()
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:
        return
    names = vars(providers)  # an internal module: nothing in it is exported, or typed for us
    if "_get_local_constants" in names and "Constants" in names:
        none = names["Constants"]()
        names["_get_local_constants"] = lambda: none
        getattr(names.get("CONSTANTS_CACHE"), "cache", {}).clear()


def undeclared(adapter: Adapter, dtype: Any) -> bool:
    """Whether ``dtype`` is one ``adapter`` does not declare (its policy, ``float64``, ``complex``).

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> undeclared(toy(), np.int8), undeclared(toy(), np.complex64)
        (False, True)
    """
    d, policy, caps = np.dtype(dtype), policy_of(adapter), adapter.capabilities
    if d not in DTYPES and d not in COMPLEX:
        return False  # not an array dtype the spec knows (strings...): the test's business
    return ((d in COMPLEX and "complex" not in caps) or (d in WIDE and "float64" not in caps)
            or (policy.dtypes is not None and d.name not in policy.dtypes))


# Arguments that are never the library's tensors (what else ``apply`` receives is one).
_NOT_TENSORS = (bool, int, float, complex, str, tuple, list, slice, type(None), type(...),
                np.dtype, type, np.ndarray, np.generic)


def declared_only(adapter: Adapter) -> None:
    """Have a test that hands ``adapter`` an undeclared dtype or op skip, saying so.

    Most tests draw from :func:`dtypes_for`; some hold fixed data (an int64 index, an int8
    corner case, a golden program). Without this, a library that declares float32, int32 and
    bool would fail those tests for data it said it does not have, and the report would blame
    the rules. Wraps the instance's ``from_numpy`` and ``apply``.

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> t = toy()
        >>> declared_only(t)
        >>> t.to_numpy(t.apply("negative", t.from_numpy(np.ones(2, np.int64)))).tolist()
        [-1, -1]
    """
    from_numpy, apply = adapter.from_numpy, adapter.apply

    def check(dtype: Any, what: str) -> None:
        if undeclared(adapter, dtype):
            pytest.skip(f"needs {np.dtype(dtype).name} ({what}), which {adapter.name} does not "
                        "declare")

    def checked_from_numpy(array: Array) -> Any:
        check(np.asarray(array).dtype, "data")
        return from_numpy(array)

    policy = policy_of(adapter)
    typed = "metadata" in adapter.capabilities and bool(policy.unsupported)
    typed_adapter = cast(OptionalAdapter, adapter)

    def checked_apply(op: str, *args: Any, **kwargs: Any) -> Any:
        if not supports(adapter, op):
            pytest.skip(f"needs op {op!r}, which {adapter.name} does not implement")
        if isinstance(kwargs.get("dtype"), (np.dtype, type)):
            check(kwargs["dtype"], f"{op}'s dtype")
        if typed:  # a pair the policy lists as unsupported ("any:float32"), on fixed data
            dtypes = [typed_adapter.dtype(a) for a in args if not isinstance(a, _NOT_TENSORS)]
            if not policy.allows(op, *dtypes):
                pytest.skip(f"needs {op} of {', '.join(d.name for d in dtypes)}, which "
                            f"{adapter.name} declares unsupported")
        return apply(op, *args, **kwargs)

    setattr(adapter, "from_numpy", checked_from_numpy)  # noqa: B010 (the instance's, not a field)
    setattr(adapter, "apply", checked_apply)  # noqa: B010


def allowed(adapter: Adapter, op: str, *dtypes: np.dtype[Any]) -> bool:
    """Whether ``adapter``'s dtype policy implements ``op`` on operands of ``dtypes``.

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> allowed(toy(), "sin", np.dtype("float16"))
        True
    """
    return policy_of(adapter).allows(op, *dtypes)


def examples(scale: float) -> settings:
    """Hypothesis settings running ``scale`` times the profile's ``max_examples`` (at least 1).

    Costly tests take a fraction, so ``--hypothesis-profile=thorough`` still scales them.

    Example:
        >>> examples(0.5).max_examples >= 1
        True
    """
    return settings(max_examples=max(1, round(settings().max_examples * scale)))


def shapes(max_dims: int = 3, max_side: int = 4, min_dims: int = 0) -> st.SearchStrategy[Any]:
    """Shapes with up to ``max_dims`` axes of up to ``max_side`` (zero-size ones included).

    Example:
        >>> from hypothesis import find
        >>> find(shapes(), lambda s: len(s) == 2)
        (0, 0)
    """
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side)


def elements(dtype: np.dtype[Any], domain: str = "", operand: int = 0) -> st.SearchStrategy[Any]:
    """Values of ``dtype`` in ``domain`` for the op's ``operand``-th argument.

    Example:
        >>> from hypothesis import find
        >>> find(elements(np.dtype("int8"), "shift", 1), lambda v: v > 3)
        4
    """
    if dtype.kind in "iu" and operand == 1 and domain == "shift":
        return st.integers(0, dtype.itemsize * 8 - 1)
    if dtype.kind in "iu" and operand == 1 and domain == "exponent":
        # (Exponents whose powers wrap around the dtype, 2 ** 64 == 0 in NumPy, are left out:
        # jnp.power, which engines on JAX lower to, takes the exponent modulo 64.)
        return st.integers(0, 6)
    if dtype.kind in "iu" and domain == "trig":  # converted to float: the same bound holds
        info = np.iinfo(dtype)
        return st.integers(max(info.min, -10_000), min(info.max, 10_000))
    if dtype.kind == "c":  # no complex zero divisors: the standard leaves their quotients open
        values = _complex(dtype, domain)
        return values.filter(lambda v: v != 0) if domain == "divisor" and operand == 1 else values
    if dtype.kind != "f":
        return hnp.from_dtype(dtype)
    width = _width(dtype)
    if domain == "divisor" and operand == 1:  # finite divisors whose reciprocal is normal
        limit = 0.5 / float(np.finfo(dtype).smallest_normal)
        return st.floats(-limit, limit, allow_subnormal=False, width=width) | st.sampled_from(
            [float("inf"), float("-inf"), float("nan")])
    bound = {"trig": 1e4, "bounded": BOUND[dtype], "unit": 1.0}.get(domain)
    if domain == "exponent" and operand == 0:  # NumPy's 0-d and array paths disagree on
        return st.floats(allow_subnormal=False, width=width).filter(  # (-inf) ** 0.5
            lambda v: v != float("-inf"))
    if bound is None:
        return st.floats(allow_subnormal=False, width=width)
    return st.floats(-bound, bound, allow_nan=False, allow_infinity=False,
                     allow_subnormal=False, width=width)


def _complex(dtype: np.dtype[Any], domain: str) -> st.SearchStrategy[Any]:
    """Finite complex values of ``dtype``, each part zero or of a magnitude in ``PARTS``."""
    low, high = PARTS[0], 1.0 if domain == "unit" else PARTS[1]
    part = st.floats(low, high, width=_width(np.finfo(dtype).dtype))
    part = st.sampled_from([0.0, -0.0]) | part | part.map(lambda v: -v)
    return st.builds(lambda re, im: dtype.type(complex(re, im)), part, part)


def arrays(dtype: np.dtype[Any], shape: Any, domain: str = "", operand: int = 0
           ) -> st.SearchStrategy[Array]:
    """Arrays of ``dtype`` and ``shape`` (a shape or a strategy) with values in ``domain``.

    Example:
        >>> from hypothesis import find
        >>> find(arrays(np.dtype("float32"), (2, 3), "unit"), lambda a: True).shape
        (2, 3)
    """
    return hnp.arrays(dtype, shape, elements=elements(dtype, domain, operand))


def castable(source: np.dtype[Any], target: np.dtype[Any], shape: Any
             ) -> st.SearchStrategy[Array]:
    """Arrays of ``source`` whose conversion to ``target`` is defined (domain ``cast``).

    Example:
        >>> from hypothesis import find
        >>> a = find(castable(np.dtype("float32"), np.dtype("uint8"), (4,)), lambda a: a.max() > 9)
        >>> bool(((a > -1) & (a < 256)).all())
        True
    """
    if source.kind != "f" or target.kind not in "iu":
        return arrays(source, shape)
    info = np.iinfo(target)

    def inward(v: float) -> float:  # the nearest value of the source dtype, towards zero
        c = source.type(v)
        return float(np.nextafter(c, source.type(0)) if abs(float(c)) > abs(v) else c)

    # Stay below the top of the range by a margin: float rounding of iinfo.max may overshoot.
    high = inward(min(float(info.max) * (1 - 2.0**-10), float(np.finfo(source).max)))
    low = inward(max(float(info.min) * (1 - 2.0**-10) - 0.5, -float(np.finfo(source).max)))
    return hnp.arrays(source, shape, elements=st.floats(low, high, allow_subnormal=False,
                                                        width=_width(source)))


def axes(ndim: int) -> st.SearchStrategy[Any]:
    """``None``, one axis (maybe negative), or a tuple of distinct axes of an ``ndim``-d array.

    Example:
        >>> from hypothesis import find
        >>> find(axes(3), lambda a: isinstance(a, tuple) and len(a) == 2)
        (0, 1)
    """
    if ndim == 0:
        return st.sampled_from([None, ()])
    one = st.integers(-ndim, ndim - 1)
    return st.one_of(st.none(), one,
                     st.lists(one, unique_by=lambda a: a % ndim, max_size=ndim).map(tuple))


def defined(spec: OpSpec, *dtypes: np.dtype[Any]) -> bool:
    """Whether the suite checks ``spec`` on operands of these dtypes against NumPy.

    Where NumPy has a loop, except complex operands of an op the standard defines on real ones
    only (``real_only``: NumPy orders complex numbers lexicographically, the standard does not).

    Example:
        >>> from minilazy.conformance.registry import ops
        >>> c = np.dtype("complex64")
        >>> defined(ops()["add"], c, c), defined(ops()["maximum"], c, c)
        (True, False)
    """
    if spec.real_only and any(d.kind == "c" for d in dtypes):
        return False
    return loop_exists(spec, *dtypes)


def loop_exists(spec: OpSpec, *dtypes: np.dtype[Any]) -> bool:
    """Whether NumPy defines ``spec``'s op for operands of these dtypes.

    Example:
        >>> from minilazy.conformance.registry import ops
        >>> loop_exists(ops()["bitwise_and"], np.dtype("float32"), np.dtype("float32"))
        False
    """
    fn = spec.numpy_callable()
    try:
        if isinstance(fn, np.ufunc):
            fn.resolve_dtypes((*dtypes, None))
        else:
            with np.errstate(all="ignore"):
                fn(*(np.zeros(1, d) for d in dtypes))
    except TypeError:
        return False
    return True
