#!/usr/bin/env python3
"""How often two kernel engineers pick the same first move: a second, blind labeller on a
random sample of the labelled real profiles, scored the way `kbopt recommend` is scored.

The hit rates in `results/search/hit-rate-real-*.json` count a profile as a top-3 hit when
one of the entries its labeller accepted (`expected` in the set's labels.json) is among the
first three the catalog ranks.  That target means something only against how well another
engineer, reading the same profile and code, would do under the same rule.  This script:

    sample   picks the profiles (one per kernel, at random with a fixed seed, over every
             labelled set) and copies their Markdown, which holds measurements only, into a
             folder for the second labeller, who never sees the first labels or the ranking
    score    scores the second labeller's first move (top-1) and first three moves (top-3)
             against the first labels exactly as kbopt's ranking is scored, and scores
             kbopt's ranking (catalog as checked out) against both sets of labels

    .venv/bin/python scripts/label_agreement.py sample --n 30 --into /tmp/second/profiles
    .venv/bin/python scripts/label_agreement.py score

Files: benchmarks/second_labels/sample.json (the draw), benchmarks/second_labels/labels*.json
(the second labeller's, one file per labeller, the set-61 labels.json format), results:
results/search/label-agreement.json and .md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SECOND = REPO / "benchmarks" / "second_labels"
RESULTS = REPO / "results" / "search"
sys.path.insert(0, str(REPO / "scripts"))


def labelled_sets() -> list[Path]:
    """Every folder of real profiles with first labels, in name order."""
    return sorted(p.parent for p in REPO.glob("benchmarks/real_profiles*/labels.json"))


def first_labels() -> dict[str, dict[str, Any]]:
    """`<set folder>/<profile>.md` -> its first label."""
    out: dict[str, dict[str, Any]] = {}
    for folder in labelled_sets():
        for name, label in json.loads((folder / "labels.json").read_text())["profiles"].items():
            out[f"{folder.name}/{name}"] = label
    return out


def kernel_of(key: str) -> str:
    return key.split("/", 1)[1].split("--", 1)[0]


def draw(keys: list[str], n: int, seed: int, exclude: frozenset[str] = frozenset()) -> list[str]:
    """One profile per kernel, `n` kernels not in `exclude`, both chosen by
    `random.Random(seed)` over the sorted keys, so the same labelled sets give the same draw."""
    rng = random.Random(seed)
    by_kernel: dict[str, list[str]] = {}
    for k in sorted(keys):
        if kernel_of(k) not in exclude:
            by_kernel.setdefault(kernel_of(k), []).append(k)
    kernels = rng.sample(sorted(by_kernel), n)
    return sorted(rng.choice(by_kernel[kern]) for kern in kernels)


def cmd_sample(args: argparse.Namespace) -> int:
    keys = list(first_labels())
    path = SECOND / "sample.json"
    if args.more and not path.exists():
        print(f"error: --more adds to {path}, which does not exist yet", file=sys.stderr)
        return 2
    record = json.loads(path.read_text()) if args.more else {"draws": [], "profiles": []}
    drawn = frozenset(kernel_of(k) for k in record["profiles"])
    left = len({kernel_of(k) for k in keys} - drawn)
    if not 0 < args.n <= left:
        print(f"error: --n {args.n}: {left} labelled kernels are left to draw", file=sys.stderr)
        return 2
    chosen = draw(keys, args.n, args.seed, exclude=drawn)
    record.setdefault("draws", []).append(
        {
            "about": (
                f"one profile per kernel, {args.n} kernels of the {left} labelled and not "
                "drawn before, "
                f"random.Random({args.seed}) over the sorted profile keys "
                "(scripts/label_agreement.py draw)"
            ),
            "seed": args.seed,
            "date": dt.date.today().isoformat(),
            "profiles": chosen,
        }
    )
    record["about"] = (
        "Profiles drawn for a second, blind labeller, each draw committed before any of its "
        "second labels was written."
    )
    record["profiles"] = sorted([*record["profiles"], *chosen])
    SECOND.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n")
    if args.into:
        args.into.mkdir(parents=True, exist_ok=True)
        for k in chosen:
            shutil.copy(REPO / "benchmarks" / k, args.into / k.replace("/", "__"))
    print(f"{len(chosen)} profiles drawn, {len(record['profiles'])} in all -> {path}")
    for k in chosen:
        print(" ", k)
    return 0


def second_labels() -> dict[str, dict[str, Any]]:
    """`<set folder>/<profile>.md` -> the second label, from every labels*.json file."""
    out: dict[str, dict[str, Any]] = {}
    for f in sorted(SECOND.glob("labels*.json")):
        for name, label in json.loads(f.read_text())["profiles"].items():
            out[name.replace("__", "/", 1)] = label
    return out


def moves(label: dict[str, Any]) -> list[str]:
    """The labeller's moves in order: the first move, then the next ones."""
    first = list(label["expected"])[:1]
    return first + [m for m in label.get("then", []) if m not in first]


