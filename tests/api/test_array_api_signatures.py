"""The standard's signatures: every function minilazy shares with array-api-strict (2023.12)
takes its parameters by the same names and kinds (positional-only, keyword-only), so
array-API code that passes ``axis=`` or ``dtype=`` by keyword, or ``x`` by position, runs
unchanged. minilazy may add keyword-only parameters after the standard's (``sharding=``)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import minilazy as ml

xp = pytest.importorskip("array_api_strict")


def _shared() -> list[tuple[str, Any, Any]]:
    xp.set_array_api_strict_flags(api_version="2023.12")
    try:
        found = []
        for space, mine in ((xp, ml), (xp.linalg, getattr(ml, "linalg", None)),
                            (xp.fft, getattr(ml, "fft", None))):
            for name in dir(space):
                theirs, ours = getattr(space, name), getattr(mine, name, None)
                if (name.startswith("_") or not inspect.isfunction(theirs) or ours is None
                        or not callable(ours) or inspect.isclass(ours)):
                    continue
                found.append((f"{space.__name__.split('.')[-1]}.{name}", theirs, ours))
        return found
    finally:
        xp.reset_array_api_strict_flags()


SHARED = _shared()


def _params(f: Any) -> list[tuple[str, inspect._ParameterKind]]:
    return [(p.name, p.kind) for p in inspect.signature(f).parameters.values()]


def test_the_shared_functions_are_many():
    assert len(SHARED) > 160  # a guard: an empty list would pass the test below vacuously


@pytest.mark.parametrize(("name", "theirs", "ours"), SHARED, ids=[s[0] for s in SHARED])
def test_parameters_have_the_standards_names_and_kinds(name, theirs, ours):
    standard, mine = _params(theirs), _params(ours)
    assert mine[:len(standard)] == standard, f"{name}: {inspect.signature(ours)}"
    extra = mine[len(standard):]
    assert all(kind is inspect.Parameter.KEYWORD_ONLY for _, kind in extra), name


def test_keyword_only_parameters_refuse_positions():
    x = ml.asarray([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError):
        ml.sum(x, 0)  # axis is keyword-only in the standard
    assert ml.sum(x, axis=0).tolist() == [4.0, 6.0]
    with pytest.raises(TypeError):
        ml.sum(x=x)  # x is positional-only
    assert ml.astype(x, ml.float32, copy=False, device=ml.default_device()).dtype == ml.float32
    assert ml.finfo(x).bits == 64 and ml.iinfo(ml.asarray([1], dtype=ml.int8)).max == 127
