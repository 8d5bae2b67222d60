"""SGLang's segmented linear attention, MTP verify (python/sglang/srt/layers/attention/
linear/seg_la.py, v0.5.9, from Ant Group's flood: `seg_la_mtp_kernel`, then a torch sum or
`seg_la_sum_kernel`), launched as SGLang's `seg_la_fwd` launches it when the hybrid linear
backend verifies draft tokens (`temp_cache` given: speculative decoding with one draft per
step), so that its launch choices are knobs.

Each request brings `step` draft tokens.  One program per (request, head, K_SPLIT x V_SPLIT
tile of the head_dim x head_dim fp32 state) loads its tile of the request's state from the
pool (read only: the accepted prefix is committed later from the cache), then walks the
drafts in order: per token, the state decayed by exp(-slope) plus the rank-1 k^T v tile,
the output tile q S (q scaled by 1/sqrt(head_dim)) reduced over the K side without tensor
cores, and the whole state tile stored to the request's intermediate-state cache entry for
that step (so the verifier can keep the state after any accepted prefix).  The outputs of
the head_dim / K_SPLIT tiles along K are partial sums in the inputs' dtype, summed by torch
below 2048 tokens and by `seg_la_sum_kernel` from 2048.

SGLang's choices (the verify batch has more than one token per request, so seg_la_fwd's
prefill branch sets them): K_SPLIT = 32, V_SPLIT = 32 for at most 2 requests and 64 above,
2 warps, 3 stages.  Knobs: `k_split`, `v_split`, `num_warps`, `num_stages`, None keeping
SGLang's; the sum's choices are not knobs.  The partial buffer and the output are made in
`prepare` (SGLang allocates them per call); the cache is written in place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

# seg_la_fwd chooses the splits and the partials' sum the same way for the MTP kernel as
# for the prefill one.
from foreign.sglang_seg_la.launcher import SUM_KERNEL_FROM, merge_partials, sglang_splits

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class SegLaMtpConfig:
    k_split: int | None = None  # None: SGLang's 32
    v_split: int | None = None  # None: SGLang's 32 for at most 2 requests, 64 above
    num_warps: int | None = None  # None: SGLang's 2
    num_stages: int | None = None  # None: SGLang's 3


def prepare(
    cfg: SegLaMtpConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    state: torch.Tensor, caches: torch.Tensor, slopes: torch.Tensor, slots: torch.Tensor,
    cache_slots: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_seg_la_mtp")
    length, heads, head_dim = q.shape
    batch = slots.shape[0]
    if k.shape != q.shape or v.shape != q.shape:
        raise ValueError("q, k, v: [tokens, heads, head_dim] (seg_la has no GQA)")
    if length % batch:
        raise ValueError("every request brings the same number of draft tokens")
    step = length // batch
    if step < 2:
        raise ValueError("a verify batch: seg_la_fwd takes its decode kernel at one token each")
    if state.shape[1:] != (heads, head_dim, head_dim):
        raise ValueError("state: a pool [slots, heads, head_dim, head_dim]")
    if caches.shape[1:] != (step, heads, head_dim, head_dim):
        raise ValueError("caches: [entries, step, heads, head_dim, head_dim]")
    if cache_slots.shape != (batch,) or slopes.shape[0] != heads:
        raise ValueError("slots and cache_slots [batch], slopes [heads]")
    if not all(t.is_contiguous() for t in (q, k, v, state, caches)):
        raise ValueError("the kernel indexes q, k, v, the pool and the cache as contiguous")
    k_default, v_default = sglang_splits(batch)
    k_split = cfg.k_split or k_default
    v_split = cfg.v_split or v_default
    warps = cfg.num_warps or 2
    stages = cfg.num_stages or 3
    if head_dim % k_split or head_dim % v_split:
        raise ValueError(f"k_split {k_split} and v_split {v_split} must divide {head_dim}")
    k_blocks = head_dim // k_split
    v_blocks = head_dim // v_split
    tmp = torch.empty(k_blocks, length, heads, head_dim, device=q.device, dtype=q.dtype)
    out = torch.empty(length, heads, head_dim, device=q.device, dtype=q.dtype)
    grid = (batch, heads, k_blocks * v_blocks)
    use_sum_kernel = k_blocks > 1 and length >= SUM_KERNEL_FROM
    names = ["seg_la_mtp_kernel"] + (["seg_la_sum_kernel"] if use_sum_kernel else [])

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod.seg_la_mtp_kernel[grid](
            q, k, v, state, caches, tmp, head_dim**-0.5, q.stride(0), k.stride(0),
            v.stride(0), state.stride(0), caches.stride(0), tmp.stride(0), slots, cache_slots,
            slopes, step, HEAD_DIM=head_dim, K_SPLIT_DIM=k_split, V_SPLIT_DIM=v_split,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        o = merge_partials(mod, tmp, out, use_sum_kernel)
        _common.record(
            LAST_INFO, handle, kernels=len(names), kernel_names=names, k_split=k_split,
            v_split=v_split, num_warps=warps, num_stages=stages, step=step,
            programs=batch * heads * k_blocks * v_blocks,
            torch_sum=k_blocks > 1 and not use_sum_kernel,
        )  # fmt: skip
        return o, caches

    return launch
