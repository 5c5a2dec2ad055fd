"""Random numbers from explicit keys (capability ``random``): LZ-RNG-001 to LZ-RNG-004.

No two libraries draw the same numbers, so nothing here is compared with NumPy's: the numbers
are checked for their distribution (a Kolmogorov-Smirnov test), the keys for determinism (the
same key, the same bytes, here and in another process) and independence (no two keys alike, no
correlation beyond chance), and a new seed for compiling nothing.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from minilazy.conformance.adapter import OptionalAdapter, policy_of
from minilazy.conformance.oracle.strategies import undeclared
from minilazy.conformance.suite.util import counting, settle

Array = np.ndarray[Any, Any]
N = 4096
CDF: dict[str, Callable[[Array], Array]] = {
    "uniform": lambda x: np.clip(x, 0.0, 1.0),
    "normal": lambda x: 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0))),
}


def ks_p_value(sample: Array, cdf: Callable[[Array], Array]) -> float:
    """The Kolmogorov-Smirnov test's p-value of ``sample`` against ``cdf`` (asymptotic).

    Example:
        >>> ks_p_value(np.linspace(0.0005, 0.9995, 1000), CDF["uniform"]) > 0.99
        True
    """
    x = np.sort(sample.astype(np.float64))
    n, f = len(x), cdf(x)
    d = max(float(np.max(np.arange(1, n + 1) / n - f)), float(np.max(f - np.arange(n) / n)))
    t = (math.sqrt(n) + 0.12 + 0.11 / math.sqrt(n)) * d  # Stephens' correction
    return min(1.0, max(0.0, 2 * math.fsum((-1) ** (k - 1) * math.exp(-2 * k * k * t * t)
                                           for k in range(1, 101))))


def _dtypes(adapter: OptionalAdapter, kind: str) -> list[str]:
    """The float dtypes declared, less those the dtype policy says ``kind`` does not draw."""
    return [d for d in ("float32", "float64")
            if not undeclared(adapter, d) and policy_of(adapter).allows(kind, np.dtype(d))]


def draws(adapter: OptionalAdapter, seed: int, dtype: str = "float32") -> list[Array]:
    """Uniform and normal numbers from a key of ``seed`` and from the two keys split from it.

    Example:
        >>> from minilazy.conformance.adapters.minilazy_adapter import cpu
        >>> [d.shape for d in draws(cpu(), 0)]
        [(4096,), (4096,), (4096,), (4096,)]
    """
    key = adapter.random("key", seed)
    a, b = adapter.random("split", key, 2)
    found = [adapter.random("uniform", key, (N,), np.dtype(dtype)),
             adapter.random("normal", key, (N,), np.dtype(dtype)),
             adapter.random("uniform", a, (N,), np.dtype(dtype)),
             adapter.random("uniform", b, (N,), np.dtype(dtype))]
    return [adapter.to_numpy(x) for x in found]


@pytest.mark.spec("LZ-RNG-001")
@pytest.mark.parametrize("kind", sorted(CDF))
def test_numbers_have_their_distribution_shape_and_dtype(adapter: OptionalAdapter,
                                                          kind: str) -> None:
    for dtype in _dtypes(adapter, kind):
        for seed in (0, 1, 2**40 + 3):
            key = adapter.random("key", seed)
            settle(adapter)
            counted = "executions" in adapter.capabilities or "compiles" in adapter.capabilities
            with counting(adapter) if counted else _nothing() as d:
                x = adapter.random(kind, key, (64, N // 64), np.dtype(dtype))
            assert d is None or d.ran_nothing(), f"drawing ran something before a barrier: {d}"
            got = adapter.to_numpy(x)
            assert got.shape == (64, N // 64) and got.dtype == np.dtype(dtype), (
                f"{kind}: {got.dtype}{list(got.shape)}")
            assert np.all(np.isfinite(got)), f"{kind}: non-finite numbers"
            if kind == "uniform":
                assert got.min() >= 0 and got.max() < 1, f"uniform outside [0, 1): {got.min()}, "\
                                                         f"{got.max()}"
            p = ks_p_value(got.ravel(), CDF[kind])
            assert p > 1e-4, f"{kind} {dtype} of seed {seed}: Kolmogorov-Smirnov p = {p:.2g}"


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


FRESH = """
import sys
from minilazy.conformance.adapter import load
from minilazy.conformance.suite.test_random import draws
print(",".join(x.tobytes().hex()[:4096] for x in draws(load(sys.argv[1]), int(sys.argv[2]))))
"""


@pytest.mark.spec("LZ-RNG-002")
def test_the_same_key_gives_the_same_numbers(adapter: OptionalAdapter, lazy_impl: str) -> None:
    first = draws(adapter, 7)
    key = adapter.random("key", 7)
    adapter.to_numpy(adapter.random("normal", key, (N,), np.dtype("float32")))
    adapter.barrier()  # other draws, and a barrier, in between
    again = draws(adapter, 7)
    for i, (a, b) in enumerate(zip(first, again)):
        assert a.tobytes() == b.tobytes(), f"draw {i} of key 7 changed when drawn again"
    if "eager" in adapter.capabilities:
        with adapter.eager():
            eager = draws(adapter, 7)
        for i, (a, b) in enumerate(zip(first, eager)):
            assert a.tobytes() == b.tobytes(), f"draw {i} of key 7 differs in eager mode"
    out = subprocess.run([sys.executable, "-c", FRESH, lazy_impl, "7"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    there = out.stdout.strip().splitlines()[-1].split(",")
    for i, (a, hexed) in enumerate(zip(first, there)):
        assert a.tobytes().hex()[:4096] == hexed, f"draw {i} of key 7 differs in another process"


@pytest.mark.spec("LZ-RNG-003")
def test_split_keys_and_other_seeds_are_independent(adapter: OptionalAdapter) -> None:
    found = draws(adapter, 11)
    other = adapter.to_numpy(adapter.random("uniform", adapter.random("key", 12), (N,),
                                            np.dtype("float32")))
    # the key's uniform numbers, its two split keys', and another seed's
    streams = {"key": found[0], "split 0": found[2], "split 1": found[3], "seed 12": other}
    names = sorted(streams)
    for i, p in enumerate(names):
        for q in names[i + 1:]:
            a, b = streams[p], streams[q]
            same = int(np.sum(a == b))
            assert same < N // 64, f"{p} and {q} give {same} equal numbers of {N}"
            r = float(np.corrcoef(a.astype(np.float64), b.astype(np.float64))[0, 1])
            assert abs(r) < 5 / math.sqrt(N), f"{p} and {q} correlate: r = {r:.3f}"


@pytest.mark.spec("LZ-RNG-004")
@pytest.mark.requires("compiles")
def test_a_new_seed_compiles_nothing(adapter: OptionalAdapter) -> None:
    settle(adapter)
    draws(adapter, 0)  # compiles what the draws need
    with counting(adapter) as d:
        for seed in (1, 2**33 + 5, 12345):
            draws(adapter, seed)
    assert d.n("compiles") == 0, f"{d.compiles} programs compiled for new seeds"
