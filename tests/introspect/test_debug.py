"""Seeing inside: printers (golden text), Python round trip, compile causes, hidden syncs."""

from __future__ import annotations

import textwrap
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minilazy as ml
from minilazy.core.attrs import Cast, Constant, Iota, NoAttrs, Permute, Reduce, ToShape
from minilazy.core.cache import CACHE
from minilazy.core.ir import FAMILY, Op
from minilazy.introspect.debug import DEBUGGER
from minilazy.introspect.printers import attrs_text
from minilazy.introspect.pycode import PYTHON
from minilazy.ops.conv import Conv
from minilazy.ops.fft import Fft
from minilazy.ops.index_keys import At, Index
from minilazy.ops.linalg import Contract, Linalg
from minilazy.ops.reductions import Scan
from minilazy.ops.shaping import Axes, Axis, Piece
from minilazy.ops.sort import Sort
from minilazy.scaleout.meshes import Sharding


def _sample():
    x = ml.asarray(np.ones((2, 3), np.float32))
    y = ml.sum(ml.tanh(x * 2.0)[:, ::-1], axis=1, keepdims=True)
    z = ml.astype(y, ml.float64) @ ml.ones((1, 4))
    z[0, 1:] = 5.0
    return z


def test_text_printer_golden():
    assert ml.graph(_sample()).text() == textwrap.dedent("""\
        %0 = data[0]                  : f32[2,3]
        %1 = scalar[2] (2.0)          : f32[]
        %2 = multiply %0, %1          : f32[2,3]
        %3 = tanh %2                  : f32[2,3]
        %4 = getitem %3[0:2, 2::-1]   : f32[2,3]
        %5 = sum %4 axes=[1] keepdims : f32[2,1]
        %6 = astype %5 to=float64     : f64[2,1]
        %7 = scalar[3] (1.0)          : f64[]
        %8 = broadcast_to %7 shape=(1, 4) : f64[1,4]
        %9 = matmul %6, %8            : f64[2,4]
        %10 = scalar[4] (5.0)         : f64[]
        %11 = scalar[0] (0)           : i64[]
        %12 = scalar[1] (1)           : i64[]
        %13 = setitem %9[%11, %12:%12+3], %10 : f64[2,4]
        return %13""")


def test_dot_printer_golden():
    x = ml.asarray(np.ones(2))
    assert ml.graph(ml.exp(x) + x).dot() == textwrap.dedent("""\
        digraph minilazy {
          node [shape=box, fontname=monospace];
          n0 [label="data[0]\\nf64[2]", style=rounded];
          n1 [label="exp %0\\nf64[2]"];
          n0 -> n1;
          n2 [label="add %1, %0\\nf64[2]"];
          n1 -> n2;
          n0 -> n2;
          n2 -> out0; out0 [label="out 0", shape=plaintext];
        }""")


def test_sites_appear_in_the_text_when_debug_info_is_on():
    with ml.debug(1):
        y = ml.exp(ml.ones((2,)))
    assert "test_debug.py" in ml.graph(y).text().splitlines()[-2]


def test_every_op_has_a_python_printer():
    assert set(PYTHON) == set(Op)


# One value of each attribute family, and how IR text shows it (a list: Axis(1) == Constant(1)).
SHOWN = [(NoAttrs(), ""), (Constant(1), ""), (Index((At(0),)), ""), (Iota((3,), 0, 4), "axis=0"),
         (Cast(4), "to=int64"), (Reduce((0, 2), True), "axes=[0, 2] keepdims"),
         (Contract((1,), (0,)), "axes=[1],[0]"), (ToShape((2, 3)), "shape=(2, 3)"),
         (Piece(4, (2,)), "offset=4 shape=(2,)"),
         (Permute((1, 0)), "perm=(1, 0)"), (Axes((0,)), "axes=(0,)"), (Axis(1), "axis=1"),
         (Scan(0, True), "axis=0 reverse"), (Sort(1, True), "axis=1 descending"),
         (Linalg(7, True), "fn=svd_vt full"),
         (Fft(3, (1, 0), (4, 6), 1), "kind=irfft axes=[1, 0] lengths=[4, 6] norm=ortho"),
         (Conv((1,), ((0, 1),), (1,), (2,), 1, 1),
          "strides=(1,) padding=((0, 1),) lhs_dilation=(1,) rhs_dilation=(2,) groups=1 "
          "batch_groups=1"),
         (Sharding(ml.Mesh([ml.Device("cpu", 0)], ("data",)), ((0,), ())),
          "spec=('data', None) mesh=[data=1]")]


