"""The site's ablation page: committed `kbopt ablate` results as plots and a table.

Reads `results/ablation/*.json` (written by `kbopt ablate`; fake-backend files are left
out even when someone committed one) and renders, per kernel and run, a line chart of
each arm's best % of floor so far against the number of measured trials, then the rows:
trials, best % of floor and trials to come within 5% of the best any arm found.  The
SVG is drawn by hand (no plotting library), so the page is cheap to rebuild.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kbopt.workflow.ablation import load_results

COLORS = {"catalog": "#1f77b4", "random": "#ff7f0e", "grid": "#7f7f7f"}
WIDTH, HEIGHT, PAD = 560, 240, 42


def _best_pct_curve(row: dict[str, Any]) -> list[tuple[int, float]]:
    best: float | None = None
    out = []
    for t in row.get("trajectory", []):
        if t.get("status") == "ok" and t.get("pct_of_floor") is not None:
            best = max(best or 0.0, float(t["pct_of_floor"]))
        if best is not None:
            out.append((int(t["n"]), best))
    return out


def plot_svg(doc: dict[str, Any]) -> str:
    """Best % of floor so far per arm against the trial number."""
    curves = {r["arm"]: _best_pct_curve(r) for r in doc["rows"]}
    n_max = max([doc.get("trials_budget", 2), *(p[0] for c in curves.values() for p in c)])
    values = [p[1] for c in curves.values() for p in c] or [0.0, 100.0]
    lo = max(0.0, min(values) - 5)
    hi = max(values) + 5

    def x(n: float) -> float:
        return PAD + (n - 1) / max(1, n_max - 1) * (WIDTH - 2 * PAD)

    def y(v: float) -> float:
        return HEIGHT - PAD + (lo - v) / max(1e-9, hi - lo) * (HEIGHT - 2 * PAD)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" class="kbopt-ablation-plot">',
        f"<title>{html.escape(doc['kernel'])}: best % of floor per trial</title>",
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
        'stroke="#444"/>',
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#444"/>',
        f'<text x="{WIDTH / 2}" y="{HEIGHT - 8}" text-anchor="middle" font-size="12">'
        "measured trials</text>",
        f'<text x="12" y="{HEIGHT / 2}" font-size="12" transform="rotate(-90 12 {HEIGHT / 2})" '
        'text-anchor="middle">best % of floor</text>',
    ]
    for v in (lo, (lo + hi) / 2, hi):
        parts.append(
            f'<text x="{PAD - 4}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="10">{v:.0f}</text>'
        )
    for n in sorted({1, n_max, (1 + n_max) // 2}):
        parts.append(
            f'<text x="{x(n):.1f}" y="{HEIGHT - PAD + 14}" text-anchor="middle" '
            f'font-size="10">{n}</text>'
        )
    for i, (arm, curve) in enumerate(curves.items()):
        color = COLORS.get(arm, "#2ca02c")
        if curve:
            points = " ".join(f"{x(n):.1f},{y(v):.1f}" for n, v in curve)
            parts.append(
                f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2"/>'
            )
        parts.append(
            f'<text x="{WIDTH - PAD + 4}" y="{PAD + 14 * i}" font-size="11" fill="{color}">'
            f"{html.escape(arm)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def render_ablation_fragment(root: Path) -> str:
    """MyST for the ablation page (included by docs/catalog-ablation.md)."""
    docs = load_results(root)
    if not docs:
        return (
            "No ablation results are committed yet: `kbopt ablate KERNEL --backend real` "
            "writes them to `results/ablation/`.\n"
        )
    out: list[str] = [
        "## Summary",
        "",
        "Trials each arm needed to come within 5% of the best configuration any arm found "
        "(`never`: not within its trials). Target: the catalog's count at most a third of "
        "the trial budget; the last column holds it against a third of the trials the grid "
        "itself needed (`grid never`: the grid never came within 5% in its budget; `unreachable`: the grid "
        "needed fewer than 6, and no arm can need fewer than 2).",
        "",
    ]
    out += [
        *render_head_to_head(docs, held_out_plans(root)),
        "| Kernel | Configuration | Catalog at | Catalog | Random | Grid | Target | Against the grid's count |",
        "|--------|---------------|------------|---------|--------|------|--------|--------------------------|",
    ]
    for doc in docs:
        needed = {r["arm"]: r.get("trials_to_within_5pct") or "never" for r in doc["rows"]}
        out.append(
            f"| {doc['kernel']} | {doc.get('config', {}).get('name', '?')} "
            f"| {short_commit(doc.get('catalog_commit'))} | {needed.get('catalog', '-')} "
            f"| {needed.get('random', '-')} | {needed.get('grid', '-')} | {judge(doc)[0]} "
            f"| {against_grid(doc)} |"
        )
    out.append("")
    for doc in docs:
        out += [
            f"## {doc['kernel']} ({doc.get('config', {}).get('name', '?')}) from "
            f"{doc.get('start_version', '?')}, {doc.get('device', '?')}, "
            f"{str(doc.get('date', ''))[:10]}"
            + (f", catalog at {doc['catalog_commit']}" if doc.get("catalog_commit") else ""),
            "",
            f"Command: `{doc.get('command', '')}`; results file `{doc['_file']}`; "
            f"configuration {doc.get('config', {}).get('dims', {})}; "
            f"{doc.get('trials_budget')} trials per arm"
            + (f"; catalog digest `{doc['catalog_digest']}`" if doc.get("catalog_digest") else "")
            + ".",
            "",
            "```{raw} html",
            plot_svg(doc),
            "```",
            "",
            "| Arm | Trials | Best % of floor | Trials to within 5% of the best | Stopped |",
            "|-----|--------|-----------------|---------------------------------|---------|",
        ]
        for r in doc["rows"]:
            best = r.get("best_pct_of_floor")
            out.append(
                f"| {r['arm']} | {r['trials']} | {f'{best:.1f}' if best is not None else '-'} "
                f"| {r.get('trials_to_within_5pct') or 'never'} | {r.get('stopped') or ''} |"
            )
        out += ["", verdict(doc), ""]
    return "\n".join(out)


def _compare(catalog: int | None, other: int | None) -> str:
    """`fewer`, `same` or `more` trials for the catalog arm; None (never within 5%) counts
    as more than any number, and two Nones as the same."""
    a = catalog if catalog is not None else math.inf
    b = other if other is not None else math.inf
    return "fewer" if a < b else "same" if a == b else "more"


# The blind sets' held-out ablation plans: one `kbopt ablate` line per kernel, written
# before the set's kernels were ever searched (benchmarks/ablation-blind<N>.txt).
HELD_OUT_PLANS = "benchmarks/ablation-blind*.txt"
# The first blind set whose held-out runs ordered the walks' moves by their measured record
# (`kbopt.workflow.move_record`), the order the walks still use.
RECORD_ORDER_FROM_SET = 25


def _config_of(words: list[str]) -> str:
    """The value after `--config` in a command's words ('' when there is none)."""
    for i, word in enumerate(words[:-1]):
        if word == "--config":
            return words[i + 1]
    return ""


