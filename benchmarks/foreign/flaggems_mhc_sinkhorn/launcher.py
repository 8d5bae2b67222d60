"""FlagGems' mHC split + Sinkhorn for four streams (src/flag_gems/fused/mhc/
hc_split_sinkhorn.py, v5.0.2: `mhc_split_sinkhorn_kernel_hcmult_4`), launched as FlagGems'
`hc_split_sinkhorn` launches it, so that its launch choices are knobs.

One program per BLOCK_N tokens, one token per lane: each lane loads its token's 24 logits
(stride-24 loads) and the 24 biases, stores pre = sigmoid(m s0 + b) + 1e-6 and post =
2 sigmoid(m s1 + b), then keeps the token's 4 x 4 mixing matrix in 16 registers through a
row softmax, a column normalisation and SINKHORN_ITERS - 1 = 19 more row / column
normalisations (a loop of divisions, no tl.dot, no shared memory), and stores the 16
values.  Outputs fp32.

FlagGems' launch (by token count): up to 256 tokens 16 per program and 1 warp, up to 2048
32 and 1 warp, up to 16384 128 and 4 warps, beyond 256 and 8 warps; always 1 stage and 20
iterations.  Knobs: `block_n`, `num_warps`, `num_stages`, None keeping FlagGems' choice for
the trial's token count.  FlagGems' three output buffers (torch.empty per call) are made
in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
HC = 4
SINKHORN_ITERS = 20  # hc_split_sinkhorn's default
FLAGGEMS_STAGES = 1


def flaggems_block(num_tokens: int) -> tuple[int, int]:
    """(BLOCK_N, num_warps) as hc_split_sinkhorn picks them."""
    if num_tokens <= 256:
        return 16, 1
    if num_tokens <= 2048:
        return 32, 1
    if num_tokens <= 16384:
        return 128, 4
    return 256, 8


@dataclass(frozen=True)
class MhcSinkhornConfig:
    block_n: int | None = None  # None: FlagGems' by token count (16, 32, 128 or 256)
    num_warps: int | None = None  # None: FlagGems' by token count (1, 1, 4 or 8)
    num_stages: int | None = None  # None: FlagGems' 1


def prepare(
    cfg: MhcSinkhornConfig, mixes: torch.Tensor, hc_scale: torch.Tensor, hc_base: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("flaggems_mhc_sinkhorn")
    mix_hc = (2 + HC) * HC
    if mixes.dim() != 2 or mixes.shape[1] != mix_hc or hc_scale.shape != (3,):
        raise ValueError("mixes [tokens, 24], hc_scale [3], hc_base [24]")
    if hc_base.shape != (mix_hc,):
        raise ValueError("hc_base must be [24]")
    tokens = mixes.shape[0]
    fg_block, fg_warps = flaggems_block(tokens)
    block = int(cfg.block_n) if cfg.block_n is not None else fg_block
    warps = int(cfg.num_warps) if cfg.num_warps is not None else fg_warps
    stages = int(cfg.num_stages) if cfg.num_stages is not None else FLAGGEMS_STAGES
    dev = mixes.device
    pre = torch.empty(tokens, HC, dtype=torch.float32, device=dev)
    post = torch.empty(tokens, HC, dtype=torch.float32, device=dev)
    comb = torch.empty(tokens, HC * HC, dtype=torch.float32, device=dev)
    grid = ((tokens + block - 1) // block,)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = mod.mhc_split_sinkhorn_kernel_hcmult_4[grid](
            mixes, hc_scale, hc_base, pre, post, comb, tokens,
            BLOCK_N=block, SINKHORN_ITERS=SINKHORN_ITERS, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["mhc_split_sinkhorn_kernel_hcmult_4"],
            block_n=block, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return pre, post, comb.view(tokens, HC, HC)

    return launch
