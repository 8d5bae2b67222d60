"""The expert's first move and the catalog's, both measured: what the blind labels' moves
and the ranking's first move each bought when a held-out ablation timed them.

A blind set's labels name the entry an engineer would apply first; the hit rate asks only
whether the ranking put it in its top 3.  The same kernels were ablated (the first run of
each line of `benchmarks/ablation-blind<N>.txt`), and the walking arms time catalog moves
one at a time from the start.  This script reads those runs and, per held-out kernel,
reports:

* the catalog arm's first move (its second trial): the entry and the time it measured;
* the labelled entries' moves, wherever either walking arm (catalog or random) measured one
  directly from the start values (a trial whose knob values differ from the start only in
  the knobs its move names): the fastest such trial;
* the best any arm found, for scale.

A label whose entry has no move on the kernel's knobs (fusion, a code change) cannot be
timed this way and is counted apart.  Gains are the start's time over the trial's, minus
one; a change within 2% either way is called flat.

    .venv/bin/python scripts/first_moves_measured.py   # writes results/search/first-moves-measured.*
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kbopt.site.ablation import held_out_plans, held_out_set  # noqa: E402
from kbopt.workflow.ablation import load_results  # noqa: E402

OUT = ROOT / "results" / "search"
NAME = "first-moves-measured"
FLAT_PCT = 2.0
WALKS = ("catalog", "random")
# A trial's move text: an optional place ("back at trial 4's values, ", "from the best so
# far, "...), an optional rank ("#3 ", "warning 1 ", "unranked "), the entry id, an optional
# pairing (", warps alongside"), then ": " and the knob changes.
_PLACE = re.compile(
    r"^(?:(?:back at trial \d+'s values|from the best so far|rolled back before, "
    r"tried again from the best values), )*"
)
_RANK = re.compile(r"^(?:#\d+ |warning \d+ |unranked )?")
_KNOB = re.compile(r"(\w+) (\S+)(?: \(launched as [^)]*\))? -> ")


def move_entry(move: str) -> str:
    """The entry id a trial's move text names ('' for the start)."""
    head = move.split(": ", 1)[0]
    head = _RANK.sub("", _PLACE.sub("", head))
    return head.split(", ", 1)[0].strip()


def moved_knobs(move: str) -> dict[str, str]:
    """The knobs a move text changes, each with the value it names as the one before."""
    return dict(_KNOB.findall(move.split(": ", 1)[1])) if ": " in move else {}


def from_start(trial: dict[str, Any], start: dict[str, Any]) -> bool:
    """Whether the trial moved from the start: its values differ from the start's only in
    the knobs its move names, each moved from the start's value."""
    changed = {k for k, v in trial["values"].items() if v != start.get(k)}
    knobs = moved_knobs(str(trial.get("move", "")))
    return (
        bool(changed)
        and changed <= set(knobs)
        and all(before == str(start.get(k)) for k, before in knobs.items())
    )


def gain_pct(start_us: float, us: float | None) -> float | None:
    return None if us is None else (start_us / us - 1.0) * 100.0


def labels_by_profile(root: Path) -> dict[tuple[int, str, str], list[str]]:
    """(blind set, kernel, dims text as profile files name them) -> the labelled entries."""
    found: dict[tuple[int, str, str], list[str]] = {}
    for path in sorted(root.glob("benchmarks/real_profiles_blind*/labels.json")):
        # a set's lines profiled later keep its number (real_profiles_blind56b is set 56's)
        number = path.parent.name.removeprefix("real_profiles_blind").rstrip("abcdefgh")
        if not number.isdigit():
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        for name, label in doc.get("profiles", {}).items():
            parts = name.removesuffix(".md").split("--")
            if len(parts) == 3:
                found[(int(number), parts[0], parts[2])] = list(label.get("expected", []))
    return found


def dims_text(dims: dict[str, Any]) -> str:
    return "_".join(f"{k}_{v}" for k, v in dims.items())


