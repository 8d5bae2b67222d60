#!/usr/bin/env python3
"""Top-1 / top-3 hit rates of `kbopt.recommend` on the labelled profiles.

Each profile in `benchmarks/profiles/*.md` is in the profiler contract format (A11);
`benchmarks/profiles/labels.json` names, for each, the language the cycle chose and
the entries a kernel expert would try first.  A profile is a top-k hit when one of
its expected optimizations is among the first k opportunities, or one of its expected
anti-patterns is among the first k warnings.  The rate over optimizations only is
reported beside it.

    .venv/bin/python scripts/hit_rate.py                 # print the table, write results
    .venv/bin/python scripts/hit_rate.py --min-top3 0.9  # exit 1 below the target
    .venv/bin/python scripts/hit_rate.py --render-only   # regenerate the Markdown only

Results: results/search/hit-rate.json (with machine, versions, date, command) and
results/search/hit-rate.md (the table the docs include).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import shlex
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PROFILES = REPO / "benchmarks" / "profiles"
RESULTS = REPO / "results" / "search"


def versions() -> dict[str, str]:
    from importlib.metadata import version

    import kbopt

    return {
        "python": platform.python_version(),
        "kbopt": kbopt.__version__,
        "whoosh-reloaded": version("whoosh-reloaded"),
        "pydantic": version("pydantic"),
    }


def catalog_commit() -> str:
    """The commit whose catalog ranked the profiles (`+edits` when docs/knowledge differs
    from it), so a set scored at the commit it was profiled at says so; "" outside git."""
    import subprocess

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD")
    if head and git("status", "--porcelain", "--", "docs/knowledge"):
        head += "+edits"
    return head


def machine() -> dict[str, Any]:
    import os

    return {
        "platform": platform.platform(),
        "processor": platform.machine(),
        "cpus": os.cpu_count(),
    }


def score_profile(
    name: str, label: dict[str, Any], folder: Path, store: Any, stages_only: bool = False
) -> dict[str, Any]:
    from kbopt.contracts.profile import Profile
    from kbopt.strategy import SHAPE_METRICS, recommend

    path = folder / name
    profile = Profile.parse(path.read_text(encoding="utf-8"), str(path))
    if stages_only:  # what a profiler that fills only the seed's Stages table gives
        # (plus the problem's shape, which a profiler writes from the kernel's dims)
        profile.measured = {k: v for k, v in profile.measured.items() if k in SHAPE_METRICS}
    result = recommend(profile, language=label.get("language"), store=store)
    expected = set(label["expected"])
    opps = [o.id for o in result.opportunities]
    warns = [w.id for w in result.warnings]

    def hit(k: int) -> bool:
        return bool(expected & set(opps[:k])) or bool(expected & set(warns[:k]))

    def opt_hit(k: int) -> bool:
        return bool(expected & set(opps[:k]))

    return {
        "profile": name,
        "split": label.get("split", "dev"),
        "class": label.get("class", ""),
        "language": label.get("language"),
        "expected": sorted(expected),
        "top3": opps[:3],
        "warnings": warns[:3],
        "top1_hit": hit(1),
        "top3_hit": hit(3),
        "has_optimization_label": bool(expected & set(known_optimizations(store))),
        "top1_opt_hit": opt_hit(1),
        "top3_opt_hit": opt_hit(3),
    }


_OPTS: list[str] | None = None


def known_optimizations(store: Any) -> list[str]:
    global _OPTS
    if _OPTS is None:
        _OPTS = [e.name for e in store.load_all().entries if e.kind.value == "optimization"]
    return _OPTS


SETS = {
    "all": "all profiles",
    "dev": "development profiles (the ranking weights were chosen on these)",
    "heldout": "held-out profiles (written after the weights were frozen)",
    "stages-only": "all profiles, `### Metrics` reduced to the shape (Stages table only)",
    "ours": "real profiles of this repository's kernels",
    "foreign": "real profiles of kernels nobody here wrote",
}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    opt_rows = [r for r in rows if r["has_optimization_label"]]
    s: dict[str, Any] = {
        "profiles": n,
        "top1_hits": sum(r["top1_hit"] for r in rows),
        "top3_hits": sum(r["top3_hit"] for r in rows),
        "opt_profiles": len(opt_rows),
        "top1_opt_hits": sum(r["top1_opt_hit"] for r in opt_rows),
        "top3_opt_hits": sum(r["top3_opt_hit"] for r in opt_rows),
    }
    s["top1"] = s["top1_hits"] / max(1, n)
    s["top3"] = s["top3_hits"] / max(1, n)
    s["top1_opt"] = s["top1_opt_hits"] / max(1, len(opt_rows))
    s["top3_opt"] = s["top3_opt_hits"] / max(1, len(opt_rows))
    return s


def render_markdown(data: dict[str, Any]) -> str:
    lines = [
        "<!-- generated by scripts/hit_rate.py from its results JSON; do not edit -->",
        "",
        f"Catalog of {data['catalog_entries']} entries"
        + (f" at commit {data['catalog_commit']}" if data.get("catalog_commit") else "")
        + f"; measured {data['date']} with `{data['command']}`.",
        "",
        "| Profile set | Profiles | Top-1 | Top-3 | Top-1, optimizations only | Top-3, optimizations only |",
        "|-------------|----------|-------|-------|---------------------------|---------------------------|",
    ]
    for key, s in data["summaries"].items():
        if not s["profiles"]:
            continue
        lines.append(
            f"| {SETS[key]} | {s['profiles']} | {s['top1']:.0%} ({s['top1_hits']}) | "
            f"{s['top3']:.0%} ({s['top3_hits']}) | {s['top1_opt']:.0%} of {s['opt_profiles']} | "
            f"{s['top3_opt']:.0%} of {s['opt_profiles']} |"
        )
    lines += [
        "",
        "| Profile | Set | Class | Language | Expected | Top 3 | Warnings | Top-3 hit |",
        "|---------|-----|-------|----------|----------|-------|----------|-----------|",
    ]
    for r in data["per_profile"]:
        lines.append(
            f"| {r['profile'].removesuffix('.md')} | {r['split']} | {r['class']} | {r['language'] or 'shared'} | "
            f"{', '.join(r['expected'])} | {', '.join(r['top3'])} | {', '.join(r['warnings'])} | "
            f"{'yes' if r['top3_hit'] else '**no**'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--profiles", type=Path, default=DEFAULT_PROFILES, help="folder with *.md and labels.json"
    )
    ap.add_argument(
        "--root", type=Path, help="project root of the catalog (default: this repository)"
    )
    ap.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument(
        "--name",
        default="hit-rate",
        help="results file stem (hit-rate-real for benchmarks/real_profiles)",
    )
    ap.add_argument("--min-top3", type=float, help="exit 1 when the top-3 rate is below this")
    ap.add_argument(
        "--render-only", action="store_true", help="regenerate the Markdown from the JSON"
    )
    args = ap.parse_args(argv)

    if args.render_only:
        data = json.loads((args.out / f"{args.name}.json").read_text())
        (args.out / f"{args.name}.md").write_text(render_markdown(data))
        return 0

    from kbopt.store import Store

    store = Store(args.root or REPO)
    labels = json.loads((args.profiles / "labels.json").read_text(encoding="utf-8"))["profiles"]
    on_disk = sorted(p.name for p in args.profiles.glob("*.md"))
    unlabelled = [n for n in on_disk if n not in labels]
    if unlabelled:
        print(f"error: profiles without labels: {', '.join(unlabelled)}", file=sys.stderr)
        return 2
    rows = [score_profile(name, labels[name], args.profiles, store) for name in sorted(labels)]
    bare = [
        score_profile(n, labels[n], args.profiles, store, stages_only=True) for n in sorted(labels)
    ]
    summaries = {
        "all": summarize(rows),
        "dev": summarize([r for r in rows if r["split"] == "dev"]),
        "heldout": summarize([r for r in rows if r["split"] == "heldout"]),
        "ours": summarize([r for r in rows if r["split"] == "ours"]),
        "foreign": summarize([r for r in rows if r["split"] == "foreign"]),
        "stages-only": summarize(bare),
    }
    summary = summaries["all"]

    width = max(len(r["profile"]) for r in rows)
    for r in rows:
        mark = "hit " if r["top3_hit"] else "MISS"
        print(
            f"{mark}  {r['profile']:<{width}}  top3={','.join(r['top3'])}  warn={','.join(r['warnings'])}"
        )
        if not r["top3_hit"]:
            print(f"{'':6}{'':<{width}}  expected={','.join(r['expected'])}")
    print()
    for key, s in summaries.items():
        if s["profiles"]:
            print(
                f"{key:<12} top-1: {s['top1_hits']}/{s['profiles']} = {s['top1']:.0%}   "
                f"top-3: {s['top3_hits']}/{s['profiles']} = {s['top3']:.0%}   "
                f"(optimizations only: top-1 {s['top1_opt']:.0%}, top-3 {s['top3_opt']:.0%} "
                f"of {s['opt_profiles']})"
            )

    data = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": (
            "python scripts/hit_rate.py " + shlex.join(argv if argv is not None else sys.argv[1:])
        ).strip(),
        "machine": machine(),
        "versions": versions(),
        "catalog_entries": len(store.load_all().entries),
        "catalog_commit": catalog_commit(),
        "summaries": summaries,
        "per_profile": rows,
        "per_profile_stages_only": bare,
    }
    if not args.no_write:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{args.name}.json").write_text(json.dumps(data, indent=2) + "\n")
        (args.out / f"{args.name}.md").write_text(render_markdown(data))
        print(f"wrote {args.out / (args.name + '.json')} and {args.name}.md")
    if args.min_top3 is not None and summary["top3"] < args.min_top3:
        print(
            f"top-3 rate {summary['top3']:.0%} is below the target {args.min_top3:.0%}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
