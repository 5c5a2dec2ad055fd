"""ml.random: Threefry-2x32 recorded from uint32 ops is bit-exact (NumPy reference and jax.random),
keys are data (a new seed or step never recompiles), and the numbers have the right
distributions. Seeds are fixed: nothing here is flaky."""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

import minilazy as ml
from minilazy.introspect import reference

M = np.uint32


def threefry_numpy(key, x0, x1):
    """Random123 Threefry-2x32, 20 rounds, in NumPy uint32 arithmetic (wraps mod 2**32)."""
    def rotl(v, r):
        return (v << M(r)) | (v >> M(32 - r))

    k = [M(key[0]), M(key[1])]
    ks = [k[0], k[1], k[0] ^ k[1] ^ M(0x1BD11BDA)]
    x = [np.atleast_1d(np.asarray(x0, M)), np.atleast_1d(np.asarray(x1, M))]
    x = [x[0] + ks[0], x[1] + ks[1]]
    rotations = ([13, 15, 26, 6], [17, 29, 16, 24])
    for block in range(5):
        for r in rotations[block % 2]:
            x[0] = x[0] + x[1]
            x[1] = rotl(x[1], r) ^ x[0]
        x[0] = x[0] + ks[(block + 1) % 3]
        x[1] = x[1] + ks[(block + 2) % 3] + M(block + 1)
    return x[0], x[1]


def test_uint32_ops_wrap_like_numpy():
    x = ml.asarray([0xFFFFFFFF, 0x80000001], dtype=ml.uint32)
    assert (x + x).tolist() == [0xFFFFFFFE, 2]
    assert ((x << 4) | (x >> 28)).tolist() == [0xFFFFFFFF, 0x18]


def test_threefry_known_answer():
    # Random123's known-answer vectors (kat_vectors, threefry2x32_20): the reference is right...
    assert [int(v[0]) for v in threefry_numpy([0, 0], 0, 0)] == [0x6B200159, 0x99BA4EFE]
    got = threefry_numpy([0x13198A2E, 0x03707344], 0x243F6A88, 0x85A308D3)
    assert [int(v[0]) for v in got] == [0xC4923A9C, 0x483DF7A0]


@pytest.mark.parametrize("seed", [0, 1, 42, 2**32 + 7, -1])
def test_bits_match_the_numpy_reference(seed):
    # ...and minilazy's recorded uint32 ops give its bits exactly.
    shape = (3, 5)
    k = np.array([(seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF], M)
    y0, y1 = threefry_numpy(k, np.zeros(15, M), np.arange(15, dtype=M))
    assert ml.random.key(seed).tolist() == k.tolist()
    got = ml.random.bits(ml.random.key(seed), shape).numpy()
    assert got.dtype == np.uint32 and got.shape == shape
    np.testing.assert_array_equal(got, (y0 ^ y1).reshape(shape))
    keys = np.stack(threefry_numpy(k, np.zeros(4, M), np.arange(4, dtype=M)), -1)
    np.testing.assert_array_equal(ml.random.split(ml.random.key(seed), 4).numpy(), keys)


@pytest.mark.parametrize("seed", [0, 3, 12345])
def test_same_bits_and_floats_as_jax_random(seed):
    k, jk = ml.random.key(seed), jax.random.PRNGKey(seed)
    same = np.testing.assert_array_equal
    same(ml.random.split(k, 3).numpy(), np.asarray(jax.random.split(jk, 3)))
    same(ml.random.fold_in(k, 7).numpy(), np.asarray(jax.random.fold_in(jk, 7)))
    np.testing.assert_array_equal(ml.random.bits(k, (4, 6)).numpy(),
                                  np.asarray(jax.random.bits(jk, (4, 6))))
    for dtype in (ml.float16, ml.float32):
        np.testing.assert_array_equal(ml.random.uniform(k, (100,), dtype).numpy(),
                                      np.asarray(jax.random.uniform(jk, (100,), dtype)))
    np.testing.assert_array_equal(
        ml.random.uniform(k, (50,), ml.float32, minval=-2.0, maxval=3.5).numpy(),
        np.asarray(jax.random.uniform(jk, (50,), "float32", minval=-2.0, maxval=3.5)))
    np.testing.assert_array_equal(ml.random.bernoulli(k, 0.3, (200,)).numpy(),
                                  np.asarray(jax.random.bernoulli(jk, 0.3, (200,))))


def test_float64_uniform_matches_jax_with_x64():
    jax.config.update("jax_enable_x64", True)
    try:
        want = np.asarray(jax.random.uniform(jax.random.PRNGKey(5), (64,), "float64"))
    finally:
        jax.config.update("jax_enable_x64", False)
    got = ml.random.uniform(ml.random.key(5), (64,)).numpy()
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, want)


def test_split_unpacks_and_keys_differ():
    k1, k2 = ml.random.split(ml.random.key(0))
    assert k1.shape == (2,) and k1.dtype == ml.uint32
    assert k1.tolist() != k2.tolist()
    a, b = ml.random.uniform(k1, (3, 4), dtype=ml.float32), ml.random.normal(k2, (3,))
    assert a.shape == (3, 4) and b.shape == (3,) and b.dtype == ml.float64
    k = ml.random.key(9)
    assert ml.random.fold_in(k, ml.asarray(2, dtype=ml.uint32)).tolist() == \
        ml.random.split(k, 3)[2].tolist()


