"""``python -m minilazy.conformance.mutate [--earned | --full] [--jobs N] [NAME ...]``.

Runs the oracle against every mutant (the hand-written catalogue and the families made by rule,
or those named; ``--catalogue`` for the hand-written ones only) and prints the mutation score
table; exits 1 unless every mutant is killed by one of its own rules. The default runs each
mutant's own rules only, stopping at its first failure. ``--earned`` runs all of them and adds
the adequacy table: which spec tests some mutant fails, per rule family, and the rest with their
reasons (also from a run of the unmutated engine, which must pass everything). ``--full`` runs
the whole suite on each (collateral failures). ``--markdown FILE`` writes the tables.

``--alone`` runs each mutant once per rule it names, that rule alone (``mutant@RULE`` names one
pair): every named rule must kill it. ``--generated N [--seed S] [--results FILE]`` instead
tries N mutants generated from the engine's source (``generated.py``, ``trials.py``): the
project's tests, then the oracle; the kill rate per module and every survivor, explained or not.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from minilazy.conformance.mutate import CATALOGUE, family_mutants, run_all, table


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring).

    Example:
        >>> main(["--list", "--catalogue"])  # doctest: +ELLIPSIS
        key-ignores-shape ...
        0
    """
    parser = argparse.ArgumentParser(prog="python -m minilazy.conformance.mutate")
    parser.add_argument("names", nargs="*", help="mutants to run (default: all)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--full", action="store_true", help="run the whole suite on each")
    mode.add_argument("--earned", action="store_true",
                      help="run all of each mutant's tests; add the adequacy table")
    parser.add_argument("--catalogue", action="store_true", help="the hand-written ones only")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once")
    parser.add_argument("--profile", default="ci", help="Hypothesis profile (default: ci)")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    mode.add_argument("--alone", action="store_true",
                      help="run each mutant once per rule it names, that rule alone: every "
                           "named rule must kill it (mutate/alone.py)")
    mode.add_argument("--generated", type=int, metavar="N",
                      help="N mutants generated from the engine's source instead, each tried "
                           "on the project's tests, then the oracle (mutate/trials.py; run "
                           "from the project's root)")
    parser.add_argument("--seed", type=int, default=0, help="--generated: which sites")
    parser.add_argument("--results", type=Path, help="--generated: a JSON-lines file to resume "
                                                     "from and append to")
    args = parser.parse_args(argv)
    if args.generated is not None:
        from minilazy.conformance.mutate import trials
        return trials.main(args.generated, args.seed, Path.cwd(), args.results, args.markdown)
    every = CATALOGUE + (() if args.catalogue else family_mutants())
    wanted = {n.split("@")[0] for n in args.names}  # --alone: mutant@RULE, that rule only
    chosen = [m for m in every if not wanted or m.name in wanted]
    unknown = wanted - {m.name for m in every}
    if unknown:
        parser.error(f"unknown mutants: {', '.join(sorted(unknown))}")
    if args.list:
        for m in chosen:
            print(f"{m.name} ({m.layer}): {', '.join(m.breaks)}")
        return 0
    if args.alone:  # one run per (mutant, rule), each rule alone
        from minilazy.conformance.mutate import alone
        pairs = [m for m in alone.alone(chosen)
                 if m.name in args.names or m.name.split("@")[0] in args.names or not args.names]
        outcomes = run_all(pairs, args.profile, "fast", jobs=args.jobs)
        lines = alone.table(outcomes)
        print("\n".join(lines))
        if args.markdown:
            args.markdown.write_text("\n".join(lines) + "\n")
        return 0 if all(o.killed for o in outcomes) else 1
    run_mode = "full" if args.full else "earned" if args.earned else "fast"
    if args.earned:  # first: a test the unmutated engine fails earns nothing
        from minilazy.conformance.mutate.adequacy import adequacy, spec_tests
        tests, failing = spec_tests()
        if failing:
            print("The unmutated engine fails:", *failing, sep="\n- ", file=sys.stderr)
            return 1
    outcomes = run_all(chosen, args.profile, run_mode, jobs=args.jobs)
    lines = table(outcomes)
    if args.earned:
        lines += ["", *adequacy(outcomes, tests)]
    print("\n".join(lines))
    for o in outcomes:
        if o.error:
            print(f"\n{o.mutant.name}: the run gave no report:\n{o.error}", file=sys.stderr)
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")
    return 0 if all(o.killed for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
