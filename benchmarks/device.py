"""The one-shot accelerator check: ``nox -s device`` (or ``python benchmarks/device.py``).

On a machine with a GPU or TPU, in under 8 minutes and one report: the backend test matrix on
it (every test that takes the ``device`` fixture, run for that platform), the three models of
the main job trained on it, and the model benchmarks against ``jax.jit`` (``run.py --quick``).
Where no accelerator is present, each part says it skipped and why, and one step of each model
on the CPU shows that the check itself runs. The report: ``OUT/device.md`` and ``device.json``
(``--out``, default ``benchmarks/results/device/``); the benchmarks page quotes it when a
machine with an accelerator was lent.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# Steps per model on an accelerator (enough for a steady state), and the CPU's smoke step.
STEPS = {"mlp": 300, "cnn": 100, "transformer": 100}


def _run(argv: list[str], timeout: float) -> dict[str, Any]:
    start = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        status, out = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as e:
        status, out = "timeout", f"{e.stdout or ''}{e.stderr or ''}"
    return {"command": " ".join(argv), "status": status,
            "seconds": round(time.monotonic() - start, 1), "tail": str(out)[-1500:]}


def accelerators() -> list[str]:
    """The accelerator platforms JAX sees here (``gpu``, ``tpu``), none on a CPU machine."""
    from minilazy.scaleout.processes import platforms

    return [p for p in platforms() if p != "cpu"]


def check(out: Path, models: list[str] | None = None) -> dict[str, Any]:
    """Run every part (the ``models`` named, default all three) and write the report."""
    found = accelerators()
    report: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                              "accelerators": found, "parts": {}}
    parts = report["parts"]
    if found:
        parts["matrix"] = _run([sys.executable, "-m", "pytest", "tests", "-q", "-n", "4",
                                "-p", "no:cacheprovider", "-k", " or ".join(found)], 270)
        counts = re.findall(r"(\d+) (passed|failed|skipped|error)", parts["matrix"]["tail"])
        parts["matrix"]["counts"] = {k: int(n) for n, k in counts}
    else:
        parts["matrix"] = {"status": "skipped", "why": "no GPU or TPU: the backend matrix's "
                           "accelerator rows skip ('no gpu device'); CI runs the CPU rows"}
    for model, steps in STEPS.items():
        if models is not None and model not in models:
            continue
        n = steps if found else 1
        parts[f"model/{model}"] = _run([sys.executable, "-m", "minilazy", "--model", model,
                                        "--steps", str(n)], 150 if found else 90)
        parts[f"model/{model}"]["steps"] = n
    if found:
        bench = out / "bench"
        parts["benchmarks"] = _run([sys.executable, str(HERE / "run.py"), "--quick", "--systems",
                                    "minilazy", "jax-jit", "--threads", "default", "--workloads",
                                    "mlp", "model/cnn", "model/transformer", "--out",
                                    str(bench)], 240)
        table = bench / "results.md"
        parts["benchmarks"]["table"] = table.read_text() if table.exists() else ""
    else:
        parts["benchmarks"] = {"status": "skipped", "why": "no GPU or TPU: the CPU figures are "
                               "benchmarks/results/results.md's"}
    out.mkdir(parents=True, exist_ok=True)
    (out / "device.json").write_text(json.dumps(report, indent=1))
    (out / "device.md").write_text(markdown(report))
    return report


def markdown(report: dict[str, Any]) -> str:
    """The report as the benchmarks page shows it."""
    where = ", ".join(report["accelerators"]) or "none (CPU only: a smoke run)"
    lines = [f"Accelerator check of {report['date']}; accelerators: {where}.", "",
             "| part | status | seconds | what it printed last |", "|---|---|---|---|"]
    for name, part in report["parts"].items():
        last = (part.get("why") or part.get("tail", "").strip().splitlines()[-1:] or [""])
        text = last if isinstance(last, str) else last[0]
        lines.append(f"| {name} | {part['status']} | {part.get('seconds', '')} | "
                     f"{text.replace('|', '/')[:120]} |")
    table = report["parts"].get("benchmarks", {}).get("table")
    return "\n".join(lines + (["", table] if table else [])) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the check; the exit status is 1 if a part that ran failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "results" / "device")
    parser.add_argument("--models", nargs="+", choices=list(STEPS), default=None,
                        help="the models to train (default: all three)")
    args = parser.parse_args(argv)
    report = check(args.out, args.models)
    print(markdown(report))
    return int(any(p["status"] not in (0, "skipped") for p in report["parts"].values()))


if __name__ == "__main__":
    raise SystemExit(main())
