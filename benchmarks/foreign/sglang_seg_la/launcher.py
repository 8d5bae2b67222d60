"""SGLang's segmented linear attention, prefill (python/sglang/srt/layers/attention/linear/
seg_la.py, v0.5.9, from Ant Group's flood: `seg_la_p_kernel`, then `seg_la_sum_kernel` or a
torch sum), launched as SGLang's `seg_la_fwd` launches it for an extend batch, so that its
launch choices are knobs.

The linear-attention layers of Ling/Ring linear models (`bailing_moe_linear`, whose default
`linear_backend` is seg_la) keep a head_dim x head_dim fp32 state per request and head in a
slot pool.  One program per (request, head, K_SPLIT x V_SPLIT tile of the state) loads its
tile of the request's state (when the request continues a chunked prefill: `s_scales`), then
walks the request's tokens in BLOCK-token steps, in order: per step, q scaled by its inverse
decays and k by its decays (exp of the head's slope times the distance to the block's end),
the causal intra-block (q k^T) v in two fp32 tl.dots, plus q times the carried state scaled
by the block's decay (a third), then the state decayed over the block plus k^T v (a fourth);
the output tile is stored per step and the state tile once at the end, in place in the pool.
The outputs of the head_dim / K_SPLIT tiles along K are partial sums, written to a
[head_dim / K_SPLIT, tokens, heads, head_dim] buffer in the inputs' dtype and summed by torch
below 2048 tokens, by `seg_la_sum_kernel` (one program per token, fp32, 2 warps, 3 stages)
from 2048 on.

SGLang's choices for a prefill (mean length above 1): K_SPLIT = 32, V_SPLIT = 32 for at
most 2 requests and 64 above, BLOCK = 32, 2 warps, 3 stages, EVEN (no masks) only for one
request whose length is a multiple of BLOCK.  Knobs: `k_split`, `v_split`, `block`,
`num_warps`, `num_stages`, None keeping SGLang's; the sum's choices are not knobs.  SGLang
allocates the partial buffer (and, from 2048 tokens, the output) per call; here they are
made in `prepare`, and the torch sum writes into a preallocated output (the same reduction
kernel as `tmp.sum(0)`).  The state pool is updated in place: repeated timed calls keep
evolving the continuing requests' states (decayed, bounded).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SUM_KERNEL_FROM = 2048  # seg_la_fwd: tmp.sum(0) below this many tokens, seg_la_sum_kernel from it
SUM_WARPS, SUM_STAGES = 2, 3


def merge_partials(
    mod: Any, tmp: torch.Tensor, out: torch.Tensor, use_sum_kernel: bool
) -> torch.Tensor:
    """The output from the K-split partials `tmp` ([k_blocks, tokens, heads, head_dim]) as
    seg_la_fwd forms it: the one partial itself, SGLang's sum kernel from SUM_KERNEL_FROM
    tokens, else a torch sum into `out` (for the prefill kernel and the MTP verify alike)."""
    k_blocks, length, heads, head_dim = tmp.shape
    if k_blocks == 1:
        return tmp[0]
    if use_sum_kernel:
        mod.seg_la_sum_kernel[(length,)](
            tmp, out, DIM=heads * head_dim, NUM_BLOCK=k_blocks, num_warps=SUM_WARPS,
            num_stages=SUM_STAGES,
        )  # fmt: skip
        return out
    return torch.sum(tmp, dim=0, out=out)


def sglang_splits(batch: int) -> tuple[int, int]:
    """SGLang's (K_SPLIT_DIM, V_SPLIT_DIM) for a batch of `batch` requests (seg_la_fwd's
    rule, for the prefill kernel and the MTP verify kernel alike)."""
    return 32, (32 if batch <= 2 else 64)


@dataclass(frozen=True)
class SegLaConfig:
    k_split: int | None = None  # None: SGLang's 32
    v_split: int | None = None  # None: SGLang's 32 for at most 2 requests, 64 above
    block: int | None = None  # None: SGLang's 32 tokens per step
    num_warps: int | None = None  # None: SGLang's 2
    num_stages: int | None = None  # None: SGLang's 3


def prepare(
    cfg: SegLaConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slopes: torch.Tensor, q_offsets: torch.Tensor, slots: torch.Tensor, has_state: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_seg_la")
    length, heads, head_dim = q.shape
    batch = slots.shape[0]
    if k.shape != q.shape or v.shape != q.shape:
        raise ValueError("q, k, v: [tokens, heads, head_dim] (seg_la has no GQA)")
    if state.shape[1:] != (heads, head_dim, head_dim) or state.dtype != torch.float32:
        raise ValueError("state: an fp32 pool [slots, heads, head_dim, head_dim]")
    if q_offsets.shape != (batch + 1,) or has_state.shape != (batch,) or slopes.shape[0] != heads:
        raise ValueError("q_offsets [batch + 1], slots and has_state [batch], slopes [heads]")
    if not all(t.is_contiguous() for t in (q, k, v, state)):
        raise ValueError("the kernel indexes q, k, v and the state pool as contiguous")
    k_default, v_default = sglang_splits(batch)
    k_split = cfg.k_split or k_default
    v_split = cfg.v_split or v_default
    block = cfg.block or 32
    warps = cfg.num_warps or 2
    stages = cfg.num_stages or 3
    if head_dim % k_split or head_dim % v_split:
        raise ValueError(f"k_split {k_split} and v_split {v_split} must divide {head_dim}")
    max_length = triton.cdiv(length, batch)  # seg_la_fwd's MAX_LENGTH
    if max_length <= 1:
        raise ValueError("a prefill batch: seg_la_fwd takes its decode kernel at one token each")
    even = max_length % block == 0 if batch == 1 else False
    q_lengths = q_offsets.diff()
    k_blocks = head_dim // k_split
    v_blocks = head_dim // v_split
    tmp = torch.empty(k_blocks, length, heads, head_dim, device=q.device, dtype=q.dtype)
    out = torch.empty(length, heads, head_dim, device=q.device, dtype=q.dtype)
    grid = (batch, heads, k_blocks * v_blocks)
    use_sum_kernel = k_blocks > 1 and length >= SUM_KERNEL_FROM
    names = ["seg_la_p_kernel"] + (["seg_la_sum_kernel"] if use_sum_kernel else [])

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod.seg_la_p_kernel[grid](
            q, k, v, state, tmp, head_dim**-0.5, q.stride(0), k.stride(0), v.stride(0),
            state.stride(0), tmp.stride(0), slots, q_offsets, q_lengths, has_state, slopes,
            HEAD_DIM=head_dim, K_SPLIT_DIM=k_split, V_SPLIT_DIM=v_split, BLOCK=block,
            EVEN=even, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        o = merge_partials(mod, tmp, out, use_sum_kernel)
        _common.record(
            LAST_INFO, handle, kernels=len(names), kernel_names=names, k_split=k_split,
            v_split=v_split, block=block, even=even, num_warps=warps, num_stages=stages,
            programs=batch * heads * k_blocks * v_blocks,
            torch_sum=k_blocks > 1 and not use_sum_kernel,
        )  # fmt: skip
        return o, state

    return launch
