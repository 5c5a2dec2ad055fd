"""Layers replayed from tapes (``minilazy.parts.tapes``): a replay makes exactly the nodes the
layer's Python would record (the same structure, numbers and counts), its values are NumPy's,
and whatever could make a replay differ from a recording (another signature, one tensor where
there were two, a barrier, data read from outside, eager mode) records instead."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minilazy as ml
from minilazy.core.cut import walk
from minilazy.core.ir import LEAVES, Op
from minilazy.core.state import ENGINE
from minilazy.parts import tapes
from minilazy.parts.tapes import TEMPLATES, templated

FLOATS = st.sampled_from([np.float32, np.float64])


def _structure(t: ml.Tensor) -> tuple[object, ...]:
    """What decides ``t``'s program, by value, and the numbers it passes (scalar leaves)."""
    c = walk([t._node], t.device)
    return c.structure, [s.payload for s in c.scalars], [p.shape for p in c.params]


def _recorded(layer: Callable[..., ml.Tensor], *args: object, **kwargs: object) -> ml.Tensor:
    """``layer``'s call as its Python records it (the layers it calls may replay theirs)."""
    inner: Callable[..., ml.Tensor] = vars(layer)["__wrapped__"]
    return inner(*args, **kwargs)


def _numpy_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _numpy_layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps) * w + b


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(-2, 1), FLOATS, st.integers(0, 2**31))
def test_a_replayed_layer_is_its_recording_with_numpys_values(rows, cols, axis, dtype, seed):
    rng = np.random.default_rng(seed)
    TEMPLATES.reset()  # (an earlier example may have had this signature)
    for step in range(3):  # the first records, the next two replay
        x = rng.normal(size=(rows, cols)).astype(dtype)
        w, b = rng.normal(size=cols).astype(dtype), rng.normal(size=cols).astype(dtype)
        labels = rng.integers(0, cols, size=rows).astype(np.int32)
        tx, tw, tb, tl = (ml.asarray(a) for a in (x, w, b, labels))
        calls = {
            "softmax": (ml.nn.softmax, (tx, axis), {}, _numpy_softmax(x, axis)),
            "log_softmax": (ml.nn.log_softmax, (tx,), {"axis": axis},
                            np.log(_numpy_softmax(x, axis))),
            "layer_norm": (ml.nn.layer_norm, (tx, tw, tb), {"eps": 1e-3},
                           _numpy_layer_norm(x, w, b, 1e-3)),
            "cross_entropy": (ml.nn.cross_entropy, (tx, tl), {},
                              -np.log(_numpy_softmax(x, -1))[np.arange(rows), labels].mean()),
            "relu": (ml.nn.relu, (tx,), {}, np.maximum(x, 0)),
        }
        for name, (layer, args, kwargs, expected) in calls.items():
            hits = TEMPLATES.hits
            lean = layer(*args, **kwargs)
            assert TEMPLATES.hits - hits == (step > 0), name  # (a first call's inner layers
            recorded = _recorded(layer, *args, **kwargs)      # may replay theirs)
            assert lean._node.digest == recorded._node.digest, name
            assert _structure(lean) == _structure(recorded), name
            assert lean.dtype == dtype, name
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(lean.numpy(), expected, rtol=tol, atol=tol, err_msg=name)


def test_every_layer_of_the_models_replays_its_recording():
    rng = np.random.default_rng(0)

    def f32(*shape: int) -> ml.Tensor:
        return ml.asarray(rng.normal(size=shape).astype(np.float32))

    calls: list[tuple[Callable[..., ml.Tensor], tuple[object, ...], dict[str, object]]] = [
        (ml.nn.conv2d, (f32(2, 3, 6, 6), f32(4, 3, 3, 3), f32(4)), {"padding": 1}),
        (ml.nn.max_pool2d, (f32(2, 3, 6, 6), 2), {"padding": (1, 1)}),
        (ml.nn.avg_pool2d, (f32(2, 3, 6, 6), [3, 2]), {}),
        (ml.nn.linear, (f32(2, 3), f32(3, 4), f32(4)), {}),
        (ml.nn.gelu, (f32(5),), {}),
        (ml.nn.gelu, (f32(5),), {"approximate": "tanh"}),
        (ml.nn.causal_self_attention, (f32(2, 3, 4), *(f32(4, 4) for _ in range(4))),
         {"n_heads": 2}),
    ]
    for layer, args, kwargs in calls:
        first = layer(*args, **kwargs)
        hits = TEMPLATES.hits
        again = layer(*args, **kwargs)
        assert TEMPLATES.hits == hits + 1, layer.__name__
        recorded = _recorded(layer, *args, **kwargs)
        assert _structure(again) == _structure(recorded) == _structure(first), layer.__name__
        np.testing.assert_array_equal(again.numpy(), recorded.numpy())


