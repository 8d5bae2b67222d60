"""Does keeping the move record per band order a search's moves better than pooling it?

The catalog search orders its moves by each move's record: the share of measured ablation
trials where it beat the walk's best so far (`kbopt.workflow.move_record`).  Whether a move
pays depends on where it starts, so the record is also kept per band of the values a trial
moved from: the wave band (programs per SM under one, one to four, four or more), marked
where the launch sits at the register ceiling (`record_band`).  This script measures whether
the banded score would have put the trials that advanced ahead of those that did not,
against the pooled score and against the wave band alone, on the project's real ablation
runs:

- every trial is scored with a record that leaves its own kernel's runs out (what a search
  knew before it met that kernel), pooled, within the band it moved from, and within its
  wave band alone;
- trials are compared only within one decision situation: the same run, arm and wave band
  of the values moved from (a search choosing its next move compares moves from the same
  values), and only trials whose values recorded their metrics;
- the figure is the share of (advanced, did not advance) pairs the score puts in the right
  order, ties counting half (a pairwise AUC): 0.5 is a coin, 1.0 a perfect order;
- a bootstrap over kernels (200 resamples, seeded) gives the spread of the difference.

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
    MoveRecord,
    advanced,
    row_key,
    trial_outcomes,
)

RESULTS = REPO / "results" / "moves"
NAME = "record-conditioning"
PRIORS = (2.0, 4.0, 8.0, 16.0, 32.0)
RESAMPLES = 200

Row = dict[str, Any]
Scorer = Callable[[Row], float]


def scored_rows(rows: Sequence[Row]) -> list[Row]:
    """The moves of a search (no repeat of a resize with its warps) from values whose
    metrics were recorded, each with its kernel-left-out record (`record`)."""
    kept = [r for r in rows if r["changes"] and not r["paired"] and r.get("from_waves")]
    kernels = {r["kernel"] for r in kept}
    records = {k: MoveRecord.from_rows(rows, leave_out_kernel=k) for k in kernels}
    # the same record kept per wave band only (the register ceiling not marked)
    waves_only = [{**r, "from_band": r.get("from_waves")} for r in rows]
    by_wave = {k: MoveRecord.from_rows(waves_only, leave_out_kernel=k) for k in kernels}
    return [
        {**r, "record": records[r["kernel"]], "wave_record": by_wave[r["kernel"]]} for r in kept
    ]


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


def wave_banded(prior: float) -> Scorer:
    return lambda r: float(r["wave_record"].score_in_band(row_key(r), r["from_waves"], prior))


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
    w = result["wave_band_only"]
    out.append(
        f"| per wave band alone, pooled score worth {result['prior_used']:g} trials | "
        f"{w['share']} | {w['pairs']} |"
    )
    for prior, row in result["banded"].items():
        mark = " (used)" if float(prior) == result["prior_used"] else ""
        out.append(
            f"| per wave band and register ceiling ({result['register_ceiling']}+ registers a "
            f"thread), pooled score worth {prior} trials{mark} | {row['share']} | {row['pairs']} |"
        )
    out.append("")
    for name, b in (
        ("pooled", result["bootstrap"]),
        ("the wave band alone", result["bootstrap_waves"]),
    ):
        out.append(
            f"Banded (prior {result['prior_used']:g}) minus {name} over {b['resamples']} kernel "
            f"resamples: mean {b['mean']:+.4f}, 5th percentile {b['p5']:+.4f}, 95th "
            f"{b['p95']:+.4f}; above zero in {b['above_zero']:.0%} of them."
        )
    out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the results")
    args = parser.parse_args(argv)
    docs = load_results(REPO)
    rows = scored_rows(trial_outcomes(docs))
    result = {
        "what": "within-decision order of advancing trials: the move record pooled, per wave band, and per wave band and register ceiling",
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
        "wave_band_only": pairwise_order(rows, wave_banded(BAND_PRIOR_TRIALS)),
        "banded": {f"{p:g}": pairwise_order(rows, banded(p)) for p in PRIORS},
        "bootstrap": bootstrap(rows, BAND_PRIOR_TRIALS, pooled),
        "bootstrap_waves": bootstrap(rows, BAND_PRIOR_TRIALS, wave_banded(BAND_PRIOR_TRIALS)),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{NAME}.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / f"{NAME}.md").write_text(render(result))
    print(render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
