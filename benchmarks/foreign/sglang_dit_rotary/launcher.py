"""SGLang's diffusion rotary kernel (python/sglang/jit_kernel/diffusion/triton/rotary.py,
v0.5.9: `_rotary_embedding_kernel`), launched as its `apply_rotary_embedding` launches it for
the diffusion runtime's `_apply_rotary_emb` with a GPT-J-style (interleaved) rope, e.g. Wan
2.1's and HunyuanVideo's DiT self-attention, so that its launch choices are knobs.

The grid is one program per (token, head) row of x viewed as [tokens * heads, head_dim].
Each program walks the row's head_dim / 2 rotary pairs BLOCK_HS_HALF at a time: it loads
the pairs' even and odd values (two stride-2 loads) and the token's half-width cos and sin
rows, rotates in fp32 with two fma and stores both back at stride 2.

SGLang's launch: `@triton.autotune` over BLOCK_HS_HALF / num_warps of 32 / 2, 64 / 4,
128 / 4, 256 / 8 keyed on head_size, Triton's default 3 stages.  The autotuner is left out
(one config a version); None keeps the config whose tile covers head_dim / 2 exactly in one
pass (64 / 4 for a head of 128), the one a tuned run lands on for these heads.  Knobs: the
pair tile, the warps and the stages.  The output (SGLang's per-call `torch.empty_like`) is
made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}

# SGLang's autotune configs: (BLOCK_HS_HALF, num_warps)
SGLANG_CONFIGS = ((32, 2), (64, 4), (128, 4), (256, 8))


def sglang_config(head_dim: int) -> tuple[int, int]:
    """The autotune config whose pair tile covers head_dim / 2 in one pass (the largest
    config when none does)."""
    for block, warps in SGLANG_CONFIGS:
        if block >= head_dim // 2:
            return block, warps
    return SGLANG_CONFIGS[-1]


@dataclass(frozen=True)
class DitRotaryConfig:
    block_hs_half: int | None = None  # None: the SGLang config covering head_dim / 2
    num_warps: int | None = None  # None: that config's warps
    num_stages: int | None = None  # None: Triton's default (3), as the autotune configs leave it


def prepare(
    cfg: DitRotaryConfig, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_dit_rotary")
    if x.dim() != 3:
        raise ValueError("x must be [tokens, heads, head_dim]")
    tokens, heads, head_dim = x.shape
    if head_dim % 2 or cos.shape != (tokens, head_dim // 2) or sin.shape != cos.shape:
        raise ValueError("cos/sin must be [tokens, head_dim / 2]")
    cos, sin = cos.contiguous(), sin.contiguous()
    block, warps = sglang_config(head_dim)
    block = cfg.block_hs_half or block
    warps = cfg.num_warps or warps
    stages = cfg.num_stages or 3
    x_rows = x.reshape(-1, head_dim)
    out = torch.empty_like(x)
    out_rows = out.view(-1, head_dim)
    grid = (tokens * heads,)

    def launch() -> torch.Tensor:
        handle = mod._rotary_embedding_kernel[grid](
            out_rows, x_rows, cos, sin, heads, head_dim, tokens,
            x_rows.stride(0), cos.stride(0), sin.stride(0), True,
            BLOCK_HS_HALF=block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_rotary_embedding_kernel"],
            block_hs_half=block, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
