"""Time the CuTe DSL versions: the shared benchmark (bench.py) plus CUDA-graph replay.

    python -m kernels.mla_decode.cute_bench [--versions cute_v3,torch] [--config decode] [--out DIR]

Rows are bench.py's (correctness on fresh ragged inputs with a poisoned pool, median time with
the L2 flushed and the inputs rotated, % of the roofline floor) with three more fields:

- ``cutlass_dsl``: the nvidia-cutlass-dsl version;
- ``host_us_per_call``: Python time of one call (checks, pointers, CuTe DSL launch, combine),
  measured on the CPU over back-to-back calls. When it exceeds the GPU time, ``time_us`` measures
  the host, not the kernel;
- ``time_us_graph`` / ``pct_of_floor_graph``: the same call captured in a CUDA graph (one per
  input set) and replayed under the same L2 flush and rotation: GPU time without host overhead.

Writes ``cute_<UTC date>.json`` into DIR (default: results/).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from kernels.mla_decode import bench, registry
from kernels.mla_decode import reference as ref


def cutlass_dsl_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nvidia-cutlass-dsl")
    except PackageNotFoundError:  # installed with pip --target: no metadata on sys.path
        return "unknown"


def _host_us(fn: Callable[..., Any], args: tuple[Any, ...], n: int = 50) -> float:
    fn(*args)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn(*args)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def _graph_us(fn: Callable[..., Any], sets: list[tuple[Any, ...]], rep_ms: int) -> float:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up (compiles, loads modules) off the capture
        for st in sets:
            fn(*st)
    torch.cuda.current_stream().wait_stream(side)
    graphs = []
    for st in sets:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn(*st)
        graphs.append(g)
    state = {"i": 0}

    def replay() -> None:
        graphs[state["i"] % len(graphs)].replay()
        state["i"] += 1

    med, _, _ = bench._bench_ms(replay, rep_ms)
    return med * 1e3


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m kernels.mla_decode.cute_bench")
    p.add_argument("--versions", default="", help="default: every cute_v* version")
    p.add_argument("--config", default="all", choices=["all", "decode", "speculative"])
    p.add_argument("--rep-ms", type=int, default=200)
    p.add_argument("--out", type=Path, default=bench.RESULTS_DIR)
    args = p.parse_args(argv)
    names = (
        args.versions.split(",")
        if args.versions
        else [n for n, v in registry.versions().items() if v.family == "cute"]
    )
    bargs = argparse.Namespace(
        versions=",".join(names),
        config=args.config,
        b=None,
        s=1,
        t=4096,
        sweep=False,
        rep_ms=args.rep_ms,
        repeat=False,
        seed=0,
        out=args.out,
        argv=["--versions", ",".join(names), "--config", args.config],
    )
    rows = bench.run(bargs)
    cmd = "python -m kernels.mla_decode.cute_bench " + " ".join(argv)
    versions = registry.versions()
    for cfg in ref.DEFAULT_CONFIGS:
        cfg_rows = [r for r in rows if r["config"] == cfg.name and r.get("status") == "ok"]
        if not cfg_rows:
            continue
        b = cfg_rows[0]["b"]
        kv_bytes = b * cfg.t * ref.D_QK * 2
        n_sets = max(2, min(8, -(-4 * 60_000_000 // kv_bytes)))
        sets = [
            ref.make_inputs(b, cfg.s, cfg.t, cfg.h, dtype=torch.bfloat16, device="cuda")
            for _ in range(n_sets)
        ]
        for r in cfg_rows:
            if r["version"] not in versions or r.get("time_us") is None:
                continue  # side-by-side baselines outside the registry (sglang) or skipped rows
            fn = versions[r["version"]].fn
            r["host_us_per_call"] = round(_host_us(fn, sets[0]), 1)
            us = _graph_us(fn, sets, args.rep_ms)
            r["time_us_graph"] = round(us, 3)
            r["pct_of_floor_graph"] = round(100.0 * r["floor_us"] / us, 1)
        del sets
        torch.cuda.empty_cache()
    for r in rows:
        r["cutlass_dsl"] = cutlass_dsl_version()
        r["command"] = cmd
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = args.out / f"cute_{stamp}.json"
    path.write_text(json.dumps(rows, indent=1) + "\n")
    print(f"[cute] wrote {len(rows)} rows to {path}", file=sys.stderr)
    bench.print_table(rows)
    for r in rows:
        if "time_us_graph" in r:
            print(
                f"{r['config']:<12}{r['version']:<12} graph {r['time_us_graph']:>9.1f} us "
                f"({r['pct_of_floor_graph']:.1f}% of floor)  host {r['host_us_per_call']:.1f} us/call"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
