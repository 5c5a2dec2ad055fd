"""The oracle's run directories (its workers' current-test files) do not pile up.

Each run of the oracle keeps its workers' current-test files in a ``minilazy-oracle-*`` directory of
the temporary directory (``conformance/tools/isolation.py``). The run removes it when it ends,
whether its tests passed, failed or crashed a worker; a run that was killed leaves it, and the next
run removes it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from minilazy.conformance.tools import isolation

CRASHY = """
import os, signal
from minilazy.conformance.mutate.toy import Toy

class Crashy(Toy):  # a library with a fatal bug
    name = "crashy"

    def apply(self, op, *args, **kwargs):
        if op == "floor_divide":
            os.kill(os.getpid(), signal.SIGFPE)  # the library crashes its process
        return super().apply(op, *args, **kwargs)
"""


def left(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob("minilazy-oracle-*"))


def test_a_run_whose_library_crashed_a_worker_removes_its_directory(tmp_path: Path) -> None:
    (tmp_path / "crashy.py").write_text(CRASHY)
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))},
           "TMPDIR": str(temp),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-m", "minilazy.conformance", "--lazy-impl=crashy:Crashy",
         "--lazy-rules=LZ-NUM-001", "-k", "floor_divide or add", "-q",
         f"--spec-report={tmp_path / 'report.json'}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    report = json.loads((tmp_path / "report.json").read_text())
    messages = [f["message"] for f in report["failures"].values()]
    assert "crashed (Floating point exception)" in messages, out.stdout[-3000:]
    assert left(temp) == []


def test_a_killed_runs_directory_is_removed_by_the_next_run(tmp_path: Path) -> None:
    killed = subprocess.run(
        [sys.executable, "-c", "import os, signal, sys\n"
         "from pathlib import Path\n"
         "from minilazy.conformance.tools import isolation\n"
         "print(isolation.fresh_directory(Path(sys.argv[1])).name, flush=True)\n"
         "os.kill(os.getpid(), signal.SIGKILL)\n", str(tmp_path)],
        capture_output=True, text=True, timeout=120)
    name = killed.stdout.strip()
    assert left(tmp_path) == [name]  # killed: it could not remove its directory
    # A live run's directory stays, however old: here, this process's parent's.
    alive = tmp_path / f"{isolation.PREFIX}{os.getppid()}-1"
    alive.mkdir()
    hour_ago = time.time() - isolation.STALE_S - 60
    for d in (tmp_path / name, alive):
        os.utime(d, (hour_ago, hour_ago))
    new = isolation.fresh_directory(tmp_path)
    assert left(tmp_path) == sorted([alive.name, new.name])


def test_a_run_that_ends_removes_its_directory(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom pathlib import Path\n"
         "from minilazy.conformance.tools import isolation\n"
         "print(isolation.fresh_directory(Path(sys.argv[1])).is_dir())\n", str(tmp_path)],
        capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["True"], done.stderr[-2000:]
    assert left(tmp_path) == []
