"""Measurement helpers shared by the benchmark scripts: statistics, units, memory, threads.

NumPy and the standard library only: the peers' worker processes import this module from their
own virtual environments, which have neither jax nor minilazy.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

Samples = dict[str, list[float]]  # named series of seconds per unit (op, step...)

# XLA:CPU (jax, minilazy, PyTorch/XLA) on one thread: no Eigen pool, one intra-op thread.
XLA_SINGLE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
# Every thread pool we know of, for the "one thread" setting (torch also calls
# torch.set_num_threads(1) in its worker).
SINGLE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Stats:
    """Summary of a series of timings (or any values): median and the p10..p90 spread."""

    median: float
    p10: float
    p90: float
    samples: int

    @staticmethod
    def of(xs: Sequence[float]) -> Stats:
        p10, p50, p90 = np.percentile(np.asarray(xs, dtype=np.float64), [10, 50, 90])
        return Stats(float(p50), float(p10), float(p90), len(xs))


def fmt_time(seconds: float) -> str:
    """``seconds`` with a readable unit and three significant digits: ``1.23 ms``."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def pin_glibc_malloc() -> bool:
    """Make glibc keep freed memory (no trimming, 32 MiB mmap threshold); False if not glibc.

    By default glibc adapts its thresholds to the allocation history, so whether a new 4 MB
    array costs ~1000 page faults (~0.3 ms) or none depends on what the process did before:
    NumPy's 20-op chain on 1e6 floats measured 2.7 ms or 8.5 ms in the same build. Pinning the
    thresholds makes every system reuse warm memory for arrays up to 32 MiB. Larger ones (1e7
    float32) are always fresh mmaps: NumPy asks for transparent huge pages (~570 faults per
    40 MB), XLA's CPU allocator does not (~9800 faults, ~15 ms).
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # from <malloc.h>
    return bool(mallopt(m_mmap_threshold, 32 << 20)) and bool(mallopt(m_trim_threshold, 1 << 30))


def peak_rss_mib() -> float:
    """The process's resident-set high-water mark so far (``ru_maxrss``), in MiB."""
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return kib / 1024


def rss_mib() -> float:
    """The process's resident set now (``VmRSS`` in /proc), in MiB; the peak where no /proc."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return peak_rss_mib()


def thread_waits() -> int:
    """Times the calling thread gave up the CPU to wait (voluntary context switches: a lock, a
    condition, I/O), as opposed to being preempted; 0 where the OS does not count per thread."""
    who = getattr(resource, "RUSAGE_THREAD", None)
    return 0 if who is None else resource.getrusage(who).ru_nvcsw


def minor_faults() -> int:
    """Minor page faults of this process so far: fresh pages the OS had to hand out."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


# -- the worker protocol: one JSON object per line ---------------------------------------------
def protocol_stream() -> IO[str]:
    """Take over stdout for the protocol; whatever libraries print from now on goes to stderr.

    PyTorch/XLA and friends write banners and warnings to stdout, which would corrupt the
    stream of JSON lines. Returns a text stream on a private copy of the original stdout.
    """
    sys.stdout.flush()
    private = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(private, "w", buffering=1)


def send(stream: IO[str], message: dict[str, Any]) -> None:
    """Write one protocol message (one line of JSON)."""
    stream.write(json.dumps(message) + "\n")
    stream.flush()
