"""Lowering: data are parameters of the compiled program, and 64-bit values stay 64-bit."""

from __future__ import annotations

import numpy as np
import pytest

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import assert_close


@pytest.mark.spec("LZ-LOW-001")
@pytest.mark.ops("multiply", "add")
def test_device_data_are_parameters_not_constants(adapter: OptionalAdapter) -> None:
    rng = np.random.default_rng(5)

    def program_text(n: int) -> tuple[str, np.ndarray]:
        data = rng.uniform(1000, 2000, n).astype(np.float32)  # no two alike: nothing to fold
        x = adapter.from_numpy(data)
        return adapter.hlo(adapter.apply("add", adapter.apply("multiply", x, 2.0), 1.0)), data

    (small, few), (big, many) = program_text(4), program_text(4096)
    for text, data in ((small, few), (big, many)):
        # Neither the data nor what folding them would give, as a printed constant would start
        # (XLA elides a long constant: the small program is the one that would show it).
        shown = [f"{v:.4f}"[:6] for v in np.concatenate([data[:8], data[:8] * 2 + 1]).tolist()]
        assert not any(v in text for v in shown), "the data were baked into the program"
    # A baked-in array of 4096 distinct floats would make the program text grow by kilobytes.
    assert len(big) < len(small) + 2048, f"program text grew with the data: {len(small)} -> "\
        f"{len(big)} characters"


@pytest.mark.spec("LZ-LOW-002")
@pytest.mark.requires("float64")
@pytest.mark.ops("add", "subtract", "multiply")
def test_64_bit_values_are_computed_in_64_bits(adapter: OptionalAdapter) -> None:
    x = adapter.from_numpy(np.array([1.0, 2.0**40], np.float64))
    tiny = adapter.apply("subtract", adapter.apply("add", x, 1e-10), x)
    n = adapter.from_numpy(np.array([2**40 + 1, -(2**52) - 3], np.int64))
    big = adapter.apply("multiply", n, 3)
    assert_close(adapter.to_numpy(tiny), (np.array([1.0, 2.0**40]) + 1e-10) - [1.0, 2.0**40])
    assert_close(adapter.to_numpy(big), np.array([2**40 + 1, -(2**52) - 3], np.int64) * 3)


@pytest.mark.spec("LZ-LOW-002")
@pytest.mark.requires("float64")
@pytest.mark.ops("multiply", "add")
def test_64_bit_values_keep_their_range(adapter: OptionalAdapter) -> None:
    # 1e-305 is a normal float64 and zero in float32; 2**62 + 2 needs all 63 bits of an int64.
    x = adapter.from_numpy(np.array([1e-300, 2.0**53 - 1, 1e300], np.float64))
    scaled = adapter.apply("multiply", x, 1e-5)
    i = adapter.from_numpy(np.array([2**62 + 1, -(2**62) - 7], np.int64))
    bumped = adapter.apply("add", i, 1)
    assert_close(adapter.to_numpy(scaled), np.array([1e-300, 2.0**53 - 1, 1e300]) * 1e-5)
    assert_close(adapter.to_numpy(bumped), np.array([2**62 + 2, -(2**62) - 6], np.int64))
