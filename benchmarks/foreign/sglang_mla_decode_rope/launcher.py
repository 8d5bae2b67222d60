"""SGLang's rope-fused MLA decode stage 1 (python/sglang/srt/layers/attention/triton_ops/
rocm_mla_decode_rope.py, v0.5.9: `_fwd_grouped_kernel_stage1_rope`), launched as SGLang's
`_decode_grouped_att_m_fwd_rope` launches it so that its launch choices are knobs.

DeepSeek V2/V3 with SGLANG_ROCM_FUSED_DECODE_MLA=1 (`forward_absorb_fused_mla_rope_core`)
writes the step's latent and its unrotated rope part to the KV pool and calls this kernel
with use_rope on: one program per (request, group of BLOCK_H query heads, KV split) loads
the heads' absorbed q_nope and q_pe, rotates q_pe by the request's position (GPT-J pairs,
cos and sin from the cache), rotates the last token's rope part the same way, then walks
its split BLOCK_N tokens at a time: the latent rows and rope parts gathered through
kv_indices (the last token's rope part replaced by the rotated one), two tl.dots for the
scores (rope part, latent part), an online softmax and a third tl.dot of the probabilities
with the latent rows as values; it stores the split's normalised output and log-sum-exp
in fp32 (one [rank + 1] row per head and split) and, in the last split, the rotated rope
part.  SGLang's wrapper then calls decode_attention's split merge with an argument list
that 0.5.9's merge no longer takes (logits and log-sum-exps now apart); only stage 1 is
wrapped.

SGLang's choices: BLOCK_N 32, BLOCK_H 16, 4 warps, 2 stages on CUDA (1 stage and
waves_per_eu 1 on ROCm), BLOCK_C / BLOCK_R the next powers of two of rank and rope, the
split count the attention backend's num_kv_splits (a dim here: it shapes the output).
Knobs: BLOCK_N, BLOCK_H, warps, stages.  The output buffers, allocated per batch by the
model and the backend, are made in `prepare` (zeroed: a split left empty is not written).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_N = 32
SGLANG_BLOCK_H = 16
SGLANG_WARPS = 4
SGLANG_STAGES = 2  # CUDA; SGLang's ROCm launch takes 1


@dataclass(frozen=True)
class MlaDecodeRopeConfig:
    block_n: int = SGLANG_BLOCK_N  # tokens per loop step
    block_h: int = SGLANG_BLOCK_H  # query heads per program
    num_warps: int = SGLANG_WARPS
    num_stages: int = SGLANG_STAGES


def module() -> ModuleType:
    """The fetched kernel without its debug assert's branch, on the GPU and under the CPU
    interpreter alike: the branch tests `cur_batch == 0 and cur_head == 0` with `cur_head`
    a vector of 16 heads, which Triton 3.6 will not compile (an ambiguous truth value; found
    by scripts/triton_fit_check.py before the kernel ever ran on a GPU).  Without debugging
    `tl.device_assert` compiles to nothing, so the kernel is otherwise upstream's."""
    return _common.load_source_rewritten(
        "sglang_mla_decode_rope", _common.DropDeviceAssertBranches()
    )


def prepare(
    cfg: MlaDecodeRopeConfig, q: torch.Tensor, k_buffer: torch.Tensor, v_buffer: torch.Tensor,
    kv_indptr: torch.Tensor, kv_indices: torch.Tensor, cos_sin_cache: torch.Tensor,
    positions: torch.Tensor, sm_scale: float, splits: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = module()
    batch, head_num = kv_indptr.shape[0] - 1, q.shape[1]
    kv_lora_rank = v_buffer.shape[-1]
    qk_rope_head_dim = k_buffer.shape[-1] - kv_lora_rank
    rotary_dim = cos_sin_cache.shape[-1]
    kv_group_num = head_num // k_buffer.shape[1]
    block_c = triton.next_power_of_2(kv_lora_rank)
    block_r = triton.next_power_of_2(qk_rope_head_dim)
    att_out = torch.zeros(
        batch, head_num, splits, kv_lora_rank + 1, dtype=torch.float32, device=q.device
    )
    k_pe_out = torch.empty(batch, qk_rope_head_dim, dtype=q.dtype, device=q.device)
    grid = (batch, triton.cdiv(head_num, min(cfg.block_h, kv_group_num)), splits)
    scale = float(sm_scale)
    args = (
        q, k_buffer, v_buffer, cos_sin_cache, positions, scale, kv_indptr, kv_indices, att_out,
        k_pe_out, q.stride(0), q.stride(1), k_buffer.stride(0), v_buffer.stride(0),
        att_out.stride(0), att_out.stride(1), att_out.stride(2), k_pe_out.stride(0),
        cos_sin_cache.stride(0), positions.stride(0), rotary_dim, kv_lora_rank,
        qk_rope_head_dim,
    )  # fmt: skip

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod._fwd_grouped_kernel_stage1_rope[grid](
            *args, kv_group_num=kv_group_num, q_head_num=head_num, BLOCK_C=block_c,
            BLOCK_R=block_r, BLOCK_N=cfg.block_n, BLOCK_H=cfg.block_h, NUM_KV_SPLITS=splits,
            logit_cap=0.0, USE_ROPE=True, IS_NEOX_STYLE=False, num_warps=cfg.num_warps,
            num_stages=cfg.num_stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fwd_grouped_kernel_stage1_rope"],
            block_n=cfg.block_n, block_h=cfg.block_h, num_warps=cfg.num_warps,
            num_stages=cfg.num_stages, splits=splits, programs=grid[0] * grid[1] * grid[2],
            metrics={"heads_per_program": min(cfg.block_h, kv_group_num)},
        )  # fmt: skip
        return att_out, k_pe_out

    return launch
