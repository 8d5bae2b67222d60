#!/usr/bin/env python3
"""How FlashMLA's dense sm90 decode kernel is built, beside our CuTe DSL versions, read from
their compiled SASS on a machine without a GPU.

    python scripts/mla_sass_structure.py --cuda /path/to/cuda [--versions cute_v7,cute_v13]

FlashMLA comes from `third_party/flashmla-src.tgz` (`python scripts/fetch_third_party.py
flashmla`: FlashMLA and the CUTLASS headers at the commits it pins).  Its bf16 dense decode
is compiled for sm_90a with FlashMLA's own nvcc flags; our versions are compiled to PTX by
CuTe DSL (`CUTE_DSL_ARCH=sm_90a`, no GPU needed) and assembled by the same ptxas.  `--cuda`
is a CUDA toolkit root with `bin/nvcc` and `bin/ptxas` (13.x); without a system toolkit, the
`nvidia-cuda-nvcc`, `nvidia-cuda-crt`, `nvidia-nvvm`, `nvidia-cuda-runtime` and
`nvidia-cuda-cccl` wheels installed with `pip install --target DIR` give one at
`DIR/nvidia/cu13` (copy `nvidia-cuda-crt`'s `include/crt` into its `include`).

For each main kernel (the function with the most instructions) it counts what shapes the
schedule: threads per CTA, registers, named barriers and spills (ptxas), and in the SASS the
warpgroup MMAs, TMA loads, thread-issued async copies, mbarrier operations, CTA-barrier
waits and arrivals, and register reallocations (`setmaxnreg`).  For our versions the same
counts are also given for the cubin CuTe DSL assembles with its own ptxas (``as_launched``:
that assembler, not the toolkit's, makes what the GPU runs). These are static counts of the
code, not of what runs, and no timing: they say what a design does, not how fast.
Results: results/ptx/mla-sass-structure-<UTC stamp>.json with the date, command, versions.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import results_file

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT / "third_party" / "flashmla-src.tgz"
FLASHMLA_SOURCE = "csrc/sm90/decode/dense/instantiations/bf16.cu"
# FlashMLA's nvcc flags for its sm90 kernels (its setup.py at the pinned commit).
FLASHMLA_FLAGS = [
    "-O3",
    "-std=c++20",
    "-DNDEBUG",
    "-D_USE_MATH_DEFINES",
    "-Wno-deprecated-declarations",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_HALF2_OPERATORS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "--expt-relaxed-constexpr",
    "--expt-extended-lambda",
    "--use_fast_math",
    "--ptxas-options=-v,--register-usage-level=10",
    "-gencode",
    "arch=compute_90a,code=sm_90a",
]
FLASHMLA_INCLUDES = (
    "csrc",
    "csrc/kerutils/include",
    "csrc/sm90",
    "csrc/cutlass/include",
    "csrc/cutlass/tools/util/include",
)
# SASS opcodes counted, with what each one is in the schedule.
COUNTED = {
    "HGMMA": "warpgroup MMA (wgmma) instructions",
    "UTMALDG": "TMA loads",
    "LDGSTS": "thread-issued async copies (cp.async)",
    "SYNCS": "mbarrier operations (arrive, expect-tx, try-wait)",
    "BAR.SYNC": "CTA or named-barrier waits",
    "BAR.ARV": "named-barrier arrivals without a wait",
    "USETMAXREG": "register reallocations between warpgroups (setmaxnreg)",
}


def cuobjdump() -> Path:
    """Triton's bundled cuobjdump (triton is a dependency of this project)."""
    import triton

    return Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"


def ptxas_info(log: str) -> dict[str, dict[str, int]]:
    """Registers, barriers and spill bytes per function, from `ptxas -v` output."""
    out: dict[str, dict[str, int]] = {}
    name = None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            name = m.group(1)
            continue
        if name is None:
            continue
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            out.setdefault(name, {})["spill_bytes"] = int(m.group(1)) + int(m.group(2))
        m = re.search(r"Used (\d+) registers(?:, used (\d+) barriers)?", line)
        if m:
            info = out.setdefault(name, {})
            info["registers"] = int(m.group(1))
            info["named_barriers"] = int(m.group(2) or 0)
    return out


def sass_listing(sass: str) -> dict[str, list[tuple[int, str]]]:
    """(address, instruction with its predicate removed) of each function's SASS."""
    funcs: dict[str, list[tuple[int, str]]] = {}
    current: list[tuple[int, str]] | None = None
    for line in sass.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            current = funcs.setdefault(m.group(1), [])
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m and current is not None:
            current.append((int(m.group(1), 16), re.sub(r"^@!?U?P[T0-9]+\s+", "", m.group(2))))
    return funcs


