"""SGLang's Kimi Delta Attention WY recompute (python/sglang/srt/layers/attention/fla/
kda.py, v0.5.9, adapted there from flash-linear-attention: `recompute_w_u_fwd_kernel`),
launched by our copy of SGLang's `recompute_w_u_fwd` (varlen, with the gate) so that its
launch choices are knobs.

The fourth kernel of Kimi Linear's chunked KDA prefill (`chunk_kda_fwd`, after the gate
cumsum, the intra-chunk matrices and their triangular inverse A): one program per (64-token
chunk, head) loads the chunk's beta and A's 64 x 64 block once, then walks the value
dimension in BV-wide tiles, u = A (v * beta) in one tl.dot per tile (input_precision
"ieee"), and the key dimension in BK-wide tiles: each tile of k scaled by beta and by
exp(g) element by element (fp32, the per-channel decay that sets KDA apart from the gated
delta rule's one decay per head) and cast back to k's dtype for w = A (k * beta * exp(g)),
and the same k tile decayed to the chunk's end, kg = k * exp(g_last - g) with g_last the
chunk's last gate row loaded per tile, stored for the state recurrence.  SGLang's
`recompute_w_u_fwd` fixes BK = BV = 64 and passes STORE_QG False, STORE_KG True (chunk_kda_
fwd hands it the gate); the kernel's @triton.autotune runs over 2, 4 or 8 warps and 2, 3
or 4 stages keyed on the shapes, so `triton_v1` takes the list's first configuration (2
warps, 2 stages), the autotune decorator dropped at fetch.  Knobs: `block_k`, `block_v`,
`num_warps`, `num_stages`, None keeping those.  The 64-token chunk (BT) is the
algorithm's, not a tile.

SGLang builds the (sequence, chunk) index pairs from cu_seqlens once per batch (fla.index's
`prepare_chunk_indices`) and allocates w, u and kg per call; here all four are made in
`prepare`, outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common
from foreign.sglang_gdn_cumsum.launcher import chunk_indices

LAST_INFO: dict[str, Any] = {}
SGLANG_BK = 64  # recompute_w_u_fwd's
SGLANG_BV = 64
SGLANG_WARPS = 2  # first of the autotune list's (2, 4, 8)
SGLANG_STAGES = 2  # first of (2, 3, 4)


@dataclass(frozen=True)
class KdaWyConfig:
    block_k: int | None = None  # None: SGLang's 64
    block_v: int | None = None  # None: SGLang's 64
    num_warps: int | None = None  # None: 2
    num_stages: int | None = None  # None: 2


def prepare(
    cfg: KdaWyConfig, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, g: torch.Tensor,
    A: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_kda_wy")
    if k.dim() != 4 or k.shape[0] != 1 or not k.is_contiguous():
        raise ValueError("k must be a contiguous [1, tokens, heads, dk] tensor (packed)")
    _, tokens, heads, dk = k.shape
    if v.dim() != 4 or v.shape[:3] != k.shape[:3] or not v.is_contiguous():
        raise ValueError("v must be a contiguous [1, tokens, heads, dv] tensor")
    dv = v.shape[3]
    if beta.shape != k.shape[:3] or not beta.is_contiguous():
        raise ValueError("beta must be a contiguous [1, tokens, heads] tensor")
    if g.shape != k.shape or g.dtype != torch.float32 or not g.is_contiguous():
        raise ValueError("g must be a contiguous fp32 tensor shaped like k")
    if A.shape != (1, tokens, heads, chunk) or not A.is_contiguous():
        raise ValueError("A must be a contiguous [1, tokens, heads, chunk] tensor")
    indices = chunk_indices(cu_seqlens, chunk)
    w = torch.empty_like(k)
    u = torch.empty_like(v)
    kg = torch.empty_like(k)
    bk = cfg.block_k or SGLANG_BK
    bv = cfg.block_v or SGLANG_BV
    warps = cfg.num_warps or SGLANG_WARPS
    stages = cfg.num_stages or SGLANG_STAGES
    grid = (indices.shape[0], heads)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = mod.recompute_w_u_fwd_kernel[grid](
            q=None, k=k, qg=None, kg=kg, v=v, beta=beta, w=w, u=u, A=A, gk=g,
            cu_seqlens=cu_seqlens, chunk_indices=indices, T=tokens, H=heads, K=dk, V=dv,
            BT=chunk, BK=bk, BV=bv, STORE_QG=False, STORE_KG=True, IS_VARLEN=True,
            DOT_PRECISION="ieee", num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["recompute_w_u_fwd_kernel"],
            chunk=chunk, block_k=bk, block_v=bv, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return w, u, kg

    return launch
