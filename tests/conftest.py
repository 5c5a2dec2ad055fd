"""Shared test setup: Hypothesis profiles, a clean slate per test, and the backend matrix."""

from __future__ import annotations

import os
from collections.abc import Iterator

import jax
import pytest
from hypothesis import HealthCheck, settings

import minilazy as ml
from minilazy.scaleout.processes import platforms

# `clean` below runs once per test, not per example: examples must not rely on it.
_COMMON = {"deadline": None,
           "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]}
settings.register_profile("default", max_examples=20, **_COMMON)
settings.register_profile("ci", max_examples=20, derandomize=True, print_blob=True, **_COMMON)
settings.register_profile("thorough", max_examples=300, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

AVAILABLE = platforms()
# Every test that takes `platform` runs on each JAX backend present (cpu here; gpu/tpu skip).
PLATFORMS = [
    pytest.param(p, marks=pytest.mark.skipif(p not in AVAILABLE, reason=f"no {p} device"))
    for p in ("cpu", "gpu", "tpu")
]


@pytest.fixture(params=PLATFORMS, scope="session")
def device(request: pytest.FixtureRequest) -> ml.Device:
    """A device of each available platform."""
    return ml.devices(request.param)[0]


@pytest.fixture(autouse=True)
def clean() -> Iterator[None]:
    """Start every test with nothing pending and zeroed counters."""
    ml.mark_step()
    ml.reset_metrics()
    yield
    ml.set_policy(ml.BarrierPolicy())
    # minilazy turns JAX's 64-bit mode on around its own calls only (LZ-LOW-002): a test that
    # leaves it on in this thread breaks that promise for every later test in the process.
    assert not jax.config.jax_enable_x64, "JAX's 64-bit mode was left on by this test"
