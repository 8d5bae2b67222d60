"""Lightning attention's diagonal-block kernel (vllm/model_executor/layers/lightning_attn.py,
v0.34.0: `_fwd_diag_kernel`), launched as vLLM's lightning-attention forward launches it
first so that its launch choices are knobs.

MiniMax-Text-01 (and MiniMax-M1) run lightning attention, a linear attention with a
per-head exponential decay, in seven of every eight layers; on a prefill vLLM's forward
cuts the sequence into 256-token blocks and makes four launches: this one (the attention
inside each block), then the blocks' K^T V states, their running sum, and every block's
query against the state before it.  Here one program per (batch x head x block, CBLOCK
queries of the block) loads its CBLOCK x d queries in fp32 and walks the block's key
sub-blocks up to its own: per step, the decay mask exp(-s (i - j)) (causal), an fp32
tl.dot of the queries with the keys' transpose, the product with the values in another
fp32 tl.dot, accumulated into a CBLOCK x e fp32 tile, stored in the input's dtype.

vLLM's launch: BLOCK 256, CBLOCK 32 (8 query sub-blocks per block), Triton's default 4
warps and 3 stages.  Knobs: CBLOCK (a divisor of the block), warps and stages, None keeping
vLLM's.  BLOCK is no knob: it decides which keys are "diagonal" and must agree with the
later launches.  The output is allocated in `prepare` (vLLM's torch.empty per call).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 256
VLLM_CBLOCK = 32
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class LightningDiagConfig:
    cblock: int | None = None  # None: vLLM's 32
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: LightningDiagConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    s: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_lightning_attn_diag")
    b, h, n, d = q.shape
    e = v.shape[-1]
    if k.shape != q.shape or v.shape[:3] != (b, h, n) or s.numel() != h:
        raise ValueError("q, k [b, h, n, d], v [b, h, n, e] and one decay rate per head")
    cblock = cfg.cblock or VLLM_CBLOCK
    if VLLM_BLOCK % cblock:
        raise ValueError("cblock must divide the 256-token block")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    q, k, v, s = q.contiguous(), k.contiguous(), v.contiguous(), s.contiguous()
    o = torch.empty(b, h, n, e, dtype=q.dtype, device=q.device)
    num_block = triton.cdiv(n, VLLM_BLOCK)
    grid = (b * h * num_block, VLLM_BLOCK // cblock)

    def launch() -> torch.Tensor:
        handle = mod._fwd_diag_kernel[grid](
            q, k, v, o, s, b, h, n, d, e,
            BLOCK=VLLM_BLOCK, NUM_BLOCK=num_block, CBLOCK=cblock,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fwd_diag_kernel"], cblock=cblock,
            num_warps=warps, num_stages=stages, programs=grid[0] * grid[1],
        )  # fmt: skip
        return o

    return launch
