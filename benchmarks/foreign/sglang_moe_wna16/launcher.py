"""SGLang's weight-only int4 MoE GEMM (python/sglang/srt/layers/moe/fused_moe_triton/
fused_moe_triton_kernels.py, v0.5.9, adapted there from vLLM), launched by our copy of
SGLang's `invoke_fused_moe_kernel` on its moe_wna16 branch (use_int4_w4a16 with
block_shape [0, group]: AWQ and GPTQ MoE checkpoints without Marlin, e.g. an AWQ DeepSeek-R1
or Qwen3-30B-A3B served with `--quantization moe_wna16`; here AWQ's zero points) for the
first of the layer's two GEMMs, hidden -> gate and up, so that its launch choices are knobs.

The token-expert assignments are sorted by expert and each expert's run padded to a multiple
of BLOCK_SIZE_M (`moe_align_block_size`, done in torch in `prepare`, outside the timed call,
by `sglang_fused_moe`'s `align_block_size`).  One program per (BLOCK_SIZE_M sorted
assignments, BLOCK_SIZE_N output columns), ordered in GROUP_SIZE_M groups of row blocks,
gathers its tokens' rows and walks the hidden size in BLOCK_SIZE_K steps: per step it loads
BLOCK_SIZE_K / 2 bytes of each of its columns' packed weights, splits the nibbles by shift
and mask, loads the group's scale and packed zero point per element, dequantizes in fp32,
casts to the compute type and feeds one tl.dot; programs past the padded total exit.

SGLang's choice: it ships no int4_w4a16 tuned table, so `get_default_config`'s: 64 x 64 x 32
tiles and GROUP_SIZE_M 8 above E tokens, 16 x 32 x 64 and 1 at E tokens or fewer; no
num_warps or num_stages, so Triton's 4 and 3.  Knobs: the three tiles, the grouping, warps
and stages, None keeping SGLang's.  SGLang's compute type is bf16 for bf16 activations and
fp16 otherwise; for fp32 activations (checks only: SGLang serves no fp32 MoE) it is fp32
here, since tl.dot takes no fp32 x fp16 operands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from foreign import _common
from foreign.sglang_fused_moe.launcher import align_block_size, sglang_default_config

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3
COMPUTE_TYPE = {torch.bfloat16: tl.bfloat16, torch.float16: tl.float16, torch.float32: tl.float32}


@dataclass(frozen=True)
class MoeWna16Config:
    block_m: int | None = None  # None: SGLang's default, 64 (16 at tokens <= experts)
    block_n: int | None = None  # None: 64 (32 at tokens <= experts)
    block_k: int | None = None  # None: 32 (64 at tokens <= experts)
    group_m: int | None = None  # None: 8 (1 at tokens <= experts)
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: MoeWna16Config, x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor,
    qzeros: torch.Tensor, topk_ids: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_moe_wna16")
    if x.dim() != 2 or qweight.dim() != 3 or 2 * qweight.shape[2] != x.shape[1]:
        raise ValueError("x must be [tokens, hidden] and qweight [experts, n, hidden / 2]")
    tokens, hidden = x.shape
    experts, n, _ = qweight.shape
    group = hidden // scales.shape[2]
    if scales.shape != (experts, n, hidden // group) or qzeros.shape != (
        experts, n // 2, hidden // group,
    ):  # fmt: skip
        raise ValueError("scales [experts, n, groups], qzeros [experts, n / 2, groups]")
    topk = topk_ids.shape[1]
    base = sglang_default_config(tokens, experts)
    bm, bn, bk, gm, warps, stages = _common.gemm_tiles(
        cfg, base, TRITON_DEFAULT_WARPS, TRITON_DEFAULT_STAGES
    )
    sorted_ids, expert_ids, total = align_block_size(topk_ids, bm, experts)
    # SGLang passes the routing weights even when the first GEMM does not multiply by them
    topk_weights = torch.ones(topk_ids.shape, device=x.device, dtype=torch.float32)
    out = torch.empty((tokens * topk, n), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(sorted_ids.shape[0], bm) * triton.cdiv(n, bn),)
    args = (
        x, qweight, out, scales, qzeros, topk_weights, sorted_ids, expert_ids, total,
        n, hidden, sorted_ids.shape[0], topk_ids.numel(),
        x.stride(0), x.stride(1), qweight.stride(0), qweight.stride(2), qweight.stride(1),
        out.stride(-2), out.stride(-1), scales.stride(0), scales.stride(2), scales.stride(1),
        qzeros.stride(0), qzeros.stride(2), qzeros.stride(1),
    )  # fmt: skip

    def launch() -> torch.Tensor:
        handle = mod.fused_moe_kernel_gptq_awq[grid](
            *args, group_size=group, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
            GROUP_SIZE_M=gm, MUL_ROUTED_WEIGHT=False, top_k=topk,
            compute_type=COMPUTE_TYPE[x.dtype], has_zp=True, use_int4_w4a16=True,
            use_int8_w8a16=False, even_Ks=hidden % bk == 0, filter_expert=True,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["fused_moe_kernel_gptq_awq"],
            block_m=bm, block_n=bn, block_k=bk, group_m=gm, num_warps=warps,
            num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
