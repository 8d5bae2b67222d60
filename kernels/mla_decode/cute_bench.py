"""Time the CuTe DSL versions: the shared benchmark plus CUDA-graph replay and host time.

    python -m kernels.mla_decode.cute_bench [--versions cute_v3,torch] [--config decode] [--out DIR]

The same as ``python -m kernels.mla_decode.bench --graph --prefix cute_`` with every
``cute_v*`` version by default: rows carry ``time_us_graph`` / ``pct_of_floor_graph`` (each
input set's call captured in a CUDA graph and replayed) and ``host_us_per_call`` (when it
exceeds the GPU time, ``time_us`` measures the host, not the kernel), in ``cute_<UTC>.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kernels.mla_decode import bench, registry


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m kernels.mla_decode.cute_bench")
    p.add_argument("--versions", default="", help="default: every cute_v* version")
    p.add_argument("--config", default="all", choices=["all", "decode", "speculative"])
    p.add_argument("--rep-ms", type=int, default=200)
    p.add_argument("--out", type=Path, default=bench.RESULTS_DIR)
    args = p.parse_args(argv)
    names = args.versions or ",".join(
        n for n, v in registry.versions().items() if v.family == "cute"
    )
    return bench.main(
        [
            *("--versions", names, "--config", args.config, "--rep-ms", str(args.rep_ms)),
            *("--out", str(args.out), "--graph", "--prefix", "cute_"),
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
