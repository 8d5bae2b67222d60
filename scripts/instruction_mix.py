#!/usr/bin/env python3
"""Executed instructions per SASS opcode, side by side, from an ncu instruction-mix CSV.

    python scripts/instruction_mix.py kernels/mla_decode/results/instruction-mix-<stamp>.csv
    python scripts/instruction_mix.py FILE --base flashmla --top 25 [--json]

The CSV is what `scripts/flashmla_session.sh` writes with MIX set: `ncu --csv --page raw
--print-metric-instances details --metrics smsp__inst_executed.sum,
sass__inst_executed_per_opcode`, one launch per version.  Each profiled launch is named by
its version from the sidecar next to it (`<csv stem>.launches.json`, the ncu target's list
of launches in profiling order); launches the sidecar does not list (FlashMLA's combine
kernel, a second launch of the same call) are named by ncu's kernel name.  Counts are warp
instructions executed in that one launch, in millions; `--base` adds each version's
difference from that version per opcode, sorted by the largest gap.  Nothing is measured
here: it reads what ncu measured.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

OPCODE_METRIC = "sass__inst_executed_per_opcode"
TOTAL_METRIC = "smsp__inst_executed.sum"
# "FMUL: 56,625,152; UMOV: 27,257,088; ..." in the details form of the instanced metric
_INSTANCE = re.compile(r"([A-Z][A-Z0-9_]*): ([\d,]+)")


class MixError(Exception):
    """A file that is not an instruction-mix CSV: one line, file and what is wrong."""


def _header_at(lines: list[str]) -> int:
    for i, line in enumerate(lines):
        if line.startswith('"ID"'):
            return i
    raise MixError('no ncu --csv table (a line starting with "ID")')


def read_mix(path: Path) -> list[dict[str, Any]]:
    """One entry per profiled launch: its name, kernel name, total and per-opcode counts."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as exc:
        raise MixError(f"cannot read it: {exc.strerror}") from None
    csv.field_size_limit(1 << 30)  # the details form puts every opcode in one field
    rows = list(csv.reader(lines[_header_at(lines) :]))
    header = rows[0]
    if OPCODE_METRIC not in header:
        raise MixError(f"no {OPCODE_METRIC} column: not an instruction-mix profile")
    names = _sidecar_names(path)
    launches: list[dict[str, Any]] = []
    for row in rows[1:]:
        fields = dict(zip(header, row, strict=False))
        if not fields.get("ID", "").strip().isdigit():
            continue  # the units row
        counts = {op: int(n.replace(",", "")) for op, n in _INSTANCE.findall(fields[OPCODE_METRIC])}
        if not counts:
            raise MixError(
                f"launch {fields['ID']}: {OPCODE_METRIC} has no opcode names "
                "(profile with --print-metric-instances details)"
            )
        kernel = fields.get("Kernel Name", "")
        launches.append(
            {
                "kernel_name": kernel,
                "total": int(fields.get(TOTAL_METRIC, "0").replace(",", "") or 0),
                "counts": counts,
                "name": kernel,
            }
        )
    _name_launches(launches, names)
    return launches


def _sidecar_names(path: Path) -> list[str]:
    sidecar = path.with_suffix(".launches.json")
    if not sidecar.is_file():
        return []
    return [str(entry.get("version", "")) for entry in json.loads(sidecar.read_text())]


def _name_launches(launches: list[dict[str, Any]], names: list[str]) -> None:
    """The sidecar lists one launch per version, in order; a version's kernel is the first
    launch at or after its place whose name is not a known helper (a combine/merge pass)."""
    queue = list(names)
    for launch in launches:
        if not queue:
            break
        if "combine" in launch["kernel_name"] or "merge" in launch["kernel_name"]:
            continue
        launch["name"] = queue.pop(0)


def table(launches: list[dict[str, Any]], base: str | None, top: int) -> dict[str, Any]:
    """Counts per opcode (millions) for every named launch, largest first, with differences
    from `base` when given (then sorted by the largest absolute difference)."""
    named = [lau for lau in launches if lau["name"] != lau["kernel_name"]] or launches
    by_name = {lau["name"]: lau["counts"] for lau in named}
    if base is not None and base not in by_name:
        raise MixError(f"--base {base}: not a launch here (have: {', '.join(by_name)})")
    ops = set().union(*by_name.values())

    def gap(op: str) -> float:
        if base is None:
            return max(c.get(op, 0) for c in by_name.values())
        return max(abs(c.get(op, 0) - by_name[base].get(op, 0)) for c in by_name.values())

    ordered = sorted(ops, key=gap, reverse=True)[:top]
    return {
        "launches": list(by_name),
        "base": base,
        "totals": {n: sum(c.values()) for n, c in by_name.items()},
        "opcodes": [
            {"opcode": op, **{n: by_name[n].get(op, 0) for n in by_name}} for op in ordered
        ],
    }


def render(result: dict[str, Any]) -> str:
    names = result["launches"]
    base = result["base"]
    width = max(10, *(len(n) + 1 for n in names))
    head = f"{'opcode':<12}" + "".join(f"{n:>{width}}" for n in names)
    if base:
        head += "".join(f"{n + '-' + base:>{width + 10}}" for n in names if n != base)
    out = [
        f"warp instructions executed per opcode, millions (one launch each){'; vs ' + base if base else ''}",
        head,
    ]
    for row in result["opcodes"]:
        line = f"{row['opcode']:<12}" + "".join(f"{row[n] / 1e6:>{width}.2f}" for n in names)
        if base:
            line += "".join(
                f"{(row[n] - row[base]) / 1e6:>+{width + 10}.2f}" for n in names if n != base
            )
        out.append(line)
    totals = result["totals"]
    out.append(f"{'total':<12}" + "".join(f"{totals[n] / 1e6:>{width}.2f}" for n in names))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", type=Path, help="an instruction-mix CSV (ncu --csv, details instances)")
    ap.add_argument("--base", help="a launch to subtract per opcode (e.g. flashmla)")
    ap.add_argument("--top", type=int, default=30, help="opcodes shown (default 30)")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args(argv)
    try:
        result = table(read_mix(args.csv), args.base, args.top)
    except MixError as exc:
        print(f"{args.csv}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
