"""Multi-tensor optimizer updates: a group of weights is one vector, the values stay NumPy's.

``ml.optim`` packs the weights of one dtype and device into a vector (``ml.pack``), updates it
with a few ops and takes the weights back out (``ml.unpack``). These tests check what that
promises: the same values as a per-weight update in NumPy whatever the mix of dtypes and shapes
(empty and 0-d weights too), one recorded op more per extra weight (not a dozen), the old
buffers still donated, one compile, and clear errors for a state made for other parameters.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from minilazy.parts.tapes import TEMPLATES

DTYPES = [np.float16, np.float32, np.float64]
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)


def _numpy_adam(p, grads, lr, b1, b2, eps, wd):
    """torch's AdamW in NumPy, in ``p``'s dtype, with the bias corrections in at least float32
    (as ``ml.optim.adam`` documents)."""
    d = p.dtype
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        c = np.promote_types(d, np.float32)
        c1 = (1 / (1 - np.power(c.type(b1), c.type(t)))).astype(d)
        c2 = (1 / (1 - np.power(c.type(b2), c.type(t)))).astype(d)
        m = d.type(b1) * m + d.type(1 - b1) * g
        v = d.type(b2) * v + d.type(1 - b2) * (g * g)
        direction = (m * c1) / (np.sqrt(v * c2) + d.type(eps)) + d.type(wd) * p
        p = p - d.type(lr) * direction
    return p


@given(st.lists(st.tuples(st.sampled_from(DTYPES), SHAPES), min_size=1, max_size=6),
       st.integers(0, 2**32 - 1))
def test_adam_over_groups_of_any_dtypes_and_shapes_is_numpys(weights, seed):
    """Weights of mixed dtypes (so several groups) and shapes, empty and 0-d ones among them:
    each comes out of three AdamW steps as NumPy's per-weight update gives it."""
    rng = np.random.default_rng(seed)
    start = {f"w{i}": rng.standard_normal(s).astype(d) for i, (d, s) in enumerate(weights)}
    grads = [{k: rng.standard_normal(v.shape).astype(v.dtype) for k, v in start.items()}
             for _ in range(3)]
    opt = ml.optim.adam(0.01, weight_decay=0.1)
    params = {k: ml.asarray(v) for k, v in start.items()}
    state = opt.init(params)
    for g in grads:
        params, state = opt.update({k: ml.asarray(v) for k, v in g.items()}, state, params)
    for k, v in start.items():
        want = _numpy_adam(v, [g[k] for g in grads], 0.01, 0.9, 0.999, 1e-8, 0.1)
        got = params[k].numpy()
        assert got.dtype == v.dtype and got.shape == v.shape
        tol = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-12}[v.dtype.type]
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _numpy_sgd(p, grads, lr, momentum):
    v = np.zeros_like(p)
    for g in grads:
        v = np.float32(momentum) * v + g
        p = p - np.float32(lr) * (v if momentum else g)
    return p


