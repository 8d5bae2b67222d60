"""SGLang's lightning attention, the inter-block launches (python/sglang/srt/layers/attention/
linear/lightning_attn.py, v0.5.9: `_fwd_kv_parallel`, `_fwd_kv_reduce`,
`_fwd_none_diag_kernel`), launched as SGLang's `_attention.forward` launches them after the
diagonal-block kernel so that their launch choices are knobs.

Lightning attention (a linear attention with a per-head exponential decay) cuts a prompt
into 256-token blocks.  After the intra-block part, three launches add every earlier block:
one program per (batch x head, block) sums the block's decayed k^T v outer products in
CBLOCK-deep fp32 tl.dot steps into a d x e fp32 state; one program per batch x head walks
the blocks in order, storing in each block's slot the decayed running state before it and
updating the request's KV history in place; one program per (batch x head, CBLOCK queries)
multiplies its queries by its block's prefix state in one fp32 tl.dot, decays the rows and
adds them to the intra-block output in place.

SGLang's launch: BLOCK 256, CBLOCK 64 for both tl.dot launches, one feature block (the
whole d x e state per program), Triton's default 4 warps and 3 stages (SGLang passes
neither).  Knobs: the state launch's CBLOCK, the output launch's CBLOCK (SGLang ties them;
each kernel is correct with any divisor of the block), warps and stages of all three
launches, None keeping SGLang's.  BLOCK is no knob (it must agree with the diagonal
launch); the feature split is none either (the kernels' grids only cover one feature
block).  The keys' decay table and the fp32 block-state buffer (SGLang's torch.exp and
torch.empty per call) are made in `prepare`; the output and the KV history are updated in
place, as SGLang's forward does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK = 256
SGLANG_CBLOCK = 64
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class LightningInterConfig:
    cblock_kv: int | None = None  # None: SGLang's 64 (the block-state launch)
    cblock_out: int | None = None  # None: SGLang's 64 (the output launch)
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: LightningInterConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    s: torch.Tensor, kv_history: torch.Tensor, o: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_lightning_inter")
    b, h, n, d = q.shape
    e = v.shape[-1]
    if k.shape != q.shape or v.shape[:3] != (b, h, n) or s.numel() != h:
        raise ValueError("q, k [b, h, n, d], v [b, h, n, e] and one decay rate per head")
    if kv_history.shape != (b, h, d, e) or o.shape != v.shape:
        raise ValueError("kv_history must be [b, h, d, e] fp32 and o [b, h, n, e]")
    if not all(x.is_contiguous() for x in (q, k, v, s, kv_history, o)):
        raise ValueError("contiguous inputs, as SGLang's forward makes them")
    ck = cfg.cblock_kv or SGLANG_CBLOCK
    co = cfg.cblock_out or SGLANG_CBLOCK
    if SGLANG_BLOCK % ck or SGLANG_BLOCK % co:
        raise ValueError("the CBLOCKs must divide the 256-token block")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    block = SGLANG_BLOCK
    num_block = triton.cdiv(n, block)
    array = torch.arange(0, block, device=q.device) + 1
    k_decay = torch.exp(-s.view(1, h, 1, 1) * (block - array.reshape(1, -1)))
    kv = torch.empty((b, h, num_block, d, e), dtype=torch.float32, device=q.device)
    grids = ((b * h, num_block), (b * h, 1), (b * h, num_block * (block // co)))
    opts = {"num_warps": warps, "num_stages": stages}

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        h1 = mod._fwd_kv_parallel[grids[0]](
            k, v, k_decay, kv, b, h, n, d, e, BLOCK=block, NUM_BLOCK=num_block,
            D_FBLOCK=d, E_FBLOCK=e, NUM_FBLOCK=1, CBLOCK=ck, NUM_CBLOCK=block // ck, **opts,
        )  # fmt: skip
        mod._fwd_kv_reduce[grids[1]](
            s, kv, kv_history, b, h, n, d, e, BLOCK=block, NUM_BLOCK=num_block,
            D_FBLOCK=d, E_FBLOCK=e, **opts,
        )  # fmt: skip
        mod._fwd_none_diag_kernel[grids[2]](
            q, o, s, kv, b, h, n, d, e, BLOCK=block, NUM_BLOCK=num_block, E_FBLOCK=e,
            CBLOCK=co, NUM_CBLOCK=block // co, **opts,
        )  # fmt: skip
        _common.record(
            LAST_INFO, h1, kernels=3,
            kernel_names=["_fwd_kv_parallel", "_fwd_kv_reduce", "_fwd_none_diag_kernel"],
            cblock_kv=ck, cblock_out=co, num_warps=warps, num_stages=stages,
            programs=sum(g[0] * g[1] for g in grids),
        )  # fmt: skip
        return o, kv_history

    return launch
