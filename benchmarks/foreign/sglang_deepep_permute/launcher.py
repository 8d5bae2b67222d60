"""SGLang's DeepEP-normal token permute (python/sglang/srt/layers/moe/ep_moe/kernels.py,
v0.5.9: `deepep_permute_triton_kernel`), launched as SGLang's `cutlass_w4a8_moe_deepep_normal`
launches it, so that its launch choices are knobs.

After DeepEP's normal-mode dispatch, each rank holds the tokens routed to any of its local
experts; before the W4A8 grouped GEMM, this kernel copies every token's row to one
destination row per local expert of the token, in expert-sorted order.  One program per
received token walks its hidden row in BLOCK_SIZE tiles (a tl.range): each tile is loaded
once and stored to each of the token's top-k destinations that is not remote (src2dst >= 0;
the top-k loop is unrolled, its destination loads scalar).

SGLang's launch: 512-column tiles (BLOCK_SIZE=512) with Triton's default 4 warps and 3
stages, a1_scales None.  Knobs: the tile, the warps and the stages (the depth of the loop
over the row), None keeping SGLang's.  SGLang allocates the output per call (torch.empty);
here it is allocated in `prepare`, with the preprocess's src2dst made with the inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK = 512
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class PermuteConfig:
    block_size: int | None = None  # None: SGLang's 512
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: PermuteConfig, a: torch.Tensor, topk_ids: torch.Tensor, src2dst: torch.Tensor,
    rows: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_deepep_permute")
    if not a.is_contiguous() or not topk_ids.is_contiguous() or not src2dst.is_contiguous():
        raise ValueError("a, topk_ids and src2dst must be contiguous")
    tokens, hidden = a.shape
    topk = topk_ids.shape[1]
    out = torch.empty(rows, hidden, device=a.device, dtype=a.dtype)
    block = cfg.block_size or SGLANG_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    grid = (tokens,)

    def launch() -> torch.Tensor:
        handle = mod.deepep_permute_triton_kernel[grid](
            a, out, src2dst, topk_ids, None, topk, hidden, BLOCK_SIZE=block,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["deepep_permute_triton_kernel"],
            block_size=block, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
