"""SGLang's gated delta rule verify kernel (python/sglang/srt/layers/attention/fla/
fused_recurrent.py, v0.5.9, adapted there from flash-linear-attention:
`fused_recurrent_gated_delta_rule_update_fwd_kernel`), launched by our copy of SGLang's
`fused_recurrent_gated_delta_rule_update_fwd` as the hybrid GDN backend calls it for a
target-verify pass (Qwen3-Next under MTP / EAGLE speculative decoding with one draft per
step), so that its launch choices are knobs.

Each request brings `step` draft tokens (cu_seqlens in steps of `step`).  One program per
(BV-wide slice of V, request x value head) loads its dk x BV slice of the request's fp32
state from the pool slot the request's index names (a negative index starts from zero),
then walks the drafts in order: q and k L2-normalised in fp32 and q scaled by dk^-1/2, the
state decayed by exp(g), the delta rule's correction u = beta (v - S^T k) and the rank-1
update S += k u^T, the output S^T q stored in the inputs' dtype, and the whole state slice
stored in fp32 to the request's intermediate-state cache entry for that step (so that the
verifier can keep the state after any accepted prefix).  The pool is only read
(disable_state_update): SGLang commits the accepted step's state from the cache afterwards.
No tensor cores: a multiply and a column reduction over the dk x BV tile per update.

SGLang's choices: BK = next_pow2(dk) (one K block, asserted), BV = min(next_pow2(dv), 8),
1 warp, 3 stages; beta per head (IS_BETA_HEADWISE False), the state read, q/k L2 norm in the
kernel, varlen, the cache written, no EAGLE tree (retrieve_parent_token is None at one draft
per step).  Knobs: `block_v`, `num_warps`, `num_stages`, None keeping SGLang's; BK is not a
knob (the kernel takes one K block).  SGLang allocates the output per call
(`q.new_empty(NK, *v.shape)`); here it is made in `prepare`, outside the timed call.  The
cache is written in place.  The kernel's `exp` is fla.op's, tl.exp with FLA_USE_FAST_OPS
unset, shimmed at fetch as a @triton.jit function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_MAX_BV = 8  # fused_recurrent_gated_delta_rule_update_fwd's min(next_pow2(V), 8)
SGLANG_WARPS = 1
SGLANG_STAGES = 3


@dataclass(frozen=True)
class GdnVerifyConfig:
    block_v: int | None = None  # None: SGLang's min(next_pow2(dv), 8)
    num_warps: int | None = None  # None: SGLang's 1
    num_stages: int | None = None  # None: SGLang's 3


def prepare(
    cfg: GdnVerifyConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor,
    beta: torch.Tensor, pool: torch.Tensor, slots: torch.Tensor, cache: torch.Tensor,
    entries: torch.Tensor, cu_seqlens: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_gdn_verify")
    if q.dim() != 4 or q.shape[0] != 1 or k.shape != q.shape or v.dim() != 4:
        raise ValueError("q, k must be [1, tokens, heads, dk] and v [1, tokens, vheads, dv]")
    _, tokens, heads, dk = q.shape
    vheads, dv = v.shape[2], v.shape[3]
    if v.shape[1] != tokens or vheads % heads:
        raise ValueError("v: [1, tokens, vheads, dv] with vheads a multiple of heads")
    reqs = slots.shape[0]
    if cu_seqlens.shape != (reqs + 1,) or entries.shape != (reqs,) or tokens % reqs:
        raise ValueError("cu_seqlens [reqs + 1], entries [reqs], the same drafts a request")
    step = tokens // reqs
    if g.shape != (1, tokens, vheads) or beta.shape != g.shape:
        raise ValueError("g and beta: [1, tokens, vheads] (beta per head)")
    if pool.shape[1:] != (vheads, dk, dv) or cache.shape[1:] != (step, vheads, dk, dv):
        raise ValueError("pool [slots, vheads, dk, dv]; cache [entries, step, vheads, dk, dv]")
    if not all(t.is_contiguous() for t in (q, k, v, g, beta, pool, cache)):
        raise ValueError("the kernel indexes its inputs as contiguous (SGLang's input_guard)")
    bk = triton.next_power_of_2(dk)
    bv = cfg.block_v or min(triton.next_power_of_2(dv), SGLANG_MAX_BV)
    warps = cfg.num_warps or SGLANG_WARPS
    stages = cfg.num_stages or SGLANG_STAGES
    nv = triton.cdiv(dv, bv)
    out = q.new_empty(1, *v.shape)
    grid = (1, nv, reqs * vheads)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with _common.interpreter_float_scalars():
            handle = mod.fused_recurrent_gated_delta_rule_update_fwd_kernel[grid](
                q=q, k=k, v=v, g=g, beta=beta, o=out, h0_source=pool, h0_indices=slots,
                cu_seqlens=cu_seqlens, scale=dk**-0.5, intermediate_states_buffer=cache,
                intermediate_state_indices=entries, cache_steps=step,
                retrieve_parent_token_ptr=None, stride_retrieve_parent_token_seq=0,
                stride_retrieve_parent_token_token=0, T=tokens,
                NP2_T=triton.next_power_of_2(tokens), B=1, H=heads, HV=vheads, K=dk, V=dv,
                BK=bk, BV=bv, USE_INITIAL_STATE=True, IS_BETA_HEADWISE=False,
                USE_QK_L2NORM_IN_KERNEL=True, IS_VARLEN=True, DISABLE_STATE_UPDATE=True,
                DISABLE_OUTPUT_CALCULATION=False, CACHE_INTERMEDIATE_STATES=True,
                HAS_EAGLE_TREE_CUSTOM_ATTN_MASK=False, num_warps=warps, num_stages=stages,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["fused_recurrent_gated_delta_rule_update_fwd_kernel"], block_k=bk,
            block_v=bv, num_warps=warps, num_stages=stages, step=step,
            programs=nv * reqs * vheads,
        )  # fmt: skip
        return out.squeeze(0), cache

    return launch
