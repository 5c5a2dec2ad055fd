"""The oracle, tested: a catalogue of mutants and the harness that scores the oracle on them.

A *mutant* is an implementation with one realistic bug: minilazy's engine patched in one place
(:mod:`.engine` and its siblings), or the from-scratch toy broken in one place (:mod:`.toy`). Each
entry of :data:`CATALOGUE` names the rules its bug breaks. The harness runs the oracle against each
mutant in a fresh process and reports whether it was *killed* (some test failed), by which rules,
and how long it took; the **mutation score** is the share killed by at least one of their own rules.
``python -m minilazy.conformance.mutate`` prints the table.

Two modes. ``fast`` runs only each mutant's own rules and stops at the first failure: what CI
runs. ``full`` runs the whole suite on every mutant: it also shows *collateral* failures (rules
outside the declared ones: a failure that leaked into another rule's tests) and which spec
tests no mutant fails (a test that cannot fail is a test that checks nothing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ENGINE = "minilazy.conformance.mutate.engine"
SEAMS = "minilazy.conformance.mutate.seams"
FAMILY = "minilazy.conformance.mutate.families"
RULES = "minilazy.conformance.mutate.rules"
ERRORS = "minilazy.conformance.mutate.errors"
NAMESPACES = "minilazy.conformance.mutate.namespaces"
CORNERS = "minilazy.conformance.mutate.corners"
LINALG_SITES = ("cholesky", "inv", "det", "slogdet", "eigvalsh", "svdvals", "matrix_norm",
                "pinv", "trace", "diagonal", "vector_norm",
                "matrix_transpose", "solve", "eigh", "svd", "qr")
FFT_SITES = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn")
TOY = "minilazy.conformance.mutate.toy"
TEMPORAL = "minilazy.conformance.mutate.temporal"


@dataclass(frozen=True)
class Mutant:
    """One entry of the catalogue.

    Attributes:
        name: a short name, e.g. ``key-ignores-wiring``.
        layer: where the bug sits (``key``, ``scalars``, ``barrier``, ``lowering``...).
        impl: the ``module:factory`` that makes it (``--lazy-impl``).
        breaks: the spec rules the bug breaks: the oracle must fail at least one of these.
        env: environment variables its run needs (two CPU devices for a device bug).
        focus: in ``fast`` and ``earned`` runs, a pytest ``-k`` expression narrowing its
            rules' tests to those about the op it breaks (its rule has hundreds of tests);
            ``full`` runs ignore it.
        family: for a mutant made by rule (:func:`family_mutants`), the family's name.

    Example:
        >>> CATALOGUE[0].impl
        'minilazy.conformance.mutate.engine:key_ignores_shape'
    """

    name: str
    layer: str
    impl: str
    breaks: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    focus: str = ""
    family: str = ""


def _engine(name: str, layer: str, *breaks: str, focus: str = "", module: str = ENGINE,
            **env: str) -> Mutant:
    return Mutant(name, layer, f"{module}:{name.replace('-', '_')}", breaks, env, focus)


def _toy(name: str, *breaks: str) -> Mutant:
    return Mutant(name, "toy", f"{TOY}:mutant_{name.replace('-', '_')}", breaks)


TWO_DEVICES = "--xla_force_host_platform_device_count=2"
CATALOGUE: tuple[Mutant, ...] = (
    _engine("key-ignores-shape", "key", "LZ-HASH-004", "LZ-CACHE-002", "LZ-CACHE-003"),
    _engine("key-ignores-dtype", "key", "LZ-HASH-004", "LZ-CACHE-003"),
    _engine("key-ignores-attrs", "key", "LZ-HASH-004", "LZ-HASH-005", "LZ-CACHE-003"),
    _engine("key-ignores-wiring", "key", "LZ-HASH-002", "LZ-HASH-005", "LZ-CACHE-003"),
    _engine("key-ignores-outputs", "key", "LZ-CACHE-003"),
    _engine("key-ignores-device", "key", "LZ-HASH-004", XLA_FLAGS=TWO_DEVICES),
    _engine("scalar-baked", "scalars", "LZ-CACHE-003"),
    _engine("scalar-strong", "scalars", "LZ-NUM-003", "LZ-REC-002"),
    _engine("scalar-shared-slot", "scalars", "LZ-BAR-004", "LZ-BAR-007", "LZ-CACHE-003"),
    _engine("donates-live-buffer", "donation", "LZ-CACHE-006"),
    _engine("misses-aliases", "barrier", "LZ-BAR-001"),
    _engine("misses-newest", "barrier", "LZ-BAR-001"),
    # (not LZ-ERR-003: an observation still gives each value; only mark_step misses it)
    _engine("misses-failed-region", "barrier", "LZ-BAR-001"),
    _engine("inplace-returns-new", "rebinding", "LZ-REC-004"),
    _engine("setitem-scalar-lost", "rebinding", "LZ-REC-004", "LZ-NUM-014"),
    # (not LZ-BAR-004: the observation is right; the value it reads is wrong: LZ-NUM-001)
    _engine("broadcast-rank-pair", "lowering", "LZ-NUM-001", focus="rank_pair"),
    _engine("keepdims-dropped", "lowering", "LZ-NUM-010"),
    _engine("negative-axes-off-by-one", "lowering", "LZ-NUM-010", "LZ-NUM-012"),
    _engine("floor-divide-truncates", "lowering", "LZ-NUM-001", focus="floor_divide"),
    _engine("promotes-int8-uint8-to-int8", "lowering", "LZ-NUM-002"),
    _engine("hfft-scaled-as-irfft", "namespace", "LZ-NUM-019", focus="hfft"),
    # (not LZ-AD-002: the gradient's shape is right, a square b's; its values are LZ-AD-001's)
    _engine("vjp-matmul-untransposed", "autodiff", "LZ-AD-001"),
    _engine("vjp-broadcast-not-summed", "autodiff", "LZ-AD-002"),
    _engine("vjp-conv-unflipped", "autodiff", "LZ-AD-001", focus="conv2d"),
    _engine("vjp-cumsum-forward", "autodiff", "LZ-AD-001", focus="cumulative_sum"),
    _engine("scalar-observation-stale", "observation", "LZ-BAR-004"),
    # (not LZ-BAR-007: its explicit barriers never reach an auto-cut, LZ-BAR-008's loop does)
    _engine("autocut-drops-pending", "auto-cut", "LZ-BAR-008"),
    _engine("fallback-syncs-all", "fallback", "LZ-DYN-002"),
    _engine("fallback-counted-twice", "fallback", "LZ-DYN-003"),
    _engine("key-ignores-fft-norm", "key", "LZ-CACHE-003", module=SEAMS, focus="fft"),
    _engine("policy-leaks-on-exception", "policy", "LZ-BAR-013", module=SEAMS),
    _engine("grad-stops-at-barriers", "autodiff", "LZ-AD-008", module=SEAMS),
    _engine("vjp-sort-descending-ascending", "autodiff", "LZ-AD-001", module=SEAMS,
            focus="sort"),
    _engine("host-data-aliased", "transfer", "LZ-REC-007", module=SEAMS),
    _engine("stop-gradient-passes-gradients", "autodiff", "LZ-AD-010", module=SEAMS),
    _engine("pack-column-major", "lowering", "LZ-NUM-020", module=SEAMS, focus="multitensor"),
    _toy("hash-ignores-shape", "LZ-HASH-004", "LZ-CACHE-002"),
    _toy("barrier-does-nothing", "LZ-BAR-001"),
    _toy("stale-cache", "LZ-HASH-004", "LZ-CACHE-003"),
    _toy("executes-at-record-time", "LZ-REC-001", "LZ-BAR-010", "LZ-BAR-003", "LZ-DYN-005"),
    _toy("strong-scalars", "LZ-NUM-003", "LZ-REC-002", "LZ-BAR-004"),
    _toy("drops-pending", "LZ-BAR-001", "LZ-BAR-004", "LZ-BAR-007", "LZ-CACHE-006"),
    _toy("max-keepdims-dropped", "LZ-NUM-010"),
    _engine("program-per-tensor", "barrier", "LZ-BAR-002", module=RULES),
    _engine("keeps-dead-tensors", "barrier", "LZ-BAR-003", module=RULES),
    _engine("sync-first-only", "barrier", "LZ-BAR-006", module=RULES),
    _engine("eager-is-lazy", "policy", "LZ-BAR-009", module=RULES),
    _engine("observing-shape-runs", "observation", "LZ-REC-003", module=RULES),
    _engine("never-donates", "donation", "LZ-CACHE-004", module=RULES),
    _engine("cache-of-one", "cache", "LZ-CACHE-005", "LZ-CACHE-001", module=RULES),
    _engine("key-salted-per-process", "key", "LZ-HASH-001", module=RULES),
    _engine("key-includes-buffers", "key", "LZ-HASH-003", "LZ-CACHE-001", "LZ-AD-007",
            module=RULES),
    _engine("data-baked", "lowering", "LZ-LOW-001", "LZ-CACHE-001", module=RULES),
    _engine("no-64-bits", "lowering", "LZ-LOW-002", module=RULES),
    _engine("sort-unstable", "namespace", "LZ-NUM-018", module=RULES, focus="sort"),
    _engine("grad-runs-its-result", "autodiff", "LZ-AD-004", "LZ-AD-005", module=RULES),
    _engine("pytree-rebuilt-loosely", "autodiff", "LZ-AD-003", module=RULES),
    _engine("grad-sums-its-result", "autodiff", "LZ-AD-006", module=RULES),
    _engine("autocut-counts-dead-nodes", "auto-cut", "LZ-BAR-011", module=RULES),
    _engine("zero-d-refused", "shapes", "LZ-NUM-012", module=RULES, focus="corners"),
    _engine("empty-refused", "shapes", "LZ-NUM-012", module=RULES, focus="corners"),
    _engine("eager-by-default", "policy", "LZ-REC-001", "LZ-BAR-010", module=RULES),
    _engine("negative-indices-clamped", "lowering", "LZ-NUM-013", module=RULES),
    _engine("setitem-rounds-twice", "lowering", "LZ-NUM-014", module=RULES, focus="float16"),
    _engine("transpose-of-vectors", "shapes", "LZ-NUM-012", module=RULES, focus="transpose"),
    _engine("transpose-of-all-axes", "shapes", "LZ-NUM-012", module=RULES, focus="transpose"),
    _engine("unique-nans-equal", "fallback", "LZ-DYN-001", module=RULES, focus="unique"),
    _engine("unique-first-seen", "fallback", "LZ-DYN-001", module=RULES, focus="unique"),
    _engine("first-element-observed", "observation", "LZ-ERR-004", module=RULES),
    _engine("devices-mixed-silently", "device", "LZ-ERR-005", module=RULES,
            XLA_FLAGS=TWO_DEVICES),
    _engine("failed-group-fails-all", "barrier", "LZ-ERR-009", module=RULES),
    _engine("checks-at-the-barrier", "errors", "LZ-ERR-001", "LZ-ERR-002", "LZ-ERR-006",
            "LZ-ERR-007", "LZ-ERR-008", module=ERRORS),
    _engine("errors-name-nothing", "errors", "LZ-ERR-001", "LZ-ERR-002", module=ERRORS),
    _engine("errors-fail-pending", "errors", "LZ-ERR-003", "LZ-DYN-004", module=ERRORS),
    _engine("inplace-uncast", "in-place", "LZ-NUM-014", "LZ-NUM-003", module=CORNERS,
            focus="in_place"),
    _engine("inplace-operands-swapped", "in-place", "LZ-NUM-014", module=CORNERS,
            focus="in_place"),
    _engine("grad-follows-rebound-arguments", "autodiff", "LZ-AD-009", module=CORNERS),
    _engine("reductions-skip-nan", "lowering", "LZ-NUM-010", module=CORNERS, focus="nan"),
    _engine("key-sums-its-nodes", "key", "LZ-HASH-002", "LZ-CACHE-003", module=CORNERS),
    # (not LZ-CACHE-003: a hit, of the same values, is right; a new value compiles anew)
    _engine("key-includes-scalar-values", "key", "LZ-HASH-003", "LZ-CACHE-001",
            module=CORNERS),
    _engine("ellipsis-of-no-axes-dropped", "indexing", "LZ-NUM-013", module=CORNERS,
            focus="ellipsis"),
    _engine("empty-index-list-selects-all", "indexing", "LZ-NUM-013", module=CORNERS,
            focus="empty_index"),
    _engine("adjacent-index-arrays-moved-first", "indexing", "LZ-NUM-013", module=CORNERS,
            focus="indexing or mixed or adjacent"),
    _engine("setitem-squeezes-values", "indexing", "LZ-NUM-014", module=CORNERS,
            focus="one_element"),
    _engine("nonzero-column-major", "fallback", "LZ-DYN-001", module=CORNERS,
            focus="mask or nonzero"),
    _engine("mask-assignment-falls-back", "fallback", "LZ-DYN-005", "LZ-DYN-003",
            module=CORNERS),
    _engine("unique-drops-last", "fallback", "LZ-DYN-001", module=CORNERS, focus="unique"),
    _engine("default-float-is-float32", "promotion", "LZ-REC-002", module=CORNERS),
    _engine("int-float-to-float64", "promotion", "LZ-REC-002", module=CORNERS),
    _engine("comparisons-refuse-out-of-range", "scalars", "LZ-REC-002", module=CORNERS),
    _engine("bools-are-ints", "scalars", "LZ-REC-002", module=CORNERS),
    _engine("autocut-limit-grows", "auto-cut", "LZ-BAR-011", module=CORNERS),
    _engine("bool-is-non-empty", "observation", "LZ-BAR-004", module=CORNERS,
            focus="scalar_observation"),
    _engine("policy-exit-restores-the-default", "policy", "LZ-BAR-013", module=CORNERS),
    _engine("array-observation-unsynced", "observation", "LZ-BAR-004", module=CORNERS),
    _engine("setitem-forgets-to-rebind", "indexing", "LZ-REC-004", "LZ-NUM-014", module=CORNERS,
            focus="setitem"),
    # Issue 42's fresh mutants: what decides a program besides its structure (one structure
    # reached twice, something else changed between), and the capabilities that had no rule.
    *(_engine(name, layer, *rules, module=TEMPORAL, focus=focus) for name, layer, rules, focus in (
        ("cache-ignores-donation-mask", "cache", ("LZ-CACHE-007",), "donation_mask"),
        ("disk-ignores-donation-mask", "cache", ("LZ-CACHE-008",), "donation_mask"),
        ("plan-ignores-wiring", "cut", ("LZ-CACHE-007",), "cut_plan"),
        ("structure-by-digests", "cache", ("LZ-CACHE-009",), "hash_alike"),
        ("weak-dtype-ignores-kind", "scalars", ("LZ-NUM-003",), "scalar_kind"),
        ("vjp-folds-scalar-exponent", "autodiff", ("LZ-AD-011",), ""),
        ("inner-mode-from-the-default", "policy", ("LZ-BAR-013",), ""),
        ("vjp-irfft-undoubled", "autodiff", ("LZ-AD-001",), "transforms"),
        ("vjp-inv-untransposed", "autodiff", ("LZ-AD-001",), "inv"),
        ("setitem-drops-one-leading-one", "indexing", ("LZ-NUM-014",), "leading"),
        ("adam-without-bias-correction", "optim", ("LZ-OPT-001",), ""),
        ("optim-rate-widens", "optim", ("LZ-OPT-002",), ""),
        ("optim-rate-baked", "optim", ("LZ-OPT-003",), ""),
        ("split-keys-alike", "random", ("LZ-RNG-003",), ""),
        ("seed-recompiles", "random", ("LZ-RNG-004",), ""),
        ("key-draws-advance", "random", ("LZ-RNG-002",), ""))),
)


def _sites(kinds: Iterable[str], arity: int | None = None) -> list[str]:
    from minilazy.conformance.registry import ops  # the registry: TOML, no engine import
    return [n for n, s in sorted(ops().items())
            if s.kind in kinds and (arity is None or s.arity == arity)]


def _family(family: str, layer: str, sites: Iterable[str], *breaks: str, module: str = FAMILY,
            focus: str = "") -> list[Mutant]:
    factory = "slip" if module == NAMESPACES else family.replace("-", "_")
    return [Mutant(f"{family}:{site}", layer, f"{module}:{factory}__{site}", breaks,
                   focus=focus or site, family=family) for site in sites]


# (real, imag, conj: complex-only gradients, which LZ-AD-001's real-valued tests do not take)
NOT_DIFFERENTIABLE = ("bitwise", "logical", "is", "equal", "not_equal", "less", "greater",
                      "real", "imag", "conj")
DIFFERENTIABLE_OTHERS = (
    "sum", "prod", "max", "min", "mean", "std", "var", "cumulative_sum", "reshape",
    "permute_dims", "expand_dims", "squeeze", "broadcast_to", "flip", "concat", "stack", "tril",
    "triu", "take", "take_along_axis", "getitem", "setitem", "clip", "tensordot", "matmul",
    "conv2d", "max_pool2d", "avg_pool2d", "diagonal", "matrix_norm", "matrix_power", "sort",
    "vector_norm")
# The ops whose attributes a key can leave out unseen: the key mutant leaves out an op's
# attributes and what they decide (its result's shape and dtype). Not here: ops whose attribute
# values change no node's description (a fill value, eye's k are scalar parameters).
WITH_ATTRIBUTES = (
    "all", "any", "argmax", "argmin", "cumulative_sum", "flip", "getitem", "max", "mean", "min",
    "permute_dims", "prod", "setitem", "sum", "take", "tensordot", "argsort",
    "avg_pool2d", "diagonal", "irfft", "rfft", "sort", "astype", "broadcast_to", "concat",
    "expand_dims", "reshape", "squeeze", "stack", "conv2d", "matrix_norm", "max_pool2d")
TWIN_RULES = {"reduction": "LZ-NUM-010", "shape": "LZ-NUM-012", "creation": "LZ-NUM-015",
              "triangle": "LZ-NUM-016"}
SLIP_SITES = {**dict.fromkeys(("reshape", "permute_dims", "flip", "broadcast_to", "squeeze",
                               "expand_dims", "stack", "concat"), "LZ-NUM-012"),
              **dict.fromkeys(("arange", "full", "linspace", "eye", "asarray"), "LZ-NUM-015"),
              "take_along_axis": "LZ-NUM-016", "cumulative_sum": "LZ-NUM-016",
              "take": "LZ-NUM-013", "where": "LZ-NUM-001", "clip": "LZ-NUM-001",
              "astype": "LZ-NUM-001", "full_like": "LZ-NUM-015",
              "searchsorted": "LZ-DYN-001", "arange_dtype": "LZ-NUM-015",
              "linspace_truncated": "LZ-NUM-015", "cumulative_sum_dtype": "LZ-REC-002",
              "squeeze_to_one": "LZ-NUM-012", "arange_cast": "LZ-NUM-015",
              "arange_count": "LZ-NUM-015"}
# (a second slip of one function: named apart, focused on the function)
SLIP_FOCUS = {"arange_dtype": "arange", "linspace_truncated": "linspace",
              "cumulative_sum_dtype": "recorded", "squeeze_to_one": "squeeze",
              "arange_cast": "arange", "arange_count": "arange"}


def family_mutants() -> tuple[Mutant, ...]:
    """The mutants made by rule (:mod:`.families`): one slip at every site of a table.

    Example:
        >>> sorted({m.family for m in family_mutants()})[:2]
        ['fft-slip', 'first-loop']
    """
    from minilazy.conformance.registry import ops
    elementwise = _sites(["elementwise"])
    # A comparison's or logical op's result is bool whatever its operands' loop: a promotion
    # slip or a strong scalar changes no value there (equivalent mutants); a refusal does.
    comparisons = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
    logical = ["logical_and", "logical_or", "logical_xor"]
    arithmetic = [n for n in _sites(["elementwise"], 2) if n not in comparisons + logical]
    return tuple(
        _family("lowering-row", "lowering", elementwise, "LZ-NUM-001", "LZ-NUM-014")
        + _family("first-loop", "promotion", arithmetic, "LZ-NUM-002")
        + _family("first-loop", "promotion", ["matmul"], "LZ-NUM-011")
        + _family("strong-scalar", "scalars", arithmetic, "LZ-NUM-003")
        + _family("scalar-refused", "scalars", comparisons + logical, "LZ-NUM-003")
        + _family("same-dtypes-only", "promotion", comparisons + logical, "LZ-NUM-002")
        + _family("vjp-negated", "autodiff", [n for n in elementwise if not n.startswith(
            NOT_DIFFERENTIABLE)] + list(DIFFERENTIABLE_OTHERS), "LZ-AD-001", "LZ-AD-002")
        + _family("key-without-attrs", "key", WITH_ATTRIBUTES, "LZ-CACHE-003")
        + [m for k, rule in TWIN_RULES.items()
           for m in _family("twin", "namespace", [n for n in TWIN_SITES if ops()[n].kind == k],
                            rule)]
        + [m for site, rule in SLIP_SITES.items()
           for m in _family("slip", "namespace", [site], rule, focus=SLIP_FOCUS.get(site, site))]
        + _family("linalg-slip", "linalg", LINALG_SITES, "LZ-NUM-018", module=NAMESPACES)
        + _family("fft-slip", "fft", FFT_SITES, "LZ-NUM-019", module=NAMESPACES)
        + _family("fft-slip", "fft", ["fftshift"], "LZ-NUM-019", module=NAMESPACES,
                  focus="frequencies")
        + _family("nn-slip", "windows", ["conv2d", "max_pool2d", "avg_pool2d"], "LZ-NUM-017",
                  module=NAMESPACES))


TWIN_SITES = ("sum", "prod", "max", "min", "argmax", "argmin", "any", "all", "mean", "var",
              "std", "tril", "triu", "zeros", "ones", "zeros_like", "ones_like",
              "matrix_transpose", "flip")


@dataclass(frozen=True)
class Outcome:
    """What the oracle did to one mutant.

    Attributes:
        mutant: the mutant.
        failed_rules: the rules with a failing test.
        failed_tests: the failing tests' ids.
        seconds: the run's wall time.
        error: why the run gave no report (a crash of the run itself), if it did not.
    """

    mutant: Mutant
    failed_rules: frozenset[str]
    failed_tests: frozenset[str]
    seconds: float
    error: str = ""
    tests: frozenset[str] = frozenset()  # every spec test the run reported on

    @property
    def killed(self) -> bool:
        """Killed by one of its own rules (failures of other rules alone do not count)."""
        return bool(self.failed_rules & set(self.mutant.breaks))

    @property
    def collateral(self) -> frozenset[str]:
        """Failed rules the mutant does not declare: a failure that leaked out of its rule."""
        return self.failed_rules - set(self.mutant.breaks)


def oracle_command(impl: str, *options: str) -> list[str]:
    """The command that runs the oracle on ``impl``, isolated from any project's pytest setup.

    Example:
        >>> oracle_command("minilazy.conformance.toy:toy")[:3]
        [..., '-m', 'minilazy.conformance']
    """
    return [sys.executable, "-m", "minilazy.conformance", f"--lazy-impl={impl}", *options]


def run(mutant: Mutant, profile: str = "ci", mode: str = "fast", timeout: float = 900
        ) -> Outcome:
    """Run the oracle on ``mutant`` in a fresh process.

    ``mode``: ``fast``, only its own rules (narrowed by its ``focus``), stopping at the first
    failure, without shrinking (the ``ci`` profile's ``-noshrink`` twin draws the same
    examples: whether a mutant is killed is the same; only the failing example is not
    minimised); ``earned``, the same tests, all of them (which tests it fails: the tests it
    earns); ``full``, the whole suite.
    """
    if mode not in ("fast", "earned", "full"):
        raise ValueError(f"mode: fast, earned or full, not {mode!r}")
    if mode != "full" and profile == "ci":
        profile = "ci-noshrink"
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        options = [f"--hypothesis-profile={profile}", f"--spec-report={report}", "-q",
                   "-p", "no:xdist"]  # the mutants do not crash: no worker to start
        if mode != "full":
            options += [f"--lazy-rules={','.join(mutant.breaks)}"]
            options += ["-x"] if mode == "fast" else []
            if mutant.focus:
                options += ["-k", mutant.focus]
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTEST_", "HYPOTHESIS", "MINILAZY_IMPL"))}
        env.update(mutant.env)
        start = time.perf_counter()
        try:
            done = subprocess.run(oracle_command(mutant.impl, *options), cwd=tmp, env=env,
                                  capture_output=True, text=True, timeout=timeout)
            tail = (done.stdout + done.stderr)[-2000:]
        except subprocess.TimeoutExpired:
            tail = f"timed out after {timeout:.0f} s"
        seconds = time.perf_counter() - start
        if not report.exists():
            return Outcome(mutant, frozenset(), frozenset(), seconds, tail)
        data = json.loads(report.read_text())
    failed_rules = frozenset(r for r, v in data["rules"].items() if v["status"] == "failed")
    failed_tests = frozenset(t for v in data["rules"].values() for t in v.get("failed", []))
    tests = frozenset(t for v in data["rules"].values()
                      for outcome in ("passed", "failed") for t in v.get(outcome, []))
    return Outcome(mutant, failed_rules, failed_tests, seconds, tests=tests)


def run_all(mutants: Iterable[Mutant], profile: str = "ci", mode: str = "fast", jobs: int = 2
            ) -> list[Outcome]:
    """Run every mutant, ``jobs`` at a time, in catalogue order (``mode``: see :func:`run`)."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda m: run(m, profile, mode), mutants))


