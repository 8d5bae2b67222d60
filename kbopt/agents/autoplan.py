"""Autopilot's plan: an analysis in, one delegated task per optimization out, in order.

Each `[High]/[Medium]/[Low]` recommendation is matched to the catalog entries that the
strategy ranks for the analysis' bottleneck and evidence (`kbopt.strategy.recommend`, the
same ranking as `kbopt recommend`), keeping the trigger that fired on the evidence; the
recommendation's own words pick among them, or, when none of the ranked entries matches, among
the rest of the catalog's optimizations (the analysis named a move the evidence alone does
not rank; the plan says so).  Its specialist comes from the routing rules
(`kbopt.agents.routing.route`), and it becomes one task for that specialist, benchmarking
included.  The steps are ordered by expected impact (High > Medium > Low), then by the
matched entry's risk (low first), then by dependencies: an entry that `requires` another
planned entry comes after it, and the plan shows that dependency.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kbopt.agents.routing import RoutingError, route
from kbopt.contracts.analysis import Analysis, Recommendation
from kbopt.store import Store

_RISK_RANK = {"low": 0, "medium": 1, "high": 2}
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "apply",
        "consider",
        "enable",
        "for",
        "from",
        "in",
        "into",
        "layers",
        "layer",
        "of",
        "on",
        "or",
        "the",
        "to",
        "use",
        "with",
        "reduction",
    ]
)
MIN_MATCH = 0.5
RANKED = 25  # opportunities ranked for the analysis, the pool recommendations match into


@dataclass
class PlanStep:
    recommendation: Recommendation
    order_in_analysis: int
    entry: str | None = None  # catalog id
    title: str = ""
    link: str = ""
    trigger: str = ""  # the trigger that fired on the evidence, as `metric=value`
    ranked: bool = False  # the entry was among those the strategy ranked for the evidence
    risk: str = "medium"
    specialists: list[str] = field(default_factory=list)
    routing_reason: str = ""
    depends_on: list[int] = field(default_factory=list)  # 1-based positions in the plan
    requires: list[str] = field(default_factory=list)  # entry ids this one requires

    def task(self) -> str:
        what = self.recommendation.text
        if self.entry:
            what += f", following {self.title} ({self.link})"
        return f"{what}; check correctness and benchmark before and after (one change only)"


def _words(text: str) -> set[str]:
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)  # FlashAttention -> Flash Attention
    words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", spaced)}
    return {w.rstrip("s") for w in words if w not in _STOP and len(w) >= 2}


def _entry_words(entry: Any) -> set[str]:
    return _words(f"{entry.name.replace('-', ' ')} {entry.title} {' '.join(entry.applies_to)}")


def _match(
    rec: Recommendation, ranked: list[Any], store: Store, df: dict[str, int]
) -> tuple[Any, Any] | None:
    """The ranked opportunity (and its entry) that shares the most distinctive words with
    the recommendation: each shared word counts 1 / (entries that use it), and a match
    needs MIN_MATCH (one word used by at most two entries, or several rarer ones)."""
    want = _words(rec.text)
    best: tuple[float, Any, Any] | None = None
    for rank, opp in enumerate(ranked):
        entry = store.get(opp.id)
        score = sum(1 / df.get(w, 1) for w in want & _entry_words(entry))
        if score < MIN_MATCH:
            continue
        key = score - rank / 1000  # ties go to the better-ranked entry
        if best is None or key > best[0]:
            best = (key, opp, entry)
    return None if best is None else (best[1], best[2])


@dataclass(frozen=True)
class _Unranked:
    """A catalog optimization the ranking left out, as `_match` and `plan` read it."""

    id: str
    path: str
    trigger: str = ""  # no trigger fired: the analysis named it


def _unranked(store: Store, ranked: list[Any]) -> list[_Unranked]:
    from kbopt.model import entry_relpath
    from kbopt.strategy import entry_public_path

    seen = {o.id for o in ranked}
    return [
        _Unranked(e.name, entry_public_path(store, entry_relpath(e.kind, e.language, e.name)))
        for e in sorted(store.entries(), key=lambda e: e.name)
        if e.kind.value == "optimization" and e.name not in seen
    ]


def plan(
    analysis: Analysis, store: Store, *, sm: int | None = None, existing_triton: bool = False
) -> list[PlanStep]:
    from kbopt.strategy import ALL_LANGUAGES, recommend

    ranked = list(
        recommend(
            analysis.to_profile(), language=ALL_LANGUAGES, store=store, limit=RANKED
        ).opportunities
    )
    ranked = [o for o in ranked if o.kind == "optimization"]
    df: dict[str, int] = {}
    for entry in store.entries():
        for word in _entry_words(entry):
            df[word] = df.get(word, 0) + 1
    steps = []
    for i, rec in enumerate(analysis.recommendations):
        step = PlanStep(recommendation=rec, order_in_analysis=i)
        # An analysis that names a move finds its entry even when the profile's ranking
        # did not propose it (a short evidence line says little for text search to rank).
        found = _match(rec, ranked, store, df) or _match(rec, _unranked(store, ranked), store, df)
        if found is not None:
            opp, entry = found
            step.entry, step.title, step.link = opp.id, entry.title, opp.path
            step.trigger = opp.trigger
            step.ranked = not isinstance(opp, _Unranked)
            step.risk = entry.risk.value
            step.requires = [x.target for x in entry.interactions if x.relation == "requires"]
        try:
            # the task as the specialist receives it (with the entry it follows): the same
            # text the delegation check routes, so the plan never names a refused specialist
            routed = route(step.task(), sm=sm, existing_triton=existing_triton)
        except RoutingError as exc:  # no language named and no SM given: say so in the plan
            step.routing_reason = f"not routed: {exc}"
        else:
            step.specialists, step.routing_reason = list(routed.stages), routed.reason
        steps.append(step)
    return _order(steps)


def _order(steps: list[PlanStep]) -> list[PlanStep]:
    """Impact, then risk, then dependencies (a required entry is moved before its user)."""
    ordered = sorted(
        steps,
        key=lambda s: (
            -s.recommendation.level.rank,
            _RISK_RANK.get(s.risk, 1),
            s.order_in_analysis,
        ),
    )
    placed: list[PlanStep] = []
    pending = list(ordered)
    while pending:
        for step in pending:
            blockers = [
                o for o in pending if o is not step and o.entry and o.entry in step.requires
            ]
            if not blockers:
                placed.append(step)
                pending.remove(step)
                break
        else:  # a cycle of requirements: keep the impact/risk order for the rest
            placed += pending
            break
    position = {s.entry: n for n, s in enumerate(placed, 1) if s.entry}
    for step in placed:
        step.depends_on = sorted(position[r] for r in step.requires if r in position)
    return placed


def render_plan(analysis: Analysis, steps: list[PlanStep]) -> str:
    """The plan in the orchestrator's own words: delegations, backups, validation."""
    out = [
        "## Autopilot Plan",
        "",
        f"Primary bottleneck: {analysis.primary_bottleneck}",
        f"Evidence: {analysis.evidence}",
        "",
        "### Optimizations (by expected impact, then risk, then dependencies)",
        "",
    ]
    for n, s in enumerate(steps, 1):
        rec = s.recommendation
        out.append(f"{n}. **[{rec.level.value.capitalize()}] {rec.text}**")
        if s.entry:
            if s.trigger:
                fired = f"trigger: {s.trigger}"
            elif s.ranked:
                fired = "no trigger fires on this evidence (ranked by bottleneck and context)"
            else:
                fired = "not ranked for this evidence (the analysis names it)"
            out.append(f"   - Catalog: [{s.title}]({s.link}) -- {fired}")
        else:
            out.append("   - Catalog: no catalog entry matches this recommendation")
        out.append(f"   - Risk: {s.risk if s.entry else 'unknown (no catalog entry)'}")
        deps = ", ".join(f"step {d}" for d in s.depends_on) or "none"
        out.append(f"   - Depends on: {deps}")
        chain = " -> ".join(s.specialists) or "none yet"
        out.append(f"   - Specialist: {chain} ({s.routing_reason})")
        for specialist in s.specialists:
            out.append(f'   - Delegate to {specialist}: "{s.task()}"')
        out.append(
            '   - Delegate to perf-profiling-specialist: "Measure the performance before and after"'
        )
        out.append("")
    out += [
        "### Each step",
        "1. Measure the baseline performance",
        "2. backup_file(<each file the step changes>) before the delegation",
        "3. Check the prerequisites (the optimization applies here)",
        "4. Implement through the specialist above",
        "5. Validate the improvement (measure again)",
        "6. Verify correctness (numerical accuracy)",
        "7. Keep the change, or revert_file on a regression (>5% slower or incorrect)",
    ]
    return "\n".join(out) + "\n"
