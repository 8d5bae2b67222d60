#!/usr/bin/env python3
"""Turn `kbopt profile --json` outputs from the GPU into the labelled set's Markdown profiles.

    python scripts/real_profiles.py OUT/profiles [--into benchmarks/real_profiles]

Each `<kernel>--<version>--<config>.json` (scripts/gpu_profiles.sh) becomes
`<same>.md`: the profile as `kbopt profile` rendered it, with its Top 3 Opportunities
removed (a labeller writes the expected first move from the measurements alone, and
scripts/hit_rate.py ranks the profile again), and a first comment line with the device,
date and command of the measurement.  The JSON as measured (with the ranking made at the
time) is kept apart, under results/profiles/, out of the labeller's folder.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def stage_names_from_kernels(text: str, kernels: list[dict]) -> tuple[str, int]:
    """The profile text with each per-kernel row of its Stages table named again from the
    full kernel name recorded in the JSON (matched by duration), as today's profiler names
    it: repeated names numbered, anonymous namespaces read right.  Returns the text and how
    many names changed; a row no recorded kernel matches keeps its name."""
    from kbopt.bench.ncu import distinct_names, readable_name

    lines = text.splitlines(keepends=True)
    try:
        top = next(i for i, ln in enumerate(lines) if ln.strip() == "### Stages") + 3
    except StopIteration:
        return text, 0
    end = top
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    by_us: dict[float, list[str]] = {}
    for k in kernels:
        us = (k.get("metrics") or {}).get("duration_us")
        if us is not None:
            by_us.setdefault(round(float(us), 3), []).append(k["name"])
    rows, fulls = [], []
    for i in range(top, end):
        cells = lines[i].split("|")
        try:
            us = round(float(cells[2].split()[0]), 3)
        except (IndexError, ValueError):
            continue
        if by_us.get(us):
            rows.append(i)
            fulls.append(by_us[us].pop(0))
    changed = 0
    for i, name in zip(rows, distinct_names([readable_name(f) for f in fulls]), strict=True):
        cells = lines[i].split("|")
        if cells[1].strip() != name:
            cells[1] = f" {name} "
            lines[i] = "|".join(cells)
            changed += 1
    return "".join(lines), changed


def one_run(src: Path) -> dict | None:
    """The run a `kbopt profile --json` file holds: a list of one run per configuration
    (files written before the output was always a list hold the run itself)."""
    data = json.loads(src.read_text(encoding="utf-8"))
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict) or "profile" not in data:
        print(
            f"{src}: not the output of `kbopt profile --json` for one configuration; skipped",
            file=sys.stderr,
        )
        return None
    return data


def convert(src: Path, into: Path, json_into: Path) -> Path | None:
    from kbopt.contracts.profile import Profile

    data = one_run(src)
    if data is None:
        return None
    text, renamed = stage_names_from_kernels(data["profile"], data.get("kernels") or [])
    profile = Profile.parse(text, str(src))
    profile.opportunities = []
    m = data["measurement"]
    counters = "ncu counters" if data.get("from_counters") else "timing only"
    head = (
        f"<!-- measured {m.get('date')} on {m.get('device')} ({counters}); "
        f"command: {m.get('command')} -->\n"
    )
    if renamed:
        head += (
            f"<!-- {renamed} stage name(s) re-derived from the recorded kernel names "
            "(the profiler shortened them wrongly when this was measured) -->\n"
        )
    out = into / f"{src.stem}.md"
    out.write_text(head + profile.render(), encoding="utf-8")
    json_into.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, json_into / src.name)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path, help="folder of kbopt profile --json outputs")
    ap.add_argument("--into", type=Path, default=REPO / "benchmarks" / "real_profiles")
    ap.add_argument("--json-into", type=Path, default=REPO / "results" / "profiles" / "h200")
    args = ap.parse_args(argv)
    args.into.mkdir(parents=True, exist_ok=True)
    done = [
        p
        for p in (convert(s, args.into, args.json_into) for s in sorted(args.source.glob("*.json")))
        if p
    ]
    print(f"wrote {len(done)} profiles into {args.into}")
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main())