def main_loops(body: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """The function's innermost loops that issue warpgroup MMAs: a backward branch placed
    before its last EXIT (the retry paths of mbarrier waits sit after it and jump back into
    the code, which is not a loop), not enclosing another such loop.  For each: its address
    range, its instruction count and the count of every opcode (before the first dot)."""
    exits = [a for a, i in body if i.startswith("EXIT")]
    last_exit = max(exits) if exits else body[-1][0]
    spans = []
    for addr, ins in body:
        m = re.match(r"BRA(?:\.\S+)?\s+(?:`\(\.L_x_\d+\)\s*)?(0x[0-9a-f]+)$", ins)
        if m and int(m.group(1), 16) < addr < last_exit:
            spans.append((int(m.group(1), 16), addr))
    loops = []
    for lo, hi in spans:
        inner = [i for a, i in body if lo <= a <= hi]
        if not any(i.startswith("HGMMA") for i in inner):
            continue
        if any(lo <= a and b <= hi and (a, b) != (lo, hi) and b - a > 0x100 for a, b in spans):
            continue  # encloses another loop (short spin loops do not count)
        ops = Counter(i.split()[0].split(".")[0] for i in inner if i)
        loops.append(
            {"from": hex(lo), "to": hex(hi), "instructions": len(inner), "opcodes": dict(ops)}
        )
    return loops


def count(instructions: list[str]) -> dict[str, int]:
    """How many instructions of each counted kind (`BAR.SYNC` matches `BAR.SYNC.DEFER_...`)."""
    ops = Counter(i.split()[0] for i in instructions if i)
    counts = {key: 0 for key in COUNTED}
    for op, n in ops.items():
        for key in COUNTED:
            if op == key or op.startswith(key + "."):
                counts[key] += n
    counts["instructions"] = len(instructions)
    return counts


def max_threads(cubin: Path) -> list[int]:
    """Threads per CTA the cubin's kernels declare (launch bounds or required size)."""
    elf = subprocess.run(
        [str(cuobjdump()), "-elf", str(cubin)], capture_output=True, text=True, check=True
    ).stdout
    found = re.findall(
        r"EIATTR_(?:MAX_THREADS|REQNTID)\s+Format:\s+\S+\s+Value:\s+(0x[0-9a-f]+)", elf
    )
    return sorted({int(v, 16) for v in found})


def describe(name: str, cubin: Path, log: str) -> dict[str, Any]:
    """The row of the main kernel (most instructions) of one compiled version."""
    sass = subprocess.run(
        [str(cuobjdump()), "-sass", str(cubin)], capture_output=True, text=True, check=True
    ).stdout
    funcs = sass_listing(sass)
    main, body = max(funcs.items(), key=lambda kv: len(kv[1]))
    info = ptxas_info(log).get(main, {})
    return {
        "version": name,
        "kernel": main[:120],
        "threads_per_cta": max_threads(cubin),
        **info,
        **count([i for _, i in body]),
        "main_loops": main_loops(body),
    }


def compile_flashmla(
    archive: Path, cuda: Path, work: Path
) -> tuple[dict[str, Any], dict[str, str]]:
    with tarfile.open(archive) as tar:
        tar.extractall(work, filter="data")
    tree = work / "flashmla"
    manifest = tree / "KBOPT_SOURCES.json"  # written by fetch_third_party.py
    parts = json.loads(manifest.read_text()).get("parts", []) if manifest.exists() else []
    sources = {p["repo"]: p["commit"] for p in parts if "repo" in p and "commit" in p}
    cubin = work / "flashmla_bf16.cubin"
    cmd = [str(cuda / "bin" / "nvcc"), "-cubin", "-o", str(cubin), *FLASHMLA_FLAGS]
    cmd += [f"-I{tree / d}" for d in FLASHMLA_INCLUDES]
    cmd += [f"-I{cuda / 'include'}", f"-I{cuda / 'include' / 'cccl'}", str(tree / FLASHMLA_SOURCE)]
    print(
        "[mla_sass_structure] compiling FlashMLA's bf16 dense decode (about a minute)",
        file=sys.stderr,
    )
    done = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{cuda / 'bin'}{os.pathsep}{os.environ['PATH']}"},
    )
    if done.returncode != 0:
        raise SystemExit(f"nvcc failed on FlashMLA:\n{done.stderr[-3000:]}")
    return describe("flashmla", cubin, done.stderr + done.stdout), sources