def held_out_plans(root: Path) -> dict[tuple[str, str], int]:
    """(kernel name or spec path, --config value) -> the blind set whose held-out plan
    names it; empty where the project has no such plans."""
    found: dict[tuple[str, str], int] = {}
    for path in sorted(Path(root).glob(HELD_OUT_PLANS)):
        number = path.stem.removeprefix("ablation-blind")
        if not number.isdigit():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            words = line.split("#", 1)[0].split()
            if words:
                found.setdefault((words[0], _config_of(words)), int(number))
    return found


def held_out_set(doc: Mapping[str, Any], plans: Mapping[tuple[str, str], int]) -> int | None:
    """The blind set whose held-out plan this run carries out, or None."""
    config = _config_of(str(doc.get("command", "")).split())
    for name in (doc.get("spec"), doc.get("kernel")):
        if name and (str(name), config) in plans:
            return plans[(str(name), config)]
    return None


def head_to_head(
    docs: list[dict[str, Any]], plans: Mapping[tuple[str, str], int] | None = None
) -> list[dict[str, Any]]:
    """The target's verdicts and the catalog arm against each unguided arm, counted over
    selections of runs: the first run of each kernel and configuration (made before
    anything was changed because of that kernel), the latest run of each, and every run;
    with `plans` (`held_out_plans`), also the first run of each line of a blind set's
    held-out plan, all of them and those since the moves were ordered by their record.
    An arm is compared by the trials it needed to come within 5% of the best any arm found;
    runs the target does not judge are left out of the comparisons."""
    first: dict[tuple[str, str], dict[str, Any]] = {}
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for doc in docs:
        key = (str(doc.get("kernel")), str(doc.get("config", {}).get("name")))
        first.setdefault(key, doc)
        latest[key] = doc
    selections = [
        ("first run of each kernel and configuration", list(first.values())),
        ("latest run of each kernel and configuration", list(latest.values())),
        ("every run", docs),
    ]
    if plans:
        numbered = [(held_out_set(d, plans), d) for d in first.values()]
        held = [(n, d) for n, d in numbered if n is not None]
        if held:
            sets = sorted({n for n, _ in held})
            selections.append(
                (
                    f"held-out runs of the blind sets ({sets[0]} to {sets[-1]})",
                    [d for _, d in held],
                )
            )
            recent = [d for n, d in held if n >= RECORD_ORDER_FROM_SET]
            if recent and len(recent) < len(held):
                selections.append(
                    (
                        f"held-out runs since the moves were ordered by their record "
                        f"(sets {RECORD_ORDER_FROM_SET} to {sets[-1]})",
                        recent,
                    )
                )
    out = []
    for name, chosen in selections:
        counts: Counter[str] = Counter()
        for doc in chosen:
            verdict_ = judge(doc)[0]
            counts[verdict_] += 1
            if verdict_ == "not judged":
                continue
            if against_grid(doc).startswith("met"):
                counts["met against the grid"] += 1
            needed = {r["arm"]: r.get("trials_to_within_5pct") for r in doc.get("rows", [])}
            for other in ("random", "grid"):
                if other in needed:
                    counts[f"{other} {_compare(needed.get('catalog'), needed[other])}"] += 1
        out.append({"runs": name, "count": len(chosen), **counts})
    return out