def test_every_attribute_family_has_a_text():
    assert {type(a) for a, _ in SHOWN} == {t for family in FAMILY.values() for t in family}
    assert [attrs_text(a) for a, _ in SHOWN] == [text for _, text in SHOWN]


# Random programs for the round trip: chains of ops over a few inputs.
STEPS = st.lists(st.sampled_from([
    lambda a, b: a + b, lambda a, b: ml.exp(a) * 2.5, lambda a, b: ml.where(a > b, a, -1.0),
    lambda a, b: ml.sum(a, axis=0, keepdims=True) + b, lambda a, b: a[::-1, None][:, 0] - 1,
    lambda a, b: ml.astype(ml.astype(a, ml.int32) // 3, ml.float32), lambda a, b: a @ b.T @ b,
    lambda a, b: ml.flip(ml.concat([a, b], axis=0), axis=1)[:2],
    lambda a, b: ml.permute_dims(ml.reshape(a, (3, 2)), (1, 0)),
    lambda a, b: ml.unpack(ml.pack([b, ml.astype(a, b.dtype)]) * 2.0, [a.shape], offset=b.size)[0],
    lambda a, b: ml.argmax(a, axis=1)[:, None] * a, lambda a, b: b - ml.max(b) + ml.mean(a),
    lambda a, b: ml.cumulative_sum(a, axis=1) - ml.tril(b, k=1),
    lambda a, b: ml.conv(a[None], b[:, None, :2], padding=[(0, 1)], groups=2)[0],
    lambda a, b: ml.take_along_axis(a, ml.argmax(b, axis=0, keepdims=True) + ml.zeros(
        (2, 1), dtype=ml.int64), axis=0),
]), min_size=1, max_size=6)  # every step maps (2, 3) tensors to a (2, 3) tensor


@given(STEPS, st.booleans())
@settings(max_examples=30)
def test_to_python_round_trips_to_the_same_key(steps, with_grad):
    a = ml.asarray(np.ones((2, 3), np.float32))
    b = ml.asarray(np.ones((2, 3), np.float32))
    for step in steps:
        a, b = step(a, b), a
    if with_grad:
        a = ml.grad(lambda t: ml.sum(t * t))(ml.astype(a, ml.float32))
    code = ml.graph(a, b).to_python()
    scope: dict[str, object] = {}
    exec(code, scope)
    assert ml.graph(*scope["outputs"]).key == ml.graph(a, b).key, code
    assert ml.metrics().executions == 0


def _causes():
    return [r.kind for r in ml.compile_history()]


@pytest.mark.parametrize(("name", "step", "kind"), [
    ("growing shape", lambda i, x: ml.concat([x, ml.ones((i + 1,))]), "shape"),
    ("changing dtype", lambda i, x: ml.astype(x, [ml.float32, ml.float16][i % 2]) + 1, "dtype"),
    ("changing axis", lambda i, x: ml.sum(ml.reshape(x, (2, 2)), axis=i % 2), "attribute"),
    ("new op", lambda i, x: [ml.exp, ml.sin][i % 2](x), "op"),
    ("growing graph", lambda i, x: x * 2.0 if i == 0 else (x * 2.0) + 1.0, "size"),
])
def test_recompiling_loops_are_diagnosed_with_the_right_cause(name, step, kind):
    x = ml.asarray(np.arange(4.0))
    CACHE.reset()  # start from nothing: graphs that other tests compiled do not count
    DEBUGGER.seen.clear()
    for i in range(2):
        ml.sync(step(i, x))
    assert _causes()[-2:] == ["first", kind], ml.compile_history()[-1]
    assert ml.metrics().compiles == 2


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 6), st.integers(2, 9), st.integers(2, 9))
def test_a_new_batch_shape_is_named_even_when_the_roots_reorder(k, n, m):
    # k updated weights and a loss: a barrier orders its roots by digest, and a new batch
    # shape changes every digest, so positions no longer line up: the inputs still do.
    assume(n != m)
    CACHE.reset()
    DEBUGGER.seen.clear()
    ws = [ml.asarray(np.full((3, 3), i + 1.0)) for i in range(k)]
    for rows in (n, m):
        x = ml.asarray(np.ones((rows, 3)))
        h = x
        for w in ws:
            h = ml.tanh(h @ w)
        ml.sync(ml.sum(h), *[w - 0.1 * ml.sum(h) for w in ws])
    record = ml.compile_history()[-1]
    assert record.kind == "shape", record
    assert f"is f64[{m},3], was f64[{n},3]" in record.detail and "input" in record.detail, record


