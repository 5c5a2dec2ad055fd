"""Hashing: the key covers structure, never data, and is the same in a fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle.programgen import programs
from minilazy.conformance.oracle.programs import (
    AdapterMachine,
    Program,
    Scalar,
    dumps,
    run,
    to_python,
    vectors,
    with_scalars,
    with_seeds,
    with_shape,
)
from minilazy.conformance.oracle.strategies import dtypes_for, examples
from minilazy.conformance.suite.util import require_graphs, settle

NEW_SHAPES = [(5, 3), (7,), (2, 1, 6)]


def keys(adapter: OptionalAdapter, p: Program) -> list[str]:
    """The program's key trace, from a clean slate.

    Settled first: an auto-cut that earlier tests' recording brought close would otherwise cut
    this program somewhere else than a fresh process does.
    """
    settle(adapter)
    return run(p, AdapterMachine(adapter), key=adapter.key).keys


def new_floats(v: Scalar) -> Scalar:
    """Another value for each float scalar (never 0 or 1, which some implementations bake)."""
    return v * 1.75 + 0.5 if type(v) is float else v


@pytest.mark.spec("LZ-HASH-001")
def test_keys_are_the_same_in_a_fresh_process_with_another_hash_seed(
        adapter: OptionalAdapter, lazy_impl: str) -> None:
    require_graphs(adapter)
    progs = list(vectors().values())
    here = [keys(adapter, p) for p in progs]
    seed = "0" if os.environ.get("PYTHONHASHSEED") not in ("0", None) else "12345"
    out = subprocess.run([sys.executable, "-m", "minilazy.conformance.oracle.programs", lazy_impl],
                         input="".join(dumps(p) + "\n" for p in progs), capture_output=True,
                         text=True, env={**os.environ, "PYTHONHASHSEED": seed}, timeout=300)
    assert out.returncode == 0, out.stderr
    there = [json.loads(line) for line in out.stdout.splitlines()]
    for p, a, b in zip(progs, here, there):
        assert a == b, f"keys differ in a fresh process for\n{to_python(p, impl=lazy_impl)}"
    assert len(there) == len(progs) and all(here)


def updated_key(adapter: OptionalAdapter) -> str:
    """The key of a graph with an update in place, a matmul, mixed dtypes and two outputs.

    What :func:`test_the_key_of_updates_and_several_outputs_is_the_same_in_a_fresh_process`
    computes here and in a fresh process.
    """
    settle(adapter)
    ap = adapter.apply
    x = adapter.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = adapter.from_numpy(np.ones(3, np.int8))
    t = ap("getitem", ap("tanh", ap("add", ap("multiply", x, 0.5), y)),
           (slice(None), slice(None, None, -1)))
    z = ap("matmul", ap("sum", t, axis=1, keepdims=True), adapter.from_numpy(
        np.ones((1, 4), np.float32)))
    ap("setitem", z, (0, slice(1, None)), 2.0)
    return repr(adapter.key(z, ap("add", x, x)))


FRESH_KEY = """
import sys
from minilazy.conformance.adapter import load
from minilazy.conformance.suite.test_hashing import updated_key
print(updated_key(load(sys.argv[1])))
"""


@pytest.mark.spec("LZ-HASH-001")
@pytest.mark.requires("setitem")
@pytest.mark.ops("multiply", "add", "tanh", "getitem", "sum", "matmul", "setitem")
def test_the_key_of_updates_and_several_outputs_is_the_same_in_a_fresh_process(
        adapter: OptionalAdapter, lazy_impl: str) -> None:
    require_graphs(adapter)
    here = updated_key(adapter)
    seed = "0" if os.environ.get("PYTHONHASHSEED") not in ("0", None) else "12345"
    out = subprocess.run([sys.executable, "-c", FRESH_KEY, lazy_impl], capture_output=True,
                         text=True, env={**os.environ, "PYTHONHASHSEED": seed}, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == here, f"{here} here, {out.stdout.strip()} in a fresh process"


@pytest.mark.spec("LZ-HASH-002")
@pytest.mark.ops("add", "multiply", "subtract")
def test_which_parameters_an_op_reads_is_in_the_key(adapter: OptionalAdapter) -> None:
    require_graphs(adapter)
    x, y = (adapter.from_numpy(np.ones(3, np.float32)) for _ in range(2))
    # Both graphs read both parameters (the same count): only the wiring tells them apart.
    xy = adapter.apply("add", adapter.apply("multiply", x, y), y)
    xx = adapter.apply("add", adapter.apply("multiply", x, x), y)
    assert adapter.key(xy) != adapter.key(xx), "x*y+y and x*x+y have the same key"
    # The rule's own example: one parameter read twice, or two parameters.
    assert adapter.key(adapter.apply("subtract", x, x)) != adapter.key(
        adapter.apply("subtract", x, y)), "x-x and x-y have the same key"
    # The same wiring on other leaves is the same program.
    assert adapter.key(adapter.apply("subtract", x, y)) == adapter.key(
        adapter.apply("subtract", y, x)), "x-y and y-x (the same wiring) have other keys"


def _graph(adapter: OptionalAdapter, data: np.ndarray[Any, Any], scale: float, shift: float,
           axis: int = 0, op: str = "exp") -> Any:
    x = adapter.from_numpy(data)
    y = adapter.apply("multiply", adapter.apply(op, x), scale)
    return adapter.key(adapter.apply("add", adapter.apply("sum", y, axis=axis), shift))


@pytest.mark.spec("LZ-HASH-003")
@pytest.mark.ops("exp", "multiply", "add", "sum")
@given(st.floats(2, 9), st.floats(-9, -2), st.integers(0, 2**32 - 1))
def test_the_key_ignores_data_and_scalar_values(adapter: OptionalAdapter, scale: float,
                                                shift: float, seed: int) -> None:
    require_graphs(adapter)
    data = np.random.default_rng(seed).standard_normal((2, 3)).astype(np.float32)
    assert _graph(adapter, data, scale, shift) == _graph(adapter, data * 7, 3.25, -4.5)


@pytest.mark.spec("LZ-HASH-003")
@examples(0.5)
@given(data=st.data())
def test_a_program_on_new_data_and_scalars_keeps_its_keys(adapter: OptionalAdapter,
                                                          data: st.DataObject) -> None:
    require_graphs(adapter)
    p = data.draw(programs(dtypes_for(adapter), control=False), label="program")
    assert keys(adapter, with_scalars(with_seeds(p, 1000), new_floats)) == keys(adapter, p)


@pytest.mark.spec("LZ-HASH-004")
@pytest.mark.ops("exp", "log", "multiply", "add", "sum")
def test_the_key_depends_on_shapes_dtypes_attributes_and_ops(adapter: OptionalAdapter) -> None:
    require_graphs(adapter)
    f32 = np.ones((2, 3), np.float32)
    base = _graph(adapter, f32, 2.0, 3.0)
    assert _graph(adapter, np.ones((3, 3), np.float32), 2.0, 3.0) != base, "shape"
    assert _graph(adapter, np.ones((2, 3), np.float16), 2.0, 3.0) != base, "dtype"
    assert _graph(adapter, f32, 2.0, 3.0, axis=1) != base, "attribute"
    assert _graph(adapter, f32, 2.0, 3.0, op="log") != base, "op"


@pytest.mark.spec("LZ-HASH-004")
@examples(0.5)
@given(data=st.data())
def test_a_program_on_leaves_of_a_new_shape_changes_every_key(adapter: OptionalAdapter,
                                                              data: st.DataObject) -> None:
    require_graphs(adapter)
    p = data.draw(programs(dtypes_for(adapter), elementwise_only=True, control=False),
                  label="program")
    q = with_shape(p, data.draw(st.sampled_from(NEW_SHAPES), label="new shape"))
    old, new = keys(adapter, p), keys(adapter, q)
    assert all(a != b for a, b in zip(old, new)), f"same keys for other shapes: {old}"


@pytest.mark.spec("LZ-HASH-005")
@pytest.mark.ops("multiply", "add", "exp", "getitem", "sum")
def test_different_functions_of_the_parameters_get_different_keys(
        adapter: OptionalAdapter) -> None:
    require_graphs(adapter)
    def pair(build: Any) -> tuple[Any, Any]:
        x = adapter.from_numpy(np.arange(9, dtype=np.float32).reshape(3, 3))
        y = adapter.from_numpy(np.ones((3, 3), np.float32))
        return adapter.key(build(x, y, True)), adapter.key(build(x, y, False))

    def ap(op: str, *args: Any, **kw: Any) -> Any:
        return adapter.apply(op, *args, **kw)

    cases = {
        "wiring": lambda x, y, a: ap("add", ap("multiply", x, y), x if a else y),
        "nesting": lambda x, y, a: (ap("add", ap("exp", x), x) if a
                                    else ap("exp", ap("add", x, x))),
        "slice step": lambda x, y, a: ap("getitem", ap("add", x, y), (
            slice(2, None, -2) if a else slice(2, 0, -1), 0)),
        "axis": lambda x, y, a: ap("sum", ap("add", x, y), axis=0 if a else 1),
        "operand order": lambda x, y, a: ap("multiply", ap("exp", x), y) if a
        else ap("exp", ap("multiply", x, y)),
    }
    for name, build in cases.items():
        first, second = pair(build)
        assert first != second, name


@pytest.mark.spec("LZ-HASH-004")
@pytest.mark.requires("devices")
@pytest.mark.ops("exp", "add")
def test_the_key_depends_on_the_device(adapter: OptionalAdapter) -> None:
    require_graphs(adapter)
    d0, d1 = adapter.devices()[:2]
    data = np.linspace(0, 1, 5).astype(np.float32)
    x0 = adapter.to_device(adapter.from_numpy(data), d0)
    x1 = adapter.to_device(adapter.from_numpy(data), d1)
    y0, y1 = (adapter.apply("add", adapter.apply("exp", x), 1.0) for x in (x0, x1))
    assert adapter.key(y0) != adapter.key(y1), f"the same key on {d0} and {d1}"
