"""FLA's L2 norm as vLLM v0.34.0 ships it (vllm/third_party/flash_linear_attention/ops/
l2norm.py: `l2norm_fwd_kernel2`), launched as vLLM's `l2norm_fwd` launches it by default
(USE_DEFAULT_FLA_NORM unset, so through `l2norm_fwd_block` and its warm-up dispatcher) so
that its launch choices are knobs.

Qwen3-Next's (and Qwen3.5's) gated-delta-net layers normalize q and k this way before every
chunked prefill (use_qk_l2norm_in_kernel): the [tokens, heads, head_dim] tensor is viewed as
[tokens * heads, head_dim] rows, and one program per MBLOCK rows loads an [MBLOCK, BD] tile
(BD the head size rounded up to a power of two), sums the squares per row in fp32, and
stores x * rsqrt(sum + eps) in the input's dtype.

vLLM's launch: 32 rows per program (_L2NORM_MBLOCK), BD = the head size's power of two (at
most 64 KB per row), Triton's default 4 warps and 3 stages (the dispatcher passes none).
Knobs: rows per program, warps and stages, None keeping vLLM's.  The output is allocated in
`prepare` (vLLM's torch.empty_like per call).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_MBLOCK = 32  # _L2NORM_MBLOCK
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3
EPS = 1e-6


@dataclass(frozen=True)
class L2NormConfig:
    mblock: int | None = None  # None: vLLM's 32
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(cfg: L2NormConfig, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_l2norm")
    dim = x.shape[-1]
    x2 = x.reshape(-1, dim)
    if x2.stride(-1) != 1 or x2.stride(0) != dim:
        raise ValueError("x must be contiguous in its last two axes")
    rows = x2.shape[0]
    bd = min(65536 // x.element_size(), triton.next_power_of_2(dim))
    if dim > bd:
        raise ValueError("a row wider than 64 KB is refused by vLLM's l2norm_fwd")
    mblock = cfg.mblock or VLLM_MBLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    y = torch.empty_like(x2)
    grid = (triton.cdiv(rows, mblock),)

    def launch() -> torch.Tensor:
        handle = mod.l2norm_fwd_kernel2[grid](
            x2, y, EPS, rows, N=dim, BD=bd, MBLOCK=mblock, num_warps=warps, num_stages=stages
        )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["l2norm_fwd_kernel2"], mblock=mblock,
            block_d=bd, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return y.view(x.shape)

    return launch
