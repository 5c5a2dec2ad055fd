"""Each catalogue mutant, run against each rule it names *alone*: every named rule must kill it.

A mutant's entry names the rules its bug breaks (:data:`~minilazy.conformance.mutate.CATALOGUE`).
The ordinary run (``fast``) asks whether *one* of them fails; here each rule runs on its own
(``--lazy-rules=RULE``, the mutant's ``focus``, stopping at the first failure), so a rule named
for a bug none of its tests can see shows up: the entry is wrong, or the rule misses a test.
``python -m minilazy.conformance.mutate --catalogue --alone`` prints the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from minilazy.conformance.mutate import Mutant, Outcome

SEPARATOR = "@"  # a per-rule run is named ``mutant@RULE``


def alone(mutants: Iterable[Mutant]) -> list[Mutant]:
    """One mutant per (mutant, rule it names), with that rule as its only one.

    Example:
        >>> from minilazy.conformance.mutate import CATALOGUE
        >>> [m.name for m in alone(CATALOGUE[:1])]  # doctest: +NORMALIZE_WHITESPACE
        ['key-ignores-shape@LZ-HASH-004', 'key-ignores-shape@LZ-CACHE-002',
         'key-ignores-shape@LZ-CACHE-003']
    """
    return [replace(m, name=f"{m.name}{SEPARATOR}{rule}", breaks=(rule,))
            for m in mutants for rule in m.breaks]


def missed(outcomes: Sequence[Outcome]) -> dict[str, list[str]]:
    """The rules that alone do not kill their mutant, by mutant name (empty: every one does).

    Example:
        >>> missed([])
        {}
    """
    found: dict[str, list[str]] = {}
    for o in outcomes:
        if not o.killed:
            name, rule = o.mutant.name.split(SEPARATOR)
            found.setdefault(name, []).append(rule)
    return found


def table(outcomes: Sequence[Outcome]) -> list[str]:
    """The per-rule table, as Markdown lines: each mutant, the rules that kill it alone, the rest.

    Example:
        >>> table([])[-1]
        'Killed by each of their own rules alone: 0 of 0 mutants (0 of 0 rules).'
    """
    by_mutant: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_mutant.setdefault(o.mutant.name.split(SEPARATOR)[0], []).append(o)
    lines = ["| mutant | killed alone by | NOT killed alone by | time |", "|---|---|---|---|"]
    for name, runs in by_mutant.items():
        kill = ", ".join(o.mutant.breaks[0] for o in runs if o.killed) or "-"
        miss = ", ".join(o.mutant.breaks[0] + (" (run failed)" if o.error else "")
                         for o in runs if not o.killed) or "-"
        lines.append(f"| {name} | {kill} | {miss} | {sum(o.seconds for o in runs):.0f} s |")
    whole = sum(all(o.killed for o in runs) for runs in by_mutant.values())
    lines += ["", f"Killed by each of their own rules alone: {whole} of {len(by_mutant)} mutants "
                  f"({sum(o.killed for o in outcomes)} of {len(outcomes)} rules)."]
    return lines
