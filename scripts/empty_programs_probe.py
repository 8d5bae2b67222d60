#!/usr/bin/env python3
"""What a grid of mostly empty programs costs: the same tile work launched over grids padded
with programs that find no work and return, on the GPU.

    python scripts/empty_programs_probe.py [--live-tiles 12288] [--pad 1,2,4,8,18]
                                           [--k 16] [--warps 4] [--no-write]

Kernels sized for the worst case launch one program per (row block, column block, slot) that
could have work and let the ones that have none return at once: a multi-adapter LoRA launch
gives every adapter slot a program for every row block of the whole batch, though each slot
owns only its own tokens' rows. Each empty program still has to be scheduled onto an SM, read
what tells it it is empty and retire, and while it waits on that read it holds a CTA slot.

The probe keeps the work fixed: ``live`` programs, each of which adds one 64 x 64 tile of
``A[64 x K] @ B[K x 64]`` into the output in place (a LoRA expand's tile with rank K). A table
of one int per program says which tile a program owns, or -1 for none, as the adapter lookup
of a LoRA launch does; the grid is ``live x pad`` programs with the live ones spread evenly
among the empty ones. ``pad`` 1 is the grid cut to the work. Each row of the result gives the
time per launch (``triton.testing.do_bench``, median), and the time the empty programs add,
per empty program and per million of them; the last row launches only empty programs (no
tile work at all). Results: results/probes/empty-programs-<UTC stamp>.json with the device,
torch and Triton versions, the kernel's registers per thread and the command.
"""

from __future__ import annotations

import argparse
import sys

import results_file

BLOCK = 64


def build_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def tile_add(
        a_ptr, b_ptr, c_ptr, table_ptr, n_col_blocks, ldc, K: tl.constexpr, BLOCK: tl.constexpr
    ):
        tile = tl.load(table_ptr + tl.program_id(0))
        if tile < 0:  # no work: return, as a LoRA slot's program past its tokens does
            return
        rb = tile // n_col_blocks
        cb = tile % n_col_blocks
        rows = rb * BLOCK + tl.arange(0, BLOCK)
        cols = cb * BLOCK + tl.arange(0, BLOCK)
        ks = tl.arange(0, K)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :])
        b = tl.load(b_ptr + ks[:, None] * ldc + cols[None, :])
        c_ptrs = c_ptr + rows[:, None] * ldc + cols[None, :]
        acc = tl.load(c_ptrs).to(tl.float32) + tl.dot(a, b)
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))

    return tile_add


def work_table(live: int, pad: int, device: str):
    """``live * pad`` entries: entry ``i * pad`` owns tile ``i``, the others -1 (no work);
    ``live`` 0 gives a table of ``pad`` empty entries."""
    import torch

    if live == 0:
        return torch.full((pad,), -1, dtype=torch.int32, device=device)
    table = torch.full((live * pad,), -1, dtype=torch.int32, device=device)
    table[::pad] = torch.arange(live, dtype=torch.int32, device=device)
    return table


