"""FlagGems' paged MQA logits schedule (src/flag_gems/ops/get_paged_mqa_logits_metadata.py,
v5.0.2: `_paged_mqa_logits_metadata_kernel`), launched as FlagGems'
`get_paged_mqa_logits_metadata` launches it for a 1-D batch of context lengths, so that its
launch choices are knobs.

One program per SM and one more (num_sms + 1, a 1-D grid) each loads the whole batch's
context lengths through one BLOCK_SIZE-wide masked tile, turns them into 256-token segment
counts, takes their inclusive tl.cumsum and its tl.max (the total), computes its SM's first
segment, counts the requests whose prefix ends at or before it (tl.sum) and takes the
prefix before it (tl.max): two int32 stores.  Every program redoes the batch's scan, so the
work is (num_sms + 1) x BLOCK_SIZE lanes for 2 x (num_sms + 1) stored integers.

FlagGems' launch: BLOCK_SIZE = next_power_of_2(max(16, batch)), Triton's default warps and
stages (it passes none; no autotune).  Knobs: the tile, at least the batch (the kernel
sees only its first BLOCK_SIZE requests, so the launcher refuses a smaller one), and the
warps; the kernel has no loop, so the stages are no knob.  FlagGems allocates the zeroed
[num_sms + 1, 2] output per call; here it is made in `prepare` (every row is written).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SPLIT_KV = 256  # FlagGems' segment, in tokens
TRITON_DEFAULT = {"num_warps": 4, "num_stages": 3}


@dataclass(frozen=True)
class PagedMqaMetadataConfig:
    block_size: int | None = None  # None: FlagGems' next_power_of_2(max(16, batch))
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)


def prepare(
    cfg: PagedMqaMetadataConfig, context_lens: torch.Tensor, num_sms: int
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_paged_mqa_metadata")
    if context_lens.dim() != 1 or context_lens.dtype != torch.int32:
        raise ValueError("context_lens must be a 1-D int32 tensor")
    batch = context_lens.shape[0]
    block = cfg.block_size or triton.next_power_of_2(max(16, batch))
    if block < batch:
        raise ValueError(f"block_size {block} is below the batch's {batch} requests")
    warps = cfg.num_warps or TRITON_DEFAULT["num_warps"]
    stages = TRITON_DEFAULT["num_stages"]
    out = torch.zeros(num_sms + 1, 2, dtype=torch.int32, device=context_lens.device)
    grid = (num_sms + 1,)

    def launch() -> torch.Tensor:
        handle = mod._paged_mqa_logits_metadata_kernel[grid](
            context_lens, context_lens.stride(0), out, batch, SPLIT_KV, num_sms,
            BLOCK_SIZE=block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_paged_mqa_logits_metadata_kernel"],
            block_size=block, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
