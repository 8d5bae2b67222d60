#!/usr/bin/env python3
"""Add to labelled profiles the metrics today's profiler derives from what was recorded.

    python scripts/derive_profile_metrics.py benchmarks/real_profiles_blind27 [...]

A profile in a labelled folder is the Markdown `kbopt profile` rendered when it ran; the
JSON it came from (`results/profiles/<gpu>-<set>/<same stem>.json`, matched by the
measurement's date on the profile's first line) also keeps every launch of the call and the
counters of each profiled kernel.  Metrics the profiler learned to derive since then from
those same records are computed here and added to the Metrics table, with a comment line
that says which and why; nothing is measured again and no other line changes.  Today that
is `narrow_launch_pct` (the share of the call's GPU time in launches of a few CTAs beside a
wide one).  A profile that already has the metric, or whose record lacks launches or grid
sizes, is left as it is.  Run it again after adding a metric to DERIVED.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kbopt.workflow.profiler import narrow_launch_pct  # noqa: E402

MEASURED = re.compile(r"<!-- measured (\S+) on ")


def _narrow(record: dict) -> float | None:
    launches = [(x["name"], float(x["duration_us"])) for x in record.get("launches") or []]
    kernels = record.get("kernels") or []
    if not launches:
        launches = [(k["name"], float(k["metrics"].get("duration_us", 0.0))) for k in kernels]
    grids = {
        k["name"]: float(k["metrics"]["grid_size"])
        for k in kernels
        if "grid_size" in (k.get("metrics") or {})
    }
    return narrow_launch_pct(launches, grids, record["measurement"].get("sm_count"))


# metric -> how to derive it from the recorded run
DERIVED: dict[str, Callable[[dict], float | None]] = {"narrow_launch_pct": _narrow}


def records_by_date(root: Path) -> dict[tuple[str, str], dict]:
    """(stem, measurement date) -> the recorded run, for every JSON under results/profiles."""
    out: dict[tuple[str, str], dict] = {}
    for path in sorted(root.rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(data, list) and len(data) == 1:
            data = data[0]
        if isinstance(data, dict) and "measurement" in data:
            out[(path.stem, str(data["measurement"].get("date")))] = data
    return out


def with_metric(text: str, metric: str, value: float) -> str | None:
    """The profile with one more row in its Metrics table, in name order; None when the
    table is missing or already has the metric."""
    lines = text.splitlines(keepends=True)
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == "### Metrics") + 3
    except StopIteration:
        return None
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    names = [ln.split("|")[1].strip() for ln in lines[start:end]]
    if metric in names:
        return None
    at = start + sum(1 for n in names if n < metric)
    lines.insert(at, f"| {metric} | {value:.3f} |\n")
    return "".join(lines)


def derive(folder: Path, records: dict[tuple[str, str], dict]) -> tuple[int, int]:
    """Profiles changed and profiles without a matching record, in one folder."""
    changed = unmatched = 0
    for md in sorted(folder.glob("*.md")):
        text = md.read_text(encoding="utf-8")
        first = text.split("\n", 1)[0]
        m = MEASURED.match(first)
        record = records.get((md.stem, m.group(1))) if m else None
        if record is None:
            unmatched += 1
            continue
        added = []
        for metric, fn in DERIVED.items():
            value = fn(record)
            if value is None:
                continue
            new = with_metric(text, metric, value)
            if new is not None:
                text = new
                added.append(metric)
        if added:
            note = (
                f"<!-- {', '.join(added)} derived afterwards from the recorded launches by "
                "scripts/derive_profile_metrics.py (today's profiler measures it) -->\n"
            )
            head, rest = text.split("\n", 1)
            md.write_text(f"{head}\n{note}{rest}", encoding="utf-8")
            changed += 1
    return changed, unmatched


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path, help="labelled profile folders")
    ap.add_argument("--records", type=Path, default=REPO / "results" / "profiles")
    args = ap.parse_args(argv)
    records = records_by_date(args.records)
    for folder in args.folders:
        if not folder.is_dir():
            print(f"{folder}: not a folder of profiles", file=sys.stderr)
            return 2
        changed, unmatched = derive(folder, records)
        print(f"{folder}: {changed} profile(s) given derived metrics, {unmatched} without a record")
    return 0


if __name__ == "__main__":
    sys.exit(main())
