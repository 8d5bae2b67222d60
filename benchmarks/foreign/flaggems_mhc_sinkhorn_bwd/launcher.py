"""FlagGems' mHC Sinkhorn backward for four streams (src/flag_gems/fused/mhc/mhc_bwd.py,
v5.0.2: `_mhc_bwd_kernel_n4`), launched as FlagGems' `mhc_bwd` launches it, so that its
launch choices are knobs.

One program per BLOCK_S tokens, one token per lane: each lane loads its token's 16 values
of R and 16 of dR (stride-16 fp32 loads: a warp's load instruction touches one value in
every 64 bytes, the 16 loads of a matrix together cover its lines), forms b = (row sums,
column sums) of R * dR, runs cg_iters = 8 conjugate-gradient iterations on the 8-unknown
system [I R; R^T I] x = b with the matrix, x, r and p in registers (a matrix-vector product
both ways, two dot products and two divisions an iteration, about 146 fp32 operations; no
loads in the loop, no tl.dot, no shared memory), and stores dM = (dR - x1[i] - x2[j]) * R.
Masked past the last token.

FlagGems' launch: `mhc_bwd` makes both inputs contiguous fp32, allocates the result with
torch.empty_like and, for four streams, launches the kernel with BLOCK_S = 64 over
cdiv(tokens, 64) programs, Triton's default 4 warps (128 lanes for 64 tokens: every token
computed by two lanes) and 3 stages.  Knobs: `block_s`, `num_warps`, `num_stages`, None
keeping FlagGems' choice; the stages are Triton's pipelining of the loop's loads, which has
none.  The result buffer is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
HC = 4
CG_ITERS = 2 * HC  # mhc_bwd's default
FLAGGEMS_BLOCK_S = 64
FLAGGEMS_WARPS = 4  # Triton's default: mhc_bwd passes none
FLAGGEMS_STAGES = 3  # Triton's default: mhc_bwd passes none


@dataclass(frozen=True)
class MhcSinkhornBwdConfig:
    block_s: int | None = None  # None: FlagGems' 64 tokens per program
    num_warps: int | None = None  # None: FlagGems' (Triton's default) 4
    num_stages: int | None = None  # None: FlagGems' (Triton's default) 3


def prepare(
    cfg: MhcSinkhornBwdConfig, out: torch.Tensor, dout: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_mhc_sinkhorn_bwd")
    if out.dim() != 3 or out.shape[1:] != (HC, HC) or dout.shape != out.shape:
        raise ValueError("out and dout must both be [tokens, 4, 4]")
    out = out.contiguous().float()
    dout = dout.contiguous().float()
    tokens = out.shape[0]
    block = int(cfg.block_s) if cfg.block_s is not None else FLAGGEMS_BLOCK_S
    warps = int(cfg.num_warps) if cfg.num_warps is not None else FLAGGEMS_WARPS
    stages = int(cfg.num_stages) if cfg.num_stages is not None else FLAGGEMS_STAGES
    res = torch.empty_like(out)
    grid = (triton.cdiv(tokens, block),)

    def launch() -> torch.Tensor:
        handle = mod._mhc_bwd_kernel_n4[grid](
            out, dout, res, tokens, CG_ITERS,
            BLOCK_S=block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_mhc_bwd_kernel_n4"],
            block_s=block, num_warps=warps, num_stages=stages, programs=grid[0],
            cg_iters=CG_ITERS,
        )  # fmt: skip
        return res

    return launch
