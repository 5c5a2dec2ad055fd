"""Host fallback, engine side: what runs on the host, what is counted where, and what is lost.

The rules (LZ-DYN-001..005) are checked once, by the conformance suite (``suite/test_fallback.py``).
Here: minilazy's own choices. A mask on the device is a counted fallback that reads only the
mask (the gather stays recorded, so gradients flow); a NumPy mask or list is no fallback; a lone
mask with one value for every selected element is a ``where`` (no fallback); ``fallback_ops`` keys
and ``fallback_sites`` lines; the ``fallback="error"`` policy; eager mode; an input that fails.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from minilazy.conformance.oracle.strategies import DTYPES, elements, shapes
from minilazy.conformance.suite.test_fallback import mask_key
from minilazy.core import runtime

X = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
HERE = __file__


@st.composite
def repeats(draw: Any, min_dims: int = 0) -> np.ndarray:
    """An array of any dtype whose values come from a few (repeats, NaNs)."""
    dtype = draw(st.sampled_from(DTYPES))
    pool = draw(st.lists(elements(dtype), min_size=1, max_size=4))
    return draw(hnp.arrays(dtype, shapes(min_dims=min_dims), elements=st.sampled_from(pool)))


def key_of(items: list[tuple[Any, ...]], form: str) -> tuple[Any, ...]:
    """The key ``items`` stand for, masks as NumPy arrays, lists or tensors (``form``)."""
    mask = {"numpy": lambda m: m, "list": lambda m: m.tolist(), "tensor": ml.asarray}[form]
    kinds = {"mask": lambda i: mask(i[1]), "none": lambda i: None,
             "ellipsis": lambda i: Ellipsis}
    return tuple(kinds.get(i[0], lambda i: i[1])(i) for i in items)


@given(repeats(min_dims=1).flatmap(lambda x: st.tuples(st.just(x), mask_key(x.shape))),
       st.sampled_from(["numpy", "list", "tensor"]))
def test_mask_indexing_matches_numpy_and_only_a_mask_tensor_is_a_fallback(drawn, form):
    x, items = drawn
    if form == "list" and any(i[0] == "mask" and i[1].ndim > 1 for i in items):
        form = "numpy"  # a nested list of bools is a mask too, but NumPy reads [[]] as ints
    ml.reset_metrics()
    got = ml.asarray(x)[key_of(items, form)]
    np.testing.assert_array_equal(got.numpy(), x[key_of(items, "numpy")])
    assert got.dtype == x.dtype
    expected = {"getitem": 1} if form == "tensor" else {}
    assert dict(ml.metrics().fallback_ops) == expected
    assert ml.metrics().fallbacks == len(expected)


@given(repeats(min_dims=1), st.booleans(), st.data())
def test_mask_assignment_is_a_where_unless_each_element_gets_its_own_value(x, per_entry, data):
    mask = data.draw(hnp.arrays(np.bool_, x.shape[:data.draw(st.integers(1, x.ndim))]))
    rest = x.shape[mask.ndim:]
    shape = (int(mask.sum()), *rest) if per_entry else data.draw(
        st.sampled_from([rest, rest[1:], (1, *rest)]))
    value = data.draw(hnp.arrays(x.dtype, shape, elements=elements(x.dtype)))
    ml.reset_metrics()
    t = ml.asarray(x)
    t[ml.asarray(mask)] = ml.asarray(value)
    want = x.copy()
    want[mask] = value
    np.testing.assert_array_equal(t.numpy(), want)
    lazy = not per_entry or int(mask.sum()) == 1  # one entry: its value broadcasts too
    assert ml.metrics().fallback_ops == ({} if lazy else {"setitem": 1})


@pytest.mark.parametrize("op", ["nonzero", "unique_values", "unique_counts", "unique_inverse",
                                "unique_all"])
@given(x=repeats(min_dims=1))
def test_each_call_is_one_fallback_named_by_its_op_and_line(op, x):
    ml.reset_metrics()
    t = ml.asarray(x) + 0  # pending: the fallback's own barrier materialises it
    got, line = getattr(ml, op)(t), inspect.currentframe().f_lineno
    want = getattr(np, op)(x + 0)
    if op == "unique_values":  # NumPy 2.4 may return them unsorted; the standard leaves it open
        want = np.sort(want)
    for g, w in zip(got if isinstance(got, tuple) else [got],
                    want if isinstance(want, tuple) else [want]):
        np.testing.assert_array_equal(g.numpy(), w)
        assert not g.is_pending and g.dtype == w.dtype
    m = ml.metrics()
    assert (m.fallbacks, dict(m.fallback_ops)) == (1, {op: 1})
    assert dict(m.fallback_sites) == {f"{op} at {HERE}:{line}": 1}
    assert m.barrier_causes[op] == 1  # one barrier, on its input only


@given(x1=hnp.arrays(np.float32, st.integers(0, 6), elements=st.sampled_from([0.0, 1.5, np.nan])),
       x2=hnp.arrays(np.float32, shapes(max_dims=2), elements=st.sampled_from([-1, 1.5, np.nan])),
       side=st.sampled_from(["left", "right"]))
def test_searchsorted_is_recorded_not_a_fallback(x1, x2, side):
    x1 = np.sort(x1)
    ml.reset_metrics()
    found = ml.searchsorted(ml.asarray(x1), ml.asarray(x2), side=side)
    assert found.is_pending and ml.metrics().executions == 0
    np.testing.assert_array_equal(found.numpy(), np.searchsorted(x1, x2, side=side))
    assert ml.metrics().fallbacks == 0


def test_a_fallback_reads_only_its_inputs_and_the_gather_stays_recorded():
    x = ml.asarray(X)
    other = ml.exp(x) * 2.0
    mask = x > 0
    picked = (x * 3.0)[mask]
    assert not mask.is_pending and other.is_pending  # the mask was read; nothing else ran
    assert picked.is_pending  # x * 3 and the gather with the mask's positions: recorded
    np.testing.assert_array_equal(picked.numpy(), (X * 3)[X > 0])
    np.testing.assert_allclose(other.numpy(), np.exp(X) * 2, rtol=1e-6)


@pytest.mark.parametrize("unique", ["unique_values", "unique_counts", "unique_inverse",
                                    "unique_all"])
def test_gradients_flow_through_a_mask_gather_and_the_distinct_values(unique: str):
    x = ml.asarray(np.concatenate([X, X[:2]]))  # repeated values: the first one gets the gradient
    g = ml.grad(lambda t: ml.sum(t[t > 0] ** 2))(x)
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy() * (x.numpy() > 0))

    def f(t: ml.Tensor) -> ml.Tensor:
        values = getattr(ml, unique)(t)
        return ml.sum(getattr(values, "values", values) ** 2) + ml.sum(t)

    g = ml.grad(f)(x)
    flat = x.numpy().reshape(-1)
    want = np.ones_like(flat)
    first = np.unique_all(flat).indices
    want[first] += 2 * flat[first]
    np.testing.assert_allclose(g.numpy(), want.reshape(x.shape))
    g = ml.grad(lambda t: ml.sum(_filled(t)))(ml.asarray(X))
    np.testing.assert_array_equal(g.numpy(), np.where(X > 0, 0, 1))


def _filled(t: ml.Tensor) -> ml.Tensor:
    t = t * 1.0
    t[t > 0] = 7.0  # a where(): the masked elements' gradient is 0, the others' 1
    return t


def test_the_error_policy_refuses_at_the_call_and_loses_nothing():
    x = ml.asarray(X)
    pending = ml.exp(x) + 1.0
    mask = x > 0
    ml.reset_metrics()
    with ml.policy(fallback="error"):
        for call, op in [(lambda: x[mask], "getitem"), (lambda: ml.nonzero(mask), "nonzero"),
                         (lambda: ml.unique_counts(x), "unique_counts"),
                         (lambda: x.__setitem__(mask, ml.ones((6,))), "setitem")]:
            with pytest.raises(RuntimeError, match=rf"^{op}: .*fallback='error'"):
                call()
        assert ml.metrics().executions == 0 and mask.is_pending
        picked = x[X > 0]  # a NumPy mask is known on the host: no fallback, allowed
        y = x * 1.0
        y[mask] = 0.0  # one value for every masked element: a where(), allowed
    assert ml.metrics().fallbacks == 0
    np.testing.assert_allclose(pending.numpy(), np.exp(X) + 1, rtol=1e-6)
    np.testing.assert_array_equal(picked.numpy(), X[X > 0])
    np.testing.assert_array_equal(y.numpy(), np.where(X > 0, 0, X))
    np.testing.assert_array_equal(x[mask].numpy(), X[X > 0])  # allowed again outside


def test_the_policy_field_is_checked_and_set_policy_takes_it():
    with pytest.raises(ValueError, match="fallback must be 'host' or 'error'"):
        ml.BarrierPolicy(fallback="device")
    ml.set_policy(ml.BarrierPolicy(fallback="error"))  # the conftest restores the default
    with pytest.raises(RuntimeError):
        ml.nonzero(ml.asarray([1, 0]))


class Injected(RuntimeError):
    """The failure this test injects into the mask's program."""