def shape(live: int) -> tuple[int, int]:
    """Row and column blocks of an output holding ``live`` tiles: 96 column blocks (6,144
    columns, a fused QKV's width) where they divide, else one row of tiles."""
    return (live // 96, 96) if live % 96 == 0 else (1, live)


def run_probe(
    live: int, pads: list[int], k: int, warps: int, device: str, time_it: bool = True
) -> dict:
    import torch

    kernel = build_kernel()
    rbs, cbs = shape(live)
    dtype = (
        torch.bfloat16 if device == "cuda" else torch.float16
    )  # bf16 tl.dot is wrong in the interpreter
    gen = torch.Generator(device="cpu").manual_seed(0)
    a = torch.randn(rbs * BLOCK, k, generator=gen).to(device, dtype)
    b = torch.randn(k, cbs * BLOCK, generator=gen).to(device, dtype)
    base = torch.randn(rbs * BLOCK, cbs * BLOCK, generator=gen).to(device, dtype)
    expected = (base.float() + a.float() @ b.float()).to(dtype)
    rows, regs = [], None
    for pad in [*pads, None]:  # None: the all-empty grid
        table = work_table(live, pad, device) if pad else work_table(0, live * max(pads), device)
        grid = (table.numel(),)
        c = base.clone()
        handle = kernel[grid](a, b, c, table, cbs, cbs * BLOCK, K=k, BLOCK=BLOCK, num_warps=warps)
        regs = getattr(handle, "n_regs", regs)
        if pad:  # one launch adds each live tile once: the sum must match torch's
            # relative to the value (+1 near zero): the output is rounded to 16 bits, whose
            # step at the products' size (up to ~30) is 0.125 in bf16
            err = ((c.float() - expected.float()).abs() / (expected.float().abs() + 1)).max()
            if err.item() > 0.03:
                raise SystemExit(
                    f"pad {pad}: result differs from torch by {err.item():.3g} (relative)"
                )
        row = {"pad": pad, "programs": grid[0], "live": live if pad else 0}
        if time_it:
            import triton.testing

            def launch(c=c, table=table, grid=grid):
                kernel[grid](a, b, c, table, cbs, cbs * BLOCK, K=k, BLOCK=BLOCK, num_warps=warps)

            row["us"] = round(
                triton.testing.do_bench(launch, warmup=25, rep=200, return_mode="median") * 1e3, 2
            )
        rows.append(row)
    if time_it:
        cut = rows[0]["us"] if rows[0]["pad"] == 1 else None
        for row in rows:
            empty = row["programs"] - row["live"]
            if cut is not None and row["pad"] and empty:
                row["added_us"] = round(row["us"] - cut, 2)
                row["ns_per_empty_program"] = round((row["us"] - cut) * 1e3 / empty, 3)
            if not row["pad"]:
                row["ns_per_empty_program"] = round(row["us"] * 1e3 / empty, 3)
    return {
        "rows": rows,
        "regs_per_thread": regs,
        "k": k,
        "warps": warps,
        "tile": [BLOCK, BLOCK],
        "output": [rbs * BLOCK, cbs * BLOCK],
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--live-tiles", type=int, default=12288, help="programs with work (default 12288)"
    )
    p.add_argument(
        "--pad", default="1,2,4,8,18", help="grid sizes as multiples of the live programs; 1 first"
    )
    p.add_argument(
        "--k", type=int, default=16, help="inner dimension of each tile's product (a LoRA rank)"
    )
    p.add_argument("--warps", type=int, default=4)
    p.add_argument("--no-write", action="store_true", help="print only; no results file")
    args = p.parse_args(argv)
    try:
        pads = [int(x) for x in args.pad.split(",")]
    except ValueError:
        p.error(f"--pad: expected integers separated by commas, got {args.pad!r}")
    if pads[0] != 1 or any(x < 1 for x in pads):
        p.error("--pad: the first must be 1 (the grid cut to the work) and all at least 1")
    if args.live_tiles < 1 or args.k < 16 or args.k & (args.k - 1):
        p.error("--live-tiles must be positive and --k a power of two of at least 16")
    import torch
    import triton

    if not torch.cuda.is_available():
        print(
            "empty_programs_probe: no CUDA GPU here; the probe times launches on a GPU",
            file=sys.stderr,
        )
        return 2
    result = run_probe(args.live_tiles, pads, args.k, args.warps, "cuda")
    print(f"{'pad':>4} {'programs':>9} {'live':>6} {'us':>9} {'added us':>9} {'ns/empty':>9}")
    for r in result["rows"]:
        print(
            f"{r['pad'] or '-':>4} {r['programs']:>9} {r['live']:>6} {r['us']:>9} "
            f"{r.get('added_us', ''):>9} {r.get('ns_per_empty_program', ''):>9}"
        )
    if not args.no_write:
        results_file.write(
            "probes",
            "empty-programs",
            "empty_programs_probe.py",
            argv,
            "time of a fixed tile workload launched over grids padded with programs that return at once",
            device=torch.cuda.get_device_name(),
            torch=torch.__version__,
            triton=triton.__version__,
            cuda=torch.version.cuda,
            **result,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
