"""Strategy selection: from a profile to ranked opportunities and warnings.

For every entry of the allowed scope (shared entries plus the chosen language's)
`recommend` combines, in the spirit of Nsight Compute's guided-analysis rules:

* **triggers** — each `metric op value` of When to Apply is evaluated against the
  profile's metrics.  A trigger weighs by how specific its metric is in the catalog
  (`metric_weights`: log(1 + entries / entries using it)); a shape fact that holds
  (`kv_len >= 1024`) earns only `SHAPE_CREDIT` of its weight.  `evidence = share of the
  weight that fired × (1 − share that failed)`: conditions are meant together, and a
  missing metric weakens without firing.  An entry is dropped when every trigger
  checked fails, or when only shape facts hold while a measured symptom fails;
* **text relevance** — BM25 of the profile's root cause, key issues, stage names and
  kernel name against the entries, normalised to the best match;
* **bottleneck class** — the entry lists the profile's class (memory / compute /
  latency);
* **expected gain** — the entry's `expected_gain_pct`.

`score = W_TRIGGER·evidence·related + W_TEXT·relevance + W_CLASS·class + W_GAIN·gain`,
where `related` is 1, or `UNRELATED_FACTOR` for an entry tied to specific kernel
contexts that shares no word with the profile.  An entry with no measured trigger is
proposed on text alone above `TEXT_ONLY_MIN`.  The estimated gain is the entry's
expected gain times the share of its measured triggers that hold, capped by the
headroom to the roofline floor when the profile has `pct_of_floor` (a kernel at 80% of
speed of light cannot gain more than 25%).  Anti-patterns warn when most of their
triggers were measured and hold, or when they are the best text match and nothing
measured contradicts them.  Refuted entries are never proposed.

`_Table` evaluates all entries at once with numpy; `_evaluate` is the readable
reference for one entry and explains each reported one (the tests check they agree).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kbopt.contracts.profile import Opportunity, Profile, fmt_number
from kbopt.errors import KbError
from kbopt.model import COMPARATORS
from kbopt.store import KNOWLEDGE_DIR, Store
from kbopt.vocab import Language

if TYPE_CHECKING:  # numpy is imported where ranking runs, not at `import kbopt`
    import numpy as np

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
TEXT_CANDIDATES = 200
# Metrics that describe the problem's shape rather than a measured symptom.
SHAPE_METRICS = frozenset(
    {"batch", "query_len", "kv_len", "num_heads", "head_dim", "rows", "row_len"}
)
# A shape fact that holds makes an entry applicable, not needed: it earns this share.
SHAPE_CREDIT = 0.3
ALL_LANGUAGES = "all"
# What the Top 3 says of an entry proposed on its text alone (no trigger held).
NO_TRIGGER = "none fired (matched on text only)"
# Scores closer than this are a tie: risk and `requires` links decide (order_ties).
TIE = 0.01
_RISK_ORDER = {"low": 0, "medium": 1, "high": 2}

_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{1,}")


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

    @classmethod
    def from_entry_json(cls, data: dict[str, Any], relpath: str) -> Card:
        triggers = []
        for t in data.get("triggers", []):
            v = float(t["value"])
            shown = fmt_number(v)
            triggers.append((t["metric"], t["op"], v, f"{t['metric']} {t['op']} {shown}"))
        return cls(
            name=data["name"],
            title=data["title"],
            kind=data["kind"],
            language=data.get("language"),
            path=f"{KNOWLEDGE_DIR.as_posix()}/{relpath}",
            status=data.get("status", "proposed"),
            bottlenecks=frozenset(data.get("bottlenecks", [])),
            contexts=frozenset(data.get("applies_to", [])),
            gain=float(data.get("expected_gain_pct", 0.0)),
            impact=data.get("impact", "medium"),
            risk=data.get("risk", "medium"),
            triggers=tuple(triggers),
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

    def to_contract(self) -> Opportunity:
        return Opportunity(
            name=self.title,
            link=self.path,
            gain_pct=round(self.estimated_gain, 1),
            trigger=self.trigger or NO_TRIGGER,
        )


@dataclass
class Strategy:
    """The result of `recommend`: ranked opportunities, anti-pattern warnings, the profile."""

    profile: Profile
    language: str | None
    opportunities: list[RankedOpportunity] = field(default_factory=list)
    warnings: list[RankedOpportunity] = field(default_factory=list)

    def filled_profile(self) -> Profile:
        """The profile with its Top 3 Opportunities filled from this ranking."""
        return self.profile.with_opportunities(o.to_contract() for o in self.opportunities)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.profile.kernel,
            "version": self.profile.version,
            "bottleneck": self.profile.bottleneck.value if self.profile.bottleneck else None,
            "language": self.language,
            "metrics": self.profile.metrics,
            "opportunities": [o.to_dict() for o in self.opportunities],
            "warnings": [w.to_dict() for w in self.warnings],
        }


# ----------------------------------------------------------------------------- cards

_CARD_CACHE: dict[int, tuple[int, dict[str, tuple[str, Card]]]] = {}


def _cards(ix: Any) -> list[Card]:
    """Cards of every indexed entry; only entries whose file hash changed are re-decoded."""
    ix.ensure_fresh()
    gen = ix.gen
    cached_version, cards = _CARD_CACHE.get(id(ix), (-1, {}))
    if cached_version == ix.version:
        return [c for _, c in cards.values()]
    want = {rel: v[2] for rel, v in gen.manifest.entries.items() if v[3]}
    fresh: dict[str, tuple[str, Card]] = {}
    missing = []
    for rel, sha in want.items():
        old = cards.get(rel)
        if old is not None and old[0] == sha:
            fresh[rel] = old
        else:
            missing.append(rel)
    if missing:
        searcher = gen.searcher
        reader = searcher.reader()
        if len(missing) > 64 and reader.has_column("card"):
            # Cold: the `card` and `path` columns of every document in one pass.
            wanted = set(missing)
            live = set(reader.all_doc_ids())
            paths = reader.column_reader("path")
            for doc, raw in enumerate(reader.column_reader("card")):
                if doc not in live:
                    continue
                rel = paths[doc]
                rel = rel.decode() if isinstance(rel, bytes) else rel
                if rel in wanted and raw:
                    fresh[rel] = (want[rel], Card.from_entry_json(json.loads(raw), rel))
        else:
            for rel in missing:
                stored = searcher.document(path=rel)
                if stored is not None:
                    fresh[rel] = (want[rel], Card.from_entry_json(json.loads(stored["entry"]), rel))
    _CARD_CACHE[id(ix)] = (ix.version, fresh)
    return [c for _, c in fresh.values()]


# ----------------------------------------------------------------------------- ranking


def _relevance(ix: Any, profile: Profile) -> dict[str, float]:
    """Normalised full-text relevance of each entry to the profile's words."""
    from kbopt.search.fast import plan_for_text

    searcher = ix.searcher()
    plan = plan_for_text(searcher.schema, profile.text_for_search())
    if plan is None:
        return {}  # only stop words: no text signal
    # Not the evidence tables: they name the kernels an entry was measured on, win or lose,
    # so a profile of that kernel would rank an entry up for a slowdown recorded against
    # it.  What evidence teaches reaches the ranking through expected_gain_pct (LEARN).
    plan.words = [[(f, w) for f, w in group if f != "evidence"] for group in plan.words]
    fast = ix.gen.fast()
    ranked = fast.run(plan, {}, TEXT_CANDIDATES)
    top = max((score for _, score in ranked), default=0.0)
    if top <= 0:
        return {}
    return {fast.entry_id(doc): score / top for doc, score in ranked}


