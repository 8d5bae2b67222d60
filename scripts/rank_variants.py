"""Would a change of the ranking rules have ranked the labelled sets better?  Each variant
wraps the rule that scores one entry against a profile (`kbopt.ranking.evaluate`), every
labelled profile kept in the repository is ranked again with it, and the hits are counted
beside the unchanged rules.

    .venv/bin/python scripts/rank_variants.py   # writes results/search/rank-variants.*

NOT blind: every set's labels had been read before these variants were written (they were
prompted by `scripts/trigger_base_rates.py`'s table).  A variant that wins here still has to
win on a blind set scored after it lands; one that loses here is not worth that test.

Variants:

- `surprise-S`: the trigger part of an entry's score is scaled by how unusual its fired
  symptoms are, min(1, sum of -ln p / S) over the fired symptom conditions, p being the
  share of the real profiles (labels unread) in which the condition holds (Laplace-smoothed).
  A condition that holds on most kernels (`dram_throughput_pct < 80`) then earns little.
- `keep-bytes-needs-a-full-wave`: `keep-enough-bytes-in-flight` is left out when the grid
  fills less than one wave (`ctas_per_sm < 1`), as its own text says it is not the first
  move there.
- `keep-bytes-needs-long-scoreboard-S`: `keep-enough-bytes-in-flight`'s score is halved when
  the profile measured `stall_long_scoreboard_pct` under S (its warps wait mostly on
  something other than loads coming back, so more loads in flight are not what it lacks).
  Written after reading the labels (the threshold from the entry's labelled first picks:
  the tenth percentile of their long-scoreboard share is 49%).  The committed ablations do
  not back it: in `results/moves/move-outcomes.md` (`scripts/move_outcomes.py`, the table
  split by how much of the start's stalls waited on loads) the entry's moves advanced the
  walks at least as often from starts under 40% as from the others, and more often than the
  other entries' moves in both, so the labels and the measured walks disagree, and it was
  not made a rule.
- `risk-discount-S`: an entry's score is scaled by 1 - S if its risk is high and by 1 - S/2
  if medium, so that an easily reverted move comes before a risky one of about the same
  score (today risk orders only scores within 0.01 of each other).
- `idle-gpu-first-S`: S is added to the score of an entry that fired a `ctas_per_sm <`
  condition where the grid gives under a quarter of a CTA a SM.
- `margin-S`: the trigger part of an entry's score is scaled by 1 + S x m, m the widest
  margin by which one of its fired symptom conditions holds: ln(threshold / value) for a
  `<` condition, ln(value / threshold) for a `>` one, over ln 16 and at most 1 (a grid of
  0.06 CTAs a SM against `ctas_per_sm < 1` counts fully; thresholds at 0 and shape facts
  count nothing).  Today a trigger met by a factor of sixteen counts as one just met.
- `label-prior-S`: each entry's score gets S x ln((L + 1) / (T + 1)), L the profiles whose
  labels name the entry and T those whose unchanged top 3 holds it: an entry the ranking
  puts forward more often than experts name it goes down, one named more often than put
  forward goes up.  Learned from the labels, so cross-validated: each real set is ranked
  with what the other real sets teach (the hand-written set with what all of them teach).
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trigger_base_rates import header, holds, write

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results" / "search"
NAME = "rank-variants"
REAL_SETS = "benchmarks/real_profiles*/labels.json"
HAND_SET = "benchmarks/profiles/labels.json"

Evaluate = Callable[..., Any]


def _labelled(pattern: str) -> list[tuple[str, Any, dict[str, Any]]]:
    """(profile file, parsed profile, label) of every labelled profile the pattern names."""
    from kbopt.contracts.profile import Profile

    out = []
    for labels in sorted(glob.glob(str(REPO / pattern))):
        folder = Path(labels).parent
        for name, label in sorted(json.loads(Path(labels).read_text())["profiles"].items()):
            path = folder / name
            out.append(
                (str(path.relative_to(REPO)), Profile.parse(path.read_text(), str(path)), label)
            )
    return out


def _base_rates(cards: list[Any], profiles: list[Any]) -> dict[tuple[str, ...], float]:
    """Laplace-smoothed share of the profiles in which each condition holds."""
    from kbopt.ranking import trigger_metrics

    metrics = [trigger_metrics(p) for p in profiles]
    rates: dict[tuple[str, ...], float] = {}
    for card in cards:
        for cond in card.conditions():
            key = tuple(e for *_, e in cond)
            if key not in rates:
                verdicts = [v for v in (holds(cond, m) for m in metrics) if v is not None]
                rates[key] = (sum(verdicts) + 1) / (len(verdicts) + 2)
    return rates


def _trigger_term(
    card: Any, relevance: float, bottleneck: str | None, score: float
) -> tuple[float, float]:
    """(the score without its trigger term, the trigger term), per `kbopt.ranking`'s formula."""
    from kbopt.ranking import W_CLASS, W_GAIN, W_TEXT

    cls = 1.0 if bottleneck is not None and bottleneck in card.bottlenecks else 0.0
    rest = W_TEXT * relevance + W_CLASS * cls + W_GAIN * min(card.gain, 100.0) / 100.0
    return rest, score - rest


