"""SGLang's gated delta rule recurrence (python/sglang/srt/layers/attention/fla/
fused_recurrent.py, v0.5.9, from flash-linear-attention), launched by our copy of SGLang's
`fused_recurrent_gated_delta_rule_fwd` so that its launch choices are knobs.

The linear-attention layers of Qwen3-Next keep a K x V state per value head.  One program
per (BV-wide slice of V, sequence x value head) holds its K x BV slice of the state in
registers and walks the sequence token by token: decay the state by exp(g), take the delta
rule's correction (v - S^T k) * beta, add k (x) it, and write the token's output S^T q (q and
k L2-normalised in the kernel, q scaled by K^-1/2); the final state is written in fp32.
SGLang's choices: BK = next_pow2(K) (one K block, asserted), BV = min(next_pow2(V), 32),
num_warps = 1, num_stages = 3, beta per head, initial state read, final state written.
Knobs: `block_v`, `num_warps`, `num_stages`, None keeping SGLang's.

SGLang allocates the output and final state per call; here they are allocated in `prepare`,
outside the timed call.  The kernel's `exp` is fla.op's, which is tl.exp unless
FLA_USE_FAST_OPS=1 (the fetch shims that import); under the CPU interpreter (tests only) that
module-level alias of a builtin cannot be called, so a @triton.jit wrapper of tl.exp stands in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from foreign import _common

LAST_INFO: dict[str, Any] = {}


@triton.jit
def _exp(x):  # type: ignore[no-untyped-def]
    return tl.exp(x)


@dataclass(frozen=True)
class GdnRecurrentConfig:
    block_v: int | None = None  # None: SGLang's min(next_pow2(V), 32)
    num_warps: int | None = None  # None: SGLang's 1
    num_stages: int | None = None  # None: SGLang's 3


def prepare(
    cfg: GdnRecurrentConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor,
    beta: torch.Tensor, h0: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_gdn_recurrent")
    batch, seq, heads, dk = k.shape
    hv, dv = v.shape[2], v.shape[3]
    if q.shape != k.shape or v.shape[:2] != (batch, seq) or hv % heads:
        raise ValueError("q, k: [batch, T, H, K]; v: [batch, T, HV, V] with HV a multiple of H")
    if g.shape != (batch, seq, hv) or beta.shape != g.shape or h0.shape != (batch, hv, dk, dv):
        raise ValueError("g, beta: [batch, T, HV]; initial state: [batch, HV, K, V]")
    if not all(t.is_contiguous() for t in (q, k, v, g, beta, h0)):
        raise ValueError("the kernel indexes its inputs as contiguous (SGLang's input_guard)")
    bk = triton.next_power_of_2(dk)
    bv = cfg.block_v or min(triton.next_power_of_2(dv), 32)
    warps = cfg.num_warps or 1
    stages = cfg.num_stages or 3
    nv = triton.cdiv(dv, bv)
    o = q.new_empty(1, batch, seq, hv, dv)
    final_state = q.new_empty(batch, hv, dk, dv, dtype=torch.float32)
    grid = (1, nv, batch * hv)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with _common.interpreter_float_scalars(), _common.interpreter_libdevice(mod, exp=_exp):
            handle = mod.fused_recurrent_gated_delta_rule_fwd_kernel[grid](
                q=q, k=k, v=v, g=g, beta=beta, o=o, h0=h0, ht=final_state, cu_seqlens=None,
                scale=dk**-0.5, T=seq, B=batch, H=heads, HV=hv, K=dk, V=dv, BK=bk, BV=bv,
                USE_INITIAL_STATE=True, STORE_FINAL_STATE=True, IS_BETA_HEADWISE=False,
                USE_QK_L2NORM_IN_KERNEL=True, IS_VARLEN=False, IS_KDA=False,
                num_warps=warps, num_stages=stages,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["fused_recurrent_gated_delta_rule_fwd_kernel"],
            block_v=bv, num_warps=warps, num_stages=stages, programs=nv * batch * hv,
        )  # fmt: skip
        return o.squeeze(0), final_state

    return launch
