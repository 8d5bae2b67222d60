"""Do MLA decode versions give the same bits on every call, and the same bits as each other?

Why: cute_v29 reorders warpgroup 0's hand-over without changing any product or any
arithmetic per value, so its output should equal cute_v28's bit for bit, and a GPU test says
so. On 2026-12-07 that test passed at 07:49 on one H100 and failed at 08:30 on another, with
several splits (b=3, s=1, t=2000, ragged lengths, NaN in the cache rows past each length),
and with one split it passed both times. A kernel whose output changes between calls on the
same inputs has a race; two deterministic kernels that disagree have a real difference.
This probe tells the two apart: for each shape it calls every version ``--calls`` times on
one set of inputs, and reports per version how many distinct outputs it gave, whether any
held a NaN, and how far its first output is from the first version's (largest absolute
difference, elements that differ).

    python -m kernels.mla_decode.repeat_probe --versions cute_v28,cute_v29,cute_v30 --out DIR

It writes one JSON file named after the device (command, versions, date, every cell) and
prints a table. Nothing is timed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import sys
from pathlib import Path

# (b, s, t, ragged, NaN past each length): the failing test's shape first
SHAPES = {
    "b3-s1-t2000-nan": (3, 1, 2000, True, True),
    "b3-s1-t2000": (3, 1, 2000, True, False),
    "b32-s1-t4096": (32, 1, 4096, False, False),
    "b4-s16-t517-nan": (4, 16, 517, True, True),
}


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m kernels.mla_decode.repeat_probe",
        description="Call MLA decode versions repeatedly on the same inputs and compare bits.",
    )
    parser.add_argument("--versions", required=True, help="comma-separated version names")
    parser.add_argument("--calls", type=int, default=20, help="calls per version (default 20)")
    parser.add_argument(
        "--shapes", default=",".join(SHAPES), help=f"comma-separated, from {', '.join(SHAPES)}"
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for the results JSON")
    return parser.parse_args(argv)


def _cell(torch, fn, inputs, calls: int, first_of_baseline):
    """One version at one shape: its distinct outputs over `calls` calls and its distance
    from the baseline's first output."""
    outs = []
    for _ in range(calls):
        outs.append(fn(*inputs).clone())
    torch.cuda.synchronize()
    distinct = [outs[0]]
    for o in outs[1:]:
        if not any(torch.equal(o, d) for d in distinct):
            distinct.append(o)
    first = outs[0].float()
    base = first_of_baseline.float() if first_of_baseline is not None else first
    both_finite = torch.isfinite(first) & torch.isfinite(base)
    diff = (first - base).abs()[both_finite]
    return outs[0], {
        "distinct_outputs": len(distinct),
        "nan_calls": sum(int(torch.isnan(o.float()).any()) for o in outs),
        "max_abs_diff_vs_baseline": float(diff.max()) if diff.numel() else 0.0,
        "elements_differing_vs_baseline": int((first != base).sum()),
        "elements": first.numel(),
    }


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    import torch

    from kernels.mla_decode import cute_common, ptx_fingerprints
    from kernels.mla_decode import reference as ref

    versions = [v for v in args.versions.split(",") if v]
    unknown = [s for s in args.shapes.split(",") if s not in SHAPES]
    if unknown:
        print(f"error: unknown shape(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    if not versions or args.calls < 1:
        print("error: needs at least one version and --calls >= 1", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("error: needs a CUDA GPU", file=sys.stderr)
        return 2
    fns = {v: importlib.import_module(f"kernels.mla_decode.{v}").mla_decode for v in versions}
    cells = []
    for shape in args.shapes.split(","):
        b, s, t, ragged, nan = SHAPES[shape]
        q, kv, lens, sc = ref.make_inputs(b, s, t, device="cuda", ragged=ragged, seed=0)
        if nan:
            for i in range(b):
                kv[i, int(lens[i]) :] = float("nan")
        baseline = None
        for v in versions:
            first, cell = _cell(torch, fns[v], (q, kv, lens, sc), args.calls, baseline)
            baseline = first if baseline is None else baseline
            cell.update(shape=shape, version=v, splits=int(cute_common.LAST_INFO["splits"]))
            cells.append(cell)
            print(f"[repeat] {shape} {v}: {cell}", flush=True)
    device = torch.cuda.get_device_name()
    now = dt.datetime.now(dt.UTC)
    doc = {
        "kind": "mla_decode_repeat_probe",
        "device": device,
        "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python -m kernels.mla_decode.repeat_probe " + " ".join(argv or sys.argv[1:]),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cutlass_dsl": ptx_fingerprints.cutlass_dsl_version(),
        "versions": versions,
        "calls": args.calls,
        "baseline": versions[0],
        "cells": cells,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = (
        args.out / f"repeat-probe-{now.strftime('%Y%m%dT%H%M%SZ')}-{device.replace(' ', '-')}.json"
    )
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(
        f"{'shape':18} {'version':10} {'splits':>6} {'distinct':>8} {'nan':>4} {'differ':>8} max|diff|"
    )
    for c in cells:
        print(
            f"{c['shape']:18} {c['version']:10} {c['splits']:6d} {c['distinct_outputs']:8d} "
            f"{c['nan_calls']:4d} {c['elements_differing_vs_baseline']:8d} "
            f"{c['max_abs_diff_vs_baseline']:.3g}"
        )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