def surprise(rates: dict[tuple[str, ...], float], scale: float) -> Callable[[Evaluate], Evaluate]:
    def wrap(evaluate: Evaluate) -> Evaluate:
        def variant(card, metrics, relevance, bottleneck, weights):  # type: ignore[no-untyped-def]
            verdict = evaluate(card, metrics, relevance, bottleneck, weights)
            if verdict is None:
                return None
            score, coverage, fired, failed, trigger = verdict
            fired_set = set(fired)
            info = sum(
                -math.log(rates[tuple(e for *_, e in cond)])
                for cond in card.conditions()
                if not card.is_fact(cond) and any(e in fired_set for *_, e in cond)
            )
            rest, term = _trigger_term(card, relevance, bottleneck, score)
            return rest + term * min(1.0, info / scale), coverage, fired, failed, trigger

        return variant

    return wrap


def keep_bytes_needs_a_full_wave(evaluate: Evaluate) -> Evaluate:
    def variant(card, metrics, relevance, bottleneck, weights):  # type: ignore[no-untyped-def]
        if card.name == "keep-enough-bytes-in-flight" and metrics.get("ctas_per_sm", 1.0) < 1:
            return None
        return evaluate(card, metrics, relevance, bottleneck, weights)

    return variant


def keep_bytes_needs_long_scoreboard(threshold: float) -> Callable[[Evaluate], Evaluate]:
    def wrap(evaluate: Evaluate) -> Evaluate:
        def variant(card, metrics, relevance, bottleneck, weights):  # type: ignore[no-untyped-def]
            out = evaluate(card, metrics, relevance, bottleneck, weights)
            waiting = metrics.get("stall_long_scoreboard_pct")
            if out is None or card.name != "keep-enough-bytes-in-flight" or waiting is None:
                return out
            if waiting >= threshold:
                return out
            value, *rest = out
            return (value * 0.5, *rest)

        return variant

    return wrap


def risk_discount(scale: float) -> Callable[[Evaluate], Evaluate]:
    factors = {"high": 1.0 - scale, "medium": 1.0 - scale / 2}

    def wrap(evaluate: Evaluate) -> Evaluate:
        def variant(card, metrics, relevance, bottleneck, weights):  # type: ignore[no-untyped-def]
            out = evaluate(card, metrics, relevance, bottleneck, weights)
            if out is None:
                return None
            value, *rest = out
            return (value * factors.get(card.risk, 1.0), *rest)

        return variant

    return wrap


def score(sets: dict[str, list[tuple[str, Any, dict[str, Any]]]], store: Any) -> dict[str, Any]:
    from kbopt.strategy import recommend

    out: dict[str, Any] = {}
    for name, items in sets.items():
        top1 = top3 = 0
        first: dict[str, list[int]] = {}
        for _, profile, label in items:
            result = recommend(profile, language=label.get("language"), store=store)
            opps = [o.id for o in result.opportunities]
            warns = [w.id for w in result.warnings]
            expected = set(label["expected"])
            top1 += bool(expected & set(opps[:1]) or expected & set(warns[:1]))
            top3 += bool(expected & set(opps[:3]) or expected & set(warns[:3]))
            if opps:
                row = first.setdefault(opps[0], [0, 0])
                row[0] += 1
                row[1] += opps[0] in expected
        out[name] = _counts(len(items), top1, top3, first)
    return out