@given(SHAPES, st.integers(2, 5), st.data())
def test_dicts_listing_their_keys_in_any_order_are_the_same_tree(shape, count, data):
    """Gradients, and parameters rebuilt between steps, that list their keys in other orders
    (all of one shape, so that a pairing by position would pass every shape check): each
    weight moves by its own gradient, in every optimizer, as in NumPy."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), "seed"))
    start = {f"w{i}": rng.standard_normal(shape).astype(np.float32) for i in range(count)}
    grads = [{k: rng.standard_normal(shape).astype(np.float32) for k in start} for _ in range(2)]
    orders = [data.draw(st.permutations(sorted(start)), f"order {i}") for i in range(4)]
    for name, opt, numpy_update in [
            ("sgd", ml.optim.sgd(0.5), lambda p, gs: _numpy_sgd(p, gs, 0.5, 0.0)),
            ("momentum", ml.optim.sgd(0.5, 0.9), lambda p, gs: _numpy_sgd(p, gs, 0.5, 0.9)),
            ("adamw", ml.optim.adam(0.01, weight_decay=0.1),
             lambda p, gs: _numpy_adam(p, gs, 0.01, 0.9, 0.999, 1e-8, 0.1))]:
        params = {k: ml.asarray(start[k]) for k in orders[0]}
        state = opt.init(params)
        for step, g in enumerate(grads):
            params = {k: params[k] for k in orders[1 + step]}  # rebuilt in another order
            params, state = opt.update({k: ml.asarray(g[k]) for k in orders[3]}, state, params)
        for k, v in start.items():
            np.testing.assert_allclose(params[k].numpy(), numpy_update(v, [g[k] for g in grads]),
                                       rtol=1e-5, atol=1e-6, err_msg=f"{name}: {k}")


def _recorded(opt, count: int) -> int:
    """Ops recorded by one update of ``count`` float32 weights of assorted shapes."""
    shapes = [(3, 2), (4,), (), (2, 2, 2)]
    params = {f"w{i}": ml.ones(shapes[i % 4], dtype=ml.float32) for i in range(count)}
    grads = {k: ml.ones(v.shape, dtype=ml.float32) for k, v in params.items()}
    state = opt.init(params)
    ml.mark_step()
    before = ml.metrics().ops_recorded
    opt.update(grads, state, params)
    return ml.metrics().ops_recorded - before


@pytest.mark.parametrize("opt", [ml.optim.adam(0.01, weight_decay=0.1), ml.optim.sgd(0.1, 0.9),
                                 ml.optim.sgd(0.1)], ids=["adamw", "sgd-momentum", "sgd"])
def test_an_update_records_one_op_more_per_weight(opt):
    """A group's update is a few ops on its vector, plus one ``unpack`` per weight: 20 weights
    record 12 ops more than 8, however many ops the update itself takes."""
    assert _recorded(opt, 20) - _recorded(opt, 8) == 12


def test_a_packed_step_donates_the_old_buffers_and_compiles_once():
    params = {"w": ml.ones((4, 3), dtype=ml.float32), "b": ml.zeros(3, dtype=ml.float32),
              "v": ml.ones(5, dtype=ml.float32)}
    opt = ml.optim.adam(0.1)
    state = opt.init(params)
    ml.mark_step()
    ml.reset_metrics()
    for _ in range(3):
        grads = {k: ml.ones(v.shape, dtype=ml.float32) * 0.5 for k, v in params.items()}
        params, state = opt.update(grads, state, params)
        ml.mark_step()
    m = ml.metrics()
    assert m.compiles == 1
    # each later step gives its three weights and two moment vectors to the outputs
    assert m.donations >= 2 * (3 + 2), m.donations
    want = np.ones((4, 3), np.float32) - 0.1 * 3  # Adam's first steps move by lr each
    np.testing.assert_allclose(params["w"].numpy(), want, rtol=1e-5)


def test_a_state_made_for_other_parameters_is_refused_naming_shapes():
    opt = ml.optim.adam(0.1)
    state = opt.init({"w": ml.ones((2, 2)), "b": ml.ones(2)})
    params = {"w": ml.ones((3, 2)), "b": ml.ones(2)}
    with pytest.raises(ValueError, match=r"vectors \[\(6,\) float64\].*need \[\(8,\) float64\]"):
        opt.update(params, state, params)
    with pytest.raises(ValueError, match=r"shape \(2,\) where the parameter has shape \(3, 2\)"):
        opt.update({"w": ml.ones(2), "b": ml.ones(2)}, opt.init(params), params)


def test_a_state_or_gradient_of_another_kind_is_refused_not_promoted():
    """Same shapes, other dtypes (the update would turn the weights float64) or another
    optimizer's state: errors at the call, naming what differs; nothing pending is lost."""
    params = {"w": ml.ones((2, 2), dtype=ml.float32), "b": ml.ones(2, dtype=ml.float32)}
    wide = {k: ml.astype(v, ml.float64) for k, v in params.items()}
    adam, sgd = ml.optim.adam(0.1), ml.optim.sgd(0.1, momentum=0.9)
    pending = params["w"] * 2.0
    with pytest.raises(ValueError, match=r"vectors \[\(6,\) float64\].*need \[\(6,\) float32\]"):
        adam.update(params, adam.init(wide), params)
    with pytest.raises(TypeError, match="a tensor of dtype float64 where the parameter has dtype "
                                        "float32"):
        sgd.update(wide, sgd.init(params), params)
    with pytest.raises(ValueError, match=r"no step count 'count' \(it has \['velocity'\]\)"):
        adam.update(params, sgd.init(params), params)
    with pytest.raises(ValueError, match=r"the state has no 'velocity' \(it has \['count', 'mu'"):
        sgd.update(params, adam.init(params), params)
    np.testing.assert_array_equal(pending.numpy(), np.full((2, 2), 2.0, np.float32))


@pytest.mark.parametrize("make, numpy_update", [
    (lambda lr: ml.optim.sgd(lr), lambda p, gs: _numpy_sgd(p, gs, 0.1, 0.0)),
    (lambda lr: ml.optim.sgd(lr, 0.9), lambda p, gs: _numpy_sgd(p, gs, 0.1, 0.9)),
    (lambda lr: ml.optim.adam(lr, weight_decay=0.1),
     lambda p, gs: _numpy_adam(p, gs, 0.1, 0.9, 0.999, 1e-8, 0.1))],
    ids=["sgd", "momentum", "adamw"])
