"""Does what the catalog learned change what it proposes?  Rank the same recorded profile
with the catalog as it was at an earlier commit and as it is now, side by side.

    python scripts/ranking_shift.py runs/h200-catalog-sglang_mla_decode --before 7d4302a

The profile is the run's baseline profile (`record.json`), made by `kbopt cycle` on the GPU;
the earlier catalog is read from git (`git worktree`, removed afterwards), so nothing in this
checkout changes.  Both rankings use the run's language.  The report (Markdown, with the
command, date and both commits) goes to `results/learning/<run>.md` and to stdout; `--json`
prints the two rankings instead.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kbopt.errors import KbError  # noqa: E402
from kbopt.store import Store  # noqa: E402
from kbopt.strategy import recommend  # noqa: E402
from kbopt.workflow.learn import CATALOG_MOVE  # noqa: E402

LIMIT = 12


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def ranking(root: Path, profile: str, language: str | None) -> list[dict[str, Any]]:
    s = recommend(profile, language=language, limit=LIMIT, store=Store(root))
    return [
        {"id": o.id, "score": o.score, "estimated_gain": o.estimated_gain} for o in s.opportunities
    ]


def gains_learned(root: Path, ids: list[str]) -> dict[str, int]:
    """Catalog-move evidence blocks per entry (what the refinement rule has read)."""
    store = Store(root)
    out = {}
    for name in ids:
        try:
            entry = store.get(name)
        except KbError:  # an entry of the ranking that the current catalog no longer has
            continue
        out[name] = sum(CATALOG_MOVE in (b.source or "") for b in entry.evidence)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="a run folder (runs/<id>) with record.json")
    ap.add_argument("--before", required=True, help="the commit whose catalog ranks first")
    ap.add_argument("--json", action="store_true", help="print both rankings as JSON")
    ap.add_argument(
        "--out", default=str(REPO / "results" / "learning"), help="folder of the report"
    )
    args = ap.parse_args(argv)
    run = Path(args.run)
    record_path = run / "record.json"
    if not record_path.is_file():
        print(f"{record_path}: no run record there", file=sys.stderr)
        return 2
    record = json.loads(record_path.read_text(encoding="utf-8"))
    profile = record.get("baseline_profile") or ""
    if not profile:
        print(f"{record_path}: the record has no baseline profile", file=sys.stderr)
        return 2
    language = record.get("selected_language") or record.get("language") or None
    try:
        before = _git("rev-parse", "--short", args.before)
    except subprocess.CalledProcessError:
        print(f"--before {args.before}: not a commit of this repository", file=sys.stderr)
        return 2
    now = _git("rev-parse", "--short", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--", "docs/knowledge"))
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        _git("worktree", "add", "--detach", "-q", str(old), before)
        try:
            then = ranking(old, profile, language)
        finally:
            _git("worktree", "remove", "--force", str(old))
    current = ranking(REPO, profile, language)
    if args.json:
        print(json.dumps({"before": then, "now": current}, indent=1))
        return 0
    learned = gains_learned(REPO, [r["id"] for r in current])
    pos_then = {r["id"]: i for i, r in enumerate(then, 1)}
    lines = [
        f"# Ranking of {record['run_id']}'s baseline profile, before and after learning",
        "",
        f"Command: `python scripts/ranking_shift.py {args.run} --before {args.before}`; "
        f"date {dt.datetime.now(dt.UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}; catalog before: "
        f"commit {before}; catalog now: commit {now}"
        + (" plus uncommitted changes under docs/knowledge" if dirty else "")
        + f"; language {language or 'shared only'}. The profile was made by `kbopt cycle` "
        f"({record.get('backend')} backend) at {record.get('created', '?')}.",
        "",
        "| now | entry | score now | est. gain now | was | score then | est. gain then "
        "| catalog-move evidence now |",
        "|---|---|---|---|---|---|---|---|",
    ]
    by_id_then = {r["id"]: r for r in then}
    for i, r in enumerate(current, 1):
        t = by_id_then.get(r["id"])
        lines.append(
            f"| {i} | {r['id']} | {r['score']:.4f} | {r['estimated_gain']:.1f} | "
            f"{pos_then.get(r['id'], '-')} | "
            + (f"{t['score']:.4f} | {t['estimated_gain']:.1f}" if t else "- | -")
            + f" | {learned.get(r['id'], 0)} |"
        )
    moved = [r["id"] for i, r in enumerate(current, 1) if pos_then.get(r["id"]) != i]
    lines += [
        "",
        "Order changed for: " + (", ".join(moved) if moved else "nothing (same order)") + ".",
        "",
    ]
    text = "\n".join(lines)
    out = Path(args.out) / f"{record['run_id']}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