def test_compile_cause_names_the_user_line_that_recorded_the_node():
    with ml.debug(1):
        for n in (17, 18):
            ml.sync(ml.exp(ml.asarray(np.ones(n))))  # the DATA leaf's shape changes
    record = ml.compile_history()[-1]
    assert record.kind == "shape" and "was f64[17]" in record.detail
    assert record.site and record.site.endswith(f"test_debug.py:{_line_of('np.ones(n)')}")


def _line_of(text: str) -> int:
    source = open(__file__).read().splitlines()
    return next(i + 1 for i, line in enumerate(source) if text in line and "_line_of" not in line)


def test_a_loop_that_recompiles_every_step_warns_once():
    DEBUGGER.warned.clear()
    x = ml.asarray(np.ones(2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(15):
            x = ml.concat([x, x[:1]])
            ml.mark_step()
    recompile = [w for w in caught if issubclass(w.category, ml.RecompileWarning)]
    assert len(recompile) == 1
    assert "shape" in str(recompile[0].message)
    assert recompile[0].filename == __file__


def test_a_stable_loop_does_not_warn():
    DEBUGGER.warned.clear()
    w = ml.asarray(np.ones(3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(20):
            w -= 0.1 * i * w
            ml.mark_step()
    assert not [c for c in caught if issubclass(c.category, ml.RecompileWarning)]


def test_hidden_syncs_are_counted_with_their_line():
    x = ml.asarray(np.arange(3.0))
    for _ in range(3):
        x = x * 2.0
        x.item() if x.size == 1 else float(ml.sum(x))  # a hidden sync every iteration
    sites = ml.metrics().observation_sites
    line = _line_of("a hidden sync every iteration")
    assert sites == {f"float() at {__file__}:{line}": 3}
    assert f"3 x  float() at {__file__}:{line}" in ml.metrics_report()


def test_a_sync_in_a_minilazy_subpackage_is_blamed_on_it_not_on_its_caller():
    from minilazy.conformance.adapters import minilazy_adapter

    adapter = minilazy_adapter.cpu()  # the conformance suite's code is user code, not engine
    adapter.to_numpy(adapter.from_numpy(np.arange(3.0)) * 2.0)
    (site,) = ml.metrics().observation_sites
    assert site.startswith(f"numpy() at {minilazy_adapter.__file__}:"), site


def test_debug_level_1_prints_a_line_per_barrier(capsys):
    with ml.debug(1):
        ml.sync(ml.ones((2,)) * 3.0)
        ml.sync(ml.ones((2,)) * 4.0)
    err = [line for line in capsys.readouterr().err.splitlines() if "barrier" in line]
    assert len(err) == 2
    assert err[0].startswith("[minilazy] barrier sync at ") and "compiled (" in err[0]
    assert "cache hit" in err[1] and "4 nodes" in err[1]


def test_debug_level_3_prints_ir_and_stablehlo(capsys):
    with ml.debug(3):
        ml.sync(ml.exp(ml.ones((2,))))
    err = capsys.readouterr().err
    assert "= exp %1" in err and "stablehlo.exponential" in err


def test_graph_cost_and_hlo_show_fusion():
    x = ml.asarray(np.ones(1000, np.float32))
    g = ml.graph(ml.tanh(x * 2.0 + 1.0) * 3.0)
    assert g.hlo().count("fusion(") == 1  # four elementwise ops, one fused kernel
    cost = g.cost()
    assert cost.transcendentals == cost["transcendentals"] == 1000 and cost.flops > 0
    assert ml.metrics().compiles == 0  # printers never touch the cache or the counters


def test_a_loop_that_observes_without_a_barrier_is_told_to_mark_steps():
    """The first hour's pitfall: ``w`` is updated but never materialised, ``float(loss(w))``
    observes only the loss, so every iteration's graph is longer: the warning names the size
    change and the fix (``ml.mark_step()``, or ``observe_all``)."""
    x = ml.asarray(np.linspace(0, 1, 12, dtype=np.float32).reshape(4, 3))
    w = ml.zeros((3,), dtype=ml.float32)
    DEBUGGER.warned.clear()
    with pytest.warns(ml.RecompileWarning) as caught:
        for _ in range(10):
            w = w - 0.1 * ml.grad(lambda v: ml.mean((x @ v - 1.0) ** 2))(w)
            float(ml.mean((x @ w - 1.0) ** 2))
    message = str(caught[0].message)
    assert "grew from" in message and "ml.mark_step()" in message and "observe_all" in message
    record = ml.compile_history()[-1]
    assert record.hint.startswith("a graph that grows")
    assert "it reads a new input" in record.detail and ("Python number" in record.detail
                                                        or "on the device" in record.detail)


def test_an_unrelated_program_is_new_not_a_shape_change():
    """Two programs with nothing in common are not compared node by node (no 'f32[30,20], was
    f32[27]')."""
    DEBUGGER.seen.clear()
    ml.sync(ml.exp(ml.ones((27,))) + 1.0)
    a = ml.asarray(np.ones((30, 20), np.float32))
    ml.sync(ml.sum(ml.matmul(a, a.T), axis=0) * ml.argmax(a, axis=1).astype(ml.float32).sum())
    record = ml.compile_history()[-1]
    assert record.kind == "new" and "was" not in record.detail, record


def test_a_program_read_from_disk_says_loaded(tmp_path):
    ml.set_cache_dir(tmp_path)
    try:
        program = lambda: ml.sync(ml.sin(ml.ones((7,))) * 3.0)  # noqa: E731
        ml.clear_cache()
        program()
        assert not ml.compile_history()[-1].loaded
        ml.clear_cache()  # the in-memory cache forgets it; the disk keeps it
        program()
        record = ml.compile_history()[-1]
        assert record.loaded and "loaded from the persistent cache" in str(record)
    finally:
        ml.set_cache_dir(None)


def test_the_same_graph_with_other_results_is_outputs_not_an_eviction():
    """A fresh process once reported evictions where a barrier kept other tensors live."""
    CACHE.reset()
    DEBUGGER.seen.clear()
    x = ml.asarray(np.arange(3.0))

    def step(both: bool) -> None:
        y = ml.exp(x)
        z = y * 2.0
        ml.sync(y, z) if both else ml.sync(z)

    step(False)
    step(True)
    record = ml.compile_history()[-1]
    assert record.kind == "outputs", record
    assert "exp" in record.detail and record.hint, record
    CACHE.reset()  # now the cache really forgets it
    step(True)
    assert _causes()[-1] == "evicted", ml.compile_history()[-1]
