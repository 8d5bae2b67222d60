"""Strategy selection: from a profile to ranked opportunities and warnings.

For every entry of the allowed scope (shared entries plus the chosen language's)
`recommend` combines, in the spirit of Nsight Compute's guided-analysis rules:

* **triggers** — each `metric op value` of When to Apply is evaluated against the
  profile's metrics (alternatives written `A` or `B` on one bullet are one condition,
  holding when any of them holds, failing when none of those measured holds).  A
  trigger weighs by how specific its metric is in the catalog
  (`metric_weights`: log(1 + entries / entries using it)); a shape fact that holds
  (`kv_len >= 1024`), or a condition the entry lists as room to act (`room_to_act`:
  `registers_per_thread <= 64`), earns only `SHAPE_CREDIT` of its weight.  `evidence = share of the
  weight that fired × (1 − share that failed)`: conditions are meant together, and a
  missing metric weakens without firing.  An entry is dropped when every trigger
  checked fails, when only such facts hold while a measured symptom fails, or when a
  condition the entry lists as the problem itself (`defining`) was measured and fails;
  a condition listed both as room to act and as defining, on shape metrics only, counts
  neither for nor against where the profile does not state it (`Card.is_unstated_gate`);
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

The rules are in `kbopt.ranking` (standard library only): `_Table` here evaluates all
entries at once with numpy; `kbopt.ranking.evaluate` is the readable reference for one
entry and explains each reported one (the tests check they agree), and
`kbopt.ranking.candidates` is the table's plain-Python twin that the quick path of
`kbopt recommend` uses.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kbopt.contracts.profile import Profile
from kbopt.errors import KbError
from kbopt.layers import PROJECT
from kbopt.ranking import (
    ALL_LANGUAGES,
    CALL_CONTEXTS,
    CANDIDATE_MARGIN,
    CONTEXT_NOTE,
    GENERIC_CONTEXTS,
    NO_TRIGGER,
    PROPERTY_CONTEXTS,
    SHAPE_CREDIT,
    SHAPE_METRICS,
    TEXT_CANDIDATES,
    TEXT_ONLY_MIN,
    TIE,
    UNRELATED_FACTOR,
    W_CLASS,
    W_GAIN,
    W_TEXT,
    W_TRIGGER,
    WARN_CONFIDENCE,
    WARN_COVERAGE,
    WARN_TEXT,
    Card,
    RankedOpportunity,
    evaluate,
    explain_and_order,
    headroom_pct,
    is_matmul_only,
    is_specific,
    kernel_contexts,
    metric_weights,
    order_ties,
    rank_key,
    result_dict,
    result_text,
    trigger_metrics,
    unmeasured_metrics,
)
from kbopt.store import KNOWLEDGE_DIR, Store
from kbopt.vocab import COMPARATORS, Language

if TYPE_CHECKING:  # numpy is imported where ranking runs, not at `import kbopt`
    import numpy as np

# The rules live in kbopt.ranking (standard library only, shared with the quick path of
# `kbopt recommend`); their names are this module's too.
__all__ = [
    "ALL_LANGUAGES",
    "CALL_CONTEXTS",
    "CONTEXT_NOTE",
    "GENERIC_CONTEXTS",
    "NO_TRIGGER",
    "PROPERTY_CONTEXTS",
    "SHAPE_CREDIT",
    "SHAPE_METRICS",
    "TEXT_CANDIDATES",
    "TEXT_ONLY_MIN",
    "TIE",
    "UNRELATED_FACTOR",
    "WARN_CONFIDENCE",
    "WARN_COVERAGE",
    "WARN_TEXT",
    "W_CLASS",
    "W_GAIN",
    "W_TEXT",
    "W_TRIGGER",
    "Card",
    "RankedOpportunity",
    "Strategy",
    "entry_public_path",
    "kernel_contexts",
    "metric_weights",
    "order_ties",
    "recommend",
    "trigger_metrics",
    "unmeasured_metrics",
]
_evaluate = evaluate
_headroom_pct = headroom_pct
_rank_key = rank_key


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
        return result_dict(
            kernel=self.profile.kernel,
            version=self.profile.version,
            bottleneck=self.profile.bottleneck.value if self.profile.bottleneck else None,
            language=self.language,
            metrics=self.profile.metrics,
            opportunities=self.opportunities,
            warnings=self.warnings,
        )

    def to_text(self) -> str:
        """What `kbopt recommend` prints without --json or --fill."""
        return result_text(
            self.profile.kernel,
            self.profile.version,
            self.opportunities,
            self.warnings,
            self.profile.metrics,
        )


# ----------------------------------------------------------------------------- cards

# Per index object, held weakly (see _TABLE_CACHE): cards leave with their index.
_CARD_CACHE: weakref.WeakKeyDictionary[Any, tuple[int, dict[str, tuple[str, Card]]]] = (
    weakref.WeakKeyDictionary()
)


def _cards(ix: Any) -> list[Card]:
    """Cards of every indexed entry; only entries whose file hash changed are re-decoded."""
    ix.ensure_fresh()
    gen = ix.gen
    cached_version, cards = _CARD_CACHE.get(ix, (-1, {}))
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
    _CARD_CACHE[ix] = (ix.version, fresh)
    return [c for _, c in fresh.values()]


# ----------------------------------------------------------------------------- ranking


def catalog_cards(store: Store | None = None) -> list[Card]:
    """The ranking's view of every entry in the catalog (its triggers grouped into
    conditions, kind, language, contexts, estimated gain), as `recommend` scores them: for
    tools that study the triggers themselves (scripts/trigger_base_rates.py)."""
    from kbopt.search import get_index

    ix = get_index(store or Store())
    return list(ix.reading(lambda: _cards(ix)))


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
        # One row per trigger, and one per condition (a trigger, or alternatives `A` or `B`
        # of which any one fires it): t_cond says which condition a trigger belongs to.
        rows = []
        # (card, weight, a fact: Card.is_fact, the problem itself: Card.is_defining, a gate
        # that counts only where the kernel states it: Card.is_unstated_gate)
        conds: list[tuple[int, float, bool, bool, bool]] = []
        for ci, c in enumerate(cards):
            for condition in c.conditions():
                for m, op, v, _ in condition:
                    rows.append((slot[m], op, v, len(conds)))
                conds.append(
                    (
                        ci,
                        max(self.weights.get(m, 1.0) for m, _, _, _ in condition),
                        c.is_fact(condition),
                        c.is_defining(condition),
                        c.is_unstated_gate(condition, ()),
                    )
                )
        self.t_metric = np.array([r[0] for r in rows], dtype=np.int64)
        self.t_value = np.array([r[2] for r in rows], dtype=np.float64)
        self.t_ops = {op: np.array([r[1] == op for r in rows], dtype=bool) for op in COMPARATORS}
        self.t_cond = np.array([r[3] for r in rows], dtype=np.int64)
        self.c_card = np.array([c[0] for c in conds], dtype=np.int64)
        self.c_weight = np.array([c[1] for c in conds], dtype=np.float64)
        self.c_shape = np.array([c[2] for c in conds], dtype=bool)
        self.c_defining = np.array([c[3] for c in conds], dtype=bool)
        self.c_gate = np.array([c[4] for c in conds], dtype=bool)
        n = len(cards)
        self.n_triggers = np.bincount(self.c_card, minlength=n).astype(np.float64)
        self.mass_all = np.bincount(self.c_card, weights=self.c_weight, minlength=n)
        self.language = np.array([c.language or "" for c in cards], dtype=object)
        self.refuted = np.array([c.status == "refuted" for c in cards], dtype=bool)
        self.anti = np.array([c.kind == "anti-pattern" for c in cards], dtype=bool)
        self.generic = np.array([bool(c.contexts & GENERIC_CONTEXTS) for c in cards], dtype=bool)
        self.specific = np.array([is_specific(c) for c in cards], dtype=bool)
        self.matmul_only = np.array([is_matmul_only(c) for c in cards], dtype=bool)
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
        unmeasured: frozenset[str] = frozenset(),
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
        n_cond = len(self.c_card)

        def per_cond(x: np.ndarray) -> np.ndarray:
            return np.bincount(self.t_cond, weights=x.astype(np.float64), minlength=n_cond)

        # a condition fires when any of its triggers holds, fails when one was measured
        # and none of the measured holds
        fired = per_cond(known & holds) > 0
        failed = ~fired & (per_cond(known) > 0)

        def per_card(x: np.ndarray) -> np.ndarray:
            return np.bincount(self.c_card, weights=x.astype(np.float64), minlength=n)

        n_fired, n_failed = per_card(fired), per_card(failed)
        credit = np.where(self.c_shape, SHAPE_CREDIT, 1.0) * self.c_weight
        mass_fired = per_card(fired * credit)
        mass_failed = per_card(failed * self.c_weight)
        symptom_fired = per_card(fired & ~self.c_shape) > 0
        symptom_failed = per_card(failed & ~self.c_shape) > 0
        defining_failed = per_card(failed & self.c_defining) > 0
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
        kinds = contexts - CALL_CONTEXTS - PROPERTY_CONTEXTS
        if kinds:
            # The kernel's spec says what it is: an entry tied to other kinds of kernels
            # (attention, MLA...) does not apply to it, whatever its triggers say.  Entries
            # with property tags only (memory-bound, small-grid...) or a call-level tag
            # (any-kernel, inference-step...) fit all (`ranking.fits_kernel`).
            fits = ~self.specific
            for ctx in kinds:
                if ctx in self.by_context:
                    fits |= self.by_context[ctx]
            in_scope = in_scope & fits
        elif contexts:
            # A spec that names contexts but no kind is neither attention nor a GEMM:
            # entries tied only to those kinds stay off; the others stay on.
            in_scope = in_scope & ~self.matmul_only
        eligible = (
            in_scope
            & ~self.refuted
            & ((n_fired > 0) | (rel >= TEXT_ONLY_MIN))
            & ~(has_triggers & (n_fired == 0) & (n_failed > 0))
            & ~(symptom_failed & ~symptom_fired)
            & ~defining_failed
        )
        # A gate the kernel does not state counts neither for nor against (Card.is_unstated_gate).
        unstated = self.c_gate & ~(per_cond(known) > 0)
        mass_all = self.mass_all - per_card(unstated * self.c_weight)
        safe_all = np.where(mass_all > 0, mass_all, 1.0)
        evidence = np.where(
            mass_all > 0, (mass_fired / safe_all) * (1.0 - mass_failed / safe_all), 0.0
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
        # Confidence: the share of the triggers this profile could have measured that it did.
        gone = np.array([m in unmeasured for m in self.metric_names], dtype=bool)
        n_unmeasured = (
            per_card(~fired & ~failed & (per_cond(~known & gone[self.t_metric]) > 0))
            if len(v)
            else np.zeros(n)
        )
        measurable = np.maximum(self.n_triggers - n_unmeasured, 1)
        confidence = np.where(has_triggers, known_n / measurable, 0.0)
        measured = (coverage >= WARN_COVERAGE) & (confidence >= WARN_CONFIDENCE)
        described = (rel >= WARN_TEXT) & (n_failed == 0)
        warn = eligible & self.anti & (((n_fired > 0) & measured) | described)
        opts = np.flatnonzero(eligible & ~self.anti)
        # A margin over `limit`: the exact ranking below breaks ties on estimated gain.
        keep = min(len(opts), limit + CANDIDATE_MARGIN)
        if len(opts) > keep:
            opts = opts[np.argpartition(-score[opts], keep - 1)[:keep]]
        # Warnings have their own margin: a profile with no eligible optimization can still
        # be in a trap worth naming.
        warned = np.flatnonzero(warn)
        keep_warn = limit + CANDIDATE_MARGIN
        if len(warned) > keep_warn:
            warned = warned[np.argpartition(-score[warned], keep_warn - 1)[:keep_warn]]
        return [int(i) for i in opts], [int(i) for i in warned]


# Keyed by the index object itself, held weakly: a table leaves with its index. Keyed by
# id(ix), a dropped index's cards and table were served to a new index that reused the id
# at the same version count (tests that reset the process's indexes then ranked another
# catalog's entries).
_TABLE_CACHE: weakref.WeakKeyDictionary[Any, tuple[int, _Table]] = weakref.WeakKeyDictionary()


def _table(ix: Any) -> _Table:
    cards = _cards(ix)
    cached = _TABLE_CACHE.get(ix)
    if cached is not None and cached[0] == ix.version:
        return cached[1]
    table = _Table(cards)
    _TABLE_CACHE[ix] = (ix.version, table)
    return table


DEFAULT_LIMIT = 10  # opportunities a ranking returns unless asked for another number


def recommend(
    profile: Profile | str,
    *,
    language: str | None = None,
    limit: int = DEFAULT_LIMIT,
    store: Store | None = None,
) -> Strategy:
    """Ranked opportunities and anti-pattern warnings for `profile`.

    `language` keeps shared entries plus that language's; None (or `"shared"`) keeps
    shared entries only and `"all"` every language.  `profile` may be a `Profile` or its Markdown text.
    """
    from kbopt.search import get_index

    if isinstance(profile, str):
        profile = Profile.parse(profile)
    if language == "shared":  # as `kbopt list` and `search` say it: shared entries only
        language = None
    if language not in (None, ALL_LANGUAGES):
        allowed = [lang.value for lang in Language]
        if language not in allowed:
            raise KbError(
                f"unknown language {language!r}; use one of: {', '.join(allowed)}, "
                f"shared (shared entries only), {ALL_LANGUAGES} (every language)"
            )
    if limit < 1:
        raise KbError(f"limit must be at least 1 (got {limit})")
    # Ranked over at least the default window, then cut: near-ties are ordered by risk and
    # `requires` links within the window, so ranking only `limit` entries could put a
    # different entry third under --limit 3 than in the default ranking's top 3.
    window = max(limit, DEFAULT_LIMIT)
    ix = get_index(store)
    table, relevance = ix.reading(lambda: (_table(ix), _relevance(ix, profile)))
    metrics = trigger_metrics(profile)
    bottleneck = profile.bottleneck.value if profile.bottleneck else None
    contexts = kernel_contexts(profile)
    opt_idx, warn_idx = table.candidates(
        metrics, relevance, bottleneck, language, window, contexts, unmeasured_metrics(profile)
    )
    opportunities, warnings = explain_and_order(
        table.cards,
        table.weights,
        opt_idx,
        warn_idx,
        metrics=metrics,
        relevance=relevance,
        bottleneck=bottleneck,
        limit=window,
        shown_path=_public_paths(ix.store),
    )
    return Strategy(
        profile=profile,
        language=language,
        opportunities=opportunities[:limit],
        warnings=warnings[:limit],
    )


def _public_paths(store: Store) -> Callable[[str], str]:
    """Card paths (`docs/knowledge/<rel>`) as the file that holds the entry shows them."""
    if len(store.layers) < 2:
        return lambda path: path
    prefix = f"{KNOWLEDGE_DIR.as_posix()}/"
    return lambda path: entry_public_path(store, path.removeprefix(prefix))


def entry_public_path(store: Store, relpath: str) -> str:
    """The path `recommend` shows for the entry at `relpath` under a knowledge root:
    `docs/knowledge/<relpath>`, except in a project layered over the bundled catalog, where
    a bundled entry shows the file itself, as `kbopt list` does (an agent opens it; the
    index snapshot keeps this for each entry).  Generated files (catalog/, the site) name
    bundled files by their package path instead (`Store.public_path`)."""
    path = f"{KNOWLEDGE_DIR.as_posix()}/{relpath}"
    if len(store.layers) < 2:
        return path
    found = store.locate(relpath)
    if found is None or store.layer_of(found).name == PROJECT:
        return path
    return store.display(found)
