"""FlagGems' index_add (src/flag_gems/ops/index_add.py, v5.0.2: the `_index_add_jit_function`
its code generator writes for a rank-2 source), launched as FlagGems' generated wrapper
launches it, so that its launch choices are knobs.

FlagGems writes one kernel per source rank as text (`generate_code`), saves it in its code
cache and imports it; here the fetched generator writes the rank-2 text, the generated
`@libentry()` line and its import are dropped (the extract mode's rule for FlagGems'
decorators), and the text is imported from a temporary file, once per process.  The kernel
is flat over the source: one program per BLOCK_SIZE source elements decodes each element's
row and column from the source's shape and strides, loads its destination row from the
index (dim 0 here: the row is index[row]), and adds the element times alpha into the output
with a relaxed `tl.atomic_add`, masked by the output's size only (a masked-off lane adds
0.0 past the end, or nowhere).

FlagGems' launch: BLOCK_SIZE = 128 written into the wrapper, Triton's default warps (4) and
stages, no autotuning.  Knobs: the block and the warps, None keeping that choice; the
kernel has no loop, so the stages are no knob.  FlagGems' `index_add` clones the input and
adds into the clone; here the clone's buffer is made in `prepare` and the timed call is the
copy into it (torch's `copy_`) and the kernel.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
BLOCK_SIZE = 128  # the generated wrapper's `BLOCK_SIZE = 128`
KERNEL = "_index_add_jit_function"  # the name FlagGems' IndexAddFunction gives it
# the generated lines that import and apply FlagGems' libentry (its launch cache), dropped
DROPPED = ("from flag_gems.utils import libentry", "@libentry()")


@dataclass(frozen=True)
class IndexAddConfig:
    block_size: int | None = None  # None: FlagGems' 128 source elements per program
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)


def generated_kernel(rank: int) -> Any:
    """The kernel FlagGems generates for a source of `rank` dimensions, imported once."""
    name = f"_kbopt_flaggems_index_add_rank{rank}"
    if name not in sys.modules:
        gen = _common.load_source("flaggems_index_add")
        code = gen.generate_code(
            (None, None, torch.empty((0,) * rank)), "_index_add_wrapper", KERNEL,
            gen.IndentedBuffer(),
        ).getvalue()  # fmt: skip
        for line in DROPPED:
            if line not in code:
                raise RuntimeError(f"FlagGems' generated index_add has no {line!r}")
            code = code.replace(line, "")
        path = Path(tempfile.mkdtemp(prefix="kbopt_index_add_")) / f"{name}.py"
        path.write_text(code)
        _common.import_file(name, path)
    return getattr(sys.modules[name], KERNEL)


def prepare(
    cfg: IndexAddConfig, inp: torch.Tensor, index: torch.Tensor, src: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """inp [tokens, hidden], index [rows] (distinct rows of inp), src [rows, hidden]:
    out = inp with src's rows added at index (dim 0, alpha 1)."""
    if inp.dim() != 2 or src.dim() != 2 or index.dim() != 1:
        raise ValueError("inp and src must be matrices and index a vector")
    if src.shape != (index.numel(), inp.shape[1]) or not src.is_contiguous():
        raise ValueError("src must be a contiguous [index.numel(), inp.shape[1]] matrix")
    kernel = generated_kernel(src.dim())
    dim, alpha = 0, 1
    out = torch.empty_like(inp)
    n = src.numel()
    inp_stride_dim, inp_shape_dim, src_shape_dim = inp.stride(dim), inp.size(dim), src.size(dim)
    delta = inp_shape_dim - src_shape_dim
    block = cfg.block_size or BLOCK_SIZE
    grid = (triton.cdiv(n, block),)
    extra = {"num_warps": cfg.num_warps} if cfg.num_warps else {}

    def launch() -> torch.Tensor:
        out.copy_(inp)  # FlagGems' inp.clone()
        handle = kernel[grid](
            index, src, out, n, inp.numel(), inp_stride_dim, inp_shape_dim, src_shape_dim,
            delta, alpha, src.stride(0), src.stride(1), src.shape[0], src.shape[1],
            BLOCK_SIZE=block, **extra,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=["copy_", KERNEL], block_size=block,
            num_warps=cfg.num_warps or 4, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