def test_the_same_tensor_twice_is_not_two_tensors():
    x = ml.asarray(np.arange(6.0).reshape(2, 3))
    w, b = ml.asarray([1.0, 2.0, 3.0]), ml.asarray([10.0, 20.0, 30.0])
    xn = x.numpy()
    for first, second in (((w, w), (w, b)), ((w, b), (b, b))):
        ml.clear_cache()
        ml.nn.layer_norm(x, *first)  # the template of one signature
        got = ml.nn.layer_norm(x, *second)
        expected = _numpy_layer_norm(xn, *(a.numpy() for a in second), 1e-5)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


def test_a_number_argument_is_part_of_the_signature():
    x = ml.asarray(np.array([[1.0, 2.0], [3.0, 5.0]]))
    for eps in (1e-5, 0.5, 1e-5, 0.5):
        np.testing.assert_allclose(ml.nn.layer_norm(x, eps=eps).numpy(),
                                   _numpy_layer_norm(x.numpy(), 1.0, 0.0, eps), rtol=1e-12)
    for axis in (0, 1, -1, 0):
        np.testing.assert_allclose(ml.nn.softmax(x, axis).numpy(),
                                   _numpy_softmax(x.numpy(), axis), rtol=1e-12)


def test_numbers_are_told_apart_by_their_bits():
    assert tapes._static(0.0) != tapes._static(-0.0)
    assert tapes._static(float("nan")) == tapes._static(float("nan"))
    assert tapes._static(1) != tapes._static(True) != tapes._static(1.0)
    assert tapes._static((1, 2)) != tapes._static([1, 2])
    assert tapes._static(((1, 2.0), None)) != tapes._static(((1, 2.0), 0))
    assert tapes._static((0.0, [1])) != tapes._static((-0.0, [1]))
    assert tapes._static(np.float64(1.0)) is tapes._NOT  # not a plain float: records
    assert tapes._static((1, [2, np.float64(1.0)])) is tapes._NOT


def test_a_layer_given_host_data_records_as_usual():
    hits = TEMPLATES.hits
    for _ in range(2):
        got = ml.nn.softmax(np.array([0.0, 1.0]))
        np.testing.assert_allclose(got.numpy(), _numpy_softmax(np.array([0.0, 1.0]), 0))
    assert TEMPLATES.hits == hits


def test_a_layer_that_reads_data_from_outside_is_not_taped():
    outside = [ml.asarray([1.0, 2.0])]
    shifted = templated(lambda x: x + outside[0])
    x = ml.asarray([0.0, 0.0])
    for k in range(3):
        outside[0] = ml.asarray([float(k), 1.0])
        np.testing.assert_array_equal(shifted(x).numpy(), [k, 1.0])


def test_a_layer_that_records_a_dead_op_is_not_taped():
    hits = TEMPLATES.hits

    def wasteful(x: ml.Tensor) -> ml.Tensor:
        ml.exp(x)  # recorded, never read
        return x * 2.0

    lean = templated(wasteful)
    for _ in range(3):
        before = ml.metrics().ops_recorded
        np.testing.assert_array_equal(lean(ml.asarray([1.0])).numpy(), [2.0])
        assert ml.metrics().ops_recorded - before == 2
    assert TEMPLATES.hits == hits


def test_a_replay_counts_its_ops_as_the_recording_does():
    x = ml.asarray(np.ones((2, 3)))
    ml.nn.layer_norm(x)  # the template
    ml.mark_step()
    ops, pending = ml.metrics().ops_recorded, ENGINE.pending
    y = ml.nn.layer_norm(x)
    replayed = (ml.metrics().ops_recorded - ops, ENGINE.pending - pending)
    ops, pending = ml.metrics().ops_recorded, ENGINE.pending
    z = _recorded(ml.nn.layer_norm, x)
    assert replayed == (ml.metrics().ops_recorded - ops, ENGINE.pending - pending)
    assert replayed[0] == len([n for n in walk([y._node], y.device).order if n.op not in LEAVES])
    del z