def render_head_to_head(
    docs: list[dict[str, Any]], plans: Mapping[tuple[str, str], int] | None = None
) -> list[str]:
    """The head-to-head counts as a MyST table, ahead of the per-run rows."""
    out = [
        "Counted over the runs below: the target's verdicts (against the trial budget, and "
        "against a third of the grid's own count, as in the last column), and how often the "
        "catalog arm came "
        "within 5% of the best in fewer, as many or more trials than the random order of the "
        "same moves and than the grid sample (`never` counts as more than any number). Runs "
        "the target does not judge are left out of the comparisons. The first run of each "
        "kernel and configuration was made before anything was changed because of that "
        "kernel; later runs of the same kernel are not blind. A blind set's held-out runs "
        "follow its plan (`benchmarks/ablation-blind<N>.txt`), written before any of its "
        "kernels was searched.",
        "",
        "| Runs | Count | Met | Not met | Not judged | Met against the grid's count | Catalog against random: fewer / same / more | Catalog against grid: fewer / same / more |",
        "|------|-------|-----|---------|------------|------------------------------|---------------------------------------------|-------------------------------------------|",
    ]
    for row in head_to_head(docs, plans):
        versus = {
            arm: " / ".join(str(row.get(f"{arm} {k}", 0)) for k in ("fewer", "same", "more"))
            for arm in ("random", "grid")
        }
        out.append(
            f"| {row['runs']} | {row['count']} | {row.get('met', 0)} | {row.get('not met', 0)} "
            f"| {row.get('not judged', 0)} | {row.get('met against the grid', 0)} "
            f"| {versus['random']} | {versus['grid']} |"
        )
    return [*out, "", "One row per run, oldest first; each run's section follows.", ""]


def short_commit(commit: str | None) -> str:
    """A commit as the table shows it: 7 hex digits (a full sha is 40), any suffix kept."""
    if not commit:
        return "-"
    head, plus, rest = commit.partition("+")
    if len(head) == 40 and all(c in "0123456789abcdef" for c in head):
        head = head[:7]
    return head + plus + rest


