"""Inkling's fused short convolution over its paged conv cache
(vllm/models/inkling/nvidia/ops/sconv.py, v0.34.0: `_fused_sconv_kernel`), launched as
vLLM's `fused_sconv` launches it for `InklingShortConv` (no activation, the residual added)
so that its launch choices are knobs.

Each Inkling layer keeps its four sconv streams (K, V, attention output, MLP output) in one
paged sliding-window cache [blocks, kv heads, block_size = conv width, head_size], a stream
owning columns [off_s, off_s + ws) of every head.  One program per BT tokens and BLOCK_C of
the heads x ws flat channels first stores its tokens' inputs at their slots, then sums the
width depthwise taps ending at each token's absolute position: a tap inside the step read
from x, an earlier one from the cache through the request's block table, fp32 sums, the
input added back.

vLLM's choice (fixed, no autotuning): BT = 8 tokens, BLOCK_C = the channels' power of two,
at most 256, 4 warps, Triton's default stages.  Knobs: `block_t`, `block_c`, `num_warps`,
`num_stages`, None keeping vLLM's.  The output is allocated in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_T = 8
VLLM_MAX_BLOCK_C = 256
VLLM_WARPS = 4


@dataclass(frozen=True)
class PagedSconvConfig:
    block_t: int | None = None  # None: vLLM's 8 tokens a program
    block_c: int | None = None  # None: vLLM's channel power of two, at most 256
    num_warps: int | None = None  # None: vLLM's 4
    num_stages: int | None = None  # None: Triton's default (vLLM passes none)


def prepare(
    cfg: PagedSconvConfig, x: torch.Tensor, weight: torch.Tensor, cache: torch.Tensor,
    positions: torch.Tensor, block_table: torch.Tensor, seq_idx: torch.Tensor,
    slot_mapping: torch.Tensor, query_start: torch.Tensor, off_s: int, ws: int, bs: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("vllm_paged_sconv")
    if not x.is_contiguous() or cache.stride(3) != 1:
        raise ValueError("x must be contiguous and the cache's head_size dimension dense")
    tokens, channels = x.shape
    heads = cache.shape[1]
    width = weight.shape[1]
    if channels != heads * ws or weight.shape[0] != channels:
        raise ValueError("x and weight must have heads x ws channels")
    block_t = cfg.block_t or VLLM_BLOCK_T
    block_c = cfg.block_c or min(triton.next_power_of_2(channels), VLLM_MAX_BLOCK_C)
    warps = cfg.num_warps or VLLM_WARPS
    extra = {} if cfg.num_stages is None else {"num_stages": cfg.num_stages}
    out = torch.empty_like(x)
    grid = (triton.cdiv(tokens, block_t), triton.cdiv(channels, block_c))

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod._fused_sconv_kernel[grid](
            x, cache, weight, out, positions, seq_idx, slot_mapping, block_table, query_start,
            tokens, x.stride(0), cache.stride(0), cache.stride(1), cache.stride(2),
            cache.stride(3), weight.stride(0), weight.stride(1), block_table.stride(0),
            block_table.shape[1], bs, W=width, USE_SILU=False, USE_RESIDUAL=True,
            OFF_S=off_s, WS=ws, H=heads, BT=block_t, BLOCK_C=block_c, num_warps=warps,
            **extra,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fused_sconv_kernel"],
            block_t=block_t, block_c=block_c, num_warps=warps, num_stages=cfg.num_stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out, cache

    return launch
