"""``ml.metrics_report()`` tells the truth: an empty list says so, a load is not a compile."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import minilazy as ml


def _section(report: str, title: str) -> list[str]:
    """The lines under ``title``, up to the next line at its indentation."""
    lines = report.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(title))
    body = []
    for line in lines[start + 1:]:
        if not line.startswith("    "):
            break
        body.append(line.strip())
    return body


def test_empty_sections_say_none_instead_of_a_bare_header():
    ml.reset_metrics()
    report = ml.metrics_report()
    assert _section(report, "observations that ran a barrier") == ["none"], report
    assert _section(report, "host fallbacks") == ["none"], report
    for timer in ("trace time", "compile time", "execute time"):
        line = next(x for x in report.splitlines() if x.strip().startswith(timer))
        assert line.split()[-1] == "none", line
    for counted in ("barriers", "compiles", "fallbacks"):
        line = next(x for x in report.splitlines() if x.strip().startswith(counted))
        assert line.endswith("(none)"), line
    x = ml.asarray(np.arange(3.0))  # and a section with an entry lists it, without "none"
    float(ml.sum(x * 2.0))
    report = ml.metrics_report()
    (site,) = _section(report, "observations that ran a barrier")
    assert site.startswith("1 x  float() at "), site
    assert "compile time      1 x" in report


def test_a_program_loaded_from_disk_is_not_reported_as_a_compile(tmp_path: Path):
    ml.set_cache_dir(tmp_path)
    try:
        ml.clear_cache()
        ml.sync(ml.ones((3,)) * 2.0)  # compiled and written
        ml.clear_cache()  # as a new process
        ml.reset_metrics()
        ml.sync(ml.ones((3,)) * 5.0)  # loaded
        m, report = ml.metrics(), ml.metrics_report()
    finally:
        ml.set_cache_dir(None)
    assert (m.compiles, m.disk_hits, m.compile_timer.count) == (0, 1, 0)
    assert "compiles            0   (1 new, compiled or loaded: " in report, report
    assert "persistent cache    1 loaded (" in report and "compile time   none" in report, report
