"""How Triton lowers its transcendental functions: PTX instructions per element, no GPU needed.

    .venv/bin/python scripts/triton_math_ptx.py            # writes results/ptx/triton-math-*.json
    .venv/bin/python scripts/triton_math_ptx.py --no-write
    .venv/bin/python scripts/triton_math_ptx.py --json      # the rows, for a program

Each variant is a one-element-per-thread kernel (128 fp32 elements, 4 warps): load, apply
the function, store.  It is compiled for sm_90 with the installed Triton (no GPU: Triton
writes the PTX before it needs one), and the instructions of its body are counted, so the
load, store and index arithmetic every variant shares (the `identity` row) can be
subtracted.  The table says which function calls a libdevice routine and which becomes
one special-function-unit instruction (`ex2.approx`, `lg2.approx`, `tanh.approx`).  Why it
matters: an element-wise or row kernel that is limited by issuing instructions (issue slots
busy, DRAM short of its rate) pays each extra instruction per element.
"""

from __future__ import annotations

import sys

import codegen_results
import triton
import triton.language as tl

APPROX = ("ex2.approx", "lg2.approx", "tanh.approx")
LN2 = tl.constexpr(0.6931471805599453)


@triton.jit
def _hw_lg2(x):
    # One MUFU.LG2 per element (what CUDA's __log2f compiles to).
    return tl.inline_asm_elementwise(
        "lg2.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1
    )


@triton.jit
def _identity(x_ptr, y_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y_ptr + o, tl.load(x_ptr + o))


@triton.jit
def _log(x_ptr, y_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y_ptr + o, tl.log(tl.load(x_ptr + o)))


@triton.jit
def _log2(x_ptr, y_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y_ptr + o, tl.log2(tl.load(x_ptr + o)))


@triton.jit
def _log_by_lg2_approx(x_ptr, y_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y_ptr + o, _hw_lg2(tl.load(x_ptr + o)) * LN2)


@triton.jit
def _exp(x_ptr, y_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y_ptr + o, tl.exp(tl.load(x_ptr + o)))


@triton.jit
def _exp2(x_ptr, y_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y_ptr + o, tl.exp2(tl.load(x_ptr + o)))


VARIANTS = {
    "identity": _identity,
    "tl.log": _log,
    "tl.log2": _log2,
    "lg2.approx * ln 2 (inline PTX)": _log_by_lg2_approx,
    "tl.exp": _exp,
    "tl.exp2": _exp2,
}


def body_instructions(ptx: str) -> list[str]:
    """The instructions of the kernel's body: no directives, labels, braces or comments."""
    body = ptx[ptx.index("{") :]
    out = []
    for line in body.splitlines():
        s = line.strip()
        if not s or s.startswith(("//", ".", "{", "}")) or s.endswith(":"):
            continue
        out.append(s)
    return out


def measure() -> list[dict[str, object]]:
    rows = []
    for name, fn in VARIANTS.items():
        signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "BLOCK": "constexpr"}
        ptx = codegen_results.compile_sm90(fn, signature, {"BLOCK": 128}).asm["ptx"]
        instrs = body_instructions(ptx)
        rows.append(
            {
                "variant": name,
                "ptx_instructions": len(instrs),
                "approx_instructions": sorted({a for a in APPROX if a in ptx}),
            }
        )
    base = next(r["ptx_instructions"] for r in rows if r["variant"] == "identity")
    for r in rows:
        r["beyond_identity"] = int(r["ptx_instructions"]) - int(base)  # type: ignore[call-overload]
    return rows


def _line(r: dict[str, object]) -> str:
    approx = ", ".join(r["approx_instructions"]) or "-"  # type: ignore[arg-type]
    return (
        f"{r['variant']:<32} {r['ptx_instructions']:>4} PTX instructions "
        f"({r['beyond_identity']:+d} vs identity)  approx: {approx}"
    )


def main(argv: list[str] | None = None) -> int:
    return codegen_results.run(
        "triton_math_ptx.py",
        __doc__ or "",
        measure=measure,
        line=_line,
        stem="triton-math",
        what="PTX instructions of one fp32 element per thread, compiled for sm_90",
        target="cuda sm_90, 4 warps, 128 elements",
        argv=argv,
    )


if __name__ == "__main__":
    sys.exit(main())
