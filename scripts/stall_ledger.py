#!/usr/bin/env python3
"""Where a kernel's warps wait, from ncu's warp-stall samples per SASS instruction.

    python scripts/stall_ledger.py kernels/mla_decode/results/stall-source-<stamp>-<device>-<version>.csv.gz [...]
    python scripts/stall_ledger.py FILE... --top 15 [--json]

Each file is ncu's source page as CSV (`ncu -i REPORT --page source --csv --print-source
sass`, from a report with the SourceCounters and WarpStateStats sections; gzipped or not), as
`scripts/flashmla_session.sh` writes it with SOURCE set.  For each file it prints the share
of all samples per stall reason, and the waits read by what they wait for:

- a warp held at a CTA-level named barrier (`BAR.SYNC id, threads`) or at a wgmma wait
  (`WARPGROUP.DEPBAR`) is sampled with reason ``barrier`` at the first instruction after it
  that needs the barrier (``DEFER_BLOCKING`` lets a few independent ones issue first), so
  each ``barrier`` sample is credited to the nearest such instruction above it (at most
  WINDOW instructions up): named barrier 0x3, wgmma wait, ...;
- the instructions with the most samples, with their two largest reasons.

Shares are of this kernel's own samples; with two kernels, multiply by each one's total to
compare time (a sample is a fixed interval of one warp scheduler).  Nothing is measured
here: it reads what ncu sampled.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

SAMPLES = "Warp Stall Sampling (All Samples)"
WINDOW = 12  # instructions searched upward for the barrier a `barrier` sample waits at


class LedgerError(Exception):
    """A file that is not an ncu source page: one line saying what is wrong."""


def read_source_page(path: Path) -> list[dict[str, str]]:
    """The SASS rows of an ncu source-page CSV (header line starting with "Address")."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LedgerError(f"cannot read it: {exc.strerror}") from None
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    rows = list(csv.reader(io.StringIO(raw.decode(errors="replace"))))
    header = next((r for r in rows if r and r[0] == "Address"), None)
    if header is None or SAMPLES not in header:
        raise LedgerError(f"no source table with '{SAMPLES}' (ncu --page source --csv)")
    data = [dict(zip(header, r, strict=False)) for r in rows if r and r[0].startswith("0x")]
    if not data:
        raise LedgerError("the source table has no SASS rows")
    return data


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def _opcode(source: str) -> str:
    words = source.split()
    if not words:
        return "?"
    op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
    return op


def _barrier_label(source: str) -> str | None:
    """What a barrier-stalled warp waits for, when `source` is such an instruction."""
    text = source.strip()
    op = _opcode(text)
    if op.startswith("WARPGROUP.DEPBAR"):
        return "wgmma wait (WARPGROUP.DEPBAR)"
    if op.startswith("BAR.SYNC") or op.startswith("BAR.RED"):
        operands = text.split(op, 1)[1].replace(",", " ").split()
        ident = operands[0] if operands else "?"
        return "CTA barrier (__syncthreads)" if ident == "0x0" else f"named barrier {ident}"
    if op.startswith("WARPSYNC"):
        return "warp sync"
    return None


def ledger(data: list[dict[str, str]], top: int) -> dict[str, Any]:
    reasons = [k for k in data[0] if k.startswith("stall_") and "(Not Issued)" not in k]
    total = sum(_int(d[SAMPLES]) for d in data)
    if total == 0:
        raise LedgerError("no warp-stall samples (was the SourceCounters section collected?)")
    by_reason = Counter({r.removeprefix("stall_"): sum(_int(d[r]) for d in data) for r in reasons})
    # samples whose reason the page has no column for (ncu's source page lists the classic
    # reasons; Hopper's extra ones, such as waits on the tensor-core pipe, are left out)
    unlisted = total - sum(by_reason.values())
    if unlisted > 0:
        by_reason["(not broken down by the source page)"] = unlisted
    waits: Counter[str] = Counter()
    for i, d in enumerate(data):
        held = _int(d.get("stall_barrier"))
        if not held:
            continue
        label = next(
            (
                lab
                for j in range(i, max(-1, i - WINDOW), -1)
                if (lab := _barrier_label(data[j]["Source"])) is not None
            ),
            "no barrier within reach above",
        )
        waits[label] += held
    by_opcode = Counter()
    for d in data:
        by_opcode[_opcode(d["Source"]).split(".")[0]] += _int(d[SAMPLES])
    hottest = sorted(data, key=lambda d: -_int(d[SAMPLES]))[:top]
    share = 100.0 / total
    return {
        "samples": total,
        "reasons_pct": {r: round(v * share, 2) for r, v in by_reason.most_common() if v},
        "barrier_waits_pct": {w: round(v * share, 2) for w, v in waits.most_common()},
        "opcodes_pct": {o: round(v * share, 2) for o, v in by_opcode.most_common(top)},
        "hottest": [
            {
                "address": d["Address"],
                "sass": d["Source"].strip(),
                "pct": round(_int(d[SAMPLES]) * share, 2),
                "reasons": {
                    r.removeprefix("stall_"): _int(d[r])
                    for r in sorted(reasons, key=lambda r: -_int(d[r]))[:2]
                    if _int(d[r])
                },
            }
            for d in hottest
        ],
    }


def render(name: str, led: dict[str, Any]) -> str:
    out = [f"== {name}: {led['samples']} warp samples"]
    out.append(
        "  reasons: " + ", ".join(f"{r} {v:.1f}%" for r, v in list(led["reasons_pct"].items())[:10])
    )
    out.append("  barrier-held samples, by what they wait for:")
    out += [f"    {v:5.1f}%  {w}" for w, v in led["barrier_waits_pct"].items() if v >= 0.1]
    out.append(
        "  opcodes: " + ", ".join(f"{o} {v:.1f}%" for o, v in list(led["opcodes_pct"].items())[:12])
    )
    out.append("  hottest instructions:")
    for h in led["hottest"]:
        why = ", ".join(f"{r} {n}" for r, n in h["reasons"].items())
        out.append(f"    {h['pct']:5.1f}%  {h['sass'][:64]:64s} {why}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path, help="ncu source pages as CSV (.csv or .csv.gz)")
    ap.add_argument("--top", type=int, default=15, help="hottest instructions and opcodes shown")
    ap.add_argument("--json", action="store_true", help="print the ledgers as JSON")
    args = ap.parse_args(argv)
    ledgers = {}
    for path in args.files:
        try:
            ledgers[path.name] = ledger(read_source_page(path), args.top)
        except LedgerError as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            return 2
    if args.json:
        print(json.dumps(ledgers, indent=1))
    else:
        print("\n".join(render(n, led) for n, led in ledgers.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