def test_a_fallback_whose_input_fails_raises_its_error_uncounted_and_loses_nothing(
        monkeypatch):
    x = ml.asarray(X)
    pending = ml.exp(x) + 1.0
    mask = ml.sin(x) > 0

    def failing(*args: Any) -> Any:
        raise Injected("the mask's program failed")

    monkeypatch.setattr(runtime, "execute", failing)
    with pytest.raises(Injected):
        x[mask]
    monkeypatch.undo()
    assert ml.metrics().fallbacks == 0 and pending.is_pending
    with pytest.raises(Injected):  # the failed input holds its error
        mask.numpy()
    np.testing.assert_allclose(pending.numpy(), np.exp(X) + 1, rtol=1e-6)
    np.testing.assert_array_equal(x[ml.sin(x) > 0].numpy(), X[np.sin(X) > 0])


def test_eager_mode_and_observe_all():
    with ml.eager():
        x = ml.asarray(X) * 2.0
        np.testing.assert_array_equal(x[x > 0].numpy(), (X * 2)[X > 0])
        assert [i.tolist() for i in ml.nonzero(x > 0)] == [a.tolist() for a in np.nonzero(X > 0)]
    other = ml.exp(ml.asarray(X))
    with ml.policy(observe_all=True):  # the fallback's barrier is an observation's
        ml.nonzero(ml.asarray(X) > 0)
    assert not other.is_pending
    assert ml.metrics().fallbacks == 3


def test_the_report_lists_fallbacks_by_op_and_line():
    ml.reset_metrics()
    x = ml.asarray(X)
    for _ in range(3):
        x[x > 0]
    ml.unique_values(x)
    report = ml.metrics_report()
    assert "fallbacks           4   (getitem 3, unique_values 1)" in report
    assert f"3 x  getitem at {HERE}:" in report
