"""SGLang's DP-attention token copy (python/sglang/srt/layers/dp_attention.py, v0.5.9:
`memcpy_triton_kernel`), launched as SGLang's `memcpy_triton` launches it for the gather of
a rank's rows into the global buffer (`offset_src` False), so that its launch choices are
knobs.

The grid covers the smaller of the two buffers (the local one) in BLOCK_SIZE-element
programs; each program reads the offset and the row count from the device, multiplies both
by the row size, and copies its elements of the local rows to the global buffer at the
offset, masked at the count.

SGLang's launch: 8192 elements per program with Triton's default 4 warps (no loop, so the
stages do not matter).  Knobs: the block and the warps, None keeping SGLang's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK = 8192  # memcpy_triton's BLOCK_SIZE
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class DpMemcpyConfig:
    block_size: int | None = None  # None: SGLang's 8192
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)


def prepare(
    cfg: DpMemcpyConfig, global_tokens: torch.Tensor, local_tokens: torch.Tensor,
    start: torch.Tensor, count: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_dp_memcpy")
    if not global_tokens.is_contiguous() or not local_tokens.is_contiguous():
        raise ValueError("both buffers must be contiguous (SGLang asserts it)")
    if global_tokens.shape[1:] != local_tokens.shape[1:]:
        raise ValueError("the buffers' rows must have the same shape")
    chunk = local_tokens[0].numel() if local_tokens.shape[0] else 0
    max_size = min(global_tokens.numel(), local_tokens.numel())
    block = cfg.block_size or SGLANG_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    grid = (triton.cdiv(max_size, block),)

    def launch() -> torch.Tensor:
        handle = mod.memcpy_triton_kernel[grid](
            global_tokens, local_tokens, start, count, False, chunk, block,
            num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["memcpy_triton_kernel"],
            block_size=block, num_warps=warps, programs=grid[0],
        )  # fmt: skip
        return global_tokens

    return launch
