"""The rules of strategy selection, with the standard library only.

`kbopt.strategy` documents the scoring (triggers, text relevance, bottleneck class,
expected gain) and runs it over the search index, with numpy for the first pass over
every entry.  The rules themselves live here, in plain Python: how one entry is
evaluated against a profile (`evaluate`), which entries are worth reporting
(`candidates`, the plain-Python twin of `kbopt.strategy._Table.candidates`), how the
reported ones are explained and ordered (`explain_and_order`), and how a result is
printed (`result_dict`, `result_text`).  `kbopt.cli.quick` answers `kbopt recommend`
from the index snapshot with these same functions, without loading numpy, whoosh or
pydantic; tests check both paths print the same bytes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kbopt.contracts.profile_text import fmt_number
from kbopt.vocab import COMPARATORS, language_of_version, local_traffic_is_spills

W_TRIGGER = 0.45
W_TEXT = 0.35
W_CLASS = 0.1
W_GAIN = 0.1
# Text relevance alone proposes an entry without any trigger only above this.
TEXT_ONLY_MIN = 0.35
# An anti-pattern warns when most of its conditions were measured and hold (a warning
# on one generic symptom such as low DRAM throughput would fire on every kernel).
WARN_COVERAGE = 0.6
WARN_CONFIDENCE = 0.6
WARN_TEXT = 0.8  # ... or when it is (nearly) the best text match of the profile
# Trigger evidence counts less for an entry tied to specific kernel contexts (mla,
# gemm...) when the profile's words share nothing with it.
UNRELATED_FACTOR = 0.6
GENERIC_CONTEXTS = frozenset(
    {"any-kernel", "memory-bound", "compute-bound", "small-grid", "multi-kernel"}
)
# Contexts about how a kernel is called, not what it computes: an entry tagged with one
# applies to any kind of kernel (CUDA graphs, per-call host work, autotuning).
CALL_CONTEXTS = frozenset({"any-kernel", "inference-step", "multi-kernel", "autotuning"})
# Properties any kind of kernel can have; they do not make an entry fit a kernel kind.
PROPERTY_CONTEXTS = frozenset({"memory-bound", "compute-bound", "small-grid"})
# Kinds of kernel built on matrix products: attention's and GEMM's.  A spec that names its
# contexts but no kind of kernel (a resize, a stream compaction: "memory-bound" alone) is
# neither, whose spec would say so (every GEMM and attention spec here names its kind);
# entries tied only to these kinds stay off it, while entries tied to broad patterns
# (reduction, normalization...) that a kernel of an unnamed kind may share stay on.
MATMUL_KINDS = frozenset(
    {"attention", "attention-decode", "mla", "online-softmax", "gemm", "grouped-gemm"}
)
TEXT_CANDIDATES = 200
# Metrics that describe the problem's shape rather than a measured symptom.
SHAPE_METRICS = frozenset(
    {
        "batch",
        "query_len",
        "kv_len",
        "num_heads",
        "head_dim",
        "rows",
        "row_len",
        "matmul_operand_bits",
    }
)
# A shape fact that holds makes an entry applicable, not needed: it earns this share.
SHAPE_CREDIT = 0.3
ALL_LANGUAGES = "all"
# What the Top 3 says of an entry proposed on its text alone (no trigger held).
NO_TRIGGER = "none fired (matched on text only)"
# Scores closer than this are a tie: risk and `requires` links decide (order_ties).
TIE = 0.01
# The table's first pass keeps this many candidates beyond `limit`: the exact ranking
# breaks ties on estimated gain.
CANDIDATE_MARGIN = 10
# Where entry files live in a project (`kbopt.store.KNOWLEDGE_DIR`; a test checks).
KNOWLEDGE_PATH = "docs/knowledge"
# The section of a profile that names the kernel's catalog contexts.
CONTEXT_NOTE = "Context"
_RISK_ORDER = {"low": 0, "medium": 1, "high": 2}


class ProfileLike(Protocol):
    """What ranking reads of a profile (`Profile`, or the quick path's `ProfileFacts`)."""

    @property
    def metrics(self) -> dict[str, float]: ...

    @property
    def notes(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class Card:
    """What ranking needs from one entry, decoded once per index version."""

    name: str
    title: str
    kind: str
    language: str | None
    path: str
    status: str
    bottlenecks: frozenset[str]
    contexts: frozenset[str]
    gain: float
    impact: str
    risk: str
    triggers: tuple[tuple[str, str, float, str], ...]  # (metric, op, value, expression)
    requires: frozenset[str] = frozenset()  # entries that must be in place first
    # The condition each trigger belongs to (0, 1, ...): alternatives written `A` or `B`
    # share one; empty means one condition per trigger.
    groups: tuple[int, ...] = ()
    # Expressions of the triggers that are room to act (front matter `room_to_act`), not
    # symptoms: like a shape fact, one that holds makes the entry applicable, not needed.
    room: frozenset[str] = frozenset()
    # Expressions of the triggers that are the problem itself (front matter `defining`): a
    # condition with one of them that was measured and fails rules the entry out.
    defining: frozenset[str] = frozenset()

    def is_defining(self, condition: list[tuple[str, str, float, str]]) -> bool:
        """Whether a condition is the problem itself (one of its alternatives is listed)."""
        return any(e in self.defining for _, _, _, e in condition)

    def is_unstated_gate(self, condition: list[tuple[str, str, float, str]], stated: Any) -> bool:
        """Whether a condition only gates the entry and the kernel does not state it: one
        listed both as room to act and as defining, on shape metrics only
        (`matmul_operand_bits > 8`), none of whose metrics is in `stated`.  It then counts
        neither for nor against the entry: a kernel whose spec says nothing of it ranks the
        entry as if the gate were absent, one that states it failing rules the entry out."""
        return (
            self.is_defining(condition)
            and all(e in self.room for _, _, _, e in condition)
            and all(m in SHAPE_METRICS for m, _, _, _ in condition)
            and not any(m in stated for m, _, _, _ in condition)
        )

    def is_fact(self, condition: list[tuple[str, str, float, str]]) -> bool:
        """Whether a condition states a fact (the problem's shape, room to act) rather than
        a measured symptom: every one of its alternatives is one."""
        return all(m in SHAPE_METRICS or e in self.room for m, _, _, e in condition)

    def conditions(self) -> list[list[tuple[str, str, float, str]]]:
        """The triggers gathered by condition, in order."""
        out: list[list[tuple[str, str, float, str]]] = []
        for i, t in enumerate(self.triggers):
            g = self.groups[i] if self.groups else i
            if g >= len(out):
                out.append([])
            out[g].append(t)
        return out

    @classmethod
    def from_entry_json(cls, data: dict[str, Any], relpath: str) -> Card:
        triggers = []
        groups: list[int] = []
        room = set()
        defining = set()
        for t in data.get("triggers", []):
            v = float(t["value"])
            shown = fmt_number(v)
            triggers.append((t["metric"], t["op"], v, f"{t['metric']} {t['op']} {shown}"))
            if t.get("room"):
                room.add(triggers[-1][3])
            if t.get("defining"):
                defining.add(triggers[-1][3])
            groups.append(groups[-1] if t.get("alternative") and groups else len(set(groups)))
        return cls(
            name=data["name"],
            title=data["title"],
            kind=data["kind"],
            language=data.get("language"),
            path=f"{KNOWLEDGE_PATH}/{relpath}",
            status=data.get("status", "proposed"),
            bottlenecks=frozenset(data.get("bottlenecks", [])),
            contexts=frozenset(data.get("applies_to", [])),
            gain=float(data.get("expected_gain_pct", 0.0)),
            impact=data.get("impact", "medium"),
            risk=data.get("risk", "medium"),
            triggers=tuple(triggers),
            groups=tuple(groups),
            room=frozenset(room),
            defining=frozenset(defining),
            requires=frozenset(
                i["target"] for i in data.get("interactions", []) if i["relation"] == "requires"
            ),
        )


@dataclass(frozen=True)
class RankedOpportunity:
    """One proposed entry (or warned-about anti-pattern) with why it was chosen."""

    id: str
    title: str
    kind: str
    language: str | None
    path: str  # link to the knowledge-base file
    score: float
    estimated_gain: float  # percent
    trigger: str  # `metric=value` of the first trigger that fired, "" when text-only
    fired: tuple[str, ...]  # trigger expressions that hold
    failed: tuple[str, ...]  # trigger expressions that do not hold
    relevance: float
    bottleneck_match: bool
    impact: str
    risk: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "kind": self.kind,
            "language": self.language,
            "path": self.path,
            "score": round(self.score, 4),
            "estimated_gain": round(self.estimated_gain, 1),
            "trigger": self.trigger,
            "fired": list(self.fired),
            "failed": list(self.failed),
            "relevance": round(self.relevance, 3),
            "bottleneck_match": self.bottleneck_match,
            "impact": self.impact,
            "risk": self.risk,
        }

    def to_contract(self) -> Any:
        """The profile contract's Top 3 item (`kbopt.contracts.profile.Opportunity`)."""
        from kbopt.contracts.profile import Opportunity

        return Opportunity(
            name=self.title,
            link=self.path,
            gain_pct=round(self.estimated_gain, 1),
            trigger=self.trigger or NO_TRIGGER,
        )


# ----------------------------------------------------------------------------- one entry


def row_elements_per_thread(metrics: Mapping[str, float]) -> float | None:
    """The spec's row length over the threads of one CTA (`block_size`), when both are known."""
    row_len, block = metrics.get("row_len"), metrics.get("block_size")
    return row_len / block if row_len and block else None


# torch's element-wise kernels (fill, copy, cast, arithmetic) are all instances of its
# `elementwise_kernel` templates (vectorized_, unrolled_...): beside an operation's own
# kernels they are passes over memory, and launches, that a fusion removes.
_TORCH_ELEMENTWISE = re.compile(r"elementwise_kernel")


def elementwise_launches(names: Iterable[str]) -> int:
    """How many of the launch names are torch element-wise kernels."""
    return sum(1 for name in names if _TORCH_ELEMENTWISE.search(name))


def trigger_metrics(profile: ProfileLike) -> dict[str, float]:
    """The profile's metrics as triggers see them.

    A kernel without matrix products is not one whose tensor cores are under-fed: a
    condition such as `tensor_core_util_pct < 40` does not describe it, so the metric is
    left out rather than read as a symptom.  Such a kernel either measures exactly 0 or its
    spec counts no FLOPs for the floor (`arithmetic_intensity` 0): ncu's tensor-pipe
    counter reads a few percent on element-wise and row kernels without any MMA (up to
    about 5% on the real profiles kept here), as much as torch's small batched products
    that do issue MMAs, so the counter alone cannot tell them apart.
    """
    metrics = dict(profile.metrics)
    per_thread = row_elements_per_thread(metrics)
    if per_thread is not None:
        metrics.setdefault("row_elements_per_thread", per_thread)  # profiles written before it
    kernels = [s.name for s in getattr(profile, "stages", ()) if not s.is_total]
    if kernels and "elementwise_launches" not in metrics:
        # Profiles written before the metric: their kernel rows (a lower bound where launches
        # were folded into an "other N launches" row).
        metrics["elementwise_launches"] = float(elementwise_launches(kernels))
    if "local_memory_bytes" in metrics and not local_traffic_is_spills(metrics):
        # Traffic of the kernel's own local arrays: triggers on local memory mean spills.
        del metrics["local_memory_bytes"]
    no_flops = metrics.get("arithmetic_intensity") == 0
    if "tensor_core_util_pct" in metrics and (no_flops or metrics["tensor_core_util_pct"] == 0):
        del metrics["tensor_core_util_pct"]
    return metrics


def kernel_contexts(profile: ProfileLike) -> frozenset[str]:
    """The catalog contexts the kernel's spec declares, from the profile's `### Context`."""
    text = profile.notes.get(CONTEXT_NOTE, "")
    return frozenset(w.strip() for w in text.replace(".", "").split(",") if w.strip())


# The profile's note on the metrics it could not measure: written by
# kbopt.workflow.profiler.build_profile, read back by `unmeasured_metrics`.
MISSING_NOTE = "Missing Metrics"
MISSING_LEAD = "Catalog triggers on these metrics could not be evaluated:"


def unmeasured_metrics(profile: ProfileLike) -> frozenset[str]:
    """The metrics the profile says it could not measure (its `### Missing Metrics`:
    counters off or unreadable).  A warning's confidence is the share of the triggers the
    profile could have measured, so these do not count against it."""
    text = profile.notes.get(MISSING_NOTE, "")
    if MISSING_LEAD in text:
        text = text.split(MISSING_LEAD, 1)[1]
    return frozenset(w.strip() for w in text.rstrip(". \n").split(",") if w.strip())


def headroom_pct(metrics: dict[str, float]) -> float | None:
    floor = metrics.get("pct_of_floor")
    if floor is None or floor <= 0:
        return None
    return max(0.0, 100.0 / min(floor, 100.0) - 1.0) * 100.0


def metric_weights(cards: Iterable[Card]) -> dict[str, float]:
    """Specificity of each trigger metric: log(1 + entries / entries that use it).

    A symptom many entries react to (tensor_core_util_pct) says little about which one
    to try; one that few entries name (shared_bank_conflicts) says a lot.
    """
    cards = list(cards)
    df: dict[str, int] = {}
    for c in cards:
        for m in {t[0] for t in c.triggers}:
            df[m] = df.get(m, 0) + 1
    n = max(1, len(cards))
    return {m: math.log(1.0 + n / k) for m, k in df.items()}


def evaluate(
    card: Card,
    metrics: dict[str, float],
    relevance: float,
    bottleneck: str | None,
    weights: dict[str, float],
) -> tuple[float, float, tuple[str, ...], tuple[str, ...], str] | None:
    """(score, coverage, fired, failed, trigger text), or None when the entry does not apply."""
    fired: list[str] = []
    failed: list[str] = []
    shown: list[tuple[bool, float, str]] = []  # (is a shape metric, -weight, `metric=value`)
    mass_fired = mass_failed = mass_all = 0.0
    n_fired = n_failed = 0
    symptom_fired = symptom_failed = defining_failed = False
    # One condition is one trigger, or alternatives of which any one firing fires it; it
    # fails when at least one alternative was measured and none of the measured holds (an
    # unmeasured twin of a failed measurement does not keep it open).
    for condition in card.conditions():
        if card.is_unstated_gate(condition, metrics):
            continue
        w = max(weights.get(m, 1.0) for m, _, _, _ in condition)
        shape = card.is_fact(condition)
        mass_all += w
        holding = [
            (m, e) for m, op, v, e in condition if m in metrics and COMPARATORS[op](metrics[m], v)
        ]
        if holding:
            n_fired += 1
            mass_fired += w * (SHAPE_CREDIT if shape else 1.0)
            symptom_fired = symptom_fired or not shape
            for m, e in holding:
                fired.append(e)
                wm = -weights.get(m, 1.0)
                shown.append((shape, wm, f"{m}={fmt_number(metrics[m])}"))
        elif any(m in metrics for m, _, _, _ in condition):
            n_failed += 1
            mass_failed += w
            symptom_failed = symptom_failed or not shape
            defining_failed = defining_failed or card.is_defining(condition)
            failed += [e for _, _, _, e in condition]
    # Report the most specific measured symptom (ctas_per_sm=0.2), never a shape fact first.
    first_value = min(shown)[2] if shown else ""
    known = n_fired + n_failed
    coverage = n_fired / known if known else 0.0
    if not fired and relevance < TEXT_ONLY_MIN:
        return None
    if card.triggers and not fired and known:
        return None  # its conditions were checked and none holds
    if symptom_failed and not symptom_fired:
        return None  # only shape facts hold (kv_len...): the measured symptom is absent
    if defining_failed:
        return None  # the problem itself was measured absent (no global atomics at all...)
    # Share of the entry's (specificity-weighted) conditions that hold, times the share
    # that was not contradicted: conditions are meant together.
    evidence = (mass_fired / mass_all) * (1.0 - mass_failed / mass_all) if mass_all else 0.0
    related = relevance > 0 or bool(card.contexts & GENERIC_CONTEXTS)
    class_match = 1.0 if bottleneck is not None and bottleneck in card.bottlenecks else 0.0
    score = (
        W_TRIGGER * evidence * (1.0 if related else UNRELATED_FACTOR)
        + W_TEXT * relevance
        + W_CLASS * class_match
        + W_GAIN * min(card.gain, 100.0) / 100.0
    )
    return score, coverage, tuple(fired), tuple(failed), first_value


# ----------------------------------------------------------------------------- all entries


def is_specific(card: Card) -> bool:
    """Tied to kinds of kernels (attention, gemm...) and not to how a kernel is called."""
    kinds = card.contexts - CALL_CONTEXTS - PROPERTY_CONTEXTS
    return bool(kinds) and not (card.contexts & CALL_CONTEXTS)


def is_matmul_only(card: Card) -> bool:
    """Tied to kinds of kernels, all of them built on matrix products (`MATMUL_KINDS`)."""
    return is_specific(card) and card.contexts - CALL_CONTEXTS - PROPERTY_CONTEXTS <= MATMUL_KINDS


def fits_kernel(card: Card, contexts: frozenset[str]) -> bool:
    """Whether an entry applies to a kernel whose spec declares `contexts` (none: all do).

    A spec that names a kind of kernel keeps off the entries tied to other kinds; one that
    names contexts but no kind keeps off the entries tied only to attention or GEMMs."""
    kinds = contexts - CALL_CONTEXTS - PROPERTY_CONTEXTS
    if kinds:
        return not is_specific(card) or bool(kinds & card.contexts)
    return not contexts or not is_matmul_only(card)


def candidates(
    cards: Sequence[Card],
    weights: dict[str, float],
    metrics: dict[str, float],
    relevance: dict[str, float],
    bottleneck: str | None,
    language: str | None,
    limit: int,
    contexts: frozenset[str] = frozenset(),
    unmeasured: frozenset[str] = frozenset(),
) -> tuple[list[int], list[int]] | None:
    """Indexes of the best `limit` + margin optimizations and of the warned anti-patterns:
    `kbopt.strategy._Table.candidates` operation for operation, in plain Python.

    The table keeps the best ones with numpy's `argpartition`, which picks among scores
    tied at the cut in no documented order; where such a tie decides what is kept, this
    returns None (the caller then lets the table decide).
    """
    n = len(cards)
    index = {c.name: i for i, c in enumerate(cards)}
    rel = [0.0] * n
    for name, r in relevance.items():
        if name in index:
            rel[index[name]] = r
    scores = [0.0] * n
    opts: list[int] = []
    warned: list[int] = []
    for i, c in enumerate(cards):
        n_fired = n_failed = n_unmeasured = 0
        mass_fired = mass_failed = mass_all = 0.0
        symptom_fired = symptom_failed = defining_failed = False
        conditions = c.conditions()
        for condition in conditions:
            if any(op not in COMPARATORS for _, op, _, _ in condition):
                return None  # the table would never count it as holding: not ours to guess
            if c.is_unstated_gate(condition, metrics):
                continue
            w = max(weights.get(m, 1.0) for m, _, _, _ in condition)
            shape = c.is_fact(condition)
            mass_all += w
            values = [(metrics.get(m, math.nan), op, v, m) for m, op, v, _ in condition]
            if any(not math.isnan(x) and COMPARATORS[op](x, v) for x, op, v, _ in values):
                n_fired += 1
                mass_fired += (SHAPE_CREDIT if shape else 1.0) * w
                symptom_fired = symptom_fired or not shape
            elif not all(math.isnan(x) for x, _, _, _ in values):
                n_failed += 1
                mass_failed += w
                symptom_failed = symptom_failed or not shape
                defining_failed = defining_failed or c.is_defining(condition)
            elif any(math.isnan(x) and m in unmeasured for x, _, _, m in values):
                n_unmeasured += 1
        in_scope = not c.language or language == ALL_LANGUAGES or c.language == language
        in_scope = in_scope and fits_kernel(c, contexts)
        has_triggers = bool(c.triggers)
        eligible = (
            in_scope
            and c.status != "refuted"
            and (n_fired > 0 or rel[i] >= TEXT_ONLY_MIN)
            and not (has_triggers and n_fired == 0 and n_failed > 0)
            and not (symptom_failed and not symptom_fired)
            and not defining_failed
        )
        evidence = (mass_fired / mass_all) * (1.0 - mass_failed / mass_all) if mass_all > 0 else 0.0
        related = rel[i] > 0 or bool(c.contexts & GENERIC_CONTEXTS)
        cls = 1.0 if bottleneck and bottleneck in c.bottlenecks else 0.0
        scores[i] = (
            W_TRIGGER * evidence * (1.0 if related else UNRELATED_FACTOR)
            + W_TEXT * rel[i]
            + W_CLASS * cls
            + W_GAIN * (min(c.gain, 100.0) / 100.0)
        )
        known_n = n_fired + n_failed
        coverage = n_fired / max(known_n, 1) if known_n > 0 else 0.0
        measurable = len(conditions) - n_unmeasured
        confidence = known_n / max(measurable, 1) if has_triggers else 0.0
        measured = coverage >= WARN_COVERAGE and confidence >= WARN_CONFIDENCE
        described = rel[i] >= WARN_TEXT and n_failed == 0
        anti = c.kind == "anti-pattern"
        if eligible and anti and ((n_fired > 0 and measured) or described):
            warned.append(i)
        if eligible and not anti:
            opts.append(i)
    keep = min(len(opts), limit + CANDIDATE_MARGIN)
    best_opts = _best(opts, scores, keep)
    best_warned = _best(warned, scores, limit + CANDIDATE_MARGIN)  # not capped by `opts`
    if best_opts is None or best_warned is None:
        return None
    return best_opts, best_warned


def _best(indexes: list[int], scores: list[float], keep: int) -> list[int] | None:
    """The `keep` best-scored of `indexes` (all when there are no more), None when a tie
    at the cut leaves the choice open."""
    if len(indexes) <= keep:
        return indexes
    if keep == 0:
        return []
    kth = sorted((scores[i] for i in indexes), reverse=True)[keep - 1]
    chosen = [i for i in indexes if scores[i] >= kth]
    return chosen if len(chosen) == keep else None


def explain_and_order(
    cards: Sequence[Card],
    weights: dict[str, float],
    opt_idx: Iterable[int],
    warn_idx: Iterable[int],
    *,
    metrics: dict[str, float],
    relevance: dict[str, float],
    bottleneck: str | None,
    limit: int,
    shown_path: Callable[[str], str],
) -> tuple[list[RankedOpportunity], list[RankedOpportunity]]:
    """The candidates explained by `evaluate` (its exact score, the trigger that fired,
    the estimated gain), then ranked: (opportunities, warnings)."""
    headroom = headroom_pct(metrics)

    def explain(i: int) -> RankedOpportunity | None:
        card = cards[i]
        rel = relevance.get(card.name, 0.0)
        verdict = evaluate(card, metrics, rel, bottleneck, weights)
        if verdict is None:  # the first pass and evaluate apply the same rules
            return None
        score, coverage, fired, failed, trigger = verdict
        gain = card.gain * (coverage if card.triggers and fired else 0.5)
        if headroom is not None:
            gain = min(gain, headroom)
        return RankedOpportunity(
            id=card.name,
            title=card.title,
            kind=card.kind,
            language=card.language,
            path=shown_path(card.path),
            score=score,
            estimated_gain=gain,
            trigger=trigger,
            fired=fired,
            failed=failed,
            relevance=rel,
            bottleneck_match=bottleneck in card.bottlenecks if bottleneck else False,
            impact=card.impact,
            risk=card.risk,
        )

    proposals = [r for r in map(explain, opt_idx) if r is not None]
    warnings = [r for r in map(explain, warn_idx) if r is not None]
    requires = {c.name: c.requires for c in cards}
    return (
        # ties are ordered before the cut, so an entry tied with the last one kept is weighed
        order_ties(sorted(proposals, key=rank_key), requires)[:limit],
        sorted(warnings, key=rank_key)[:limit],
    )


def order_ties(
    ranked: list[RankedOpportunity], requires: dict[str, frozenset[str]]
) -> list[RankedOpportunity]:
    """Ranked by score; scores within `TIE` of the best of their group are a tie, ordered
    by risk (the easiest to revert first), then so that an entry another one `requires`
    comes first, then by estimated impact.  Groups are formed from the top down, so two
    scores 0.004 apart are always a tie (rounding to a grid of `TIE` split such pairs
    whenever a grid line fell between them)."""
    names = {o.id for o in ranked}

    def key(o: RankedOpportunity) -> tuple[int, int, float, str]:
        needed = any(o.id in requires.get(p.id, ()) for p in ranked if p.id != o.id)
        blocked = bool(requires.get(o.id, frozenset()) & names)
        return (
            _RISK_ORDER.get(o.risk, 1),
            0 if needed else (2 if blocked else 1),
            -o.estimated_gain,
            o.id,
        )

    by_score = sorted(ranked, key=lambda o: (-o.score, o.id))
    out: list[RankedOpportunity] = []
    group: list[RankedOpportunity] = []
    for o in by_score:
        if group and group[0].score - o.score >= TIE:
            out += sorted(group, key=key)
            group = []
        group.append(o)
    return out + sorted(group, key=key)


def rank_key(o: RankedOpportunity) -> tuple[float, float, str]:
    return (-round(o.score, 6), -o.estimated_gain, o.id)


# ----------------------------------------------------------------------------- output


AT_FLOOR_PCT = 95.0  # % of the roofline floor from which the ranking's answer gets a note


def floor_note(metrics: Mapping[str, float]) -> str | None:
    """What a user should know before reading the ranking of a kernel at its floor: no
    change that keeps the bytes and FLOPs the floor counts can gain much, whatever ranks
    first; only a change of the floor itself can (the estimated gains are capped so)."""
    pct = metrics.get("pct_of_floor")
    if pct is None or pct < AT_FLOOR_PCT:
        return None
    headroom = headroom_pct(dict(metrics)) or 0.0
    return (
        f"at {pct:.0f}% of its roofline floor: a change that keeps the bytes and FLOPs the "
        f"floor counts can gain at most {headroom:.0f}%; a larger gain must lower the floor "
        "itself (fewer bytes: a narrower type such as FP8, or fusion with the neighbouring "
        "operations)"
    )


def result_dict(
    *,
    kernel: str,
    version: str,
    bottleneck: str | None,
    language: str | None,
    metrics: dict[str, float],
    opportunities: Sequence[RankedOpportunity],
    warnings: Sequence[RankedOpportunity],
) -> dict[str, Any]:
    """`kbopt recommend --json`'s object."""
    return {
        "kernel": kernel,
        "version": version,
        "bottleneck": bottleneck,
        "language": language,
        "metrics": metrics,
        "note": floor_note(metrics),
        "opportunities": [o.to_dict() for o in opportunities],
        "warnings": [w.to_dict() for w in warnings],
    }


def result_text(
    kernel: str,
    version: str,
    opportunities: Sequence[RankedOpportunity],
    warnings: Sequence[RankedOpportunity],
    metrics: Mapping[str, float] | None = None,
) -> str:
    """`kbopt recommend`'s text: the numbered opportunities, then the warnings."""
    out = [f"{kernel} {version}: {len(opportunities)} opportunities"]
    note = floor_note(metrics or {})
    if note:
        out.append(f"note: {note}")
    for i, o in enumerate(opportunities, 1):
        why = o.trigger or f"text relevance {o.relevance:.2f}"
        out.append(
            f"{i:2}. {o.id}  (score {o.score:.2f}, est. {o.estimated_gain:.0f}% gain, {why})"
        )
        out.append(f"    {o.title}  -> {o.path}")
    for w in warnings:
        why = ", ".join(w.fired) or f"text relevance {w.relevance:.2f}"
        out.append(f"warning: anti-pattern {w.id} matches ({why}) -> {w.path}")
    return "\n".join(out) + "\n"


def default_language(version: str) -> str | None:
    """The language a ranking asked for without one keeps: the profiled version's own
    (``triton_v3``: triton), or None (a baseline or another name: shared entries only).
    The result's ``language`` field says which was used."""
    lang = language_of_version(version)
    return None if lang is None else lang.value
