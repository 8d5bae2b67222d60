"""vLLM's Inkling relative-position logits projection (vllm/models/inkling/nvidia/ops/
qkvr_prep.py, v0.34.0: `_rel_proj_low_latency_kernel` and `_rel_proj_throughput_kernel`),
launched as vLLM's `qkvr_rel_proj` launches them, so that their launch choices are knobs.

Each (token, query head) row's 16 relative channels, read in place from the fused qkvr
projection's output (after the q, k and v columns), times the layer's [16, rel_extent]
projection by one K = 16 tl.dot, rounded to the dtype, into a [tokens x heads, rel_extent]
slab of relative logits.  Below 2,048 rows (8,192 when rel_extent is 512) the low-latency
kernel runs one (32-row, 64-column) tile a program; from there the throughput kernel loads
a 128-column slice of the projection once and reuses it over GROUP_M = 2 row tiles of 32
(an unrolled loop).  Four warps either way; Triton's default 3 stages (vLLM passes none,
and neither kernel has a loop of loads to pipeline).

Knobs: the row tile, the column tile, the row tiles per program (throughput kernel only)
and the warps, None keeping vLLM's for the kernel the row count picks; the stages are no
knob (nothing to pipeline).  The per-token log scaling (a global layer of a checkpoint
configured with log_scaling_n_floor) is off, as the config's default leaves it.  vLLM's
output (torch.empty of [tokens, heads, rel_extent] in qkvr's dtype) is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
D_REL = 16
LOW = {"block_m": 32, "block_n": 64, "num_warps": 4}
THROUGHPUT = {"block_m": 32, "block_n": 128, "group_m": 2, "num_warps": 4}


@dataclass(frozen=True)
class RelProjConfig:
    block_m: int | None = None  # None: vLLM's 32 (either kernel)
    block_n: int | None = None  # None: vLLM's 64 (low latency) or 128 (throughput)
    group_m: int | None = None  # None: vLLM's 2 (throughput kernel only)
    num_warps: int | None = None  # None: vLLM's 4


def use_throughput(rows: int, rel_extent: int) -> bool:
    """vLLM's `use_rel_proj_throughput`."""
    return rows >= (8192 if rel_extent == 512 else 2048)


def prepare(
    cfg: RelProjConfig, qkvr: torch.Tensor, rel_proj: torch.Tensor, heads: int,
    kvheads: int, head: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_rel_proj")
    if rel_proj.shape[0] != D_REL or not rel_proj.is_contiguous():
        raise ValueError("rel_proj must be a contiguous [16, rel_extent] projection")
    tokens = qkvr.shape[0]
    rows = tokens * heads
    extent = rel_proj.shape[1]
    r_offset = heads * head + 2 * kvheads * head
    if qkvr.shape[1] < r_offset + heads * D_REL or qkvr.stride(1) != 1:
        raise ValueError("qkvr must hold q, k, v and the relative channels, unit column stride")
    out = torch.empty(tokens, heads, extent, dtype=qkvr.dtype, device=qkvr.device)
    throughput = use_throughput(rows, extent)
    base = THROUGHPUT if throughput else LOW
    block_m = cfg.block_m or base["block_m"]
    block_n = cfg.block_n or base["block_n"]
    warps = cfg.num_warps or base["num_warps"]
    group_m = (cfg.group_m or THROUGHPUT["group_m"]) if throughput else 1
    common = dict(R_OFFSET=r_offset, NUM_Q_HEADS=heads, REL_EXTENT=extent,
                  APPLY_LOG_SCALING=False)  # fmt: skip
    grid = (triton.cdiv(rows, block_m * group_m), triton.cdiv(extent, block_n))
    name = "_rel_proj_throughput_kernel" if throughput else "_rel_proj_low_latency_kernel"

    def launch() -> torch.Tensor:
        if throughput:
            handle = mod._rel_proj_throughput_kernel[grid](
                qkvr, rel_proj, out, qkvr, rows, qkvr.stride(0), BLOCK_M=block_m,
                BLOCK_N=block_n, GROUP_M=group_m, num_warps=warps, **common,
            )  # fmt: skip
        else:
            handle = mod._rel_proj_low_latency_kernel[grid](
                qkvr, rel_proj, out, qkvr, rows, qkvr.stride(0), BLOCK_M=block_m,
                BLOCK_N=block_n, num_warps=warps, **common,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=[name], block_m=block_m,
            block_n=block_n, group_m=group_m, num_warps=warps,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