def _counts(profiles: int, top1: int, top3: int, first: dict[str, list[int]]) -> dict[str, Any]:
    most = sorted(first.items(), key=lambda kv: (-kv[1][0], kv[0]))[:3]
    return {
        "profiles": profiles,
        "top1_hits": top1,
        "top3_hits": top3,
        "ranked_first_most": [{"entry": k, "first": v[0], "right": v[1]} for k, v in most],
        "ranked_first": {k: v for k, v in sorted(first.items())},
    }


def label_prior(bias: dict[str, float]) -> Callable[[Evaluate], Evaluate]:
    """Every entry's score moved by its learned `bias` (0 for an entry the labels and the
    rankings never named)."""

    def wrap(evaluate: Evaluate) -> Evaluate:
        def variant(card, metrics, relevance, bottleneck, weights):  # type: ignore[no-untyped-def]
            verdict = evaluate(card, metrics, relevance, bottleneck, weights)
            if verdict is None:
                return None
            score, *rest = verdict
            return (score + bias.get(card.name, 0.0), *rest)

        return variant

    return wrap


def label_bias(
    items: list[tuple[str, Any, dict[str, Any]]], top3: dict[str, list[str]], scale: float
) -> dict[str, float]:
    """scale x ln((L + 1) / (T + 1)) per entry over `items` (L: labels naming it, T: the
    unchanged rankings' top 3 holding it)."""
    named: dict[str, int] = {}
    shown: dict[str, int] = {}
    for path, _, label in items:
        for e in label["expected"]:
            named[e] = named.get(e, 0) + 1
        for e in top3[path]:
            shown[e] = shown.get(e, 0) + 1
    return {
        e: scale * math.log((named.get(e, 0) + 1) / (shown.get(e, 0) + 1))
        for e in set(named) | set(shown)
    }


def label_prior_cross_validated(
    sets: dict[str, list[tuple[str, Any, dict[str, Any]]]], store: Any, scale: float
) -> dict[str, Any]:
    """`label-prior-S`: each real set (a folder's labels.json) ranked with the biases the
    other real sets teach; the hand-written set with those of every real set."""
    import kbopt.ranking as ranking
    from kbopt.strategy import recommend

    real = sets["real"]
    top3 = {}
    for path, profile, label in real:
        result = recommend(profile, language=label.get("language"), store=store)
        top3[path] = [o.id for o in result.opportunities][:3]
    folders = sorted({str(Path(path).parent) for path, _, _ in real})
    original = ranking.evaluate
    totals = {"top1": 0, "top3": 0}
    first: dict[str, list[int]] = {}
    out: dict[str, Any] = {}
    try:
        for folder in folders:
            held = [i for i in real if str(Path(i[0]).parent) == folder]
            rest = [i for i in real if str(Path(i[0]).parent) != folder]
            ranking.evaluate = label_prior(label_bias(rest, top3, scale))(original)
            part = score({"real": held}, store)["real"]
            totals["top1"] += part["top1_hits"]
            totals["top3"] += part["top3_hits"]
            for entry, (n, right) in part["ranked_first"].items():
                row = first.setdefault(entry, [0, 0])
                row[0] += n
                row[1] += right
        out["real"] = _counts(len(real), totals["top1"], totals["top3"], first)
        ranking.evaluate = label_prior(label_bias(real, top3, scale))(original)
        out["hand-written"] = score({"hand-written": sets["hand-written"]}, store)["hand-written"]
    finally:
        ranking.evaluate = original
    return out


def _margin(op: str, value: float, threshold: float) -> float:
    """How far a holding condition is past its threshold, 0 (just met) to 1 (16 times)."""
    if threshold <= 0 or value <= 0:
        return 0.0
    ratio = threshold / value if op in ("<", "<=") else value / threshold
    return max(0.0, min(1.0, math.log(ratio) / math.log(16.0))) if ratio > 1 else 0.0