def test_new_seeds_and_steps_never_recompile():
    ml.clear_cache()
    ml.reset_metrics()
    base = ml.random.key(0)
    for step in range(5):
        k = ml.random.fold_in(ml.random.key(100 + step), step)
        u = ml.random.uniform(k, (8,), ml.float32, minval=-step, maxval=step + 1.0)
        m = ml.random.bernoulli(ml.random.split(base, 2)[1], 0.1 * step, (8,))
        n = ml.random.normal(k, (8,))
        base = ml.random.split(base, 2)[0]  # the next step's key: materialised by this barrier
        ml.mark_step()
        assert u.shape == m.shape == n.shape == (8,)
    assert ml.metrics().compiles == 1


def test_same_seed_same_numbers_lazy_eager_and_reference():
    def draw():
        k1, k2 = ml.random.split(ml.random.key(2024))
        return [ml.random.uniform(k1, (5,), ml.float32), ml.random.normal(k2, (2, 3)),
                ml.random.bernoulli(k1, 0.5, (7,)), ml.random.bits(k2, (4,))]

    interpreted = reference.run(*draw())
    lazy = [t.numpy() for t in draw()]
    with ml.eager():
        eager = [t.numpy() for t in draw()]
    for a, b, c in zip(lazy, eager, interpreted):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-6, atol=1e-6)  # normal: cos/log may round apart
        assert a.dtype == c.dtype


def test_normal_is_box_muller_of_the_uniforms():
    k = ml.random.key(11)
    u = ml.random.uniform(k, (2, 50), ml.float64).numpy()
    want = np.sqrt(-2 * np.log1p(-u[0])) * np.cos(2 * math.pi * u[1])
    np.testing.assert_allclose(ml.random.normal(k, (50,)).numpy(), want, rtol=1e-12)


N = 100_000


@pytest.mark.parametrize("dtype", [ml.float32, ml.float64])
def test_uniform_distribution(dtype):
    u = ml.random.uniform(ml.random.key(7), (N,), dtype).numpy()
    assert u.dtype == dtype and u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    # Kolmogorov-Smirnov against U(0, 1): 1.63 / sqrt(n) is the 1% critical value.
    s = np.sort(u)
    ks = max(np.max(np.arange(1, N + 1) / N - s), np.max(s - np.arange(N) / N))
    assert ks < 1.63 / math.sqrt(N)
    v = ml.random.uniform(ml.random.key(7), (N,), dtype, minval=-3.0, maxval=5.0).numpy()
    assert v.min() >= -3.0 and v.max() < 5.0 and abs(v.mean() - 1.0) < 0.05


@pytest.mark.parametrize("dtype", [ml.float32, ml.float64])
def test_normal_distribution(dtype):
    z = ml.random.normal(ml.random.key(8), (N,), dtype).numpy()
    assert z.dtype == dtype and np.all(np.isfinite(z))
    assert abs(z.mean()) < 0.015 and abs(z.var() - 1.0) < 0.02
    assert abs(np.mean(z**3)) < 0.05 and abs(np.mean(z**4) - 3.0) < 0.1  # skew 0, kurtosis 3
    s = np.sort(z)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(s / math.sqrt(2)))
    ks = max(np.max(np.arange(1, N + 1) / N - cdf), np.max(cdf - np.arange(N) / N))
    assert ks < 1.63 / math.sqrt(N)


def test_bernoulli_frequencies_and_tensor_p():
    m = ml.random.bernoulli(ml.random.key(9), 0.3, (N,)).numpy()
    assert m.dtype == np.bool_ and abs(m.mean() - 0.3) < 0.005
    p = ml.asarray([0.0, 1.0, 0.5], dtype=ml.float32)
    b = ml.random.bernoulli(ml.random.key(1), p)
    assert b.shape == (3,) and b.tolist()[:2] == [False, True]
    many = ml.random.bernoulli(ml.random.key(2), p, (N, 3)).numpy()
    np.testing.assert_allclose(many.mean(0), [0.0, 1.0, 0.5], atol=0.005)
    assert ml.random.bernoulli(ml.random.key(3)).shape == ()


def test_bad_keys_and_arguments_are_named():
    with pytest.raises(TypeError, match="uniform: key must have dtype uint32, got int64"):
        ml.random.uniform(ml.asarray([0, 0]), (2,))
    with pytest.raises(ValueError, match=r"split: key must have shape \(2,\), got \(3,\)"):
        ml.random.split(ml.asarray([0, 0, 0], dtype=ml.uint32))
    with pytest.raises(TypeError, match="normal: key must be a minilazy Tensor"):
        ml.random.normal(np.zeros(2, np.uint32), (2,))
    with pytest.raises(TypeError, match="normal: dtype must be a floating dtype, got int32"):
        ml.random.normal(ml.random.key(0), (2,), ml.int32)
    with pytest.raises(ValueError, match="bits: shape must be non-negative"):
        ml.random.bits(ml.random.key(0), (-1,))
    with pytest.raises(TypeError, match="key: seed must be an int, got float"):
        ml.random.key(1.5)
    with pytest.raises(ValueError, match="key: seed .* does not fit in 64 bits"):
        ml.random.key(2**64)
