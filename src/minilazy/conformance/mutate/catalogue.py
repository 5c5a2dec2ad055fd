"""The catalogue of mutants: each an implementation with one realistic bug, and the rules it breaks.

Engine mutants patch minilazy in one place (:mod:`.engine` and its siblings); toy mutants break
the from-scratch toy (:mod:`.toy_mutants`); family mutants are made by rule, one per op of a family
(:func:`family_mutants`). The harness (``mutate/__init__.py``) runs the oracle on each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

ENGINE = "minilazy.conformance.mutate.engine"
GRADIENTS = "minilazy.conformance.mutate.gradients"
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
TOY = "minilazy.conformance.mutate.toy_mutants"
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
    _engine("vjp-matmul-untransposed", "autodiff", "LZ-AD-001", module=GRADIENTS),
    _engine("vjp-broadcast-not-summed", "autodiff", "LZ-AD-002", module=GRADIENTS),
    _engine("vjp-conv-unflipped", "autodiff", "LZ-AD-001", focus="conv2d", module=GRADIENTS),
    _engine("vjp-cumsum-forward", "autodiff", "LZ-AD-001", focus="cumulative_sum",
            module=GRADIENTS),
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
