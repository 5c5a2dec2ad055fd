"""Every family of programs survives the persistent cache: read back in a fresh process, it runs.

A program that lowers to something unusual (a LAPACK custom call, an FFT, a sort, random bits,
a convolution, a window, complex numbers, a mesh) is compiled by one fresh process and written
to disk, then read back by a second fresh process that never lowers it. That second process
must not crash (LAPACK programs used to segfault there: jaxlib binds its kernels only while
lowering), must read every program from disk, and must give the first process's values, which
match NumPy's. Two process starts in all: each runs every family.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minilazy as ml

pytestmark = pytest.mark.slow  # two fresh processes compiling ~45 programs: about a minute

rng = np.random.default_rng(0)
A = rng.standard_normal((4, 4))
S = A @ A.T + 4 * np.eye(4)  # symmetric positive definite, distinct eigenvalues
B = rng.standard_normal((4, 2))
C = A + 1j * rng.standard_normal((4, 4))
V = rng.standard_normal(16)
IMAGE = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
KERNEL = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
INTS = rng.integers(0, 5, 12)

Arrays = Sequence[Any]  # minilazy tensors in the child, NumPy arrays in the check
la, t, fft = ml.linalg, ml.asarray, ml.fft


def _conv2d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cross-correlation with padding 1 (conv2d's convention), by NumPy."""
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(p, (3, 3), axis=(2, 3))
    return np.einsum("nchwij,ocij->nohw", windows, w)


