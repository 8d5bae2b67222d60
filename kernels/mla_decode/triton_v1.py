"""triton_v1: the naive Triton MLA decode — one program per query row, CUDA-core dot products.

Grid: one program per (batch, query position, head) row. Each program streams the whole KV
cache of its sequence in BLOCK_N-row tiles, computes the 576-wide scores with elementwise
multiply + ``tl.sum`` (no tensor cores) and keeps an online softmax in registers. Every KV
row is therefore read once per query row (``s*h`` times per sequence): the baseline the
ladder improves on. No split over the KV length.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from kernels.mla_decode.triton_common import D_QK, D_V, LOG2E, prepare

VERSION = "triton_v1"
DESCRIPTION = "naive: one program per query row, tl.sum dot products, online softmax"


@triton.jit
def _kernel(
    Q,  # [b, R, D_QK]  (R = s*h query rows per sequence)
    KV,  # [b, T, D_QK]
    Lens,  # [b] int32
    Out,  # [b, R, D_V]
    scale_log2,
    R,
    T,
    BLOCK_N: tl.constexpr,
    DL: tl.constexpr,  # 512 latent columns (also the V columns)
    DR: tl.constexpr,  # 64 rope columns
):
    row = tl.program_id(0)
    pid_b = tl.program_id(1).to(tl.int64)
    seqlen = tl.load(Lens + pid_b)
    offs_l = tl.arange(0, DL)
    offs_r = tl.arange(0, DR)
    q_row = Q + (pid_b * R + row) * (DL + DR)
    qn = tl.load(q_row + offs_l).to(tl.float32)
    qp = tl.load(q_row + DL + offs_r).to(tl.float32)
    kv_base = KV + pid_b * T * (DL + DR)

    m_i = float("-inf")
    l_i = 0.0
    acc = tl.zeros([DL], dtype=tl.float32)
    for n0 in range(0, seqlen, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        mask_n = offs_n < seqlen
        rows = kv_base + offs_n[:, None] * (DL + DR)
        kn = tl.load(rows + offs_l[None, :], mask=mask_n[:, None], other=0.0).to(tl.float32)
        kp = tl.load(rows + DL + offs_r[None, :], mask=mask_n[:, None], other=0.0).to(tl.float32)
        score = tl.sum(kn * qn[None, :], 1) + tl.sum(kp * qp[None, :], 1)
        score = tl.where(mask_n, score * scale_log2, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(score, 0))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(score - m_new)
        l_i = l_i * alpha + tl.sum(p, 0)
        acc = acc * alpha + tl.sum(p[:, None] * kn, 0)
        m_i = m_new
    out = acc / l_i
    tl.store(Out + (pid_b * R + row) * DL + offs_l, out.to(Out.dtype.element_ty))


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    b, s, h, t, lens = prepare(q, kv_cache, cache_seqlens)
    rows = s * h
    out = torch.empty(b, s, h, D_V, dtype=q.dtype, device=q.device)
    _kernel[(rows, b)](
        q,
        kv_cache,
        lens,
        out,
        float(sm_scale) * LOG2E,
        rows,
        t,
        BLOCK_N=32,
        DL=D_V,
        DR=D_QK - D_V,
        num_warps=4,
    )
    return out