def test_a_learning_rate_tensor_keeps_the_weights_dtype(make, numpy_update):
    """A 0-d float64 learning rate (computed on the device) with float32 weights: the weights stay
    float32 and move as NumPy's float32 update with that rate; a shaped rate is refused when the
    optimizer is made."""
    start = np.array([1.0, -2.0, 0.5], np.float32)
    grads = [np.array([0.5, 1.0, -3.0], np.float32), np.array([2.0, 0.0, 1.0], np.float32)]
    opt = make(ml.asarray(np.float64(0.1)))
    params = {"w": ml.asarray(start)}
    state = opt.init(params)
    for g in grads:
        params, state = opt.update({"w": ml.asarray(g)}, state, params)
    assert params["w"].dtype == np.float32
    np.testing.assert_allclose(params["w"].numpy(), numpy_update(start, grads), rtol=1e-6)
    with pytest.raises(ValueError, match=r"learning rate is a number or a 0-d tensor, got a "
                                         r"tensor of shape \(2,\)"):
        make(ml.ones(2))


def test_weights_that_no_optimizer_step_fits_are_refused_and_an_empty_tree_is_none():
    """Integer weights (the rate would round to 0, or Adam make NaN of them) and, for Adam,
    complex ones (torch updates their real and imaginary parts apart): TypeErrors naming the
    dtype and shape. An empty tree updates to an empty tree. SGD takes complex weights as NumPy
    computes them."""
    ints = {"n": ml.asarray(np.arange(3))}
    for opt in (ml.optim.sgd(0.1), ml.optim.sgd(0.1, 0.9), ml.optim.adam(0.1)):
        with pytest.raises(TypeError, match=r"floating-point or complex tensors, got one of "
                                            r"dtype int64 and shape \(3,\)"):
            opt.update(ints, opt.init({"w": ml.ones(2)}), ints)
        assert opt.update({}, opt.init({}), {})[0] == {}
    z = np.array([1 + 1j, 2 - 1j], np.complex64)
    with pytest.raises(TypeError, match=r"adam: complex weights are not supported \(got one of "
                                        r"dtype complex64 and shape \(2,\)\)"):
        ml.optim.adam(0.1).init({"z": ml.asarray(z)})
    g = np.array([1j, 2.0], np.complex64)
    opt = ml.optim.sgd(0.5, 0.9)
    params = {"z": ml.asarray(z)}
    state = opt.init(params)
    for _ in range(2):
        params, state = opt.update({"z": ml.asarray(g)}, state, params)
    np.testing.assert_allclose(params["z"].numpy(), _numpy_sgd(z, [g, g], 0.5, 0.9), rtol=1e-6)


@given(st.lists(st.sampled_from(DTYPES), min_size=1, max_size=4),
       st.lists(st.floats(1e-4, 0.5), min_size=3, max_size=5), st.sampled_from([0.8, 0.9]),
       st.integers(0, 2**32 - 1))
def test_adam_replayed_with_a_new_rate_each_step_is_numpys(kinds, rates, b1, seed):
    """Adam's update is recorded once per signature and replayed (``parts.tapes``): a new Python
    rate each step is a new number in the same program, and ``b1`` (part of the signature) is
    never taken from another optimizer's tape."""
    rng = np.random.default_rng(seed)
    start = {f"w{i}": rng.standard_normal(3).astype(d) for i, d in enumerate(kinds)}
    grads = [{k: rng.standard_normal(3).astype(v.dtype) for k, v in start.items()}
             for _ in rates]
    params = {k: ml.asarray(v) for k, v in start.items()}
    state = ml.optim.adam(0.1, b1=b1).init(params)
    hits = TEMPLATES.hits
    for lr, g in zip(rates, grads):
        opt = ml.optim.adam(lr, b1=b1, weight_decay=0.01)
        params, state = opt.update({k: ml.asarray(v) for k, v in g.items()}, state, params)
        ml.mark_step()
    assert TEMPLATES.hits - hits >= len(rates) - 1
    for k, v in start.items():
        want, m, s = v, np.zeros_like(v), np.zeros_like(v)
        for t, (lr, g) in enumerate(zip(rates, grads), 1):
            d, c = v.dtype, np.promote_types(v.dtype, np.float32)
            m = d.type(b1) * m + d.type(1 - b1) * g[k]
            s = d.type(0.999) * s + d.type(1 - 0.999) * (g[k] * g[k])
            c1 = (1 / (1 - np.power(c.type(b1), c.type(t)))).astype(d)
            c2 = (1 / (1 - np.power(c.type(0.999), c.type(t)))).astype(d)
            direction = (m * c1) / (np.sqrt(s * c2) + d.type(1e-8)) + d.type(0.01) * want
            want = want - d.type(lr) * direction
        tol = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-12}[v.dtype.type]
        np.testing.assert_allclose(params[k].numpy(), want, rtol=tol, atol=tol)
