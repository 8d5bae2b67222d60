"""vLLM's fused GDN prefill post-conv preparation
(vllm/third_party/flash_linear_attention/ops/fused_gdn_prefill_post_conv.py, v0.34.0:
`_fused_post_conv_kernel`), launched as vLLM's `fused_post_conv_prep` launches it for
`QwenGatedDeltaNetAttention`'s prefill (q/k L2 norm on, g itself rather than exp(g): the
Triton/FLA chunked prefill backend), so that its launch choices are knobs.

The grid is (cdiv(tokens, BLOCK_T), k_heads + v_heads).  A program of the first k_heads
loads BLOCK_T tokens x head_k of its key head's q and of its k from the causal conv1d's
[tokens, 2 k_heads head_k + v_heads head_v] output, L2-normalizes each row in fp32 and
stores both into the contiguous [tokens, k_heads, head_k] q and k.  A program of the last
v_heads copies its value head's BLOCK_T x head_v block into the contiguous [tokens,
v_heads, head_v] v and computes, per token, g = -exp(A_log) softplus(a + dt_bias) (linear
above 20) and beta = sigmoid(b) into the fp32 [tokens, v_heads] g and beta.  No loop: each
program is one masked 2-D load, a row reduction and a store.

vLLM's launch: BLOCK_T = 16 tokens, BK = next_power_of_2(head_k), BV =
next_power_of_2(head_v), 4 warps and 2 stages, fixed in `fused_post_conv_prep` (no
autotuner, heuristic or tuned table).  Knobs: BLOCK_T, the warps and the stages, None
keeping vLLM's (BK and BV cover a whole head and stay vLLM's).  vLLM's per-call outputs
(five `torch.empty`) are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_T = 16
VLLM_WARPS = 4
VLLM_STAGES = 2
L2NORM_EPS = 1e-6
SOFTPLUS_THRESHOLD = 20.0

Outputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class GdnPostConvConfig:
    block_t: int | None = None  # None: vLLM's 16 tokens per program
    num_warps: int | None = None  # None: vLLM's 4
    num_stages: int | None = None  # None: vLLM's 2


def prepare(
    cfg: GdnPostConvConfig, conv_out: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
    A_log: torch.Tensor, dt_bias: torch.Tensor, k_heads: int, head_k: int, head_v: int,
) -> Callable[[], Outputs]:  # fmt: skip
    mod = _common.load_source("vllm_gdn_post_conv")
    if conv_out.dim() != 2 or conv_out.stride(1) != 1:
        raise ValueError("conv_out must be [tokens, qkv_dim], contiguous in its last axis")
    tokens, qkv_dim = conv_out.shape
    v_heads = A_log.shape[0]
    if qkv_dim != 2 * k_heads * head_k + v_heads * head_v:
        raise ValueError("qkv_dim must be 2 k_heads head_k + v_heads head_v")
    if a.shape != (tokens, v_heads) or b.shape != (tokens, v_heads):
        raise ValueError("a and b must be [tokens, v_heads]")
    dtype, device = conv_out.dtype, conv_out.device
    q = torch.empty(tokens, k_heads, head_k, dtype=dtype, device=device)
    k = torch.empty(tokens, k_heads, head_k, dtype=dtype, device=device)
    v = torch.empty(tokens, v_heads, head_v, dtype=dtype, device=device)
    g = torch.empty(tokens, v_heads, dtype=torch.float32, device=device)
    beta = torch.empty(tokens, v_heads, dtype=torch.float32, device=device)
    block_t = cfg.block_t or VLLM_BLOCK_T
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or VLLM_STAGES
    bk, bv = triton.next_power_of_2(head_k), triton.next_power_of_2(head_v)
    grid = (triton.cdiv(tokens, block_t), k_heads + v_heads)

    def launch() -> Outputs:
        handle = mod._fused_post_conv_kernel[grid](
            mixed_qkv_ptr=conv_out, a_ptr=a, b_ptr=b, A_log_ptr=A_log, dt_bias_ptr=dt_bias,
            q_ptr=q, k_ptr=k, v_ptr=v, g_ptr=g, beta_ptr=beta,
            stride_x_tok=conv_out.stride(0), stride_a_tok=a.stride(0),
            stride_b_tok=b.stride(0), stride_q_tok=q.stride(0), stride_k_tok=k.stride(0),
            stride_v_tok=v.stride(0), L=tokens, H=k_heads, HV=v_heads, K=head_k, V=head_v,
            APPLY_L2NORM=True, L2NORM_EPS=L2NORM_EPS, OUTPUT_G_EXP=False,
            SOFTPLUS_THRESHOLD=SOFTPLUS_THRESHOLD, BLOCK_T=block_t, BK=bk, BV=bv,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fused_post_conv_kernel"],
            block_t=block_t, block_k=bk, block_v=bv, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return q, k, v, g, beta

    return launch
