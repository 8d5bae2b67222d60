"""vLLM's fused sigmoid-gating gated delta rule decode
(vllm/third_party/flash_linear_attention/ops/fused_sigmoid_gating.py, v0.34.0:
`fused_sigmoid_gating_delta_rule_update_kernel`), launched as vLLM's
`fused_sigmoid_gating_delta_rule_update` launches it for `QwenGatedDeltaNet`'s
non-speculative decodes (cu_seqlens, a state-slot index per sequence, the pool updated in
place, q/k L2 norm in the kernel), so that its launch choices are knobs.

The grid is (1, cdiv(dv, BV), seqs x vheads).  Each program loads its sequence's state
slot, returns on the null slot (<= 0), loads BV rows x all dk columns of the slot's
[dv, dk] state for its value head, then for each of the sequence's tokens (one here)
computes the gate g = -exp(A_log) softplus(a + dt_bias) and beta = sigmoid(b) from the
token's scalars, L2-normalizes q and k, decays the tile by exp(g), corrects v by the delta
rule, adds beta v' k^T, stores the tile back into the slot and writes o = h q.

vLLM's launch: BK = next_power_of_2(dk) (one key block: NK > 1 is refused), BV =
min(next_power_of_2(dv), 32), 4 warps and 3 stages, fixed in the wrapper.  The kernel's
@triton.heuristics flags (initial state, varlen, continuous batching, spec decoding) are
passed as the heuristics set them for this call.  Knobs: BV, the warps and the stages,
None keeping vLLM's.  vLLM's per-call output (`q.new_empty(NK, *v.shape)`) is made in
`prepare`.  The pool is updated in place: repeated timed calls keep decaying and adding to
the states.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_MAX_BV = 32
VLLM_WARPS = 4
VLLM_STAGES = 3


@dataclass(frozen=True)
class GdnGatedDecodeConfig:
    block_v: int | None = None  # None: vLLM's min(next_power_of_2(dv), 32)
    num_warps: int | None = None  # None: vLLM's 4
    num_stages: int | None = None  # None: vLLM's 3


def prepare(
    cfg: GdnGatedDecodeConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    a: torch.Tensor, b: torch.Tensor, A_log: torch.Tensor, dt_bias: torch.Tensor,
    state: torch.Tensor, slots: torch.Tensor, cu_seqlens: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("vllm_gdn_gated_decode")
    if q.dim() != 4 or q.shape[0] != 1 or k.shape != q.shape or v.dim() != 4:
        raise ValueError("q, k must be [1, tokens, heads, dk] and v [1, tokens, vheads, dv]")
    _, tokens, heads, dk = q.shape
    vheads, dv = v.shape[2], v.shape[3]
    seqs = cu_seqlens.numel() - 1
    if not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        raise ValueError("q, k and v must be contiguous (vLLM makes them so)")
    if not (a.is_contiguous() and b.is_contiguous() and state.is_contiguous()):
        raise ValueError("a, b and the pool must be contiguous")
    bk = triton.next_power_of_2(dk)
    bv = cfg.block_v or min(triton.next_power_of_2(dv), VLLM_MAX_BV)
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or VLLM_STAGES
    out = q.new_empty(1, *v.shape)
    grid = (1, triton.cdiv(dv, bv), seqs * vheads)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod.fused_sigmoid_gating_delta_rule_update_kernel[grid](
            A_log=A_log, a=a, b=b, dt_bias=dt_bias, beta=1.0, threshold=20.0, q=q, k=k,
            v=v, o=out, h0=state, ht=state, cu_seqlens=cu_seqlens, ssm_state_indices=slots,
            num_accepted_tokens=None, scale=dk**-0.5, N=seqs, T=tokens, B=1, H=heads,
            HV=vheads, K=dk, V=dv, BK=bk, BV=bv, stride_init_state_token=state.stride(0),
            stride_final_state_token=state.stride(0), stride_indices_seq=slots.stride(0),
            stride_indices_tok=1, USE_INITIAL_STATE=True, INPLACE_FINAL_STATE=True,
            USE_QK_L2NORM_IN_KERNEL=True, IS_VARLEN=True, IS_CONTINUOUS_BATCHING=True,
            IS_SPEC_DECODING=False, IS_KDA=False, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["fused_sigmoid_gating_delta_rule_update_kernel"], block_k=bk,
            block_v=bv, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out.squeeze(0), state

    return launch