def against_grid(doc: Mapping[str, Any]) -> str:
    """The catalog's count against a third of the trials the grid needed, in short:
    `met`, `not met`, `grid never`, `unreachable`, or `-` where the run is not judged."""
    if judge(doc)[0] == "not judged":
        return "-"
    rows = {r["arm"]: r for r in doc.get("rows", [])}
    reached = rows["catalog"].get("trials_to_within_5pct")
    grid_needed = rows["grid"].get("trials_to_within_5pct")
    if grid_needed is None:  # the grid needed more than its budget
        budget = int(doc.get("trials_budget") or rows["grid"]["trials"])
        return "met (grid never)" if reached is not None and reached * 3 <= budget else "grid never"
    if grid_needed < 6:
        return "unreachable"
    return "met" if reached is not None and reached * 3 <= grid_needed else "not met"


def verdict(doc: Mapping[str, Any]) -> str:
    """Whether the catalog arm came within 5% of the best any arm found in at most a third
    of the grid's trials (the grid's budget, and the trials the grid itself needed)."""
    return judge(doc)[1]


def _margin_pct(doc: Mapping[str, Any], row: Mapping[str, Any]) -> float | None:
    """How much slower an arm's best is than the best any arm found, in %."""
    best, overall = row.get("best_us"), doc.get("best_us_any_arm")
    if not best or not overall:
        return None
    return (best - overall) / overall * 100


def judge(doc: Mapping[str, Any]) -> tuple[str, str]:
    """(`met`, `not met` or `not judged` against the trial budget; the verdict's sentence)."""
    rows = {r["arm"]: r for r in doc.get("rows", [])}
    cat, grid = rows.get("catalog"), rows.get("grid")
    if cat is None or grid is None:
        return "not judged", "Target: not judged (the run lacks the catalog or the grid arm)."
    reached = cat.get("trials_to_within_5pct")
    budget = int(doc.get("trials_budget") or grid["trials"])
    if reached is None:
        noise, margin = doc.get("noise_pct"), _margin_pct(doc, cat)
        if noise is not None and margin is not None and margin <= noise:
            return "not judged", (
                f"Target: not judged: the catalog arm's best is {margin:.1f}% slower than the "
                f"best any arm found, less than the {noise:.1f}% between two measurements of "
                "the starting launch in this run."
            )
        return "not met", (
            "Target (the catalog within 5% of the best any arm found, in at most a third of "
            "the grid's trials): **not met**; the catalog arm never came within 5%."
        )
    grid_needed = grid.get("trials_to_within_5pct")
    if int(grid.get("trials") or 0) < 2:
        return "not judged", (
            "Target: not judged: the run stopped (its wall-time budget) before the grid "
            "measured anything past the starting version."
        )
    if reached == 1 and grid_needed == 1:
        return "not judged", (
            "Target: not judged: the starting version was already within 5% of the best any "
            "arm found, so no arm had anything to find."
        )
    of_budget = "met" if reached * 3 <= budget else "not met"
    if grid_needed is None:
        of_grid = f"the grid never came within 5% in its {grid['trials']} trials"
    elif grid_needed < 6:
        # The start was not within 5% (else: not judged above), so any arm needs at least
        # two trials; a third of fewer than six is less than that.
        of_grid = (
            f"the grid needed only {grid_needed}, and no arm can need a third of fewer than "
            "6 (the starting trial and one move are 2)"
        )
    else:
        ok = "met" if reached * 3 <= grid_needed else "not met"
        of_grid = f"{ok} against the {grid_needed} trials the grid needed"
    expected = grid.get("expected_trials_to_within_5pct")
    if expected is None and grid.get("trajectory"):  # a results file from before the field
        from kbopt.workflow.ablation import TrialRow, expected_grid_trials

        trials = [TrialRow(**t) for t in grid["trajectory"]]
        expected = expected_grid_trials(trials, doc.get("best_us_any_arm"))
    if expected is not None:
        of_grid += (
            f" (from the share of its sample within 5%, a grid sample needs {expected:g} on "
            "average)"
        )
    return of_budget, (
        f"Target (the catalog within 5% of the best any arm found, in at most a third of the "
        f"grid's trials): the catalog needed {reached}; **{of_budget}** against the budget of "
        f"{budget}; {of_grid}."
    )
