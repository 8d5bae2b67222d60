"""vLLM's bundled flash-attention rotary kernel (vllm/vllm_flash_attn/ops/triton/rotary.py,
v0.34.0: `rotary_kernel`), launched as its `apply_rotary` launches it for
`ApplyRotaryEmb.forward_cuda` (the vision towers' rotary, e.g. Qwen2.5-VL's ViT), so that
its launch choices are knobs.

The grid is (blocks of BLOCK_M tokens, heads, batch), batch being q and k stacked (the ViT
rotates both in one call).  Each program loads a [BLOCK_M, BLOCK_K / 2] tile of each half
of its head's rows (GPT-NeoX style: the first and second halves of the rotary dims), the
matching rows of the half-width cos and sin tables, rotates in fp32 and stores both halves.
There is no loop: BLOCK_K must cover the rotary dims, the lanes past them masked off.

vLLM's launch (non-interleaved, no offsets, not varlen, not in place): BLOCK_K = 32, 64, 128
or 256, the smallest covering rotary_dim; BLOCK_M = 8 tokens when rotary_dim <= 128, else 4;
num_warps = 2 when rotary_dim <= 64, else 4; Triton's default stages (there is no loop to
pipeline).  Knobs: the tokens per program, the column tile and the warps, None keeping
vLLM's.  The output (vLLM's per-call `torch.empty_like`) is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}


def vllm_block_k(rotary_dim: int) -> int:
    """`apply_rotary`'s column tile: the smallest of 32, 64, 128, 256 covering rotary_dim."""
    return (
        32
        if rotary_dim <= 32
        else (64 if rotary_dim <= 64 else (128 if rotary_dim <= 128 else 256))
    )


def vllm_block_m(rotary_dim: int) -> int:
    """`apply_rotary`'s tokens per program (not interleaved): 8 up to 128 rotary dims, else 4."""
    return 8 if rotary_dim <= 128 else 4


def vllm_warps(rotary_dim: int) -> int:
    return 2 if rotary_dim <= 64 else 4


@dataclass(frozen=True)
class VitRotaryConfig:
    block_m: int | None = None  # None: vLLM's 8 tokens (4 past 128 rotary dims)
    block_k: int | None = None  # None: vLLM's smallest of 32/64/128/256 covering rotary_dim
    num_warps: int | None = None  # None: vLLM's 2 up to 64 rotary dims, else 4


def prepare(
    cfg: VitRotaryConfig, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_vit_rotary")
    if x.dim() != 4:
        raise ValueError("x must be [batch, seqlen, heads, head_dim]")
    batch, seqlen, heads, head_dim = x.shape
    seqlen_ro, half = cos.shape
    rotary_dim = 2 * half
    if rotary_dim > head_dim or seqlen_ro < seqlen or cos.dtype != x.dtype:
        raise ValueError("cos/sin must be [>= seqlen, <= head_dim / 2] in x's dtype")
    cos, sin = cos.contiguous(), sin.contiguous()
    block_k = cfg.block_k or vllm_block_k(rotary_dim)
    if block_k < rotary_dim:
        raise ValueError(f"block_k {block_k} must cover rotary_dim {rotary_dim} (no loop)")
    block_m = cfg.block_m or vllm_block_m(rotary_dim)
    warps = cfg.num_warps or vllm_warps(rotary_dim)
    out = torch.empty_like(x)
    if rotary_dim < head_dim:
        out[..., rotary_dim:].copy_(x[..., rotary_dim:])
    grid = (triton.cdiv(seqlen, block_m), heads, batch)

    def launch() -> torch.Tensor:
        handle = mod.rotary_kernel[grid](
            out, x, cos, sin, None, 0, seqlen, rotary_dim, seqlen_ro,
            out.stride(0), out.stride(-3), out.stride(-2), out.stride(-1),
            x.stride(0), x.stride(-3), x.stride(-2), x.stride(-1),
            block_k, False, False, False, False, block_m,
            num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["rotary_kernel"], block_m=block_m,
            block_k=block_k, num_warps=warps, programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out

    return launch
