"""Time MLA decode versions with the L2 left in three states before each call.

Why: `triton.testing.do_bench`, which `kbopt bench` uses, empties the L2 before each timed
call by zeroing a 256 MB buffer, so the call starts with an L2 full of *dirty* lines that
must be written back to DRAM as the kernel's own reads evict them.  ncu's default cache
control starts each profiled launch with a clean, empty L2 instead.  A change to how a
kernel's loads allocate in L2 (an evict-first hint, say) can then look different in the
two.  This probe times the same launches after

- ``dirty``: zeroing a 256 MB buffer (do_bench's flush);
- ``clean``: reading a 256 MB buffer (the L2 holds clean lines that can be dropped);
- ``none``: nothing (the previous call's lines are still there; the GPU is idle when the
  start event is recorded, so this time includes the host's launch of the kernel, tens of
  microseconds for a CuTe DSL version: compare ``dirty`` with ``clean``, not with these),

each call timed alone with CUDA events around the launch only, input sets rotated, the
median of ``--calls`` calls reported.  It writes one JSON file named after the device, with
the command, versions and date, and prints a table.

    python -m kernels.mla_decode.l2_state_probe --versions cute_v22,cute_v23 --out DIR
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
from pathlib import Path

FLUSH_BYTES = 256 * 1024 * 1024  # the size do_bench zeroes
CONFIGS = {"decode": (32, 1, 4096), "speculative": (32, 16, 4096)}
STATES = ("dirty", "clean", "none")


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m kernels.mla_decode.l2_state_probe",
        description="Time MLA decode versions after leaving the L2 dirty, clean or untouched.",
    )
    parser.add_argument("--versions", required=True, help="comma-separated version names")
    parser.add_argument(
        "--configs",
        default="decode",
        help=f"comma-separated, from {', '.join(CONFIGS)} (default: decode)",
    )
    parser.add_argument("--calls", type=int, default=60, help="timed calls per cell (default 60)")
    parser.add_argument("--input-sets", type=int, default=3, help="rotated input sets (default 3)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the results JSON")
    return parser.parse_args(argv)


def _time_cell(torch, launch_sets, state: str, calls: int, scratch) -> list[float]:
    """Per-call GPU times in microseconds, each after putting the L2 in `state`."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(calls):
        launch = launch_sets[i % len(launch_sets)]
        if state == "dirty":
            scratch.zero_()
        elif state == "clean":
            # a reduction reads every line and writes one number: the L2 ends full of clean lines
            scratch.sum()
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return times


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    import torch

    from kbopt.bench.harness import launch_of
    from kernels.mla_decode import registry
    from kernels.mla_decode.reference import make_inputs

    names = [v for v in args.versions.split(",") if v]
    configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown or not names or not configs or args.calls < 1 or args.input_sets < 1:
        print(
            "l2_state_probe: need at least one version, --calls and --input-sets >= 1, and"
            f" configs from {', '.join(CONFIGS)} (got versions {names}, configs {configs})",
            file=sys.stderr,
        )
        return 2
    if not torch.cuda.is_available():
        print(
            "l2_state_probe: no CUDA device here; this probe times kernels on a GPU",
            file=sys.stderr,
        )
        return 2
    available = registry.versions()
    missing = [n for n in names if n not in available]
    if missing:
        errors = registry.import_errors()
        for n in missing:
            print(
                f"l2_state_probe: {n}: {errors.get(n, 'not a version of mla_decode')}",
                file=sys.stderr,
            )
        return 2

    scratch = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    rows = []
    for config in configs:
        b, s, t = CONFIGS[config]
        inputs = [make_inputs(b, s, t, device="cuda", seed=k) for k in range(args.input_sets)]
        for name in names:
            version = available[name]
            launches = [launch_of(version, s) for s in inputs]
            for launch in launches:  # compile and warm up outside the timed cells
                launch()
            torch.cuda.synchronize()
            for state in STATES:
                times = _time_cell(torch, launches, state, args.calls, scratch)
                row = {
                    "config": config,
                    "dims": {"b": b, "s": s, "t": t},
                    "version": name,
                    "l2_state": state,
                    "median_us": round(statistics.median(times), 2),
                    "min_us": round(min(times), 2),
                    "calls": len(times),
                }
                rows.append(row)
                print(
                    f"[l2_state_probe] {config} {name} {state}: {row['median_us']} us",
                    file=sys.stderr,
                    flush=True,
                )

    device = torch.cuda.get_device_name()
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    try:
        from importlib.metadata import version as pkg_version

        cutlass_dsl = pkg_version("nvidia-cutlass-dsl")
    except Exception:  # the package may be on PYTHONPATH without its metadata
        cutlass_dsl = None
    doc = {
        "device": device,
        "date": stamp,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cutlass_dsl": cutlass_dsl,
        "command": "python -m kernels.mla_decode.l2_state_probe "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "flush_bytes": FLUSH_BYTES,
        "states": {
            "dirty": "256 MB zeroed before each call (do_bench's flush)",
            "clean": "256 MB read before each call",
            "none": "nothing between calls (the time includes the host's launch)",
        },
        "rows": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"l2-state-{stamp}-{device.replace(' ', '-')}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{'config':12s} {'version':10s} " + " ".join(f"{s:>9s}" for s in STATES))
    for config in configs:
        for name in names:
            cells = {
                r["l2_state"]: r["median_us"]
                for r in rows
                if r["config"] == config and r["version"] == name
            }
            print(f"{config:12s} {name:10s} " + " ".join(f"{cells[s]:9.1f}" for s in STATES))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
