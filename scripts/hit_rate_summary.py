"""One table of every blind real-profile measurement: the hit-rate results that
`scripts/hit_rate.py` wrote for each labelled set the moment it was scored, before anything
was changed because of it (the files named `hit-rate-real-*blind*.json`).

    .venv/bin/python scripts/hit_rate_summary.py            # writes results/search/hit-rate-real-blind-summary.*
    .venv/bin/python scripts/hit_rate_summary.py --rescore  # writes results/search/hit-rate-real-rescored.*

Each row is one set as it was first scored, with the catalog commit it was scored with
(where the file records it); the last row adds them up.  Nothing is re-ranked here: later
catalog changes do not move these rows, which is the point.

`--rescore` ranks the same sets again with the catalog as it is now, beside the first
scores.  Those figures are NOT blind: the labels of every set scored before were read
when the catalog was changed after it, so they show what later changes did to sets already
seen (regressions included), never how well the ranking does on kernels it was not shaped
on.  The first-scored table stays the measure of that.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shlex
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results" / "search"
NAME = "hit-rate-real-blind-summary"


def blind_results(folder: Path) -> list[dict[str, Any]]:
    """The blind hit-rate files, in the order they were measured."""
    docs = []
    for path in sorted(folder.glob("hit-rate-real-*blind*.json")):
        if path.stem in (NAME, RESCORED):
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["_file"] = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        docs.append(doc)
    return sorted(docs, key=lambda d: str(d.get("date", "")))


def rows(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for d in docs:
        s = d["summaries"]["all"]
        profiles = d.get("command", "").split("--profiles ")[-1].split()[0]
        out.append(
            {
                "set": profiles,
                "file": d["_file"],
                "date": str(d.get("date", ""))[:10],
                "catalog_commit": d.get("catalog_commit") or None,
                "profiles": s["profiles"],
                "top1_hits": s["top1_hits"],
                "top3_hits": s["top3_hits"],
            }
        )
    return out


def pct(hits: int, n: int) -> str:
    return f"{hits}/{n} = {100 * hits / n:.0f}%" if n else "-"


def markdown(table: list[dict[str, Any]]) -> str:
    lines = [
        "| Set | Scored | Catalog at | Profiles | Top-1 | Top-3 |",
        "|-----|--------|------------|----------|-------|-------|",
    ]
    for r in table:
        lines.append(
            f"| `{r['set']}` | {r['date']} | {r['catalog_commit'] or 'not recorded'} "
            f"| {r['profiles']} | {pct(r['top1_hits'], r['profiles'])} "
            f"| {pct(r['top3_hits'], r['profiles'])} |"
        )
    n = sum(r["profiles"] for r in table)
    t1 = sum(r["top1_hits"] for r in table)
    t3 = sum(r["top3_hits"] for r in table)
    lines.append(f"| all blind sets | | | {n} | {pct(t1, n)} | {pct(t3, n)} |")
    return "\n".join(lines) + "\n"


RESCORED = "hit-rate-real-rescored"


def rescore(table: list[dict[str, Any]]) -> int:
    """Rank every set again with the current catalog (`scripts/hit_rate.py`, results kept
    in a temporary folder) and write the table of first and current scores."""
    import importlib.util
    import tempfile

    spec = importlib.util.spec_from_file_location("hit_rate", ROOT / "scripts" / "hit_rate.py")
    assert spec is not None and spec.loader is not None
    hit_rate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hit_rate)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in table:
            name = Path(r["set"]).name
            code = hit_rate.main(["--profiles", str(ROOT / r["set"]), "--out", tmp, "--name", name])
            if code != 0:
                print(f"{r['set']}: scripts/hit_rate.py exited {code}", file=sys.stderr)
                return code
            now = json.loads((Path(tmp) / f"{name}.json").read_text(encoding="utf-8"))
            s = now["summaries"]["all"]
            commit = now.get("catalog_commit")
            out.append({**r, "now_top1_hits": s["top1_hits"], "now_top3_hits": s["top3_hits"]})
    n = sum(r["profiles"] for r in out)

    lines = [
        f"Ranked again with the catalog at {commit or 'an uncommitted state'}: NOT blind "
        "(these sets' labels were read before later catalog changes).",
        "",
        "| Set | First scored at | Top-1 then | Top-3 then | Top-1 now | Top-3 now |",
        "|-----|-----------------|------------|------------|-----------|-----------|",
    ]
    for r in out:
        lines.append(
            f"| `{r['set']}` | {r['catalog_commit'] or 'not recorded'} | {r['top1_hits']}/"
            f"{r['profiles']} | {r['top3_hits']}/{r['profiles']} | {r['now_top1_hits']}/"
            f"{r['profiles']} | {r['now_top3_hits']}/{r['profiles']} |"
        )
    lines.append(
        f"| all | | {pct(sum(r['top1_hits'] for r in out), n)} | "
        f"{pct(sum(r['top3_hits'] for r in out), n)} | {pct(sum(r['now_top1_hits'] for r in out), n)}"
        f" | {pct(sum(r['now_top3_hits'] for r in out), n)} |"
    )
    md = "\n".join(lines) + "\n"
    doc = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python scripts/hit_rate_summary.py --rescore",
        "blind": False,
        "catalog_commit": commit,
        "rows": out,
    }
    (RESULTS / f"{RESCORED}.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    (RESULTS / f"{RESCORED}.md").write_text(md, encoding="utf-8")
    print(md, end="")
    print(f"wrote {RESULTS / RESCORED}.json and .md")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="The blind real-profile hit rates as each set was first scored, in one table."
    )
    parser.add_argument(
        "--rescore",
        action="store_true",
        help="rank the same sets again with the catalog as it is now (not blind); writes "
        f"results/search/{RESCORED}.*",
    )
    args = parser.parse_args(argv)
    table = rows(blind_results(RESULTS))
    if not table:
        print(f"no blind hit-rate results under {RESULTS}", file=sys.stderr)
        return 1
    if args.rescore:
        return rescore(table)
    md = markdown(table)
    doc = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python scripts/hit_rate_summary.py",
        "argv": shlex.join(sys.argv),
        "rows": table,
    }
    (RESULTS / f"{NAME}.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    (RESULTS / f"{NAME}.md").write_text(md, encoding="utf-8")
    print(md, end="")
    print(f"wrote {RESULTS / NAME}.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
