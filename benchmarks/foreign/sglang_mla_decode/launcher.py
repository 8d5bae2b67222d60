"""SGLang's Triton MLA decode kernels, launched by our copy of SGLang's small launcher.

SGLang's `decode_attention_fwd_grouped` (third_party/sglang/decode_attention.py, fetched
by scripts/fetch_third_party.py) runs two Triton kernels: `_fwd_grouped_kernel_stage1`
(per request, per group of BLOCK_H query heads, per KV split: partial attention over its
slice of the KV, BLOCK_N rows per step, written with its log-sum-exp) and
`_fwd_kernel_stage2` (per request and head: merge the splits).  Its launcher hard-codes
BLOCK_N=32, BLOCK_H=16, num_warps=4, num_stages=2 for stage 1 (on CUDA) and leaves the
split count to the caller (`max_kv_splits`, 8 by default in SGLang's server arguments).
`launch` below replicates that launcher line for line, with those five values taken from a
`SglangConfig` so that a version file can change them; stage 2 keeps SGLang's num_warps=4,
num_stages=2 (it reads `splits` partial rows per head and is not where the time goes).

What SGLang's attention backend does once per batch (page table `kv_indptr` /
`kv_indices`, the partial-output workspaces, the per-request split counts) happens in
`prepare`, outside the timed call, as it does in SGLang.  SGLang's page size is 1 and it
has no multi-position decode: speculative positions become `b*s` requests sharing their
sequence's token indices (each reads its sequence's KV again: that is SGLang's cost), and
every request gets `num_kv_splits` splits (SGLang can lower it per request; we pin it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

_common.ensure_repo_on_path()
from kernels.mla_decode.reference import D_QK, D_V, check_inputs  # noqa: E402

# What the last launch chose (spec.launch_info reads it; kbopt clears it before a measurement).
LAST_INFO: dict[str, Any] = {}
MIN_BLOCK_KV = 32  # SGLang's _MIN_BLOCK_KV: split lengths are rounded up to this


@dataclass(frozen=True)
class SglangConfig:
    """Stage 1's launch parameters (the spec's knobs for the triton family)."""

    block_n: int = 32  # KV rows per loop step
    block_h: int = 16  # query heads per program (of the kv_group_num sharing a KV head)
    num_kv_splits: int = 8  # KV splits per request (SGLang's max_kv_splits)
    num_stages: int = 2  # software pipelining depth of the KV loop
    num_warps: int = 4  # warps per program


def module() -> Any:
    return _common.load_source("sglang")


def page_table(
    cache_seqlens: torch.Tensor, s: int, t: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """SGLang's page-size-1 table for `b*s` requests: (kv_indptr [b*s+1], kv_indices)."""
    b = cache_seqlens.shape[0]
    req_lens = cache_seqlens.to(device=device, dtype=torch.int64).repeat_interleave(s)
    kv_indptr = torch.zeros(b * s + 1, dtype=torch.int32, device=device)
    kv_indptr[1:] = torch.cumsum(req_lens, 0).to(torch.int32)
    total = int(kv_indptr[-1])
    req_of_tok = torch.repeat_interleave(torch.arange(b * s, device=device), req_lens)
    pos = torch.arange(total, device=device) - kv_indptr[:-1].to(torch.int64)[req_of_tok]
    kv_indices = ((req_of_tok // s) * t + pos).to(torch.int32)
    return kv_indptr, kv_indices


def _buffers(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, splits: int
) -> dict[str, Any]:
    check_inputs(q, kv_cache, cache_seqlens)
    b, s, h, _ = q.shape
    t = kv_cache.shape[1]
    dev = q.device
    kv_indptr, kv_indices = page_table(cache_seqlens, s, t, dev)
    k_buffer = kv_cache.view(b * t, 1, D_QK)
    return {
        "b": b,
        "s": s,
        "h": h,
        "q": q.reshape(b * s, h, D_QK),
        "k": k_buffer,
        "v": k_buffer[..., :D_V],
        "o": torch.empty(b * s, h, D_V, dtype=q.dtype, device=dev),
        "kv_indptr": kv_indptr,
        "kv_indices": kv_indices,
        "logits": torch.empty(b * s, h, splits, D_V, dtype=torch.float32, device=dev),
        "lse": torch.empty(b * s, h, splits, dtype=torch.float32, device=dev),
        "splits": torch.full((b * s,), splits, dtype=torch.int32, device=dev),
    }


def prepare(
    cfg: SglangConfig,
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    cache_seqlens: torch.Tensor,
    sm_scale: float,
) -> Callable[[], torch.Tensor]:
    """Per-batch set-up (page table, workspaces); returns the two-kernel launch."""
    mod = module()
    buf = _buffers(q, kv_cache, cache_seqlens, cfg.num_kv_splits)
    qf, k, v, o = buf["q"], buf["k"], buf["v"], buf["o"]
    logits, lse = buf["logits"], buf["lse"]
    batch, head_num = qf.shape[0], qf.shape[1]
    kv_group_num = head_num // k.shape[1]
    lk, lv = k.shape[-1], v.shape[-1]
    # SGLang's launcher: the 576-wide MLA key splits into a 512 latent block and a 64 rope block
    if lk == 576:
        block_dmodel, block_dpe = 512, 64
    elif lk == 288:
        block_dmodel, block_dpe = 256, 32
    else:
        block_dmodel, block_dpe = triton.next_power_of_2(lk), 0
    block_dv = triton.next_power_of_2(lv)
    grid1 = (batch, triton.cdiv(head_num, min(cfg.block_h, kv_group_num)), cfg.num_kv_splits)
    grid2 = (batch, head_num)
    scale = float(sm_scale)
    b, s, h = buf["b"], buf["s"], buf["h"]

    def launch() -> torch.Tensor:
        handle = mod._fwd_grouped_kernel_stage1[grid1](
            qf,
            k,
            v,
            scale,
            buf["kv_indptr"],
            buf["kv_indices"],
            logits,
            lse,
            buf["splits"],
            qf.stride(0),
            qf.stride(1),
            k.stride(0),
            k.stride(1),
            v.stride(0),
            v.stride(1),
            logits.stride(0),
            logits.stride(1),
            logits.stride(2),
            kv_group_num=kv_group_num,
            q_head_num=head_num,
            BLOCK_DMODEL=block_dmodel,
            BLOCK_DPE=block_dpe,
            BLOCK_DV=block_dv,
            BLOCK_N=cfg.block_n,
            BLOCK_H=cfg.block_h,
            MIN_BLOCK_KV=MIN_BLOCK_KV,
            logit_cap=0.0,
            xai_temperature_len=-1,
            num_warps=cfg.num_warps,
            num_stages=cfg.num_stages,
            Lk=lk,
            Lv=lv,
        )
        mod._fwd_kernel_stage2[grid2](
            logits,
            lse,
            o,
            buf["kv_indptr"],
            buf["splits"],
            None,
            logits.stride(0),
            logits.stride(1),
            logits.stride(2),
            o.stride(0),
            o.stride(1),
            MAX_KV_SPLITS=cfg.num_kv_splits,
            MIN_BLOCK_KV=MIN_BLOCK_KV,
            BLOCK_DV=block_dv,
            Lv=lv,
            HAS_SINK=False,
            num_warps=4,
            num_stages=2,
        )
        _common.record(
            LAST_INFO,
            handle,
            splits=cfg.num_kv_splits,
            kernels=2,
            kernel_names=["_fwd_grouped_kernel_stage1", "_fwd_kernel_stage2"],
            metrics={"heads_per_program": min(cfg.block_h, kv_group_num)},
        )
        return o.view(b, s, h, D_V)

    return launch


def prepare_sglang_launcher(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> Callable[[], torch.Tensor]:
    """The baseline: SGLang's own `decode_attention_fwd_grouped`, 8 splits, same set-up."""
    mod = module()
    splits = SglangConfig().num_kv_splits
    buf = _buffers(q, kv_cache, cache_seqlens, splits)
    b, s, h = buf["b"], buf["s"], buf["h"]

    def launch() -> torch.Tensor:
        mod.decode_attention_fwd_grouped(
            buf["q"],
            buf["k"],
            buf["v"],
            buf["o"],
            buf["kv_indptr"],
            buf["kv_indices"],
            buf["logits"],
            buf["lse"],
            buf["splits"],
            splits,
            float(sm_scale),
            0.0,
        )
        return buf["o"].view(b, s, h, D_V)

    return launch


def sglang_launcher(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    return prepare_sglang_launcher(q, kv_cache, cache_seqlens, sm_scale)()
