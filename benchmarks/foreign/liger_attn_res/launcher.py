"""Liger-Kernel's attention-residuals forward (liger_kernel.ops.attn_res, 0.8.5), launched by
our copy of Liger's `attn_res_forward` so that its launch choice is a knob.

One program per token holds a whole hidden row (BLOCK_D = next_pow2(hidden), masked).  In
a first pass over the N blocks (a loop unrolled MAX_BLOCKS = max(4, next_pow2(N)) times,
each step guarded by `i < N`) it loads the token's row of block i, takes its fp32 rstd,
forms the RMS-normed key and its dot with the pseudo-query, keeping the N scores in
registers; then a softmax over depth, the weights and rstd stored ([tokens, N], fp32), and
a second pass that loads every block's row again for the weighted sum.  Liger's choices:
num_warps 4, 8 from 2048 columns, 16 from 8192; eps 1e-6.  The knob is `num_warps`
(None: Liger's); the block must hold the row and the unrolled depth is set by N, so
neither is a knob.  Liger stacks the blocks and allocates the outputs on every call; here
V arrives stacked ([N, tokens, hidden], contiguous) and the outputs are allocated in
`prepare`.  Nothing is written into the inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
EPS = 1e-6  # liger's default


@dataclass(frozen=True)
class LigerAttnResConfig:
    num_warps: int | None = None  # None: liger's 4 / 8 (from 2048 columns) / 16 (from 8192)


def liger_warps(block_d: int) -> int:
    """The warps Liger's attn_res_forward picks for a row of block_d columns."""
    return 16 if block_d >= 8192 else 8 if block_d >= 2048 else 4


def prepare(
    cfg: LigerAttnResConfig, v: torch.Tensor, w_query: torch.Tensor, w_norm: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import attn_res as liger

    if v.dim() != 3:
        raise ValueError("v must be the stacked block outputs [blocks, tokens, hidden]")
    for name, t in (("v", v), ("w_query", w_query), ("w_norm", w_norm)):
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous (liger makes it so per call)")
    blocks, tokens, hidden = v.shape
    block_d = triton.next_power_of_2(hidden)
    max_blocks = liger._get_max_blocks(blocks)
    warps = cfg.num_warps or liger_warps(block_d)
    out = torch.empty(tokens, hidden, dtype=v.dtype, device=v.device)
    alpha = torch.empty(tokens, blocks, dtype=torch.float32, device=v.device)
    rstd = torch.empty(tokens, blocks, dtype=torch.float32, device=v.device)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = liger._attn_res_fwd_kernel[(tokens,)](
            v, w_query, w_norm, out, alpha, rstd, blocks, tokens, hidden, EPS,
            BLOCK_D=block_d, MAX_BLOCKS=max_blocks, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_attn_res_fwd_kernel"],
            block_d=block_d, max_blocks=max_blocks, num_warps=warps, programs=tokens,
        )  # fmt: skip
        return out, alpha, rstd

    return launch
