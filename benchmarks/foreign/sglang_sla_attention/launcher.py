"""SGLang's sparse-linear attention, its sparse branch (python/sglang/multimodal_gen/runtime/
layers/attention/backends/sparse_linear_attn.py, v0.5.9: `_attn_fwd`, from the SLA and
TurboDiffusion authors), launched as SGLang's `_attention.forward` launches it, so that its
launch choices are knobs.

q, k and v are [1, heads, tokens, head_dim], contiguous.  SGLang's block map (mean-pooled
128-token query blocks against mean-pooled 64-token key blocks of the smoothed keys, then
torch.topk) gives every query block the indices of the key blocks it attends, a LUT
[1, heads, query blocks, topk] of int64.  One program per query block and head loads its
BLOCK_M queries once, then walks its LUT row: each step loads a BLOCK_N x head_dim key and
value block at the LUT's index (a data-dependent gather), QK^T in tl.dot, an online
softmax in fp32 (exp2, the scale folded with log2 e), P rounded to the input dtype and PV
in tl.dot.  It writes the normalized output and the log-sum-exp (base 2, fp32; the
backward's, not read here).

SGLang's launch: BLOCK_M = BLKQ = 128 and BLOCK_N = BLKK = 64 (its asserts: BLOCK_M 64 or
128, BLOCK_N 64; TurboDiffusion's defaults), 4 warps for a 64-wide head and 8 otherwise,
3 stages; no autotune.  Knobs: the query tile, the key tile, the warps and the stages.  The
block map's tiles are part of the computation (which keys a query attends), so a smaller
tile re-tiles the same map in `prepare`: a query tile of BLKQ / r repeats each LUT row r
times (one program per sub-block), a key tile of BLKK / s replaces each index i by the s
sub-blocks s i .. s i + s - 1 (s times the steps); sub-blocks past the sequence are masked
by the kernel's own tail test, and each row still starts with a block that holds keys.
Tiles larger than the map's are refused (they would change the attended set).  SGLang
allocates the output and the log-sum-exp per call; here they are made in `prepare`, with
the re-tiled LUT.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
BLKQ = 128  # SGLang's (and TurboDiffusion's) query block of the block map
BLKK = 64  # its key block
STAGES = 3  # SGLang's num_stages


@dataclass(frozen=True)
class SlaAttentionConfig:
    block_m: int | None = None  # None: SGLang's BLOCK_M, the block map's 128 queries
    block_n: int | None = None  # None: SGLang's BLOCK_N, the block map's 64 keys
    num_warps: int | None = None  # None: SGLang's 4 for a 64-wide head, 8 otherwise
    num_stages: int | None = None  # None: SGLang's 3


def prepare(
    cfg: SlaAttentionConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    lut: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_sla_attention")
    if not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        raise ValueError("q, k and v must be contiguous [batch, heads, tokens, head_dim]")
    b, h, length, d = q.shape
    m_blocks_map = triton.cdiv(length, BLKQ)
    if lut.shape[:3] != (b, h, m_blocks_map) or lut.dtype != torch.int64:
        raise ValueError("lut must be int64 [batch, heads, cdiv(tokens, 128), topk]")
    block_m = cfg.block_m or BLKQ
    block_n = cfg.block_n or BLKK
    if BLKQ % block_m or BLKK % block_n:
        raise ValueError(
            f"the query tile must divide {BLKQ} and the key tile {BLKK} (the block map's "
            f"tiles; a larger one would change the attended keys): got {block_m} x {block_n}"
        )
    warps = cfg.num_warps or (4 if d == 64 else 8)
    stages = cfg.num_stages or STAGES
    m_blocks = triton.cdiv(length, block_m)
    tiled = lut
    r, s = BLKQ // block_m, BLKK // block_n
    if r > 1:
        tiled = tiled.repeat_interleave(r, dim=2)[:, :, :m_blocks]
    if s > 1:
        sub = torch.arange(s, device=lut.device, dtype=torch.int64)
        tiled = (tiled[..., None] * s + sub).flatten(-2)
    tiled = tiled.contiguous()
    topk = tiled.shape[-1]
    qk_scale = d**-0.5  # SGLang's default softmax scale
    o_s = torch.empty_like(v)
    lse = torch.empty(q.shape[:-1], device=q.device, dtype=torch.float32)
    grid = (m_blocks, b * h)

    def launch() -> torch.Tensor:
        handle = mod._attn_fwd[grid](
            q, k, v, qk_scale, topk, tiled, lse, o_s, length, m_blocks, d, block_m,
            block_n, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_attn_fwd"], block_m=block_m,
            block_n=block_n, num_warps=warps, num_stages=stages, programs=grid[0] * grid[1],
            steps=topk,
        )  # fmt: skip
        return o_s

    return launch
