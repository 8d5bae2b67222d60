"""vLLM's top-k bitmatrix packing
(vllm/model_executor/layers/fused_moe/experts/gpt_oss_triton_kernels_moe.py, v0.34.0:
`pack_bitmatrix`, after triton_kernels' distributed benchmark), launched as vLLM's
`make_routing_data` launches it, so that its launch choices are knobs.

One program per BLOCK_SIZE_M tokens.  It loads the block's [BLOCK_SIZE_M, 32] int16 ids
(the topk real columns, the rest and the rows past the batch masked to -1), splits each into
word (id // 32) and bit (id % 32), then for each of the bitmatrix's words builds a
[BLOCK_SIZE_M, 32, 1] tensor holding 1 << bit where a valid id falls in that word, ORs it
over the topk axis (tl.reduce_or) and stores the uint32 word of every row of the block.

vLLM's launch: BLOCK_SIZE_M = 512 and BLOCK_SIZE_K = 32 (fixed in make_routing_data), with
Triton's default 4 warps (vLLM passes none); bm_cols = ceil(local experts / 32).  Knobs:
the token block and the warps, None keeping vLLM's.  BLOCK_SIZE_K is no knob: its loop walks
BLOCK_SIZE_K / 32 words per step for bm_cols steps, so any other value stores past each
row's words.  vLLM's per-call int16 cast of the ids and its zero-filled bitmatrix are made
in `prepare`; the routing metadata built from the bitmatrix afterwards is not timed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_M = 512
BLOCK_K = 32  # vLLM's BLOCK_SIZE_K: one 32-bit word per loop step
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class BitmatrixConfig:
    block_m: int | None = None  # None: vLLM's 512 tokens per program
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)


def prepare(
    cfg: BitmatrixConfig, topk_ids: torch.Tensor, local_experts: int
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_moe_bitmatrix")
    n_rows, topk = topk_ids.shape
    if topk > BLOCK_K:
        raise ValueError(f"topk {topk} exceeds the kernel's {BLOCK_K}-lane tile")
    ids16 = topk_ids.to(torch.int16).contiguous()  # make_routing_data's cast, per call
    block_m = cfg.block_m or VLLM_BLOCK_M
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    bm_cols = triton.cdiv(local_experts, BLOCK_K)
    bitmatrix = torch.zeros((n_rows, bm_cols), dtype=torch.uint32, device=topk_ids.device)
    grid = (triton.cdiv(n_rows, block_m),)

    def launch() -> torch.Tensor:
        handle = mod.pack_bitmatrix[grid](
            bitmatrix, ids16, n_rows, bm_cols, topk, BLOCK_SIZE_M=block_m,
            BLOCK_SIZE_K=BLOCK_K, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["pack_bitmatrix"],
            block_m=block_m, num_warps=warps, programs=grid[0], words=bm_cols,
        )  # fmt: skip
        return bitmatrix

    return launch
