#!/usr/bin/env python3
"""How many instructions MLA decode versions issue beside FlashMLA's kernel, relative to it,
from Nsight Compute counters already recorded on the H200 (nothing is run).

    python scripts/mla_issue_compare.py [--no-write]

For each main kernel it reads the duration and the issue-slot share
(`smsp__issue_active.avg.pct_of_peak_sustained_active`: the share of a scheduler's active
cycles in which it issued an instruction) and takes their product, the issue time.  At one
CTA per SM on every SM for the kernel's whole duration (true of these launches at the
speculative shape: one wave of 256-thread CTAs) and at the same clock, the issue time is
proportional to the instructions each scheduler issued, so its ratio to FlashMLA's is the
ratio of instructions issued for the same attention work.  Sources: FlashMLA's profile by
`kbopt profile` (results/profiles/h200/) and the CuTe sessions' ncu CSVs with their launch
sidecars (kernels/mla_decode/results/ncu-*.csv).  Results:
results/ncu/mla-issued-instructions-<UTC stamp>.json with the sources, date and command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import results_file

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FLASHMLA = {
    "speculative": "results/profiles/h200/mla_decode--flashmla--speculative.json",
    "decode": "results/profiles/h200/mla_decode--flashmla--decode.json",
}
SESSIONS = (
    "kernels/mla_decode/results/ncu-20261204T0304Z-NVIDIA-H200.csv",
    "kernels/mla_decode/results/ncu-20261204T0436Z-NVIDIA-H200.csv",
)


def flashmla_row(config: str, path: str) -> dict[str, Any]:
    data = json.loads((ROOT / path).read_text(encoding="utf-8"))
    run = data[0] if isinstance(data, list) else data
    main = max(run["kernels"], key=lambda k: k["metrics"].get("duration_us", 0.0))
    m = main["metrics"]
    return row("flashmla", config, m["duration_us"], m["issue_slot_util_pct"], path)


def session_rows(path: str) -> list[dict[str, Any]]:
    """One row per (version, configuration) of an ncu session: its longest kernel."""
    from kbopt.bench.ncu import parse_csv
    from kbopt.devlog_profiles import expand_unknown

    csv_path = ROOT / path
    side = csv_path.with_suffix(".launches.json")
    kernels = parse_csv(csv_path.read_text(encoding="utf-8"))
    launches = json.loads(side.read_text(encoding="utf-8"))
    launches = expand_unknown(launches, len(kernels), csv_path.name, side.name)
    best: dict[tuple[str, str], Any] = {}
    for launch, k in zip(launches, kernels, strict=True):
        key = (launch["version"], launch["config"])
        if key not in best or k.metrics["duration_us"] > best[key].metrics["duration_us"]:
            best[key] = k
    return [
        row(v, c, k.metrics["duration_us"], k.metrics["issue_slot_util_pct"], path)
        for (v, c), k in best.items()
    ]


def row(version: str, config: str, duration_us: float, issue_pct: float, source: str) -> dict:
    return {
        "version": version,
        "config": config,
        "duration_us": round(duration_us, 3),
        "issue_slot_util_pct": round(issue_pct, 3),
        "issue_time_us": round(duration_us * issue_pct / 100, 3),
        "source": source,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--no-write", action="store_true", help="print the table only")
    args = p.parse_args(argv)
    rows = [flashmla_row(c, f) for c, f in FLASHMLA.items()]
    for s in SESSIONS:
        rows += session_rows(s)
    ref = {r["config"]: r["issue_time_us"] for r in rows if r["version"] == "flashmla"}
    for r in rows:
        r["issue_time_x_flashmla"] = round(r["issue_time_us"] / ref[r["config"]], 3)
    rows.sort(key=lambda r: (r["config"], r["version"] != "flashmla", r["version"]))
    print(
        f"{'config':<12} {'version':<9} {'us':>9} {'issue %':>8} {'issue us':>9} {'x flashmla':>10}"
    )
    for r in rows:
        print(
            f"{r['config']:<12} {r['version']:<9} {r['duration_us']:>9.1f} "
            f"{r['issue_slot_util_pct']:>8.2f} {r['issue_time_us']:>9.1f} "
            f"{r['issue_time_x_flashmla']:>10.3f}"
        )
    if args.no_write:
        return 0
    results_file.write(
        "ncu",
        "mla-issued-instructions",
        "mla_issue_compare.py",
        sys.argv[1:] if argv is None else argv,
        "instructions issued by each main kernel relative to FlashMLA's, as duration "
        "x issue-slot share (both from ncu on the H200); valid at one CTA per SM for the "
        "whole kernel and equal clocks",
        device="NVIDIA H200 (the recorded sources)",
        rows=rows,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
