"""One table of every blind real-profile measurement: the hit-rate results that
`scripts/hit_rate.py` wrote for each labelled set the moment it was scored, before anything
was changed because of it (the files named `hit-rate-real-*blind*.json`).

    .venv/bin/python scripts/hit_rate_summary.py   # writes results/search/hit-rate-real-blind-summary.*

Each row is one set as it was first scored, with the catalog commit it was scored with
(where the file records it); the last row adds them up.  Nothing is re-ranked here: later
catalog changes do not move these rows, which is the point.
"""

from __future__ import annotations

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
        if path.stem == NAME:
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


def markdown(table: list[dict[str, Any]]) -> str:
    def pct(hits: int, n: int) -> str:
        return f"{hits}/{n} = {100 * hits / n:.0f}%" if n else "-"

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


def main() -> int:
    table = rows(blind_results(RESULTS))
    if not table:
        print(f"no blind hit-rate results under {RESULTS}", file=sys.stderr)
        return 1
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
