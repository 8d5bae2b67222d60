"""FlagGems' fused mHC pre step for four streams (src/flag_gems/fused/mhc/mhc_pre.py,
v5.0.2: `mhc_pre_fused_kernel_hc_mult_4`, whose body is `_mhc_pre_fused_kernel_hc_mult_4_impl`),
launched as FlagGems' `mhc_pre` launches it after its cuBLAS projection, so that its launch
choices are knobs.

One program per token: pass 1 walks the four streams BLOCK_H columns at a time for the sum
of squares (fp32), then the 24 logits are loaded, normalised by the RMS, scaled and biased
one by one in scalars; pre and post sigmoids; the 4 x 4 block through a row softmax and 20
Sinkhorn passes in 16 scalar registers; post and comb stored (fp32); pass 2 walks the four
streams again BLOCK_H at a time, sums pre_i times each, and stores the layer input in bf16.
No tl.dot; the streams are read twice (the second pass may hit L2: 57 KB per token at
width 7168).

FlagGems' launch: grid (tokens,), @triton.autotune over ten configurations (BLOCK_H 256,
512 or 1024; 4, 8 or 16 warps; 1 or 2 stages) keyed on width and a token-count bucket.
Knobs: `block_h`, `num_warps`, `num_stages`; None keeps the first configuration of that
list (256, 4 warps, 1 stage).  FlagGems' three output buffers (torch.empty per call) are
made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common
from foreign.flaggems_mhc_pre import reference as _ref

LAST_INFO: dict[str, Any] = {}
HC = 4
FIRST_CONFIG = (256, 4, 1)  # the first of the autotune list: BLOCK_H, warps, stages


def token_bucket(num_tokens: int) -> int:
    """mhc_pre's autotune-key bucket (passed to the kernel, unused in its body)."""
    for bucket, limit in enumerate((512, 1024, 2048, 4096), start=1):
        if num_tokens <= limit:
            return bucket
    return 5


@dataclass(frozen=True)
class MhcPreConfig:
    block_h: int | None = None  # None: the autotune list's first, 256
    num_warps: int | None = None  # None: its first, 4
    num_stages: int | None = None  # None: its first, 1


def prepare(
    cfg: MhcPreConfig,
    gemm_out: torch.Tensor,
    hc_scale: torch.Tensor,
    hc_base: torch.Tensor,
    residual: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("flaggems_mhc_pre")
    m = (2 + HC) * HC
    if residual.dim() != 3 or residual.shape[1] != HC or residual.dtype != torch.bfloat16:
        raise ValueError("residual must be [tokens, 4, hidden] bf16")
    tokens, _, hidden = residual.shape
    if gemm_out.shape != (tokens, m) or hc_scale.shape != (3,) or hc_base.shape != (m,):
        raise ValueError("gemm_out [tokens, 24], hc_scale [3], hc_base [24]")
    block = int(cfg.block_h) if cfg.block_h is not None else FIRST_CONFIG[0]
    warps = int(cfg.num_warps) if cfg.num_warps is not None else FIRST_CONFIG[1]
    stages = int(cfg.num_stages) if cfg.num_stages is not None else FIRST_CONFIG[2]
    residual = residual.contiguous()
    dev = residual.device
    post = torch.empty(tokens, HC, dtype=torch.float32, device=dev)
    comb = torch.empty(tokens, HC * HC, dtype=torch.float32, device=dev)
    layer_input = torch.empty(tokens, hidden, dtype=torch.bfloat16, device=dev)
    grid = (tokens,)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = mod.mhc_pre_fused_kernel_hc_mult_4[grid](
            gemm_out, hc_scale, hc_base, residual, post, comb, layer_input,
            tokens, token_bucket(tokens),
            residual.stride(0), residual.stride(1), residual.stride(2),
            layer_input.stride(0), layer_input.stride(1),
            hidden, HC * hidden,
            rms_eps=_ref.RMS_EPS, hc_pre_eps=_ref.PRE_EPS, hc_sinkhorn_eps=_ref.SINKHORN_EPS,
            hc_post_mult_value=_ref.POST_MULT, sinkhorn_repeat=_ref.SINKHORN_REPEAT,
            HC_MULT3=m, BLOCK_H=block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["mhc_pre_fused_kernel_hc_mult_4"],
            block_h=block, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return post, comb.view(tokens, HC, HC), layer_input

    return launch