def score(outcomes: Sequence[Outcome]) -> float:
    """The share of mutants killed by one of their own rules (1.0 is every one).

    Example:
        >>> score([])
        1.0
    """
    return sum(o.killed for o in outcomes) / len(outcomes) if outcomes else 1.0


def table(outcomes: Sequence[Outcome]) -> list[str]:
    """The mutation score table, as Markdown lines.

    Example:
        >>> table([])[0]
        '| mutant | layer | its rules | killed | killed by | collateral | time |'
    """
    lines = ["| mutant | layer | its rules | killed | killed by | collateral | time |",
             "|---|---|---|---|---|---|---|"]
    families: dict[str, list[Outcome]] = {}
    for o in outcomes:
        if o.mutant.family:  # one row per family; the names of any it missed
            families.setdefault(o.mutant.family, []).append(o)
            continue
        verdict = "yes" if o.killed else ("NO (run failed)" if o.error else "NO")
        own = ", ".join(sorted(o.failed_rules & set(o.mutant.breaks))) or "-"
        extra = ", ".join(sorted(o.collateral)) or "-"
        lines.append(f"| {o.mutant.name} | {o.mutant.layer} | {', '.join(o.mutant.breaks)} | "
                     f"{verdict} | {own} | {extra} | {o.seconds:.0f} s |")
    for family, runs in families.items():
        rules = sorted({r for o in runs for r in o.mutant.breaks})
        missed = [o.mutant.name.split(":", 1)[1] for o in runs if not o.killed]
        verdict = f"{len(runs) - len(missed)} of {len(runs)} sites" + (
            f" (NO: {', '.join(missed)})" if missed else "")
        won = ", ".join(sorted({r for o in runs for r in o.failed_rules & set(o.mutant.breaks)}))
        lines.append(f"| {family}:* | {runs[0].mutant.layer} | {', '.join(rules)} | {verdict} | "
                     f"{won or '-'} | - | {sum(o.seconds for o in runs):.0f} s |")
    killed = sum(o.killed for o in outcomes)
    lines += ["", f"Mutation score: {killed}/{len(outcomes)} killed by their own rules "
                  f"({score(outcomes):.0%})."]
    return lines
