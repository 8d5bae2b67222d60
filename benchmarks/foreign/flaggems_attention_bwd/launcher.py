"""FlagGems' causal scaled-dot-product attention backward (src/flag_gems/ops/attention.py,
v5.0.2: `_attn_bwd_preprocess` and `_attn_bwd`, from Triton tutorial 06), launched as
FlagGems' `scaled_dot_product_attention_backward` launches them, so that its launch
choices are knobs.

The timed call is FlagGems' backward less its allocations: k scaled by scale / ln 2 into
a copy (torch), the preprocess (one program per 256 query rows and head: delta = rowsum(o
* do) in fp32), then `_attn_bwd` on a [seq / BLOCK_N1, 1, batch * heads] grid: each program
keeps BLOCK_N1 rows of K and V and walks the query rows from its own down to the last in
tl.dot tiles (BLOCK_M1 / 2 rows on the diagonal block, under the causal mask, then BLOCK_M1)
recomputing P from M in base 2 and accumulating dV = P^T dO and dK = dS^T Q in fp32; then it
takes BLOCK_M2 query rows and walks the key blocks up to them (BLOCK_N2 / 2 on the
diagonal, then BLOCK_N2) accumulating dQ = dS K.  dK and dV are written per query head,
then summed over each KV head's query heads by torch (grouped-query attention).  The
kernel always applies the causal mask, whatever `is_causal` says.

FlagGems' launch: `@libtuner` over the tuning YAML's `attention_bwd` entry (three tile sets
x warps 4, 8 x stages 2, 3, 4, keyed on KV_CTX and the head dim), on a grid sized by the
largest BLOCK_N1 of the list (128); BLK_SLICE_FACTOR 2 and the preprocess's 256 rows fixed.
Knobs: BLOCK_M1, BLOCK_N1, BLOCK_N2, the warps and the stages, None keeping the list's first
value of each (32, 128, 32, 4, 2).  BLOCK_M2 follows BLOCK_N1: the dQ part starts its rows
at program * BLOCK_M2 and its diagonal at program * BLOCK_N1, so the two must be equal (the
YAML's two other tile sets, 64 x 128 with BLOCK_M2 64, leave half of dQ unwritten on
FlagGems' grid).  The launcher refuses tiles where BLOCK_N1 is not a multiple of BLOCK_M1
or BLOCK_N2 (the kernel's static asserts), halves under 16 (tl.dot), and a sequence that
BLOCK_N1 does not divide (the diagonal walk loads dO rows unmasked).  FlagGems' per-call
buffers (the scaled k, delta, dq and the per-query-head dk and dv) are made in `prepare`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the tuning YAML's first value of each list (metas[0], warps[0], stages[0])
YAML_FIRST = {"block_m1": 32, "block_n1": 128, "block_n2": 32, "num_warps": 4, "num_stages": 2}
PRE_BLOCK, BLK_SLICE_FACTOR = 256, 2
RCP_LN2 = 1.0 / math.log(2)


@dataclass(frozen=True)
class AttentionBwdConfig:
    block_m1: int | None = None  # None: 32 query rows per dK/dV step (16 on the diagonal)
    block_n1: int | None = None  # None: 128 key rows per program (and BLOCK_M2 query rows)
    block_n2: int | None = None  # None: 32 key rows per dQ step (16 on the diagonal)
    num_warps: int | None = None  # None: the YAML's first warps, 4
    num_stages: int | None = None  # None: the YAML's first stages, 2


def prepare(
    cfg: AttentionBwdConfig,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    do: torch.Tensor,
    m: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("flaggems_attention_bwd")
    if not all(x.is_contiguous() for x in (q, k, v, o, do, m)):
        raise ValueError("FlagGems asserts contiguous inputs")
    batch, heads, seq, dim = q.shape
    kv_heads, kv_seq = k.shape[1], k.shape[2]
    if dim not in (16, 32, 64, 128, 256) or kv_seq != seq or heads % kv_heads:
        raise ValueError("head dim 16 to 256, equal q and kv lengths, whole query groups")
    m1 = cfg.block_m1 or YAML_FIRST["block_m1"]
    n1 = cfg.block_n1 or YAML_FIRST["block_n1"]
    n2 = cfg.block_n2 or YAML_FIRST["block_n2"]
    m2 = n1
    warps = cfg.num_warps or YAML_FIRST["num_warps"]
    stages = cfg.num_stages or YAML_FIRST["num_stages"]
    if n1 % m1 or m2 % n2 or m1 // BLK_SLICE_FACTOR < 16 or n2 // BLK_SLICE_FACTOR < 16:
        raise ValueError(
            f"tiles m1={m1} n1={n1} n2={n2}: n1 must be a multiple of m1 and n2, halves >= 16"
        )
    if seq % n1:
        raise ValueError(f"block_n1 {n1} must divide the sequence {seq} (unmasked dO loads)")
    group = heads // kv_heads
    sm_scale = 1.0 / math.sqrt(dim)
    arg_k = torch.empty_like(k)
    delta = torch.empty_like(m)
    dq = torch.empty_like(q)
    dk = torch.empty(batch, heads, seq, dim, dtype=k.dtype, device=k.device)
    dv = torch.empty(batch, heads, seq, dim, dtype=v.dtype, device=v.device)
    pre_grid = (triton.cdiv(seq, PRE_BLOCK), batch * heads)
    grid = (triton.cdiv(seq, n1), 1, batch * heads)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        torch.mul(k, sm_scale * RCP_LN2, out=arg_k)
        mod._attn_bwd_preprocess[pre_grid](
            o, do, delta, batch, heads, seq, BLOCK_M=PRE_BLOCK, D_HEAD=dim
        )
        handle = mod._attn_bwd[grid](
            q, arg_k, v, sm_scale, do, dq, dk, dv, m, delta, q.stride(0), q.stride(1),
            q.stride(2), q.stride(3), k.stride(0), k.stride(1), heads, seq, seq, kv_heads,
            GROUP_HEAD=group, BLOCK_M1=m1, BLOCK_N1=n1, BLOCK_M2=m2, BLOCK_N2=n2,
            BLK_SLICE_FACTOR=BLK_SLICE_FACTOR, BLOCK_DMODEL=dim, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=["_attn_bwd_preprocess", "_attn_bwd"],
            block_m1=m1, block_n1=n1, block_m2=m2, block_n2=n2, num_warps=warps,
            num_stages=stages, programs=grid[0] * grid[2],
        )  # fmt: skip
        if group == 1:
            return dq, dk, dv
        dk_sum = dk.view(batch, kv_heads, group, seq, dim).sum(dim=2)
        dv_sum = dv.view(batch, kv_heads, group, seq, dim).sum(dim=2)
        return dq, dk_sum, dv_sum

    return launch
