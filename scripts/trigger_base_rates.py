"""How broad is each catalog trigger on real profiles?

A condition that holds on most real kernels says little about which entry to try; one that
holds on few says a lot.  This script reads every profile that `kbopt profile` made on a GPU
and that is kept in the repository (`benchmarks/real_profiles*/*.md`; their labels are not
read) and reports, for each entry with triggers:

- per condition, the share of the profiles measuring it in which it holds (its base rate);
- the share of the profiles in which all of the entry's conditions hold together (of those
  that measure them all): how unusual a full match is;
- how often the entry is ranked first, with the catalog as it stands.

    .venv/bin/python scripts/trigger_base_rates.py   # writes results/search/trigger-base-rates.*

Entries whose full match is common and that are often ranked first are the ones whose
conditions describe a broad class of kernels rather than the symptom their move cures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import json
import shlex
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hit_rate import catalog_commit, machine, versions

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results" / "search"
NAME = "trigger-base-rates"
PROFILES = "benchmarks/real_profiles*/*.md"


def holds(condition: list[tuple[str, str, float, str]], metrics: dict[str, float]) -> bool | None:
    """True / False, or None when no alternative of the condition was measured."""
    from kbopt.vocab import COMPARATORS

    measured = [(m, op, v) for m, op, v, _ in condition if m in metrics]
    if not measured:
        return None
    return any(COMPARATORS[op](metrics[m], v) for m, op, v in measured)


def measure(root: Path) -> dict[str, Any]:
    from kbopt.contracts.profile import Profile
    from kbopt.ranking import trigger_metrics
    from kbopt.store import Store
    from kbopt.strategy import catalog_cards, recommend

    store = Store(root)
    cards = catalog_cards(store)
    files = sorted(glob.glob(str(root / PROFILES)))
    texts = [Path(f).read_text(encoding="utf-8") for f in files]
    profiles = [trigger_metrics(Profile.parse(t)) for t in texts]
    first: dict[str, int] = {}
    for text in texts:
        ranked = recommend(text, language="all", limit=1, store=store).opportunities
        if ranked:
            first[ranked[0].id] = first.get(ranked[0].id, 0) + 1
    entries = []
    for card in cards:
        conditions = card.conditions()
        if not conditions:
            continue
        rows = []
        for cond in conditions:
            verdicts = [v for v in (holds(cond, p) for p in profiles) if v is not None]
            rows.append(
                {
                    "condition": " or ".join(e for *_, e in cond),
                    "measured": len(verdicts),
                    "holds": sum(verdicts),
                }
            )
        joint = [[holds(c, p) for c in conditions] for p in profiles]
        complete = [v for v in joint if None not in v]
        entries.append(
            {
                "entry": card.name,
                "kind": card.kind,
                "conditions": rows,
                "all_measured": len(complete),
                "all_hold": sum(all(v) for v in complete),
                "ranked_first": first.get(card.name, 0),
            }
        )
    entries.sort(key=lambda e: (-e["ranked_first"], e["entry"]))
    return {"profiles": len(files), "profile_glob": PROFILES, "entries": entries}


def share(k: int, n: int) -> str:
    return f"{k}/{n} = {100 * k / n:.0f}%" if n else "-"


def markdown(doc: dict[str, Any]) -> str:
    lines = [
        f"{doc['profiles']} real profiles (`{doc['profile_glob']}`), catalog at "
        f"{doc['catalog_commit'] or 'an unrecorded commit'}; ranked with every language's entries.",
        "",
        "| Entry | Ranked first | All conditions hold | Broadest condition (holds on) |",
        "|-------|--------------|---------------------|-------------------------------|",
    ]
    for e in doc["entries"]:
        rated = [c for c in e["conditions"] if c["measured"]]
        broad = max(rated, key=lambda c: c["holds"] / c["measured"], default=None)
        broadest = (
            f"`{broad['condition']}` ({share(broad['holds'], broad['measured'])})" if broad else "-"
        )
        lines.append(
            f"| {e['entry']} | {e['ranked_first']} | {share(e['all_hold'], e['all_measured'])} "
            f"| {broadest} |"
        )
    return "\n".join(lines) + "\n"


def header(script: str) -> dict[str, Any]:
    """What every results file of these scripts starts with: when, by which command, on
    what, with which catalog."""
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python "
        + " ".join(shlex.quote(a) for a in [f"scripts/{script}", *sys.argv[1:]]),
        "machine": machine(),
        "versions": versions(),
        "catalog_commit": catalog_commit(),
    }


def write(results: Path, name: str, doc: dict[str, Any], md: str) -> None:
    """`results/<name>.json` and `.md`; the table is printed too."""
    results.mkdir(parents=True, exist_ok=True)
    (results / f"{name}.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    (results / f"{name}.md").write_text(md, encoding="utf-8")
    print(md, end="")
    print(f"wrote {results / name}.json and .md")


def main(argv: list[str] | None = None) -> int:
    # No options: parsing still answers --help and refuses a stray argument rather than
    # measuring and writing the results as if it had been understood.
    argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Writes results/search/trigger-base-rates.json and .md.",
    ).parse_args(argv)
    doc = {**header("trigger_base_rates.py"), **measure(REPO)}
    write(RESULTS, NAME, doc, markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
