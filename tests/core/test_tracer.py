"""Core's tracer alone: ``record`` and the observations work on the bare ``Tensor`` core knows,
and ``import minilazy`` installs the tensor with its surface as the one every op makes."""

from __future__ import annotations

import ast
import gc
import pathlib
import subprocess
import sys

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from minilazy.core import tracer
from minilazy.core.attrs import NONE
from minilazy.core.ir import Op
from minilazy.introspect import pycode

FLOATS = hnp.arrays(np.float64, hnp.array_shapes(max_dims=3, max_side=4),
                    elements=st.floats(-5, 5))


@given(FLOATS)
def test_the_bare_tracer_records_and_observes_without_the_surface(a):
    x = ml.asarray(a)
    tracer.install(tracer.Tensor)  # core alone: no operators, methods or indexing
    try:
        y = tracer.record(Op.EXP, (x._node,), NONE, x.device)
        z = tracer.record(Op.ADD, (y._node, y._node), NONE, x.device)
        assert type(z) is tracer.Tensor and not hasattr(z, "sum") and z.is_pending
        np.testing.assert_allclose(z.numpy(), 2 * np.exp(a))
        assert z.shape == a.shape and z.dtype == a.dtype and not z.is_pending
    finally:
        tracer.install(ml.Tensor)


def test_every_tensor_is_the_installed_class():
    x = ml.ones((2, 3))
    made = [x + 1, x.sum(0), x[0], ml.linalg.matmul(x, x.T), ml.fft.fft(x), ml.grad(
        lambda w: ml.sum(w * w))(x), ml.random.uniform(ml.random.key(0), (2,))]
    assert all(type(t) is ml.Tensor for t in made)
    gc.collect()
    assert not [o for o in gc.get_objects() if type(o) is tracer.Tensor]


def test_only_the_tracer_makes_tensors_of_core_s_class():
    # Core's Tensor(...) called directly makes a tensor without operators or methods, which the
    # namespace then takes for host data (introspect's replayed scalars did): use tracer.wrap.
    package = pathlib.Path(ml.__file__).parent
    calls = []
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text())
        core = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and n.module == "minilazy.core.tracer" for a in n.names if a.name == "Tensor"}
        calls += [f"{path.name}:{n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Call)
                  and isinstance(n.func, ast.Name) and n.func.id in core]
    assert not calls, calls


def test_a_replayed_scalar_is_a_tensor_of_the_installed_class():
    assert type(pycode.scalar(2.0, "float32")) is ml.Tensor


def test_nothing_made_while_minilazy_is_imported_is_a_bare_tensor():
    # A tensor made at import, before the assembly installs the surface, would lack it.
    code = ("import gc, minilazy\nfrom minilazy.core import tracer\n"
            "print(sum(type(o) is tracer.Tensor for o in gc.get_objects()), "
            "tracer._made is minilazy.Tensor)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["0", "True"]