def test_a_layer_that_raises_raises_every_time():
    x = ml.asarray(np.array([1, 2], dtype=np.int32))
    for _ in range(2):
        with pytest.raises(TypeError, match="softmax: expects a floating tensor"):
            ml.nn.softmax(x)
    assert ml.nn.softmax(ml.asarray([0.0, 0.0])).tolist() == [0.5, 0.5]


def test_eager_mode_records_op_by_op():
    x = ml.asarray([0.0, 1.0])
    ml.nn.softmax(x)
    hits, executions = TEMPLATES.hits, ml.metrics().executions
    with ml.eager():
        y = ml.nn.softmax(x)
    assert not y.is_pending and TEMPLATES.hits == hits
    assert ml.metrics().executions - executions >= 4  # each op ran as it was recorded
    np.testing.assert_allclose(y.numpy(), _numpy_softmax(np.array([0.0, 1.0]), 0))


def test_a_replay_past_the_pending_limit_cuts():
    x = ml.asarray(np.arange(4.0))
    ml.nn.layer_norm(x)
    ml.mark_step()
    with ml.policy(max_pending_nodes=6):  # the replay's own 11 ops pass it
        autos = ml.metrics().barrier_causes.get("auto", 0)
        y = ml.nn.layer_norm(x)
        assert ml.metrics().barrier_causes.get("auto", 0) == autos + 1 and not y.is_pending
    np.testing.assert_allclose(y.numpy(), _numpy_layer_norm(np.arange(4.0), 1, 0, 1e-5))


def test_a_barrier_inside_a_first_call_leaves_no_tape():
    x = ml.asarray(np.arange(4.0))
    TEMPLATES.reset()
    with ml.policy(max_pending_nodes=3):  # an auto-cut inside each call
        for _ in range(3):
            y = ml.nn.layer_norm(x + 1.0)
            np.testing.assert_allclose(y.numpy(), _numpy_layer_norm(np.arange(4.0) + 1, 1, 0,
                                                                    1e-5))
    assert TEMPLATES.hits == 0 and list(TEMPLATES.memo.values()) == [None]


def test_a_replay_over_other_inputs_has_their_digests():
    x = ml.asarray(np.arange(6.0).reshape(2, 3))
    for inner in (lambda t: t + 1.0, ml.exp, lambda t: t + 1.0, ml.exp, ml.sin):
        lean = ml.nn.layer_norm(inner(x))
        assert lean._node.digest == _recorded(ml.nn.layer_norm, inner(x))._node.digest


def test_a_replay_notes_the_users_line_when_debug_info_is_on():
    x = ml.asarray([1.0, 2.0])
    ml.nn.softmax(x)
    with ml.debug(1):
        y = ml.nn.softmax(x)
        line = sys._getframe().f_lineno - 1  # the line above
    made = [n for n in walk([y._node], y.device).order if n.op is not Op.DATA]
    assert len(made) > 3 and {n.site for n in made} == {f"{__file__}:{line}"}


def test_threads_replay_their_own_inputs():
    ml.nn.layer_norm(ml.asarray(np.ones((3, 4))))
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            rng = np.random.default_rng(seed)
            for _ in range(20):
                x = rng.normal(size=(3, 4))
                got = ml.nn.layer_norm(ml.asarray(x)).numpy()
                np.testing.assert_allclose(got, _numpy_layer_norm(x, 1, 0, 1e-5), rtol=1e-10)
        except BaseException as e:  # noqa: BLE001 (reported below, in the main thread)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_clear_cache_forgets_the_templates():
    ml.nn.softmax(ml.asarray([1.0]))
    assert len(TEMPLATES)
    ml.clear_cache()
    assert len(TEMPLATES) == 0


def test_baked_in_numbers_are_part_of_the_signature():
    x = ml.asarray(np.array([[1.0, -2.0], [0.5, 3.0]]))
    for special in (False, True, False, True):
        with ml.policy(special_scalars=special):
            lean = ml.nn.relu(x)
            assert _structure(lean) == _structure(_recorded(ml.nn.relu, x))
            np.testing.assert_array_equal(lean.numpy(), np.maximum(x.numpy(), 0))


def test_a_layer_that_returns_its_argument_returns_it_again():
    same = templated(lambda x, y: x)
    x, y = ml.asarray([1.0]), ml.asarray([2.0])
    for _ in range(3):
        assert same(x, y) is x and same(-y, x).tolist() == [-2.0]
