"""Every generated mutant the oracle lets through, and why that is no hole in the oracle.

Keyed by the mutant's id (:attr:`.generated.Site.id`, stable across edits elsewhere in its
module). A survivor is either *equivalent* (no program can tell it from the original through the
public API: a dead branch, a cache that only gets faster or slower, a bound never reached), or
a behaviour outside the spec (a message's wording, a warning), or it was a hole: then the test
that closes it is in ``suite/test_mutant_holes.py`` and the mutant is killed, not listed here.
"""

from __future__ import annotations

EXPLAINED: dict[str, str] = {
    # core.fallback host_values: COUNTERS.fallback_ops[op] += 1 -> -= 1
    "g-a8b1d05d3c": (
        "outside the spec: ml.metrics().fallback_ops, the count of host fallbacks per op, is "
        "minilazy's own report (metrics_report, the debugger); the protocol's counter is the "
        "total, counters().fallbacks, which stays right (LZ-DYN-003 checks it)"),
    # parts.plans Plan.__init__: i in roots -> (i not in roots)
    "g-85c7b64418": (
        "equivalent: every operand lands in the plan's checks and none in its spanning tree, so "
        "following a plan always fails and every cut is walked, as without a planner: the same "
        "cut, key and program, only slower (the project's test of PLANS.hits kills it; the "
        "oracle, which sees values, keys and compiles, cannot)"),
}
