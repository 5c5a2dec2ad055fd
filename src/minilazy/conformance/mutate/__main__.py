"""``python -m minilazy.conformance.mutate [--full] [--jobs N] [--profile P] [NAME ...]``.

Runs the oracle against every mutant of the catalogue (or those named) and prints the mutation
score table; exits 1 unless every mutant is killed by one of its own rules. ``--full`` runs the
whole suite on each (collateral failures, and the spec tests no mutant fails); the default runs
each mutant's own rules only, stopping at its first failure. ``--markdown FILE`` writes the
table for the docs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from minilazy.conformance.mutate import CATALOGUE, run_all, table, unkilled_tests


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring).

    Example:
        >>> main(["--list"])  # doctest: +ELLIPSIS
        key-ignores-shape ...
        0
    """
    parser = argparse.ArgumentParser(prog="python -m minilazy.conformance.mutate")
    parser.add_argument("names", nargs="*", help="mutants to run (default: all)")
    parser.add_argument("--full", action="store_true", help="run the whole suite on each")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once")
    parser.add_argument("--profile", default="ci", help="Hypothesis profile (default: ci)")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    parser.add_argument("--list", action="store_true", help="list the catalogue and exit")
    args = parser.parse_args(argv)
    chosen = [m for m in CATALOGUE if not args.names or m.name in args.names]
    unknown = set(args.names) - {m.name for m in CATALOGUE}
    if unknown:
        parser.error(f"unknown mutants: {', '.join(sorted(unknown))}")
    if args.list:
        for m in chosen:
            print(f"{m.name} ({m.layer}): {', '.join(m.breaks)}")
        return 0
    outcomes = run_all(chosen, args.profile, fast=not args.full, jobs=args.jobs)
    lines = table(outcomes)
    if args.full:
        quiet = unkilled_tests(outcomes)
        ran = len(set().union(*(o.tests for o in outcomes)))
        lines += ["", f"Spec tests no mutant fails: {len(quiet)} of {ran}.", "",
                  *(f"- `{t}`" for t in quiet)]
    print("\n".join(lines))
    for o in outcomes:
        if o.error:
            print(f"\n{o.mutant.name}: the run gave no report:\n{o.error}", file=sys.stderr)
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")
    return 0 if all(o.killed for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
