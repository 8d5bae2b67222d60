"""Compile every Triton version of add_rmsnorm for sm_90 on any machine (no GPU needed).

For each version and shape it prints what the H200 would run: warps, rows per program,
registers per thread, spill bytes, shared memory, the widest global load and store in the
PTX (``v4.b32`` = 16 bytes per thread), and the resident programs per SM that the
registers allow.  Triton compiles to a cubin with its bundled ptxas; cuobjdump reads the
resources back.  Run it without TRITON_INTERPRET::

    python -m kernels.add_rmsnorm.compile_check [--json] [--shapes 8192x4096,32768x8192]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

H200_SMS = 132
SHAPES = ((8192, 4096), (32768, 8192), (32, 4096))
TRITON_DTYPE = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
ELEM = {"bfloat16": 2, "float16": 2, "float32": 4}


def _tool(name: str) -> str:
    import triton

    return str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name)


def _resources(cubin: bytes) -> dict[str, int]:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run(
            [_tool("cuobjdump"), "--dump-resource-usage", f.name],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    found = {}
    for key, pat in (
        ("n_regs", r"REG:(\d+)"),
        ("stack", r"STACK:(\d+)"),
        ("local", r"LOCAL:(\d+)"),
    ):
        m = re.search(pat, out)
        found[key] = int(m.group(1)) if m else -1
    return found


def _widest(ptx: str, op: str) -> int:
    """Widest vector of `op` (ld.global / st.global) in bytes per thread."""
    best = 0
    for m in re.finditer(rf"{op}(?:\.[A-Za-z_0-9:]+)*?(?:\.v(\d))?\.(b|u|s|f)(\d+)", ptx):
        best = max(best, int(m.group(1) or 1) * int(m.group(3)) // 8)
    return best


def compile_version(
    version: str, rows: int, hidden: int, dtype: str = "bfloat16"
) -> dict[str, Any]:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, compile

    from kernels.add_rmsnorm import triton_common as tc

    mod = importlib.import_module(f"kernels.add_rmsnorm.{version}")
    cfg = mod.CONFIG
    ptr = "*" + TRITON_DTYPE[dtype]
    div16 = [["tt.divisibility", 16]]
    if version == "triton_v1":
        fn = tc.two_pass_kernel
        block = int(cfg.block or 256)
        num_warps = int(cfg.num_warps or 4)
        constexprs: dict[str, Any] = {"BLOCK": block}
        sig = {n: ptr for n in ("X", "R", "W", "Y", "S")} | {"hidden": "i32", "eps": "fp32"}
        attrs = {(i,): div16 for i in range(5)}
        if hidden % 16 == 0:
            attrs[(5,)] = div16
        rpp = 1
        grid: int | None = rows
    else:
        fn = tc.rows_kernel
        plan = tc._plan(rows, hidden, ELEM[dtype], H200_SMS, cfg)
        kw = dict(plan.kwargs)
        num_warps = kw.pop("num_warps")
        constexprs = kw
        sig = {n: ptr for n in ("X", "R", "W", "Y", "S")} | {
            "n_rows": "i32",
            "hidden": "i32",
            "eps": "fp32",
        }
        attrs = {(i,): div16 for i in range(5)}
        if rows % 16 == 0:
            attrs[(5,)] = div16
        if hidden % 16 == 0:
            attrs[(6,)] = div16
        rpp = plan.rows_per_program
        grid = plan.grid_size
    sig |= {k: "constexpr" for k in constexprs}
    src = ASTSource(fn=fn, signature=sig, constexprs=constexprs, attrs=attrs)
    kernel = compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps})
    res = _resources(kernel.asm["cubin"])
    shared = int(kernel.metadata.shared)
    per_sm = tc.resident_programs(res["n_regs"], num_warps, shared)
    if grid is None:  # persistent, sized from occupancy at launch
        grid = min(-(-rows // rpp), per_sm * H200_SMS)
    ptx = kernel.asm["ptx"]
    return {
        "version": version,
        "rows": rows,
        "hidden": hidden,
        "dtype": dtype,
        "num_warps": num_warps,
        "rows_per_program": rpp,
        "n_regs": res["n_regs"],
        "spill_bytes": res["local"] + res["stack"],
        "shared": shared,
        "ld_bytes": _widest(ptx, "ld.global"),
        "st_bytes": _widest(ptx, "st.global"),
        "resident_per_sm": per_sm,
        "grid": grid,
        "waves": round(grid / (per_sm * H200_SMS), 2),
    }


def main(argv: list[str] | None = None) -> int:
    if os.environ.get("TRITON_INTERPRET") == "1":
        print("compile_check compiles real kernels: unset TRITON_INTERPRET", file=sys.stderr)
        return 2
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--versions", default="", help="comma-separated (default: every triton_v*)")
    ap.add_argument("--shapes", default="", help="ROWSxHIDDEN,... (default: the trial matrix)")
    ap.add_argument("--dtype", default="bfloat16", choices=sorted(TRITON_DTYPE))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    here = Path(__file__).parent
    versions = (
        args.versions.split(",")
        if args.versions
        else sorted(
            (p.stem for p in here.glob("triton_v*.py")), key=lambda s: int(s.split("_v")[1])
        )
    )
    shapes = (
        [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
        if args.shapes
        else list(SHAPES)
    )
    rows_out = [compile_version(v, r, h, args.dtype) for v in versions for r, h in shapes]
    if args.json:
        print(json.dumps(rows_out, indent=1))
        return 0
    keys = list(rows_out[0])
    print(" ".join(f"{k:>12}" for k in keys))
    for row in rows_out:
        print(" ".join(f"{row[k]!s:>12}" for k in keys))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