def kernel_rows(root: Path) -> list[dict[str, Any]]:
    plans = held_out_plans(root)
    labels = labels_by_profile(root)
    seen: set[tuple[int, str, str]] = set()
    rows = []
    for doc in load_results(root):
        if doc.get("fake"):
            continue
        number = held_out_set(doc, plans)
        if number is None:
            continue
        dims = dict(doc.get("config", {}).get("dims", {}))
        key = (number, str(doc["kernel"]), dims_text(dims))
        if key in seen or key not in labels:
            continue  # the first run of each held-out line; unlabelled lines are skipped
        arms = {r["arm"]: r for r in doc.get("rows", [])}
        catalog = arms.get("catalog", {}).get("trajectory", [])
        start_us = doc.get("start_us") or (catalog[0].get("duration_us") if catalog else None)
        if not start_us:
            continue  # a run that recorded no trajectory: nothing to compare
        seen.add(key)
        start_us = float(start_us)
        first = catalog[1] if len(catalog) > 1 else None
        shuffled = arms.get("random", {}).get("trajectory", [])
        random_first = shuffled[1] if len(shuffled) > 1 else None
        start_values = catalog[0]["values"] if catalog else {}
        expected = labels[key]
        labelled: list[tuple[float, str, str]] = []
        for arm in WALKS:
            for t in arms.get(arm, {}).get("trajectory", [])[1:]:
                if move_entry(str(t.get("move", ""))) not in expected:
                    continue
                if t.get("status") != "ok" or not from_start(t, start_values):
                    continue
                labelled.append((float(t["duration_us"]), arm, str(t["move"])))
                break  # the first time this arm tried a labelled entry from the start
        # The catalog arm's try first, else the random order's: one measured trial, as the
        # catalog's first move is one (the fastest of several would favour the label).
        best_label = labelled[0] if labelled else None
        rows.append(
            {
                "set": number,
                "kernel": doc["kernel"],
                "config": dims,
                "results_file": doc.get("_file", ""),
                "start_us": start_us,
                "best_us_any_arm": doc.get("best_us_any_arm"),
                "best_gain_pct": gain_pct(start_us, doc.get("best_us_any_arm")),
                "expected": expected,
                "catalog_first_entry": move_entry(str(first.get("move", ""))) if first else "",
                "catalog_first_move": str(first.get("move", "")) if first else "",
                "catalog_first_gain_pct": gain_pct(
                    start_us,
                    first.get("duration_us") if first and first.get("status") == "ok" else None,
                ),
                "random_first_entry": move_entry(str(random_first.get("move", "")))
                if random_first
                else "",
                "random_first_gain_pct": gain_pct(
                    start_us,
                    random_first.get("duration_us")
                    if random_first and random_first.get("status") == "ok"
                    else None,
                )
                if random_first
                else None,
                "catalog_first_is_label": bool(first)
                and move_entry(str(first.get("move", ""))) in expected,
                "label_measured": best_label is not None,
                "label_move": best_label[2] if best_label else "",
                "label_arm": best_label[1] if best_label else "",
                "label_gain_pct": gain_pct(start_us, best_label[0]) if best_label else None,
            }
        )
    return sorted(rows, key=lambda r: (r["set"], r["kernel"]))


def verdict(gain: float | None) -> str:
    if gain is None:
        return "failed"
    return "gain" if gain > FLAT_PCT else "loss" if gain < -FLAT_PCT else "flat"


def fmt(gain: float | None) -> str:
    return "-" if gain is None else f"{gain:+.1f}%"