def _pool(x: np.ndarray, reduce: Callable[..., np.ndarray]) -> np.ndarray:
    n, c, h, w = x.shape
    return reduce(x.reshape(n, c, h // 2, 2, w // 2, 2), axis=(3, 5))


def _random() -> list[ml.Tensor]:
    k = ml.random.key(7)
    a, b = ml.random.split(k)
    return [ml.random.normal(a, (64,)), ml.random.uniform(b, (64,)),
            ml.random.bernoulli(k, 0.5, (64,))]


def _random_ok(got: Arrays) -> None:
    normal, uniform, coin = got  # no NumPy stream to match: check they are what they say
    assert np.all(np.isfinite(normal)) and 0.3 < np.std(normal) < 3
    assert np.all((uniform >= 0) & (uniform < 1)) and len(np.unique(uniform)) == 64
    assert coin.dtype == np.bool_ and 0 < coin.sum() < 64


def _sharded() -> list[ml.Tensor]:
    mesh = ml.Mesh(ml.devices("cpu")[:2], ("data",))
    x = ml.mark_sharding(t(A), mesh, ("data", None))
    return [ml.tanh(x * 0.5) + 1.0, ml.sum(x, axis=0)]


def _logdet_grad() -> list[ml.Tensor]:
    return [ml.grad(lambda x: la.slogdet(x)[1])(t(A))]


# name: (the program, by minilazy; the expected values, by NumPy, or None: see CHECKS).
# Factors defined up to signs (QR, SVD, eigenvectors) are compared in absolute value.
FAMILIES: dict[str, tuple[Callable[[], Arrays], Callable[[], Arrays] | None]] = {
    "qr": (lambda: [abs(f) for f in la.qr(t(A))], lambda: [abs(f) for f in np.linalg.qr(A)]),
    "qr float32": (lambda: [abs(la.qr(t(A.astype(np.float32)))[1])],
                   lambda: [abs(np.linalg.qr(A.astype(np.float32))[1])]),
    "qr complex": (lambda: [abs(la.qr(t(C))[1])], lambda: [abs(np.linalg.qr(C)[1])]),
    "svd": (lambda: [abs(f) for f in la.svd(t(A))], lambda: [abs(f) for f in np.linalg.svd(A)]),
    "svdvals": (lambda: [la.svdvals(t(A))], lambda: [np.linalg.svd(A, compute_uv=False)]),
    "eigh": (lambda: [la.eigh(t(S))[0], abs(la.eigh(t(S))[1])],
             lambda: [np.linalg.eigh(S)[0], abs(np.linalg.eigh(S)[1])]),
    "eigvalsh": (lambda: [la.eigvalsh(t(S))], lambda: [np.linalg.eigvalsh(S)]),
    "cholesky": (lambda: [la.cholesky(t(S))], lambda: [np.linalg.cholesky(S)]),
    "inv": (lambda: [la.inv(t(A))], lambda: [np.linalg.inv(A)]),
    "solve": (lambda: [la.solve(t(A), t(B))], lambda: [np.linalg.solve(A, B)]),
    "pinv": (lambda: [la.pinv(t(B))], lambda: [np.linalg.pinv(B)]),
    "matrix_rank": (lambda: [la.matrix_rank(t(B))], lambda: [np.linalg.matrix_rank(B)]),
    "det": (lambda: [la.det(t(A))], lambda: [np.linalg.det(A)]),
    "slogdet": (lambda: list(la.slogdet(t(A))), lambda: list(np.linalg.slogdet(A))),
    "matrix_norm 2": (lambda: [la.matrix_norm(t(A), ord=2)], lambda: [np.linalg.norm(A, 2)]),
    "matrix_power -2": (lambda: [la.matrix_power(t(A), -2)],
                        lambda: [np.linalg.matrix_power(A, -2)]),
    "gradient of slogdet": (_logdet_grad, lambda: [np.linalg.inv(A).T]),
    "fft": (lambda: [fft.fft(t(C))], lambda: [np.fft.fft(C)]),
    "ifft": (lambda: [fft.ifft(t(V))], lambda: [np.fft.ifft(V)]),
    "rfft": (lambda: [fft.rfft(t(V))], lambda: [np.fft.rfft(V)]),
    "irfft": (lambda: [fft.irfft(t(C))], lambda: [np.fft.irfft(C)]),
    "hfft": (lambda: [fft.hfft(t(C))], lambda: [np.fft.hfft(C)]),
    "ihfft": (lambda: [fft.ihfft(t(V))], lambda: [np.fft.ihfft(V)]),
    "fftn": (lambda: [fft.fftn(t(C))], lambda: [np.fft.fftn(C)]),
    "ifftn": (lambda: [fft.ifftn(t(C))], lambda: [np.fft.ifftn(C)]),
    "rfftn": (lambda: [fft.rfftn(t(A))], lambda: [np.fft.rfftn(A)]),
    "irfftn": (lambda: [fft.irfftn(t(C))], lambda: [np.fft.irfftn(C)]),
    "fft float32": (lambda: [fft.fft(t(V.astype(np.float32)))],
                    lambda: [np.fft.fft(V.astype(np.float32))]),
    "sort": (lambda: [ml.sort(t(V))], lambda: [np.sort(V)]),
    "argsort": (lambda: [ml.argsort(t(V))], lambda: [np.argsort(V)]),
    "searchsorted": (lambda: [ml.searchsorted(t(np.sort(V)), t(A) * 1.0)],
                     lambda: [np.searchsorted(np.sort(V), A)]),
    "unique": (lambda: list(ml.unique_all(t(INTS) * 2)),
               lambda: list(np.unique(INTS * 2, return_index=True, return_inverse=True,
                                      return_counts=True))),
    "random": (_random, None),
    "cumulative_sum": (lambda: [ml.cumulative_sum(t(A), axis=1)],
                       lambda: [np.cumsum(A, axis=1)]),
    "conv2d": (lambda: [ml.nn.conv2d(t(IMAGE), t(KERNEL), padding=1)],
               lambda: [_conv2d(IMAGE, KERNEL)]),
    "max_pool2d": (lambda: [ml.nn.max_pool2d(t(IMAGE), 2)], lambda: [_pool(IMAGE, np.max)]),
    "avg_pool2d": (lambda: [ml.nn.avg_pool2d(t(IMAGE), 2)], lambda: [_pool(IMAGE, np.mean)]),
    "complex": (lambda: [ml.exp(t(C)) * ml.conj(t(C)), ml.abs(t(C))],
                lambda: [np.exp(C) * np.conj(C), np.abs(C)]),
    "argmax": (lambda: [ml.argmax(t(A), axis=0)], lambda: [np.argmax(A, axis=0)]),
    "sharded over 2 devices": (_sharded, lambda: [np.tanh(A * 0.5) + 1.0, np.sum(A, axis=0)]),
}
CHECKS = {"random": _random_ok}  # values no NumPy function makes


def child(out: str) -> None:
    """Run every family with a cold in-memory cache; save the values, print the counters."""
    from minilazy.persist import keys

    found: dict[str, object] = {"source": keys._fingerprint()}
    values: dict[str, np.ndarray] = {}
    for name, (program, _) in FAMILIES.items():
        ml.clear_cache()
        ml.reset_metrics()
        for i, v in enumerate(program()):
            values[f"{name}|{i}"] = np.asarray(v)
        m = ml.metrics()
        found[name] = [m.compiles, m.disk_hits, m.disk_writes, m.fallbacks]
    np.savez(out, **values)
    print(json.dumps(found))


CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from minilazy.scaleout import processes
processes.use_cpu_devices(2)  # for the sharded family
import test_diskcache_families
test_diskcache_families.child(sys.argv[2])
"""


def _run(cache: Path, out: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    env = {**os.environ, "MINILAZY_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(Path(__file__).parent), str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"rc {done.returncode}: {done.stderr[-3000:]}"
    assert "CacheWarning" not in done.stderr, done.stderr[-3000:]
    with np.load(out) as f:
        return json.loads(done.stdout.splitlines()[-1]), dict(f)


def test_every_family_is_read_back_by_a_fresh_process_and_runs(tmp_path: Path) -> None:
    cold, cold_values = _run(tmp_path / "cache", tmp_path / "cold.npz")
    warm, warm_values = _run(tmp_path / "cache", tmp_path / "warm.npz")
    assert cold.pop("source") == warm.pop("source"), "minilazy's source changed during the test"
    assert sorted(warm_values) == sorted(cold_values)
    wrong = []
    for name, (_, expect) in FAMILIES.items():
        compiles, hits, writes, fallbacks = cold[name]
        assert compiles + hits > 0, f"{name}: no program made"
        # Every program of every family is kept on CPU (or was, by an earlier family), and is
        # loaded back, never lowered or compiled again.
        assert writes == compiles, f"{name}: cold run {cold[name]}"
        assert warm[name] == [0, compiles + hits, 0, fallbacks], f"{name}: warm run {warm[name]}"
        got = [warm_values[f"{name}|{i}"] for i in range(len(warm_values))
               if f"{name}|{i}" in warm_values]
        for i, g in enumerate(got):
            np.testing.assert_array_equal(g, cold_values[f"{name}|{i}"], err_msg=name)
        try:
            if expect is None:
                CHECKS[name](got)
            else:
                for g, w in zip(got, expect(), strict=True):
                    np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-5, err_msg=name)
        except AssertionError as e:
            wrong.append(f"{name}: {e}")
    assert not wrong, "\n".join(wrong)
