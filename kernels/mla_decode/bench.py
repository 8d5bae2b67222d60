"""Benchmark the MLA decode versions on the GPU: `kbopt bench mla_decode` plus the tile sweep.

    python -m kernels.mla_decode.bench                       # default trial matrix, all versions
    python -m kernels.mla_decode.bench --config decode --versions triton_v5,torch
    python -m kernels.mla_decode.bench --b 8 --s 1 --t 8192 --out /tmp/res
    python -m kernels.mla_decode.bench --sweep bm64-bn64-st2-tma   # + tiled-kernel variants

The measurement is kbopt's shared harness (`kbopt.bench.suite`): one run measures the
ceilings (device-to-device copy bandwidth, bf16 8192^3 matmul rate), then per
configuration checks every version against the fp32 reference with a poisoned output pool
and times it (median; L2 flushed; inputs rotated over sets that together exceed the L2).
This wrapper adds the tiled Triton kernel's parameter sweep (`--sweep`) and the head count
`h` to each row; the rows (device, software versions, date, command) go to results/.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kbopt.bench.suite import run_suite, table, write_rows
from kbopt.bench.trials import TrialConfig, default_matrix, parse_config
from kbopt.kernel import Version
from kernels.mla_decode import registry
from kernels.mla_decode.shapes import N_HEADS

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def sweep_versions(specs: str) -> dict[str, Version]:
    """Tiled-kernel variants, e.g. 'bm64-bn64-st2-tma,bm128-w16-bn32-st2' (TiledConfig.parse)."""
    from kernels.mla_decode import triton_tiled

    out: dict[str, Version] = {}
    for text in specs.split(","):
        cfg = triton_tiled.TiledConfig.parse(text.strip())

        def fn(q: Any, kv: Any, lens: Any, sc: float, _c: Any = cfg) -> Any:
            return triton_tiled.run_tiled(_c, q, kv, lens, sc)

        name = f"sweep:{cfg.tag()}"
        out[name] = Version(name, "sweep", f"tiled kernel {cfg.tag()}", fn)
    return out


def _launch_info_with_sweep(
    original: Callable[[str], dict[str, Any]],
) -> Callable[[str], dict[str, Any]]:
    """The sweep's variants record their launches like the Triton versions do."""
    return lambda family: original("triton" if family == "sweep" else family)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(
        prog="python -m kernels.mla_decode.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", default="all", choices=["all", "decode", "speculative"])
    p.add_argument("--b", type=int, help="custom configuration instead of the default matrix")
    p.add_argument("--s", type=int, default=1)
    p.add_argument("--t", type=int, default=4096)
    p.add_argument("--versions", help="comma-separated names (default: all + baselines)")
    p.add_argument("--sweep", metavar="SPECS", help="also time tiled-kernel variants")
    p.add_argument("--rep-ms", type=int, default=200, help="do_bench repetition time per run")
    p.add_argument("--repeat", action="store_true", help="time every version twice (spread)")
    p.add_argument("--graph", action="store_true", help="also time CUDA-graph replay")
    p.add_argument("--out", type=Path, help="folder for the JSON rows (default: results/)")
    p.add_argument("--prefix", default="", help="results file name prefix (e.g. cute_)")
    args = p.parse_args(argv)
    spec = registry.spec()
    if spec.launch_info is not None:
        spec.launch_info = _launch_info_with_sweep(spec.launch_info)
    versions = registry.versions()
    for mod, err in registry.import_errors().items():
        print(f"[bench] SKIP {mod}: import failed: {err}", file=sys.stderr)
    if args.versions:
        names = [n for n in args.versions.split(",") if n]
        missing = [n for n in names if n not in versions]
        if missing:
            raise SystemExit(
                f"unknown versions: {', '.join(missing)}; known: {', '.join(versions)}"
            )
        versions = {n: versions[n] for n in names}
    if args.sweep:
        versions.update(sweep_versions(args.sweep))
    if args.b is not None:
        configs = [parse_config(f"b={args.b},s={args.s},t={args.t}", spec)]
        configs = [TrialConfig("custom", configs[0].dims, "given on the command line")]
    else:
        configs = [c for c in default_matrix(spec) if args.config in ("all", c.name)]
    command = "python -m kernels.mla_decode.bench " + " ".join(shlex.quote(a) for a in argv)
    rows = run_suite(
        spec,
        versions,
        configs,
        rep_ms=args.rep_ms,
        command=command,
        repeat=args.repeat,
        graph=args.graph,
    )
    for r in rows:
        r["h"] = N_HEADS
    path = write_rows(rows, args.out or RESULTS_DIR, prefix=args.prefix)
    print(f"[bench] wrote {len(rows)} rows to {path}", file=sys.stderr)
    print(table(rows, spec.dim_names))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
