"""What plain per-element arithmetic costs in SASS on sm_90: divisions, index decoding, a
Welford update. No GPU needed.

    .venv/bin/python scripts/triton_sass_per_element.py            # writes results/ptx/triton-sass-*.json
    .venv/bin/python scripts/triton_sass_per_element.py --no-write
    .venv/bin/python scripts/triton_sass_per_element.py --json      # the rows, for a program

Each variant is a small Triton kernel compiled for sm_90 with the installed Triton (no GPU:
Triton runs ptxas itself), disassembled with the nvdisasm Triton ships, and its SASS
instructions counted.  Variants come in pairs that differ only in the operation under test,
so the difference between the two counts, divided by the elements each thread handles, is
that operation's cost per element: an fp32 division against a multiply, a division and a
modulo by a run-time integer against a shift and a mask, a Welford update against a sum and
a sum of squares.  Why it matters: a streaming or row kernel that issues an instruction in
most cycles while DRAM idles pays every extra instruction per element in time.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import codegen_results
import triton
import triton.language as tl

BLOCK = 1024
NUM_WARPS = 4
PER_THREAD = BLOCK // (32 * NUM_WARPS)  # elements of one tile each thread holds


@triton.jit
def _multiply(x_ptr, y_ptr, z_ptr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(z_ptr + o, tl.load(x_ptr + o) * tl.load(y_ptr + o))


@triton.jit
def _divide(x_ptr, y_ptr, z_ptr, BLOCK: tl.constexpr):
    # Triton's `/` on fp32: div.full.f32 in the PTX (an approximate division).
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(z_ptr + o, tl.load(x_ptr + o) / tl.load(y_ptr + o))


@triton.jit
def _divide_rn(x_ptr, y_ptr, z_ptr, BLOCK: tl.constexpr):
    # The IEEE round-to-nearest division, which Triton emits only when asked (div.rn.f32).
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(z_ptr + o, tl.math.div_rn(tl.load(x_ptr + o), tl.load(y_ptr + o)))


@triton.jit
def _index_shift_mask(x_ptr, y_ptr, shift, mask, BLOCK: tl.constexpr):
    # A flat index split into (row, column) for a power-of-two width known at run time.
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + (o >> shift) + (o & mask), tl.load(x_ptr + o))


@triton.jit
def _index_div_mod(x_ptr, y_ptr, width, BLOCK: tl.constexpr):
    # The same split for any width: an integer division and a modulo per element.
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + (o // width) + (o % width), tl.load(x_ptr + o))


@triton.jit
def _row_sums(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Per-lane sum and sum of squares along a row of run-time length, merged once at the end.
    row = tl.program_id(0)
    s = tl.zeros([BLOCK], tl.float32)
    sq = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
        s += x
        sq += x * x
    tl.store(out_ptr + 2 * row, tl.sum(s, 0))
    tl.store(out_ptr + 2 * row + 1, tl.sum(sq, 0))


@triton.jit
def _row_welford(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Per-lane Welford update along the same row: the count of each lane (masked columns do
    # not count), its running mean (a division per element) and its sum of squared
    # deviations; the lanes' states summed at the end so the epilogue costs what
    # _row_sums' does.
    row = tl.program_id(0)
    mean = tl.zeros([BLOCK], tl.float32)
    m2 = tl.zeros([BLOCK], tl.float32)
    count = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        valid = cols < n
        x = tl.load(x_ptr + row * n + cols, mask=valid, other=0.0)
        new_count = count + valid
        new_mean = (mean * count + x) / tl.maximum(new_count, 1.0)
        m2 += (x - new_mean) * (x - mean) * valid
        mean = new_mean
        count = new_count
    tl.store(out_ptr + 2 * row, tl.sum(mean, 0))
    tl.store(out_ptr + 2 * row + 1, tl.sum(m2, 0))


_BINARY = {"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32", "BLOCK": "constexpr"}
_ROW = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}

# (name, kernel, signature, elements per thread, the variant it is compared with)
VARIANTS = (
    ("fp32 multiply", _multiply, _BINARY, PER_THREAD, None),
    ("fp32 x / y (Triton's /)", _divide, _BINARY, PER_THREAD, "fp32 multiply"),
    ("fp32 div_rn (IEEE)", _divide_rn, _BINARY, PER_THREAD, "fp32 multiply"),
    (
        "index >> shift, & mask",
        _index_shift_mask,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "shift": "i32", "mask": "i32", "BLOCK": "constexpr"},
        PER_THREAD,
        None,
    ),
    (
        "index // width, % width",
        _index_div_mod,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "width": "i32", "BLOCK": "constexpr"},
        PER_THREAD,
        "index >> shift, & mask",
    ),
    ("row sum + sum of squares", _row_sums, _ROW, PER_THREAD, None),
    ("row Welford update", _row_welford, _ROW, PER_THREAD, "row sum + sum of squares"),
)

_NVDISASM = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "nvdisasm"
_INSTRUCTION = re.compile(r"^\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")


_LABEL = re.compile(r"^(\.L_x_\d+):")
_BRANCH_TARGET = re.compile(r"BRA `\((\.L_x_\d+)\)")


def disassemble(cubin: bytes) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        return subprocess.run(
            [str(_NVDISASM), "-c", str(path)], capture_output=True, text=True, check=True
        ).stdout


def _main_body(sass: str) -> list[str]:
    """The kernel's own lines: the subroutines placed after it (the IEEE division's slow
    path, `$__internal_..._slowpath`, taken only for operands out of the fast path's range)
    are left out, as a count of what each element executes should."""
    lines = sass.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("$__internal"):
            return lines[:i]
    return lines


def sass_instructions(sass: str) -> list[str]:
    """The kernel's SASS instructions, without its subroutines, the padding NOPs and the
    branch-to-self that follows EXIT."""
    out: list[str] = []
    for line in _main_body(sass):
        m = _INSTRUCTION.match(line)
        if m is None or m.group(1) == "NOP":
            continue
        out.append(m.group(1))
    while out and out[-1].startswith("BRA"):  # the trailing self-loop after EXIT
        out.pop()
    return out


def loop_instructions(sass: str) -> int | None:
    """Instructions in the body of the kernel's loop, from a label to the branch back to it
    (what each iteration executes); None for a kernel without one.  The branch-to-self after
    EXIT is not a loop."""
    seen: dict[str, int] = {}  # label -> instructions before it
    count = 0
    for line in _main_body(sass):
        label = _LABEL.match(line.strip())
        if label:
            seen[label.group(1)] = count
            continue
        m = _INSTRUCTION.match(line)
        if m is None or m.group(1) == "NOP":
            continue
        count += 1
        target = _BRANCH_TARGET.search(m.group(1))
        if target and target.group(1) in seen and count - seen[target.group(1)] > 1:
            return count - seen[target.group(1)]
    return None


def measure() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    counts: dict[str, int] = {}
    for name, fn, signature, per_thread, against in VARIANTS:
        # One stage: a software-pipelined loop would repeat its body in a prologue, and the
        # difference of two static counts would no longer be one iteration's.
        compiled = codegen_results.compile_sm90(
            fn, signature, {"BLOCK": BLOCK}, num_warps=NUM_WARPS, num_stages=1
        )
        text = disassemble(compiled.asm["cubin"])
        sass = sass_instructions(text)
        loop = loop_instructions(text)
        ptx = compiled.asm["ptx"]
        # A loop kernel is compared by its loop body (one iteration), the others whole.
        counts[name] = loop if loop is not None else len(sass)
        row: dict[str, object] = {
            "variant": name,
            "sass_instructions": len(sass),
            "loop_instructions": loop,
            "elements_per_thread": per_thread,
            "ptx_division": sorted(set(re.findall(r"\b(div\.[a-z0-9.]+)", ptx))),
            "mufu": sorted({i.split()[0] for i in sass if i.startswith("MUFU")}),
        }
        if against is not None:
            extra = len(sass) - counts[against]
            row["compared_with"] = against
            row["extra_per_element"] = round(extra / per_thread, 2)
        rows.append(row)
    return rows


def _line(r: dict[str, object]) -> str:
    extra = r.get("extra_per_element")
    vs = f"  {extra:+g} per element vs {r['compared_with']}" if extra is not None else ""
    loop = f", {r['loop_instructions']} per iteration" if r["loop_instructions"] else ""
    return (
        f"{r['variant']:<26} {r['sass_instructions']:>4} SASS instructions{loop} "
        f"({r['elements_per_thread']} elements per thread){vs}"
    )


def main(argv: list[str] | None = None) -> int:
    return codegen_results.run(
        "triton_sass_per_element.py",
        __doc__ or "",
        measure=measure,
        line=_line,
        stem="triton-sass-per-element",
        what="SASS instructions of per-element arithmetic, compiled for sm_90 without a GPU",
        target=f"cuda sm_90, {NUM_WARPS} warps, {BLOCK}-element fp32 tiles",
        argv=argv,
    )


if __name__ == "__main__":
    sys.exit(main())
