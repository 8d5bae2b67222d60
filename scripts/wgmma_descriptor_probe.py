#!/usr/bin/env python3
"""Where ptxas keeps warpgroup-MMA descriptors: a probe with hand-written PTX, no GPU needed.

    python scripts/wgmma_descriptor_probe.py [--ptxas PATH] [--steps 4,8,16,36] [--no-write]

A `wgmma.mma_async` with both operands in shared memory names them by two 64-bit descriptors,
which the SASS instruction (`HGMMA ... gdesc[URn]`) reads from uniform registers. The probe
writes one small sm_90a kernel per (number of k steps, placement): a loop over a KV stage
whose body issues N m64n64k16 wgmmas into one accumulator, each step's descriptors being a
base plus a constant offset, as an unrolled k loop produces them. Two placements:

- `up_front`: all 2N descriptors are computed before the first wgmma (what the compiler had
  done in the score product of our CuTe DSL MLA decode versions);
- `per_step`: each step's pair is computed just before its wgmma.

Each kernel is assembled by ptxas for sm_90a and its SASS read with cuobjdump; the result
counts the register-to-uniform moves (`R2UR`) and uniform integer adds (`UIADD3`) per kernel.
Default assembler: Triton's bundled ptxas (Triton is a dependency of this project).
Results: results/ptx/wgmma-descriptor-probe-<UTC stamp>.json with the date, command and the
ptxas version. Static counts, no timing.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import results_file

DESC_HIGH = 0x40000040_00000000  # stride fields of a 128-byte-swizzled K-major operand
ACCUMULATORS = 32  # m64n64k16 fp32: 32 registers per thread


def triton_tool(name: str) -> Path:
    import triton

    return Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name


def kernel_ptx(steps: int, up_front: bool) -> str:
    """One kernel: ``for stage in 0..n: N wgmmas on descriptors base(stage) + offset(k)``."""
    acc = "{" + ", ".join(f"%f{i}" for i in range(ACCUMULATORS)) + "}"
    lines = [
        ".version 8.0",
        ".target sm_90a",
        ".address_size 64",
        ".extern .shared .align 1024 .b8 smem[];",
        ".visible .entry probe(.param .u64 out, .param .u32 n)",
        ".reqntid 128, 1, 1",
        "{",
        "\t.reg .pred %p<2>;",
        "\t.reg .b32 %r<16>;",
        f"\t.reg .b32 %ra<{steps}>;",
        f"\t.reg .b32 %rb<{steps}>;",
        "\t.reg .b64 %rd<8>;",
        f"\t.reg .b64 %da<{steps}>;",
        f"\t.reg .b64 %db<{steps}>;",
        f"\t.reg .f32 %f<{ACCUMULATORS + 1}>;",
        "\tld.param.u64 %rd0, [out];",
        "\tld.param.u32 %r0, [n];",
    ]
    lines += [f"\tmov.f32 %f{i}, 0f00000000;" for i in range(ACCUMULATORS)]
    lines += [
        "\tmov.u32 %r1, 0;",
        "$loop:",
        # the stage's K tile (stage = i % 2, 16 KB apart) and the fixed Q tile, as descriptors
        "\tmov.u32 %r2, smem;",
        "\tand.b32 %r3, %r1, 1;",
        "\tshl.b32 %r3, %r3, 14;",
        "\tadd.s32 %r4, %r2, %r3;",
        "\tshr.u32 %r4, %r4, 4;",
        "\tand.b32 %r4, %r4, 16383;",
        "\tcvt.u64.u32 %rd1, %r4;",
        f"\tor.b64 %rd2, %rd1, {DESC_HIGH};",
        "\tadd.s32 %r5, %r2, 65536;",
        "\tshr.u32 %r5, %r5, 4;",
        "\tand.b32 %r5, %r5, 16383;",
        "\tcvt.u64.u32 %rd3, %r5;",
        f"\tor.b64 %rd4, %rd3, {DESC_HIGH};",
        "\tmov.b64 {%r6, %r7}, %rd2;",
        "\tmov.b64 {%r8, %r9}, %rd4;",
        "\twgmma.fence.sync.aligned;",
    ]
    prepare, issue = [], []
    for k in range(steps):
        offset = 2 * (k % 4) + 512 * (k // 4)  # 16-element k steps inside 64-column slices
        pair = [
            f"\tadd.s32 %ra{k}, %r8, {offset};",
            f"\tmov.b64 %da{k}, {{%ra{k}, %r9}};",
            f"\tadd.s32 %rb{k}, %r6, {offset};",
            f"\tmov.b64 %db{k}, {{%rb{k}, %r7}};",
        ]
        mma = (
            f"\twgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {acc}, "
            f"%da{k}, %db{k}, 1, 1, 1, 0, 0;"
        )
        if up_front:
            prepare += pair
            issue.append(mma)
        else:
            issue += [*pair, mma]
    lines += prepare + issue
    lines += [
        "\twgmma.commit_group.sync.aligned;",
        "\twgmma.wait_group.sync.aligned 0;",
        "\tadd.s32 %r1, %r1, 1;",
        "\tsetp.lt.s32 %p1, %r1, %r0;",
        "\t@%p1 bra $loop;",
        "\tmov.u32 %r10, %tid.x;",
        "\tmul.wide.u32 %rd5, %r10, 4;",
        "\tadd.s64 %rd6, %rd0, %rd5;",
        f"\tadd.f32 %f{ACCUMULATORS}, %f0, %f{ACCUMULATORS - 1};",
        f"\tst.global.f32 [%rd6], %f{ACCUMULATORS};",
        "\tret;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def opcode_counts(ptxas: Path, ptx: str, work: Path) -> Counter[str]:
    """Opcode (before the first dot) -> count in the kernel's SASS."""
    src, cubin = work / "probe.ptx", work / "probe.cubin"
    src.write_text(ptx)
    done = subprocess.run(
        [str(ptxas), "-arch=sm_90a", "-O3", str(src), "-o", str(cubin)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"ptxas failed:\n{done.stderr[-2000:]}")
    sass = subprocess.run(
        [str(triton_tool("cuobjdump")), "-sass", str(cubin)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    ops: Counter[str] = Counter()
    for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z0-9_]+)", sass):
        ops[m.group(1)] += 1
    return ops


def ptxas_version(ptxas: Path) -> str:
    out = subprocess.run([str(ptxas), "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release [\d.]+, V([\d.]+)", out)
    return m.group(1) if m else "unknown"


def probe(ptxas: Path, steps: list[int]) -> list[dict[str, int | str]]:
    rows: list[dict[str, int | str]] = []
    with tempfile.TemporaryDirectory(prefix="wgmma_probe_") as tmp:
        for n in steps:
            for up_front in (True, False):
                ops = opcode_counts(ptxas, kernel_ptx(n, up_front), Path(tmp))
                rows.append(
                    {
                        "steps": n,
                        "descriptors": "up_front" if up_front else "per_step",
                        "HGMMA": ops["HGMMA"],
                        "R2UR": ops["R2UR"],
                        "UIADD3": ops["UIADD3"],
                        "instructions": sum(ops.values()),
                    }
                )
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ptxas", type=Path, default=None, help="default: Triton's bundled ptxas")
    p.add_argument("--steps", default="4,8,12,16,24,36", help="wgmma k steps per kernel")
    p.add_argument("--no-write", action="store_true", help="print the table only")
    args = p.parse_args(argv)
    ptxas = args.ptxas or triton_tool("ptxas")
    if not ptxas.is_file():
        print(f"error: no ptxas at {ptxas}", file=sys.stderr)
        return 2
    try:
        steps = [int(s) for s in args.steps.split(",") if s]
    except ValueError:
        print(
            f"error: --steps must be integers separated by commas: {args.steps!r}", file=sys.stderr
        )
        return 2
    if not steps or min(steps) < 1:
        print("error: --steps needs at least one positive step count", file=sys.stderr)
        return 2
    rows = probe(ptxas, steps)
    print(f"{'steps':>5} {'descriptors':>11} {'HGMMA':>6} {'R2UR':>5} {'UIADD3':>6} {'instr':>6}")
    for r in rows:
        print(
            f"{r['steps']:>5} {r['descriptors']:>11} {r['HGMMA']:>6} {r['R2UR']:>5} "
            f"{r['UIADD3']:>6} {r['instructions']:>6}"
        )
    if args.no_write:
        return 0
    results_file.write(
        "ptx",
        "wgmma-descriptor-probe",
        "wgmma_descriptor_probe.py",
        sys.argv[1:] if argv is None else argv,
        "SASS of hand-written sm_90a PTX loops of N m64n64k16 wgmmas on shared-memory "
        "descriptors, computed all before the first wgmma or each just before its own "
        "(static counts, no timing)",
        versions={"ptxas": ptxas_version(ptxas)},
        target="sm_90a",
        rows=rows,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
