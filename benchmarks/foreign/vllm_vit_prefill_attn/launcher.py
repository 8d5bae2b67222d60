"""vLLM's Triton prefill attention as its vision encoders run it
(vllm/v1/attention/ops/triton_prefill_attention.py, v0.34.0: `_fwd_kernel`, adapted there
from SGLang's, itself from LightLLM's, with sliding windows, sinks and a split head dim
added), launched as vLLM's `context_attention_fwd` launches it for `triton_attn_wrapper`
(the TRITON_ATTN backend of the multimodal encoder attention) on Hopper, so that its launch
choices are knobs.

A flash-attention forward over packed variable-length sequences ([total tokens, heads,
head_dim], each sequence's start and length given): the grid is (sequences, query heads,
query tiles of the longest sequence); a program loads BLOCK_M query rows once, walks all the
KV of its sequence in BLOCK_N-row steps (non-causal: the encoder's patches attend to the
whole image, no window, no sinks), computing QK^T and PV with tl.dot around an online
softmax in fp32 (exp2, the scale times 1/ln 2), and writes its rows; a program whose tile
starts past its sequence's end walks nothing and stores nothing.  The head dim is padded to
the next power of two and masked (80 -> 128 for Qwen2.5-VL, 72 -> 128 for Qwen3-VL; the
64 + 16 split is taken on gfx1151 only).

vLLM's choices on a CUDA device of compute capability 8.0 or above: BLOCK_M = BLOCK_N = 128
for 16-bit inputs (32 for fp32, 64 below 8.0 and under the CPU interpreter, where vLLM's
platform is not CUDA; at most 32 from a 512-wide head), halved while
element_size x block x (2 x padded head_dim + block) exceeds the device's opt-in shared
memory per block (never at these heads: 96 KiB at 128 x 128); num_warps 4 up to a 64-wide
head and 8 above; num_stages 1.  No autotune or table.  Knobs: `block_m`, `block_n`,
`num_warps`, `num_stages`, None keeping vLLM's.  The sequence starts and lengths
(cu_seqlens' differences in the wrapper) and the output (torch.empty_like in the wrapper)
are made in `prepare`; the launch record carries `live_program_fraction`, the share of the
grid's programs whose tile starts inside its sequence, and `heads_per_program`, 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SOURCE = "vllm_vit_prefill_attn"
RCP_LN2 = 1.0 / math.log(2)  # vllm.utils.math_utils.RCP_LN2


@dataclass(frozen=True)
class VitPrefillConfig:
    block_m: int | None = None  # None: vLLM's 128 (16-bit, capability >= 8.0), fitted
    block_n: int | None = None  # None: vLLM's, equal to block_m
    num_warps: int | None = None  # None: vLLM's 4 for head_dim <= 64, else 8
    num_stages: int | None = None  # None: vLLM's 1


def vllm_block(q: torch.Tensor, head_dim: int) -> int:
    """vLLM's tile (get_block_size, the 512-wide cap, _fit_block_to_shared_memory)."""
    cuda = q.device.type == "cuda"
    if q.dtype == torch.float32:
        block = 32
    elif cuda and torch.cuda.get_device_capability(q.device) >= (8, 0):
        block = 128
    else:
        block = 64
    if head_dim >= 512:
        block = min(block, 32)
    if cuda:
        props = torch.cuda.get_device_properties(q.device)
        smem = getattr(props, "shared_memory_per_block_optin", 0) or 232448
        padded = triton.next_power_of_2(head_dim)
        while block > 16 and q.element_size() * block * (2 * padded + block) > smem:
            block //= 2
    return block


def prepare(
    cfg: VitPrefillConfig,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    start_loc: torch.Tensor,
    seq_len: torch.Tensor,
    max_len: int,
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source(SOURCE)
    if q.dim() != 3 or k.shape != v.shape or k.dim() != 3:
        raise ValueError("q [tokens, q heads, head_dim], k and v [tokens, kv heads, head_dim]")
    if q.shape[1] % k.shape[1]:
        raise ValueError("query heads must be a multiple of KV heads")
    head_dim = k.shape[-1]
    block = vllm_block(q, head_dim)
    block_m = cfg.block_m or block
    block_n = cfg.block_n or block_m
    warps = cfg.num_warps or (4 if head_dim <= 64 else 8)
    stages = cfg.num_stages or 1
    batch, heads = seq_len.shape[0], q.shape[1]
    group = heads // k.shape[1]
    sm_scale = RCP_LN2 / (q.shape[-1] ** 0.5)
    out = torch.empty_like(q)
    grid = (batch, heads, triton.cdiv(max_len, block_m))
    programs = grid[0] * grid[1] * grid[2]
    live = heads * sum(triton.cdiv(n, block_m) for n in seq_len.tolist())

    def launch() -> torch.Tensor:
        handle = mod._fwd_kernel[grid](
            q, k, v, q, sm_scale, start_loc, seq_len, out,
            q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
            out.stride(0), out.stride(1), kv_group_num=group, BLOCK_M=block_m,
            BLOCK_DMODEL=triton.next_power_of_2(head_dim), BLOCK_DMODEL_TAIL=0,
            BLOCK_N=block_n, IS_CAUSAL=False, SLIDING_WINDOW_Q=0, SLIDING_WINDOW_K=0,
            USE_SINKS=False, SINKS_BIAS_KEY0=False, num_warps=warps, num_stages=stages,
            Lk=head_dim, HEAD_STRIDE_ALIGNED_8=False,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fwd_kernel"], block_m=block_m,
            block_n=block_n, num_warps=warps, num_stages=stages, programs=programs,
            metrics={"live_program_fraction": live / programs, "heads_per_program": 1},
        )  # fmt: skip
        return out

    return launch
