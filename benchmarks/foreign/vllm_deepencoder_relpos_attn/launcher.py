"""vLLM's DeepEncoder relative-position attention (vllm/model_executor/models/deepencoder.py,
v0.34.0: `_deepencoder_rel_pos_attention_kernel`), launched as vLLM's
`deepencoder_rel_pos_attention` launches it, so that its launch choices are knobs.

A 2-D grid: one program per BLOCK_M query tokens of one image and head.  The program keeps
its query tile, then walks every key of the image in BLOCK_N steps: q k^T in a tl.dot tile,
plus the relative-position bias gathered from rel_h at each key's row and rel_w at its
column (two [BLOCK_M, BLOCK_N] gathers from the query's [grid_h] and [grid_w] rows), an
online base-2 softmax, and p v in a second tl.dot into an fp32 accumulator; the output tile
is divided by the row sums and stored.  Non-causal: every program walks all the keys.

vLLM's launch: BLOCK_M 64, BLOCK_N 64, BLOCK_D the head size, 4 warps and 2 stages, fixed
(no autotune, no device table).  Knobs: the query tile, the key step, the warps and the
stages, None keeping vLLM's; the head size is the tile's depth, no knob.  vLLM allocates the
output per call (`torch.empty_like(q)`); here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM = {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 2}


@dataclass(frozen=True)
class RelPosAttentionConfig:
    block_m: int | None = None  # None: vLLM's 64 query tokens per program
    block_n: int | None = None  # None: vLLM's 64 keys per loop step
    num_warps: int | None = None  # None: vLLM's 4
    num_stages: int | None = None  # None: vLLM's 2


def prepare(
    cfg: RelPosAttentionConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    rel_h: torch.Tensor, rel_w: torch.Tensor, width: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_deepencoder_relpos_attn")
    batch, heads, num_tokens, head_dim = q.shape
    scale = head_dim**-0.5  # RelPosAttention's self.scale
    block_m = cfg.block_m or VLLM["block_m"]
    block_n = cfg.block_n or VLLM["block_n"]
    warps = cfg.num_warps or VLLM["num_warps"]
    stages = cfg.num_stages or VLLM["num_stages"]
    out = torch.empty_like(q)
    grid = (triton.cdiv(num_tokens, block_m), batch * heads)

    def launch() -> torch.Tensor:
        # compiled Triton passes the scale as an fp32 scalar; so does the interpreter here
        with _common.interpreter_float_scalars():
            handle = mod._deepencoder_rel_pos_attention_kernel[grid](
                q, k, v, rel_h, rel_w, out, scale, *q.stride(), *k.stride(), *v.stride(),
                *rel_h.stride(), *rel_w.stride(), *out.stride(), num_tokens=num_tokens,
                num_heads=heads, key_width=width, BLOCK_M=block_m, BLOCK_N=block_n,
                BLOCK_D=head_dim, num_warps=warps, num_stages=stages,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["_deepencoder_rel_pos_attention_kernel"], block_m=block_m,
            block_n=block_n, num_warps=warps, num_stages=stages, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
