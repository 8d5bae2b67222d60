"""SGLang's Mamba-2 dt cumsum (python/sglang/srt/layers/attention/mamba/ops/
ssd_chunk_state.py, v0.5.9, adapted there from vLLM and Tri Dao's mamba_ssm:
`_chunk_cumsum_fwd_kernel`), launched by our copy of SGLang's `_chunk_cumsum_fwd` so that
its launch choices are knobs.

The first kernel of a Mamba-2 layer's SSD prefill (`_mamba_chunk_scan_combined_fwd`, as
`MambaMixer2` calls it with `dt_softplus=True`, `dt_limit=(0.0, inf)` and the layer's
dt_bias): the packed prompt tokens' per-head dt, [batch, seqlen, nheads] in the model dtype,
turned into the two fp32 tensors every later SSD kernel reads, [batch, nheads, nchunks,
chunk]: dt itself (dt + bias, softplus below 20, clamped, 0 past the sequence's end) and
the chunk-local running sum of dt * A.  One program per (batch row, chunk, BLOCK_SIZE_H
heads) loads a heads x chunk tile (each token's heads contiguous, so a 16-head tile reads 16
values per token), adds the bias, applies softplus and the clamp, stores dt transposed to
chunk-contiguous rows, multiplies by the heads' A and stores `tl.cumsum` along the chunk.
No loop: the whole chunk (BLOCK_SIZE_CHUNK, its next power of two) is one tile.

SGLang's launch: the kernel's default BLOCK_SIZE_H 16 (the grid asks META for it; SGLang
passes none and there is no autotune), Triton's default 4 warps (with no loop the stages
change nothing).  Knobs: `block_h` and `num_warps`, None keeping SGLang's.  The two output
buffers (SGLang's `torch.empty` per call) are allocated in `prepare`, outside the timed
call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_H = 16  # the kernel's default BLOCK_SIZE_H, which SGLang's call keeps
TRITON_DEFAULT_WARPS = 4
DT_LIMIT = (0.0, float("inf"))  # MambaMixer2's dt_limit


@dataclass(frozen=True)
class SsdChunkCumsumConfig:
    block_h: int | None = None  # None: the kernel's default 16 (SGLang passes none)
    num_warps: int | None = None  # None: Triton's default 4


def prepare(
    cfg: SsdChunkCumsumConfig, dt: torch.Tensor, a: torch.Tensor, dt_bias: torch.Tensor,
    chunk_size: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_ssd_chunk_cumsum")
    if dt.dim() != 3:
        raise ValueError("dt must be [batch, seqlen, nheads]")
    batch, seqlen, nheads = dt.shape
    if a.shape != (nheads,) or dt_bias.shape != (nheads,):
        raise ValueError("A and dt_bias must be [nheads]")
    bh = cfg.block_h or SGLANG_BLOCK_H
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    nchunks = -(-seqlen // chunk_size)
    dt_out = torch.empty(batch, nheads, nchunks, chunk_size, device=dt.device, dtype=torch.float32)
    da_cumsum = torch.empty_like(dt_out)
    grid = (batch, nchunks, triton.cdiv(nheads, bh))
    args = (
        dt, a, dt_bias, dt_out, da_cumsum, batch, seqlen, nheads, chunk_size,
        DT_LIMIT[0], DT_LIMIT[1],
        dt.stride(0), dt.stride(1), dt.stride(2), a.stride(0), dt_bias.stride(0),
        dt_out.stride(0), dt_out.stride(2), dt_out.stride(1), dt_out.stride(3),
        da_cumsum.stride(0), da_cumsum.stride(2), da_cumsum.stride(1), da_cumsum.stride(3),
        True,  # dt_softplus, passed positionally as SGLang does
    )  # fmt: skip

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod._chunk_cumsum_fwd_kernel[grid](
            *args, HAS_DT_BIAS=True, BLOCK_SIZE_CHUNK=triton.next_power_of_2(chunk_size),
            BLOCK_SIZE_H=bh, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_chunk_cumsum_fwd_kernel"],
            block_h=bh, block_chunk=triton.next_power_of_2(chunk_size), num_warps=warps,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return da_cumsum, dt_out

    return launch