def margin(scale: float) -> Callable[[Evaluate], Evaluate]:
    def wrap(evaluate: Evaluate) -> Evaluate:
        def variant(card, metrics, relevance, bottleneck, weights):  # type: ignore[no-untyped-def]
            verdict = evaluate(card, metrics, relevance, bottleneck, weights)
            if verdict is None:
                return None
            score, coverage, fired, failed, trigger = verdict
            fired_set = set(fired)
            widest = max(
                (
                    _margin(op, metrics[m], v)
                    for cond in card.conditions()
                    if not card.is_fact(cond)
                    for m, op, v, e in cond
                    if e in fired_set and m in metrics
                ),
                default=0.0,
            )
            rest, term = _trigger_term(card, relevance, bottleneck, score)
            return rest + term * (1.0 + scale * widest), coverage, fired, failed, trigger

        return variant

    return wrap


def idle_gpu_first(bonus: float) -> Callable[[Evaluate], Evaluate]:
    def wrap(evaluate: Evaluate) -> Evaluate:
        def variant(card, metrics, relevance, bottleneck, weights):  # type: ignore[no-untyped-def]
            verdict = evaluate(card, metrics, relevance, bottleneck, weights)
            if verdict is None:
                return None
            score, *rest = verdict
            grid = metrics.get("ctas_per_sm")
            fills = any(e.startswith("ctas_per_sm <") for e in verdict[2])
            if grid is not None and grid < 0.25 and fills:
                score += bonus
            return (score, *rest)

        return variant

    return wrap


def measure() -> dict[str, Any]:
    import kbopt.ranking as ranking
    from kbopt.store import Store
    from kbopt.strategy import catalog_cards

    store = Store(REPO)
    sets = {"real": _labelled(REAL_SETS), "hand-written": _labelled(HAND_SET)}
    real_files = sorted(glob.glob(str(REPO / "benchmarks/real_profiles*/*.md")))
    from kbopt.contracts.profile import Profile

    corpus = [Profile.parse(Path(f).read_text(encoding="utf-8"), f) for f in real_files]
    rates = _base_rates(catalog_cards(store), corpus)
    variants: dict[str, Callable[[Evaluate], Evaluate] | None] = {
        "baseline": None,
        "surprise-1.0": surprise(rates, 1.0),
        "surprise-2.3": surprise(rates, 2.3),
        "keep-bytes-needs-a-full-wave": keep_bytes_needs_a_full_wave,
        "keep-bytes-needs-long-scoreboard-40": keep_bytes_needs_long_scoreboard(40.0),
        "risk-discount-0.1": risk_discount(0.1),
        "risk-discount-0.2": risk_discount(0.2),
        "margin-0.3": margin(0.3),
        "margin-0.6": margin(0.6),
        "idle-gpu-first-0.1": idle_gpu_first(0.1),
        "idle-gpu-first-0.2": idle_gpu_first(0.2),
    }
    original = ranking.evaluate
    results = {}
    try:
        for name, wrap in variants.items():
            ranking.evaluate = wrap(original) if wrap else original
            results[name] = score(sets, store)
    finally:
        ranking.evaluate = original
    for scale in (0.02, 0.05):
        results[f"label-prior-{scale:g}"] = label_prior_cross_validated(sets, store, scale)
    return {"base_rate_profiles": len(corpus), "variants": results}


def markdown(doc: dict[str, Any]) -> str:
    lines = [
        f"Every labelled profile ranked again under each variant, catalog at "
        f"{doc['catalog_commit'] or 'an unrecorded commit'}: NOT blind (the labels had been "
        f"read). Base rates from {doc['base_rate_profiles']} real profiles.",
        "",
        "| Variant | Real top-1 | Real top-3 | Hand-written top-1 | Hand-written top-3 | Ranked first most (right) |",
        "|---------|------------|------------|--------------------|--------------------|---------------------------|",
    ]
    for name, v in doc["variants"].items():
        real, hand = v["real"], v["hand-written"]
        most = ", ".join(
            f"{m['entry']} {m['first']} ({m['right']})" for m in real["ranked_first_most"]
        )
        lines.append(
            f"| {name} | {real['top1_hits']}/{real['profiles']} | {real['top3_hits']}/{real['profiles']} "
            f"| {hand['top1_hits']}/{hand['profiles']} | {hand['top3_hits']}/{hand['profiles']} | {most} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Writes results/search/rank-variants.json and .md.",
    ).parse_args(argv)
    doc = {**header("rank_variants.py"), "blind": False, **measure()}
    write(RESULTS, NAME, doc, markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
