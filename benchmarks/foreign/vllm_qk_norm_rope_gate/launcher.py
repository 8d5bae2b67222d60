"""vLLM's fused QK RMSNorm + partial RoPE + gate copy for Qwen3-Next's and Qwen3.5's
attention (vllm/model_executor/layers/fused_qk_norm_rope.py, v0.34.0:
`_fused_qk_rmsnorm_rope_gate_kernel`), launched as vLLM's `fused_qk_rmsnorm_rope_gate`
launches it from `Qwen3NextAttention._project_qkv_gate` (Gemma-style weights, norm_beta
1.0; MRoPE with interleaved sections when the positions are [3, tokens]), so that its launch
choices are knobs.

The grid is (tokens, q_heads + kv_heads): one program per token and head.  A q head's
program reads its [q | gate] pair of head_dim each from the packed q_gate projection, a kv
head's program its k row.  It takes the row's mean square over head_dim in fp32, scales
by rsqrt and by (weight + 1) and rounds to the input dtype; the tail past rotary_dim is
stored as is; the first rotary_dim values are reloaded as two halves, normalized the same
way, rotated NeoX-style by cos and sin gathered from the [max_pos, rotary_dim] cos|sin cache
at the token's position (with MRoPE, per frequency the t, h or w position), and stored; a q
head's program then copies its gate row verbatim.  No loop: masked loads of a whole head.

vLLM's launch: HEAD_BLOCK = next_power_of_2(head_dim), ROT_HALF_BLOCK =
next_power_of_2(rotary_dim / 2), num_warps = max(1, HEAD_BLOCK / 64) and 2 stages, fixed
in the wrapper (no autotuner or table).  Knobs: the two blocks (at least vLLM's: a program
takes a whole head), the warps and the stages, None keeping vLLM's.  vLLM's per-call outputs
(three torch.empty) are made in `prepare`.  vLLM's wrapper takes fp16 and bf16 only and
rounds the normalized values through that dtype; an fp32 input (the CPU tests) rounds
through fp32 here.
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
VLLM_STAGES = 2
EPS = 1e-6  # Qwen3-Next's rms_norm_eps
NORM_BETA = 1.0  # Gemma-style (1 + weight), as Qwen3NextAttention passes it

Outputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor]
INPUT_DTYPES = {torch.bfloat16: tl.bfloat16, torch.float16: tl.float16, torch.float32: tl.float32}


@dataclass(frozen=True)
class QkNormRopeGateConfig:
    head_block: int | None = None  # None: vLLM's next_power_of_2(head_dim)
    rot_half_block: int | None = None  # None: vLLM's next_power_of_2(rotary_dim // 2)
    num_warps: int | None = None  # None: vLLM's max(1, head_block // 64)
    num_stages: int | None = None  # None: vLLM's 2


def prepare(
    cfg: QkNormRopeGateConfig, q_gate: torch.Tensor, k: torch.Tensor, q_weight: torch.Tensor,
    k_weight: torch.Tensor, cos_sin_cache: torch.Tensor, positions: torch.Tensor,
    q_heads: int, kv_heads: int, head_dim: int, rotary_dim: int,
    mrope_section: tuple[int, int, int] | None,
) -> Callable[[], Outputs]:  # fmt: skip
    mod = _common.load_source("vllm_qk_norm_rope_gate")
    if rotary_dim <= 0 or rotary_dim > head_dim or rotary_dim % 2:
        raise ValueError("rotary_dim must be a positive even integer <= head_dim")
    if q_gate.stride(-1) != 1 or k.stride(-1) != 1 or cos_sin_cache.stride(-1) != 1:
        raise ValueError("q_gate, k and the cache must be contiguous in their last axis")
    tokens = q_gate.shape[0]
    has_mrope = positions.dim() == 2
    if has_mrope:
        if mrope_section is None or sum(mrope_section) != rotary_dim // 2:
            raise ValueError("MRoPE needs sections summing to rotary_dim // 2")
        sec_h, sec_w = mrope_section[1], mrope_section[2]
        pos_stride_m, pos_stride_t = positions.stride()
    else:
        sec_h = sec_w = 0
        pos_stride_m, pos_stride_t = 0, positions.stride(0)
    dtype, device = q_gate.dtype, q_gate.device
    q_out = torch.empty(tokens, q_heads * head_dim, dtype=dtype, device=device)
    k_out = torch.empty(tokens, kv_heads * head_dim, dtype=dtype, device=device)
    gate_out = torch.empty_like(q_out)
    half = rotary_dim // 2
    head_block = cfg.head_block or triton.next_power_of_2(head_dim)
    rot_half_block = cfg.rot_half_block or triton.next_power_of_2(half)
    if head_block < head_dim or rot_half_block < half:
        raise ValueError("a program takes a whole head: the blocks must cover it")
    warps = cfg.num_warps or max(1, head_block // 64)
    stages = cfg.num_stages or VLLM_STAGES
    grid = (tokens, q_heads + kv_heads)

    def launch() -> Outputs:
        handle = mod._fused_qk_rmsnorm_rope_gate_kernel[grid](
            q_gate, k, q_out, k_out, gate_out, q_weight, k_weight, cos_sin_cache, positions,
            q_gate.stride(0), k.stride(0), q_out.stride(0), k_out.stride(0),
            gate_out.stride(0), cos_sin_cache.stride(0), pos_stride_m, pos_stride_t,
            q_heads, kv_heads, head_dim, rotary_dim, half, EPS, norm_beta=NORM_BETA,
            INPUT_DTYPE=INPUT_DTYPES[dtype], HEAD_BLOCK=head_block,
            ROT_HALF_BLOCK=rot_half_block, HAS_PASS=rotary_dim < head_dim,
            HAS_MROPE=has_mrope, MROPE_SECTION_H=sec_h, MROPE_SECTION_W=sec_w,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fused_qk_rmsnorm_rope_gate_kernel"],
            head_block=head_block, rot_half_block=rot_half_block, num_warps=warps,
            num_stages=stages, programs=grid[0] * grid[1],
        )  # fmt: skip
        return q_out, k_out, gate_out

    return launch
