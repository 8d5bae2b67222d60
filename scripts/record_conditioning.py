"""Does keeping the move record per band order a search's moves better than pooling it?

The catalog search orders its moves by each move's record: the share of measured ablation
trials where it beat the walk's best so far (`kbopt.workflow.move_record`).  Whether a move
pays depends on where it starts, so the record is also kept per band of the values a trial
moved from: the wave band (programs per SM under one, one to four, four or more), marked
where the launch sits at the register ceiling and where the kernel reuses what it loads
(`record_band`).  This script measures whether the banded score would have put the trials
that advanced ahead of those that did not, against the pooled score, the wave band alone and
the wave band with the register ceiling only, on the project's real ablation runs:

- every trial is scored with a record that leaves its own kernel's runs out (what a search
  knew before it met that kernel), pooled, within the band it moved from, and within its
  wave band alone;
- trials are compared only within one decision situation: the same run, arm and wave band
  of the values moved from (a search choosing its next move compares moves from the same
  values), and only trials whose values recorded their metrics;
- the figure is the share of (advanced, did not advance) pairs the score puts in the right
  order, ties counting half (a pairwise AUC): 0.5 is a coin, 1.0 a perfect order;
- a bootstrap over kernels (200 resamples, seeded) gives the spread of the difference;
- the reuse line is compared over ten values, on the kernels first searched before
  2026-12-06 (where it was chosen) and on those first searched after.

    .venv/bin/python scripts/record_conditioning.py   # writes results/moves/record-conditioning.*
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shlex
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from kbopt.workflow.ablation import load_results  # noqa: E402
from kbopt.workflow.move_record import (  # noqa: E402
    BAND_PRIOR_TRIALS,
    REGISTER_CEILING,
    REUSE_INTENSITY,
    MoveRecord,
    advanced,
    record_band,
    row_key,
    trial_outcomes,
)

RESULTS = REPO / "results" / "moves"
NAME = "record-conditioning"
PRIORS = (2.0, 4.0, 8.0, 16.0, 32.0)
RESAMPLES = 200
REUSE_LINES = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 24.0, 32.0)
# kernels first searched before this day chose the reuse line; the later ones check it
SPLIT_DAY = "20261206"

Row = dict[str, Any]
Scorer = Callable[[Row], float]


def scored_rows(rows: Sequence[Row]) -> list[Row]:
    """The moves of a search (no repeat of a resize with its warps) from values whose
    metrics were recorded, each with its kernel-left-out record (`record`), the same record
    kept per wave band only (`wave_record`) and per wave band with the register ceiling
    only (`ceiling_record`)."""
    kept = [r for r in rows if r["changes"] and not r["paired"] and r.get("from_waves")]
    kernels = {r["kernel"] for r in kept}
    records = {k: MoveRecord.from_rows(rows, leave_out_kernel=k) for k in kernels}
    by_wave = _records(rows, kernels, ceiling=None, reuse=None)
    by_ceiling = _records(rows, kernels, ceiling=REGISTER_CEILING, reuse=None)
    return [
        {
            **r,
            "record": records[r["kernel"]],
            "wave_record": by_wave[r["kernel"]],
            "ceiling_record": by_ceiling[r["kernel"]],
        }
        for r in kept
    ]


def _records(
    rows: Sequence[Row], kernels: set[str], ceiling: float | None, reuse: float | None
) -> dict[str, MoveRecord]:
    """Kernel-left-out records kept in the bands `record_band` makes with these lines."""
    moved = [
        {**r, "from_band": record_band(r.get("from_band_metrics"), ceiling, reuse)} for r in rows
    ]
    return {k: MoveRecord.from_rows(moved, leave_out_kernel=k) for k in kernels}


def first_searched(rows: Sequence[Row]) -> dict[str, str]:
    """Each kernel's first ablation run's day (from its results file name, YYYYMMDD)."""
    first: dict[str, str] = {}
    for r in rows:
        day = Path(str(r.get("file") or "")).name[:8]
        if day and (r["kernel"] not in first or day < first[r["kernel"]]):
            first[r["kernel"]] = day
    return first


def reuse_lines(rows: Sequence[Row], scored: Sequence[Row]) -> list[dict[str, Any]]:
    """Per reuse line, the banded order (prior `BAND_PRIOR_TRIALS`) on the kernels first
    searched before `SPLIT_DAY`, after it, and all."""
    kernels = {r["kernel"] for r in scored}
    first = first_searched(rows)
    early = {k for k in kernels if first[k] < SPLIT_DAY}
    late = kernels - early
    out = []
    for line in (None, *REUSE_LINES):
        records = _records(rows, kernels, ceiling=REGISTER_CEILING, reuse=line)
        moved = [
            {
                **r,
                "from_band": record_band(r.get("from_band_metrics"), REGISTER_CEILING, line),
                "record": records[r["kernel"]],
            }
            for r in scored
        ]
        score = banded(BAND_PRIOR_TRIALS)
        out.append(
            {
                "line": line,
                "early": pairwise_order(moved, score, early)["share"],
                "late": pairwise_order(moved, score, late)["share"],
                "all": pairwise_order(moved, score)["share"],
                "kernels_early": len(early),
                "kernels_late": len(late),
            }
        )
    return out


def pairwise_order(
    rows: Sequence[Row], score: Scorer, kernels: set[str] | None = None
) -> dict[str, Any]:
    """The share of (advanced, not advanced) pairs within one run, arm and wave band that
    `score` orders right, ties counting half."""
    groups: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for r in rows:
        if kernels is None or r["kernel"] in kernels:
            groups[(r["run"], r["arm"], r["from_waves"])].append(r)
    right = pairs = 0.0
    for group in groups.values():
        up = [score(r) for r in group if advanced(r)]
        down = [score(r) for r in group if not advanced(r)]
        for a in up:
            for b in down:
                pairs += 1
                right += 1.0 if a > b else 0.5 if a == b else 0.0
    return {"share": round(right / pairs, 4) if pairs else None, "pairs": int(pairs)}


def pooled(r: Row) -> float:
    return float(r["record"].score(row_key(r)))


def banded(prior: float) -> Scorer:
    return lambda r: float(r["record"].score_in_band(row_key(r), r["from_band"], prior))


def by_reuse(rows: Sequence[Row], line: float = REUSE_INTENSITY) -> list[dict[str, Any]]:
    """Per knob role and direction (up, down, or the value a move sets), the moves' trials and
    how many advanced, from kernels under the reuse line and at or over it (a move changing
    two knobs counts for each)."""
    counts: dict[tuple[str, bool], list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        intensity = (r.get("from_band_metrics") or {}).get("arithmetic_intensity")
        if not isinstance(intensity, int | float) or not r["changes"] or r["paired"]:
            continue
        for change in r["changes"]:
            role, op = change.split(" ", 1)
            # x2 and +1 raise a knob, /2 and -1 lower it; a set value (=true, one_wave) stays
            direction = {"x": "up", "+": "up", "/": "down", "-": "down"}.get(op[:1], op)
            kind = f"{role} {direction}"
            c = counts[(kind, intensity >= line)]
            c[0] += 1
            c[1] += advanced(r)
    kinds = sorted({kind for kind, _ in counts})
    return [
        {
            "move": kind,
            "streaming": {"trials": counts[(kind, False)][0], "advanced": counts[(kind, False)][1]},
            "reusing": {"trials": counts[(kind, True)][0], "advanced": counts[(kind, True)][1]},
        }
        for kind in kinds
    ]


def wave_banded(prior: float) -> Scorer:
    return lambda r: float(r["wave_record"].score_in_band(row_key(r), r["from_waves"], prior))


def ceiling_banded(prior: float) -> Scorer:
    def score(r: Row) -> float:
        band = record_band(r.get("from_band_metrics"), REGISTER_CEILING, None)
        return float(r["ceiling_record"].score_in_band(row_key(r), band, prior))

    return score


def bootstrap(
    rows: Sequence[Row], prior: float, against: Scorer, seed: int = 20261207
) -> dict[str, Any]:
    """The banded share minus `against`'s over kernel resamples: mean, 5th and 95th
    percentiles, and how often it was above zero."""
    kernels = sorted({r["kernel"] for r in rows})
    rng = random.Random(seed)
    diffs = []
    for _ in range(RESAMPLES):
        pick = {rng.choice(kernels) for _ in kernels}
        a = pairwise_order(rows, banded(prior), pick)["share"]
        b = pairwise_order(rows, against, pick)["share"]
        if a is not None and b is not None:
            diffs.append(a - b)
    diffs.sort()
    return {
        "resamples": len(diffs),
        "mean": round(sum(diffs) / len(diffs), 4),
        "p5": round(diffs[int(0.05 * len(diffs))], 4),
        "p95": round(diffs[int(0.95 * len(diffs)) - 1], 4),
        "above_zero": round(sum(d > 0 for d in diffs) / len(diffs), 3),
    }


def render(result: dict[str, Any]) -> str:
    ceiling, reuse = result["register_ceiling"], result["reuse_intensity"]
    out = [
        f"Written by `{result['command']}` on {result['date']} from {result['runs']} real "
        f"ablation runs: {result['trials']} move trials from values that recorded their "
        f"metrics, {result['kernels']} kernels, each scored with its own kernel's runs left "
        "out. Share of (advanced, did not advance) pairs within one run, arm and wave band "
        "that the score orders right (ties half).",
        "",
        "| score | right order | pairs |",
        "|---|---|---|",
        f"| pooled | {result['pooled']['share']} | {result['pooled']['pairs']} |",
    ]
    prior = f"pooled score worth {result['prior_used']:g} trials"
    for label, key in (
        ("per wave band alone", "wave_band_only"),
        (
            f"per wave band and register ceiling ({ceiling}+ registers a thread) only",
            "ceiling_only",
        ),
    ):
        out.append(f"| {label}, {prior} | {result[key]['share']} | {result[key]['pairs']} |")
    for p, row in result["banded"].items():
        mark = " (used)" if float(p) == result["prior_used"] else ""
        out.append(
            f"| per wave band, register ceiling and reuse ({reuse:g}+ flops a byte), pooled "
            f"score worth {p} trials{mark} | {row['share']} | {row['pairs']} |"
        )
    out.append("")
    for name, b in (
        ("pooled", result["bootstrap"]),
        ("the wave band alone", result["bootstrap_waves"]),
        ("the wave band and register ceiling only", result["bootstrap_ceiling"]),
    ):
        out.append(
            f"Banded (prior {result['prior_used']:g}) minus {name} over {b['resamples']} kernel "
            f"resamples: mean {b['mean']:+.4f}, 5th percentile {b['p5']:+.4f}, 95th "
            f"{b['p95']:+.4f}; above zero in {b['above_zero']:.0%} of them."
        )
    lines = result["reuse_lines"]
    out += [
        "",
        f"The reuse line (flops a byte; none: the register ceiling only), chosen on the "
        f"{lines[0]['kernels_early']} kernels first searched before {SPLIT_DAY} and checked "
        f"on the {lines[0]['kernels_late']} searched after:",
        "",
        "| line | kernels before | kernels after | all |",
        "|---|---|---|---|",
    ]
    for row in lines:
        line = "none" if row["line"] is None else f"{row['line']:g}"
        out.append(f"| {line} | {row['early']} | {row['late']} | {row['all']} |")
    out += [
        "",
        f"Moves by knob role and direction, from kernels under {reuse:g} flops a byte "
        "(streaming) and at or over it (reusing), every walking-arm trial that recorded its "
        "metrics: advanced / trials (a move changing two knobs counts for each).",
        "",
        "| move | streaming | reusing |",
        "|---|---|---|",
    ]
    for row in result["by_reuse"]:
        cells = []
        for side in ("streaming", "reusing"):
            c = row[side]
            share = f" ({c['advanced'] / c['trials']:.0%})" if c["trials"] else ""
            cells.append(f"{c['advanced']}/{c['trials']}{share}")
        out.append(f"| {row['move']} | {cells[0]} | {cells[1]} |")
    out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the results")
    args = parser.parse_args(argv)
    docs = load_results(REPO)
    outcomes = trial_outcomes(docs)
    rows = scored_rows(outcomes)
    result = {
        "what": "within-decision order of advancing trials: the move record pooled, per wave band, per wave band and register ceiling, and per wave band, register ceiling and reuse",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": shlex.join(
            ["python", "scripts/record_conditioning.py", *(argv or sys.argv[1:])]
        ),
        "runs": len(docs),
        "trials": len(rows),
        "kernels": len({r["kernel"] for r in rows}),
        "prior_used": BAND_PRIOR_TRIALS,
        "pooled": pairwise_order(rows, pooled),
        "register_ceiling": REGISTER_CEILING,
        "reuse_intensity": REUSE_INTENSITY,
        "wave_band_only": pairwise_order(rows, wave_banded(BAND_PRIOR_TRIALS)),
        "ceiling_only": pairwise_order(rows, ceiling_banded(BAND_PRIOR_TRIALS)),
        "banded": {f"{p:g}": pairwise_order(rows, banded(p)) for p in PRIORS},
        "bootstrap": bootstrap(rows, BAND_PRIOR_TRIALS, pooled),
        "bootstrap_waves": bootstrap(rows, BAND_PRIOR_TRIALS, wave_banded(BAND_PRIOR_TRIALS)),
        "bootstrap_ceiling": bootstrap(rows, BAND_PRIOR_TRIALS, ceiling_banded(BAND_PRIOR_TRIALS)),
        "reuse_lines": reuse_lines(outcomes, rows),
        "by_reuse": by_reuse(outcomes),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{NAME}.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / f"{NAME}.md").write_text(render(result))
    print(render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
