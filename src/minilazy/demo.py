"""The main job (``python -m minilazy``): what laziness buys and what it costs.

Runs one computation three ways (NumPy, minilazy op by op, minilazy lazy) and prints, for each,
the time per step and minilazy's compile and cache-hit counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import minilazy as ml


def _chain(x: ml.Tensor) -> ml.Tensor:
    """A 20-op elementwise chain: lazy mode fuses it into one XLA kernel."""
    for i in range(5):
        x = ml.maximum(x * 1.01 + 0.1 * i, 0.0) - 0.3
    return x


def _chain_np(x: np.ndarray) -> np.ndarray:
    for i in range(5):
        x = np.maximum(x * np.float32(1.01) + np.float32(0.1 * i), np.float32(0)) - np.float32(0.3)
    return x


def _time(step: Callable[[], object], repeat: int) -> float:
    step()  # warm-up: the first lazy step compiles
    start = time.perf_counter()
    for _ in range(repeat):
        step()
    return (time.perf_counter() - start) / repeat


def main(n: int = 1_000_000, repeat: int = 20) -> None:
    """Print the comparison (``n`` float32 elements, ``repeat`` timed steps)."""
    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    x = ml.asarray(host)
    print(f"minilazy {ml.__version__}: a 20-op elementwise chain on {n:,} float32 "
          f"(device {ml.default_device()})\n")

    t_np = _time(lambda: _chain_np(host), repeat)
    print(f"  numpy eager      {t_np * 1e3:8.2f} ms/step")

    ml.reset_metrics()

    def eager_step() -> None:
        with ml.eager():
            ml.wait(_chain(x))

    t_eager = _time(eager_step, repeat)
    m = ml.metrics()
    print(f"  minilazy eager   {t_eager * 1e3:8.2f} ms/step   executions {m.executions:4d}  "
          f"compiles {m.compiles:2d}  cache hits {m.cache_hits}")

    ml.reset_metrics()

    def lazy_step() -> None:
        y = _chain(x)
        ml.wait(y)

    t_lazy = _time(lazy_step, repeat)
    m = ml.metrics()
    print(f"  minilazy lazy    {t_lazy * 1e3:8.2f} ms/step   executions {m.executions:4d}  "
          f"compiles {m.compiles:2d}  cache hits {m.cache_hits}")

    same = np.allclose(_chain(x).numpy(), _chain_np(host), rtol=1e-5, atol=1e-6)
    print(f"\n  lazy is {t_np / t_lazy:.1f}x NumPy and {t_eager / t_lazy:.1f}x op-by-op; "
          f"results equal NumPy's: {same}")
    print("  (lazy records 20 ops, cuts one graph, compiles it once, then every step is a "
          "cache hit running one fused kernel)")


if __name__ == "__main__":
    main()