def trigger_metrics(profile: Profile) -> dict[str, float]:
    """The profile's metrics as triggers see them.

    A tensor-core utilization of exactly 0 means the kernel issues no MMA at all: a
    condition such as `tensor_core_util_pct < 40` ("the tensor cores are under-fed")
    does not describe it, so the metric is left out rather than read as a symptom.
    """
    metrics = dict(profile.metrics)
    if metrics.get("tensor_core_util_pct") == 0:
        del metrics["tensor_core_util_pct"]
    return metrics


def _headroom_pct(metrics: dict[str, float]) -> float | None:
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


def _evaluate(
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
    for metric, op, value, expr in card.triggers:
        w = weights.get(metric, 1.0)
        mass_all += w
        if metric not in metrics:
            continue
        if COMPARATORS[op](metrics[metric], value):
            fired.append(expr)
            mass_fired += w * (SHAPE_CREDIT if metric in SHAPE_METRICS else 1.0)
            shown.append((metric in SHAPE_METRICS, -w, f"{metric}={fmt_number(metrics[metric])}"))
        else:
            failed.append(expr)
            mass_failed += w
    # Report the most specific measured symptom (ctas_per_sm=0.2), never a shape fact first.
    first_value = min(shown)[2] if shown else ""
    known = len(fired) + len(failed)
    coverage = len(fired) / known if known else 0.0
    if not fired and relevance < TEXT_ONLY_MIN:
        return None
    if card.triggers and not fired and known:
        return None  # its conditions were checked and none holds
    symptom_fired = any(not is_shape for is_shape, _, _ in shown)
    symptom_failed = any(m not in SHAPE_METRICS for m, _, _, e in card.triggers if e in failed)
    if symptom_failed and not symptom_fired:
        return None  # only shape facts hold (kv_len...): the measured symptom is absent
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


class _Table:
    """Every card's triggers as flat numpy arrays, so one profile is scored in one pass.

    The Python `_evaluate` stays the reference: the table finds the few cards worth
    reporting (same rules, same formula), and `_evaluate` then explains each of them.
    """

    def __init__(self, cards: list[Card]):
        import numpy as np

        self.cards = cards
        self.index = {c.name: i for i, c in enumerate(cards)}
        self.weights = metric_weights(cards)
        names = sorted({t[0] for c in cards for t in c.triggers})
        self.metric_names = names
        slot = {m: i for i, m in enumerate(names)}
        rows = [(ci, slot[m], op, v) for ci, c in enumerate(cards) for m, op, v, _ in c.triggers]
        self.t_card = np.array([r[0] for r in rows], dtype=np.int64)
        self.t_metric = np.array([r[1] for r in rows], dtype=np.int64)
        self.t_value = np.array([r[3] for r in rows], dtype=np.float64)
        self.t_ops = {op: np.array([r[2] == op for r in rows], dtype=bool) for op in COMPARATORS}
        self.t_shape = np.array([names[r[1]] in SHAPE_METRICS for r in rows], dtype=bool)
        self.t_weight = np.array([self.weights.get(names[r[1]], 1.0) for r in rows])
        n = len(cards)
        self.n_triggers = np.bincount(self.t_card, minlength=n).astype(np.float64)
        self.mass_all = np.bincount(self.t_card, weights=self.t_weight, minlength=n)
        self.language = np.array([c.language or "" for c in cards], dtype=object)
        self.refuted = np.array([c.status == "refuted" for c in cards], dtype=bool)
        self.anti = np.array([c.kind == "anti-pattern" for c in cards], dtype=bool)
        self.generic = np.array([bool(c.contexts & GENERIC_CONTEXTS) for c in cards], dtype=bool)
        kind_of = [c.contexts - CALL_CONTEXTS - PROPERTY_CONTEXTS for c in cards]
        self.specific = np.array(
            [
                bool(kinds) and not (c.contexts & CALL_CONTEXTS)
                for c, kinds in zip(cards, kind_of, strict=True)
            ],
            dtype=bool,
        )
        self.by_context = {
            ctx: np.array([ctx in c.contexts for c in cards], dtype=bool)
            for ctx in {ctx for c in cards for ctx in c.contexts}
        }
        self.gain = np.array([min(c.gain, 100.0) / 100.0 for c in cards])
        self.bottleneck = {
            b: np.array([b in c.bottlenecks for c in cards], dtype=bool)
            for b in {b for c in cards for b in c.bottlenecks}
        }

    def candidates(
        self,
        metrics: dict[str, float],
        relevance: dict[str, float],
        bottleneck: str | None,
        language: str | None,
        limit: int,
        contexts: frozenset[str] = frozenset(),
    ) -> tuple[list[int], list[int]]:
        """Indexes of the best `limit` optimizations and of the warned anti-patterns."""
        import numpy as np

        n = len(self.cards)
        vals = np.array([metrics.get(m, np.nan) for m in self.metric_names], dtype=np.float64)
        v = vals[self.t_metric] if len(self.t_metric) else np.zeros(0)
        known = ~np.isnan(v)
        holds = np.zeros(len(v), dtype=bool)
        for op, sel in self.t_ops.items():
            holds[sel] = COMPARATORS[op](v[sel], self.t_value[sel])
        fired, failed = known & holds, known & ~holds

        def per_card(x: np.ndarray) -> np.ndarray:
            return np.bincount(self.t_card, weights=x.astype(np.float64), minlength=n)

        n_fired, n_failed = per_card(fired), per_card(failed)
        credit = np.where(self.t_shape, SHAPE_CREDIT, 1.0) * self.t_weight
        mass_fired = per_card(fired * credit)
        mass_failed = per_card(failed * self.t_weight)
        symptom_fired = per_card(fired & ~self.t_shape) > 0
        symptom_failed = per_card(failed & ~self.t_shape) > 0
        rel = np.zeros(n)
        for name, r in relevance.items():
            if name in self.index:
                rel[self.index[name]] = r
        in_scope = self.language == ""
        if language == ALL_LANGUAGES:
            in_scope[:] = True
        elif language is not None:
            in_scope |= self.language == language
        has_triggers = self.n_triggers > 0
        if contexts:
            # The kernel's spec says what it is: an entry tied to other kinds of kernels
            # (attention, MLA...) does not apply to it, whatever its triggers say.  Entries
            # with property tags only (memory-bound, small-grid...) or a call-level tag
            # (any-kernel, inference-step...) fit all.
            fits = ~self.specific
            for ctx in contexts - CALL_CONTEXTS - PROPERTY_CONTEXTS:
                if ctx in self.by_context:
                    fits |= self.by_context[ctx]
            in_scope = in_scope & fits
        eligible = (
            in_scope
            & ~self.refuted
            & ((n_fired > 0) | (rel >= TEXT_ONLY_MIN))
            & ~(has_triggers & (n_fired == 0) & (n_failed > 0))
            & ~(symptom_failed & ~symptom_fired)
        )
        safe_all = np.where(self.mass_all > 0, self.mass_all, 1.0)
        evidence = np.where(
            self.mass_all > 0, (mass_fired / safe_all) * (1.0 - mass_failed / safe_all), 0.0
        )
        related = (rel > 0) | self.generic
        cls = self.bottleneck.get(bottleneck or "", np.zeros(n, dtype=bool))
        score = (
            W_TRIGGER * evidence * np.where(related, 1.0, UNRELATED_FACTOR)
            + W_TEXT * rel
            + W_CLASS * cls
            + W_GAIN * self.gain
        )
        known_n = n_fired + n_failed
        coverage = np.where(known_n > 0, n_fired / np.maximum(known_n, 1), 0.0)
        confidence = np.where(has_triggers, known_n / np.maximum(self.n_triggers, 1), 0.0)
        measured = (coverage >= WARN_COVERAGE) & (confidence >= WARN_CONFIDENCE)
        described = (rel >= WARN_TEXT) & (n_failed == 0)
        warn = eligible & self.anti & (((n_fired > 0) & measured) | described)
        opts = np.flatnonzero(eligible & ~self.anti)
        # A margin over `limit`: the exact ranking below breaks ties on estimated gain.
        keep = min(len(opts), limit + 10)
        if len(opts) > keep:
            opts = opts[np.argpartition(-score[opts], keep - 1)[:keep]]
        warned = np.flatnonzero(warn)
        if len(warned) > keep:
            warned = warned[np.argpartition(-score[warned], keep - 1)[:keep]]
        return [int(i) for i in opts], [int(i) for i in warned]


_TABLE_CACHE: dict[int, tuple[int, _Table]] = {}


def _table(ix: Any) -> _Table:
    cards = _cards(ix)
    cached = _TABLE_CACHE.get(id(ix))
    if cached is not None and cached[0] == ix.version:
        return cached[1]
    table = _Table(cards)
    _TABLE_CACHE[id(ix)] = (ix.version, table)
    return table


def recommend(
    profile: Profile | str,
    *,
    language: str | None = None,
    limit: int = 10,
    store: Store | None = None,
) -> Strategy:
    """Ranked opportunities and anti-pattern warnings for `profile`.

    `language` keeps shared entries plus that language's; None keeps shared entries
    only and `"all"` every language.  `profile` may be a `Profile` or its Markdown text.
    """
    from kbopt.search import get_index

    if isinstance(profile, str):
        profile = Profile.parse(profile)
    if language not in (None, ALL_LANGUAGES):
        allowed = [lang.value for lang in Language]
        if language not in allowed:
            raise KbError(f"unknown language {language!r}; use one of: {', '.join(allowed)}")
    if limit < 1:
        raise KbError(f"limit must be at least 1 (got {limit})")
    ix = get_index(store)
    table, relevance = ix.reading(lambda: (_table(ix), _relevance(ix, profile)))
    metrics = trigger_metrics(profile)
    bottleneck = profile.bottleneck.value if profile.bottleneck else None
    headroom = _headroom_pct(metrics)
    contexts = kernel_contexts(profile)
    opt_idx, warn_idx = table.candidates(metrics, relevance, bottleneck, language, limit, contexts)
    shown_path = _public_paths(ix.store)

    def explain(i: int) -> RankedOpportunity | None:
        card = table.cards[i]
        rel = relevance.get(card.name, 0.0)
        verdict = _evaluate(card, metrics, rel, bottleneck, table.weights)
        if verdict is None:  # the table and _evaluate apply the same rules
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
    requires = {c.name: c.requires for c in table.cards}
    return Strategy(
        profile=profile,
        language=language,
        opportunities=order_ties(sorted(proposals, key=_rank_key)[:limit], requires),
        warnings=sorted(warnings, key=_rank_key)[:limit],
    )


def kernel_contexts(profile: Profile) -> frozenset[str]:
    """The catalog contexts the kernel's spec declares, from the profile's `### Context`."""
    text = profile.notes.get(CONTEXT_NOTE, "")
    return frozenset(w.strip() for w in text.replace(".", "").split(",") if w.strip())


CONTEXT_NOTE = "Context"


def order_ties(
    ranked: list[RankedOpportunity], requires: dict[str, frozenset[str]]
) -> list[RankedOpportunity]:
    """Ranked by score; scores equal to `TIE` are ordered by risk (the easiest to revert
    first), then so that an entry another one `requires` comes first, then by estimated
    impact."""
    names = {o.id for o in ranked}

    def key(o: RankedOpportunity) -> tuple[float, int, int, float, str]:
        needed = any(o.id in requires.get(p.id, ()) for p in ranked if p.id != o.id)
        blocked = bool(requires.get(o.id, frozenset()) & names)
        return (
            -round(o.score / TIE),
            _RISK_ORDER.get(o.risk, 1),
            0 if needed else (2 if blocked else 1),
            -o.estimated_gain,
            o.id,
        )

    return sorted(ranked, key=key)


def _public_paths(store: Store) -> Callable[[str], str]:
    """Card paths (`docs/knowledge/<rel>`) as the file that holds the entry shows: in a
    project layered over the bundled catalog, a bundled entry's package path."""
    if len(store.layers) < 2:
        return lambda path: path
    prefix = f"{KNOWLEDGE_DIR.as_posix()}/"

    def shown(path: str) -> str:
        found = store.locate(path.removeprefix(prefix))
        return store.public_path(found) if found is not None else path

    return shown


def _rank_key(o: RankedOpportunity) -> tuple[float, float, str]:
    return (-round(o.score, 6), -o.estimated_gain, o.id)
