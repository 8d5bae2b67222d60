"""FlagGems' scaled-dot-product attention forward with an additive mask
(src/flag_gems/ops/attention.py, v5.0.2: `_attn_fwd` and `_attn_fwd_inner`, from Triton
tutorial 06), launched as FlagGems' `scaled_dot_product_attention_forward` launches it for a
non-causal call with a float mask (STAGE 1, HAS_ATTN_MASK), so that its launch choices are
knobs.

Grid [cdiv(seq, BLOCK_M), batch * heads]: each program loads BLOCK_M query rows of one head
once, walks every key of its KV head (grouped-query: head // group) BLOCK_N at a time, one
[BLOCK_M, D] x [D, BLOCK_N] tl.dot, the mask tile loaded through the mask's four strides and
added after the base-2 scaling (so a finite bias is read as mask * ln 2: only padding values
such as the dtype's minimum mean what torch means), an online softmax in base 2, p cast to
the dtype times the V tile in a second tl.dot into fp32; the output in the dtype and each
row's base-2 log-sum-exp (M, fp32) stored.  PRE_LOAD_V loads V beside K before the scores.

FlagGems' launch: `@libtuner` over the tuning YAML's `attention` entry (BLOCK_M, BLOCK_N
32/64/128, PRE_LOAD_V, warps 4/8, stages 2/3/4, generated last value first and kept only
for (BLOCK_M, BLOCK_N, warps) (128, 32, 4) or (128, 128, 8)) plus 24 small-head configs
(BLOCK_N 16, 32), keyed on KV_CTX and the head dim.  Knobs: BLOCK_M, BLOCK_N, warps and
stages, None keeping the kept list's first (128, 128, 8, 4), or, where its 4 stages do not
fit in shared memory (a 128-wide head on Hopper needs 384 KiB), the next kept ones, 3 and
then 2 stages, as the tuner skips a configuration that fails to compile; PRE_LOAD_V stays
at that configuration's False (a load-order switch no catalog role names).  BLOCK_N may
not exceed the head dim (the kernel's static assert).  The output and M are made in
`prepare`, as FlagGems makes them per call.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the first configuration FlagGems' generator yields and `keep` keeps
YAML_FIRST = {"block_m": 128, "block_n": 128, "pre_load_v": False, "num_warps": 8, "num_stages": 4}


@dataclass(frozen=True)
class SdpaMaskedFwdConfig:
    block_m: int | None = None  # None: 128 query rows per program
    block_n: int | None = None  # None: 128 keys per step
    num_warps: int | None = None  # None: 8
    num_stages: int | None = None  # None: 4


def prepare(
    cfg: SdpaMaskedFwdConfig,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("flaggems_sdpa_masked_fwd")
    batch, heads, seq, dim = q.shape
    kv_heads = k.shape[1]
    if dim not in (16, 32, 64, 128, 256) or heads % kv_heads:
        raise ValueError("FlagGems asserts head dim 16 to 256 and whole query groups")
    if mask.shape != (batch, heads, seq, k.shape[2]):
        raise ValueError("the mask must be [batch, heads, q_len, kv_len] (a broadcast view)")
    bm = cfg.block_m or YAML_FIRST["block_m"]
    bn = cfg.block_n or YAML_FIRST["block_n"]
    pre = YAML_FIRST["pre_load_v"]
    warps = cfg.num_warps or YAML_FIRST["num_warps"]
    stages = cfg.num_stages or YAML_FIRST["num_stages"]
    if bn > dim:
        raise ValueError(f"block_n {bn} exceeds the head dim {dim} (the kernel's static assert)")
    sm_scale = 1.0 / math.sqrt(dim)
    o = torch.empty_like(q, dtype=v.dtype)
    m = torch.empty(batch, heads, seq, dtype=torch.float32, device=q.device)
    grid = ((seq + bm - 1) // bm, batch * heads, 1)

    from triton.runtime.errors import OutOfResources

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        nonlocal stages
        while True:
            try:
                handle = run(stages)
                break
            except OutOfResources:
                # FlagGems' tuner drops a configuration that does not fit and times the
                # next kept one: the same tiles with one stage fewer, down to 2.
                if cfg.num_stages is not None or stages <= 2:
                    raise
                stages -= 1
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_attn_fwd"], block_m=bm,
            block_n=bn, pre_load_v=pre, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return o, m

    def run(num_stages: int) -> Any:
        return mod._attn_fwd[grid](
            q, k, v, mask, sm_scale, m, o,
            q.stride(0), q.stride(1), q.stride(2), q.stride(3),
            k.stride(0), k.stride(1), k.stride(2), k.stride(3),
            v.stride(0), v.stride(1), v.stride(2), v.stride(3),
            mask.stride(0), mask.stride(1), mask.stride(2), mask.stride(3),
            o.stride(0), o.stride(1), o.stride(2), o.stride(3),
            batch, heads, kv_heads, heads // kv_heads, seq, k.shape[2], dim,
            BLOCK_M=bm, BLOCK_N=bn, STAGE=1, HAS_ATTN_MASK=True, PRE_LOAD_V=pre,
            num_warps=warps, num_stages=num_stages,
        )  # fmt: skip

    return launch