def catalog_ranking(key: str, label: dict[str, Any], store: Any) -> tuple[list[str], list[str]]:
    """The ranked opportunities and the warnings (anti-patterns), as `kbopt recommend` gives
    them for the profile."""
    from kbopt.contracts.profile import Profile
    from kbopt.strategy import recommend

    path = REPO / "benchmarks" / key
    profile = Profile.parse(path.read_text(encoding="utf-8"), str(path))
    result = recommend(profile, language=label.get("language"), store=store)
    return [o.id for o in result.opportunities], [w.id for w in result.warnings]


def score_row(
    key: str,
    first: dict[str, Any],
    second: dict[str, Any],
    ranked: list[str],
    warnings: Sequence[str] = (),
) -> dict[str, Any]:
    """One profile: the second engineer's moves scored against the first labels exactly as
    the catalog's ranking is (a hit when a move is among the entries the first labeller
    accepted), and the ranking scored against both labels as scripts/hit_rate.py scores it:
    a top-k hit when a labelled entry is among the first k opportunities or the first k
    warnings."""
    a_ok, b_ok = set(first["expected"]), set(second["expected"])
    b_moves = moves(second)
    warns = list(warnings)

    def top(k: int) -> set[str]:
        return set(ranked[:k]) | set(warns[:k])

    return {
        "profile": key,
        "first_expected": sorted(a_ok),
        "second_expected": sorted(b_ok),
        "second_moves": b_moves,
        "catalog_top3": ranked[:3],
        "catalog_warnings": warns[:3],
        "second_top1_hit": b_moves[0] in a_ok,
        "second_top3_hit": bool(set(b_moves[:3]) & a_ok),
        # both accepted at least one common first move (symmetric, unlike the two above)
        "second_accepts_first_any": bool(a_ok & b_ok),
        "catalog_top1_vs_first": bool(top(1) & a_ok),
        "catalog_top3_vs_first": bool(top(3) & a_ok),
        "catalog_top1_vs_second": bool(top(1) & b_ok),
        "catalog_top3_vs_second": bool(top(3) & b_ok),
    }


TALLIED = (
    "second_top1_hit",
    "second_top3_hit",
    "second_accepts_first_any",
    "catalog_top1_vs_first",
    "catalog_top3_vs_first",
    "catalog_top1_vs_second",
    "catalog_top3_vs_second",
)


