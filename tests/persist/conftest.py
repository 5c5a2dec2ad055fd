"""Fixtures of the persistent cache's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import minilazy as ml


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """The persistent cache on, in an empty directory of this user's, memory's cache empty."""
    directory = tmp_path / "cache"
    ml.set_cache_dir(directory)
    ml.clear_cache()
    yield directory
    ml.set_cache_dir(None)
    ml.clear_cache()
