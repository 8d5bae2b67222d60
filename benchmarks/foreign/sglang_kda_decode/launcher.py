"""SGLang's fused sigmoid-gating delta rule update in its Kimi Delta Attention mode
(python/sglang/srt/layers/attention/fla/fused_sigmoid_gating_recurrent.py, v0.5.9, from
flash-linear-attention: `fused_sigmoid_gating_delta_rule_update_kernel` with IS_KDA),
launched as SGLang's `fused_sigmoid_gating_delta_rule_update` launches it for
`KimiLinearAttnBackend.forward_decode` (is_kda=True, q/k L2 norm in the kernel, cu_seqlens,
a state slot per request, the pool updated in place), so that its launch choices are knobs.

The grid is (1, cdiv(dv, BV), rows x heads).  Each program loads its row's slot; a slot
>= 0 gives it the BK x BV tile of the slot's [dk, dv] fp32 state for its head (dk rows, BV
columns of dv, rows dv apart), a negative one (SGLang's pad slot -1) a zero tile.  Then,
for the row's one token: q, k (BK lanes), v (BV lanes), b, A_log, the head's BK-lane rows
of the gate projection a and of dt_bias; g = -exp(A_log) softplus(a + dt_bias), a vector
over the key channels (the scalar A_log times BK softpluses, each with its exp and log);
beta = sigmoid(b); q and k L2-normalised in fp32, q scaled by dk^-1/2; the tile decayed row
by row by exp(g), v corrected by the delta rule (a column sum over the dk rows), beta v'
k^T added, o = S^T q (a second column sum) stored in the dtype; after the loop the tile
is stored back to the slot (a padded row stores nothing, though its output is written).
Every BV slice of a head recomputes the same gate, norms and q/k loads.  No tensor cores.

SGLang's launch: BK = next_pow2(dk) (one key block: NK > 1 is asserted against), BV =
min(next_pow2(dv), 32), 1 warp and 3 stages, fixed in the wrapper (no heuristic, autotuner
or tuned table).  Knobs: `block_v` and `num_warps`, None keeping SGLang's.  BK is no knob
(one block must hold the key rows), nor are the stages: the kernel's sm_90 PTX is the same
at 1 to 4 (its token loop runs once a decode row), so SGLang's 3 are passed as they are.
The KDA path loads the gate row and dt_bias without a mask, over BK lanes, so dk must be a
power of two (Kimi-Linear's 128; SGLang does not check).  SGLang's @input_guard makes its
inputs contiguous; here they must be.  SGLang allocates the output per call
(`q.new_empty(NK, *v.shape)`); here it is made in `prepare`, outside the timed call.  The
pool is updated in place: repeated timed calls keep decaying and adding to the states.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_MAX_BV = 32  # fused_sigmoid_gating_delta_rule_update: min(next_pow2(V), 32)
SGLANG_WARPS = 1
SGLANG_STAGES = 3
SOFTPLUS_BETA = 1.0  # KimiLinearAttnBackend.forward_decode's softplus_beta
SOFTPLUS_THRESHOLD = 20.0  # and softplus_threshold


@dataclass(frozen=True)
class KdaDecodeConfig:
    block_v: int | None = None  # None: SGLang's min(next_pow2(dv), 32)
    num_warps: int | None = None  # None: SGLang's 1


def prepare(
    cfg: KdaDecodeConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, a: torch.Tensor,
    b: torch.Tensor, A_log: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor,
    slots: torch.Tensor, cu_seqlens: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_kda_decode")
    if q.dim() != 4 or q.shape[0] != 1 or k.shape != q.shape or v.dim() != 4:
        raise ValueError("q, k must be [1, rows, heads, dk] and v [1, rows, heads, dv]")
    _, rows, heads, dk = q.shape
    dv = v.shape[3]
    if v.shape[:3] != q.shape[:3]:
        raise ValueError("v: [1, rows, heads, dv], Kimi-Linear's v heads being its q/k heads")
    if a.shape != (rows, heads * dk) or b.shape != (1, rows, heads):
        raise ValueError("a: [rows, heads * dk] (the gate projection); b: [1, rows, heads]")
    if A_log.numel() != heads or dt_bias.numel() != heads * dk:
        raise ValueError("A_log: one value a head; dt_bias: one a head and key channel")
    if state.shape[1:] != (heads, dk, dv) or slots.shape != (rows,):
        raise ValueError("the pool: [slots, heads, dk, dv]; slots: one per row")
    if cu_seqlens.shape != (rows + 1,):
        raise ValueError("cu_seqlens: [rows + 1], one token a row (a decode step)")
    if dk & (dk - 1):
        raise ValueError("dk must be a power of two (the KDA path loads a and dt_bias unmasked)")
    tensors = (q, k, v, a, b, A_log, dt_bias, state)
    if not all(t.is_contiguous() for t in tensors):
        raise ValueError("the kernel indexes its inputs as contiguous (SGLang's input_guard)")
    bk = triton.next_power_of_2(dk)
    bv = cfg.block_v or min(triton.next_power_of_2(dv), SGLANG_MAX_BV)
    warps = cfg.num_warps or SGLANG_WARPS
    nv = triton.cdiv(dv, bv)
    out = q.new_empty(1, *v.shape)
    grid = (1, nv, rows * heads)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with _common.interpreter_float_scalars():
            handle = mod.fused_sigmoid_gating_delta_rule_update_kernel[grid](
                A_log=A_log, a=a, dt_bias=dt_bias, softplus_beta=SOFTPLUS_BETA,
                softplus_threshold=SOFTPLUS_THRESHOLD, q=q, k=k, v=v, b=b, o=out,
                h0_source=state, h0_indices=slots, cu_seqlens=cu_seqlens, scale=dk**-0.5,
                T=rows, B=1, H=heads, HV=heads, K=dk, V=dv, BK=bk, BV=bv,
                USE_INITIAL_STATE=True, USE_QK_L2NORM_IN_KERNEL=True, IS_VARLEN=True,
                IS_KDA=True, num_warps=warps, num_stages=SGLANG_STAGES,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["fused_sigmoid_gating_delta_rule_update_kernel"], block_k=bk,
            block_v=bv, num_warps=warps, num_stages=SGLANG_STAGES,
            programs=nv * rows * heads,
        )  # fmt: skip
        return out.squeeze(0), state

    return launch