def tally(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many of `rows` hold each of the scored facts, and how many rows there are."""
    return {"profiles": len(rows), **{f: sum(r[f] for r in rows) for f in TALLIED}}


def cmd_score(args: argparse.Namespace) -> int:
    from hit_rate import catalog_commit, versions

    from kbopt.store import Store

    record = json.loads((SECOND / "sample.json").read_text())
    sample = record["profiles"]
    first, second = first_labels(), second_labels()
    missing = [k for k in sample if k not in second]
    if missing:
        print(f"error: {len(missing)} drawn profiles have no second label:", file=sys.stderr)
        for k in missing:
            print(f"  {k}", file=sys.stderr)
        return 2
    store = Store(REPO)
    known = {e.name for e in store.load_all().entries}
    unknown = sorted({m for k in sample for m in moves(second[k]) if m not in known})
    if unknown:
        print(f"error: second labels name entries not in the catalog: {unknown}", file=sys.stderr)
        return 2
    rows = []
    for k in sample:
        rows.append(score_row(k, first[k], second[k], *catalog_ranking(k, first[k], store)))
    n = len(rows)
    draw_of = {k: i for i, d in enumerate(record.get("draws", []), 1) for k in d["profiles"]}
    for r in rows:
        r["draw"] = draw_of.get(r["profile"])
    by_draw = {
        str(i): tally([r for r in rows if r["draw"] == i])
        for i in sorted({r["draw"] for r in rows if r["draw"] is not None})
    }
    summary = tally(rows)
    data = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python scripts/label_agreement.py " + shlex.join(sys.argv[1:]),
        "versions": versions(),
        "catalog_commit": catalog_commit(),
        "second_labels_written_at": args.labels_commit,
        "profiles": n,
        "summary": summary,
        "by_draw": by_draw,
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "label-agreement.json").write_text(json.dumps(data, indent=1) + "\n")
    (RESULTS / "label-agreement.md").write_text(markdown(data))
    print(markdown(data))
    return 0


def markdown(data: dict[str, Any]) -> str:
    n, s = data["profiles"], data["summary"]

    def pct(k: str) -> str:
        return f"{s[k]}/{n} ({s[k] / n:.0%})"

    lines = [
        "<!-- generated by scripts/label_agreement.py from its results JSON; do not edit -->",
        "",
        f"{n} profiles drawn at random (one per kernel) from the labelled real sets and "
        "labelled again by a second engineer who saw neither the first labels nor any "
        f"ranking; catalog at {data['catalog_commit']}, second labels written with the "
        f"catalog at {data['second_labels_written_at'] or 'not recorded'}; scored "
        f"{data['date']} with `{data['command']}`.",
        "",
        "| Scored against the first labels, as the hit rates are | Top-1 | Top-3 |",
        "|--------------------------------------------------------|-------|-------|",
        f"| The second engineer's moves | {pct('second_top1_hit')} | {pct('second_top3_hit')} |",
        f"| The catalog's ranking | {pct('catalog_top1_vs_first')} | "
        f"{pct('catalog_top3_vs_first')} |",
        "",
        "| Scored against the second labels (blind to this catalog) | Top-1 | Top-3 |",
        "|-----------------------------------------------------------|-------|-------|",
        f"| The catalog's ranking | {pct('catalog_top1_vs_second')} | "
        f"{pct('catalog_top3_vs_second')} |",
        "",
        f"The two engineers accepted at least one common first move on "
        f"{pct('second_accepts_first_any')}. The catalog is scored as the hit rates score it: "
        "a hit when a labelled entry is among its first k opportunities or its first k "
        "warnings (anti-patterns), up to 2k entries against the engineer's k moves.",
        "",
        "Each draw on its own (top-3, as above):",
        "",
        "| Draw | Profiles | Second engineer vs first labels | Catalog vs first labels | "
        "Catalog vs second labels |",
        "|------|----------|-------------------------------|-------------------------|"
        "--------------------------|",
        *(
            f"| {i} | {d['profiles']} | {d['second_top3_hit']} | {d['catalog_top3_vs_first']} | "
            f"{d['catalog_top3_vs_second']} |"
            for i, d in data.get("by_draw", {}).items()
        ),
        "",
        "| Profile | First labels | Second engineer's moves | Catalog's top 3 | Its warnings |",
        "|---------|--------------|-------------------------|-----------------|--------------|",
    ]
    for r in data["rows"]:
        lines.append(
            f"| {r['profile'].removesuffix('.md')} | {', '.join(r['first_expected'])} | "
            f"{', '.join(r['second_moves'])} | {', '.join(r['catalog_top3'])} | "
            f"{', '.join(r['catalog_warnings'])} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample", help="draw the profiles for the second labeller")
    s.add_argument("--n", type=int, default=30, help="kernels to draw (one profile each)")
    s.add_argument("--seed", type=int, default=20261207)
    s.add_argument("--into", type=Path, help="copy the drawn profiles' Markdown here")
    s.add_argument(
        "--more",
        action="store_true",
        help="add a draw of kernels not drawn yet to the committed sample",
    )
    c = sub.add_parser("score", help="score the second labels and the catalog")
    c.add_argument(
        "--labels-commit", default="", help="the commit whose catalog the second labeller read"
    )
    args = ap.parse_args(argv)
    return cmd_sample(args) if args.cmd == "sample" else cmd_score(args)


if __name__ == "__main__":
    raise SystemExit(main())