def count(rows: list[dict[str, Any]], key: str) -> dict[str, int]:
    """How many of `rows` the move under `key` made faster, flat, slower, or failed."""
    return {
        v: sum(1 for r in rows if verdict(r[key]) == v) for v in ("gain", "flat", "loss", "failed")
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    measured = [r for r in rows if r["label_measured"]]
    both = [r for r in measured if not r["catalog_first_is_label"]]
    return {
        "kernels": len(rows),
        "catalog_first": count(
            [r for r in rows if r["catalog_first_entry"]], "catalog_first_gain_pct"
        ),
        "no_first_move": sum(1 for r in rows if not r["catalog_first_entry"]),
        "catalog_first_was_label": sum(r["catalog_first_is_label"] for r in rows),
        "random_first": count(
            [r for r in rows if r["random_first_entry"]], "random_first_gain_pct"
        ),
        "label_measured": len(measured),
        "label_not_measurable": len(rows) - len(measured),
        "compared": len(both),
        "label": count(both, "label_gain_pct"),
        "label_all": count(measured, "label_gain_pct"),
        "catalog_first_where_label_measured": count(both, "catalog_first_gain_pct"),
        "label_better": sum(
            1
            for r in both
            if (r["label_gain_pct"] or -1e9) > (r["catalog_first_gain_pct"] or -1e9) + FLAT_PCT
        ),
        "catalog_better": sum(
            1
            for r in both
            if (r["catalog_first_gain_pct"] or -1e9) > (r["label_gain_pct"] or -1e9) + FLAT_PCT
        ),
    }


def markdown(rows: list[dict[str, Any]], s: dict[str, Any]) -> str:
    c, lab, cl = s["catalog_first"], s["label"], s["catalog_first_where_label_measured"]
    lines = [
        f"{s['kernels']} held-out kernels with blind labels (the first run of each held-out "
        "ablation line). A change within 2% either way is flat.",
        "",
        f"- The catalog arm's first move: gain {c['gain']}, flat {c['flat']}, loss {c['loss']}, "
        f"failed {c['failed']} (no move at all on {s['no_first_move']}); it was a labelled "
        f"entry's move on {s['catalog_first_was_label']}. "
        f"The random order's first move (same entries' moves, shuffled) in the same runs: gain "
        f"{s['random_first']['gain']}, flat {s['random_first']['flat']}, loss "
        f"{s['random_first']['loss']}, failed {s['random_first']['failed']}.",
        f"- A labelled entry's move measured from the start by a walking arm on "
        f"{s['label_measured']} kernels (the catalog arm's first such trial, else the random "
        f"order's; on {s['label_not_measurable']} no walk timed one: the label has no move on "
        "the kernel's knobs, or no arm tried it from the start): gain "
        f"{s['label_all']['gain']}, flat {s['label_all']['flat']}, loss {s['label_all']['loss']}, "
        f"failed {s['label_all']['failed']}.",
        f"- Where the catalog's first move was not the labelled entry ({s['compared']} of those): "
        f"the labelled move gain {lab['gain']}, flat {lab['flat']}, loss {lab['loss']}, failed "
        f"{lab['failed']}; the catalog's first move gain {cl['gain']}, flat {cl['flat']}, loss "
        f"{cl['loss']}, failed {cl['failed']}. Head to head: the labelled move more than 2% "
        f"faster on {s['label_better']}, the catalog's first move on {s['catalog_better']}, within "
        f"2% on {s['compared'] - s['label_better'] - s['catalog_better']}.",
        "",
        "| Set | Kernel | Labelled | Catalog's first move | Its gain | Labelled move measured | Its gain | Best any arm |",
        "|-----|--------|----------|----------------------|----------|------------------------|----------|--------------|",
    ]
    for r in rows:
        lines.append(
            f"| {r['set']} | {r['kernel']} | {', '.join(r['expected'])} | "
            f"{r['catalog_first_entry'] or '-'} | {fmt(r['catalog_first_gain_pct'])} | "
            f"{(r['label_arm'] + ': ' + r['label_move'].split(': ', 1)[-1]) if r['label_measured'] else '-'} | "
            f"{fmt(r['label_gain_pct'])} | {fmt(r['best_gain_pct'])} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the results files")
    args = parser.parse_args(argv)
    rows = kernel_rows(ROOT)
    if not rows:
        print("no held-out ablation with blind labels found", file=sys.stderr)
        return 1
    s = summarize(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    doc = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python scripts/first_moves_measured.py",
        "flat_pct": FLAT_PCT,
        "summary": s,
        "rows": rows,
    }
    (args.out / f"{NAME}.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    (args.out / f"{NAME}.md").write_text(markdown(rows, s), encoding="utf-8")
    print(markdown(rows, s).split("\n\n")[1])
    print(f"wrote {args.out / NAME}.json and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