def compile_ours(version: str, cuda: Path, work: Path) -> dict[str, Any]:
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")
    sys.path.insert(0, str(ROOT))
    from kernels.mla_decode.ptx_fingerprints import toolchain, version_cubin, version_ptx

    ptx = work / f"{version}.ptx"
    text = version_ptx(version, "bfloat16").replace("\0", "")
    ptx.write_text(text)
    cubin = work / f"{version}.cubin"
    done = subprocess.run(
        [str(cuda / "bin" / "ptxas"), "-arch=sm_90a", "-O3", "-v", str(ptx), "-o", str(cubin)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"ptxas failed on {version}:\n{done.stderr[-3000:]}")
    row = describe(version, cubin, done.stderr + done.stdout)
    # What runs on the GPU is assembled by CuTe DSL's own ptxas, which can differ from the
    # toolkit's above: the same counts for that cubin (the PTX is the same).
    launched = work / f"{version}.launched.cubin"
    launched.write_bytes(version_cubin(version, "bfloat16"))
    as_launched = describe(version, launched, "")
    row["as_launched"] = {
        "assembler": f"CuTe DSL's own ptxas (PTX from {toolchain(text)})",
        "instructions": as_launched["instructions"],
        "main_loops": as_launched["main_loops"],
    }
    return row


def tool_version(cuda: Path) -> str:
    out = subprocess.run(
        [str(cuda / "bin" / "nvcc"), "--version"], capture_output=True, text=True
    ).stdout
    m = re.search(r"release [\d.]+, V([\d.]+)", out)
    return m.group(1) if m else "unknown"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--cuda", type=Path, required=True, help="CUDA toolkit root with bin/nvcc, bin/ptxas"
    )
    p.add_argument("--archive", type=Path, default=ARCHIVE, help="FlashMLA source archive")
    p.add_argument(
        "--versions",
        default="cute_v7,cute_v13,cute_v14,cute_v15,cute_v16,cute_v17",
        help="our CuTe DSL versions",
    )
    p.add_argument("--no-write", action="store_true", help="print the table only")
    args = p.parse_args(argv)
    if not (args.cuda / "bin" / "nvcc").is_file():
        print(f"error: no nvcc under {args.cuda}/bin", file=sys.stderr)
        return 2
    if not args.archive.is_file():
        print(
            f"error: no {args.archive}: python scripts/fetch_third_party.py flashmla",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="mla_sass_") as tmp:
        work = Path(tmp)
        flashmla, sources = compile_flashmla(args.archive, args.cuda, work)
        rows = [flashmla] + [
            compile_ours(v, args.cuda, work) for v in args.versions.split(",") if v
        ]
    keys = [
        "threads_per_cta",
        "registers",
        "named_barriers",
        "spill_bytes",
        *COUNTED,
        "instructions",
    ]
    print("version     " + " ".join(f"{k:>16}" for k in keys))
    for r in rows:
        print(f"{r['version']:<11} " + " ".join(f"{r.get(k, '-')!s:>16}" for k in keys))
    for r in rows:
        launched = r.get("as_launched", {}).get("main_loops", [])
        for label, loops in (("", r["main_loops"]), (" as launched", launched)):
            for loop in loops:
                ops = loop["opcodes"]
                print(
                    f"{r['version']:<11} loop{label} {loop['from']}-{loop['to']}: "
                    f"{loop['instructions']} instructions, HGMMA {ops.get('HGMMA', 0)}, "
                    f"MUFU {ops.get('MUFU', 0)}, R2UR {ops.get('R2UR', 0)}, "
                    f"FSEL {ops.get('FSEL', 0)}"
                )
    if args.no_write:
        return 0
    from importlib.metadata import version

    results_file.write(
        "ptx",
        "mla-sass-structure",
        "mla_sass_structure.py",
        sys.argv[1:] if argv is None else argv,
        "static SASS counts of the main kernel of FlashMLA's bf16 dense sm90 decode "
        "and of our CuTe DSL MLA decode versions (no timing)",
        counted=COUNTED,
        versions={
            "nvcc": tool_version(args.cuda),
            "nvidia-cutlass-dsl": version("nvidia-cutlass-dsl"),
            "flashmla_sources": sources,
        },
        target="sm_90a",
        rows=rows,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
