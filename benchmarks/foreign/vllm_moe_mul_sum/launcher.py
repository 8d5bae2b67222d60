"""vLLM's weighted top-k sum of the Humming MoE experts
(vllm/model_executor/layers/fused_moe/moe_fused_mul_sum.py, v0.34.0:
`moe_fused_mul_sum_kernel`), launched as vLLM's `moe_fused_mul_sum` launches it, so that
its launch choices are knobs.

One program per token row.  It loads the token's top-k ids, maps each through the EP
expert map (a slot is taken when its id is not -1 and its expert is local), loads the
top-k router weights in fp32, returns at once when no slot is taken, then walks the hidden
size in BLOCK_K steps: for each taken slot it loads that expert's output slice and adds it,
times the weight, into an fp32 accumulator, and stores the step's sum in the input dtype.
The skipped slots' rows are never read.

vLLM's launch (`_heuristic_config`): 2-byte inputs with hidden >= 1024 on CUDA sm75 or later
take BLOCK_K = min(next_power_of_2(hidden), 4096) and 16 warps (8 on sm75); otherwise
BLOCK_K = max(128, min(next_power_of_2(hidden), 512 or, for fp32, 256)) and 2 warps (4 for
fp32); always 3 stages.  Knobs: the column block, the warps and the stages, None keeping
vLLM's.  vLLM's output buffer (the caller's `output`) is made in `prepare`;
num_valid_tokens is None (no DeepEP receive count).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_STAGES = 3


@dataclass(frozen=True)
class MoeMulSumConfig:
    block_k: int | None = None  # None: vLLM's _heuristic_config column block
    num_warps: int | None = None  # None: vLLM's _heuristic_config warps
    num_stages: int | None = None  # None: vLLM's 3


def vllm_config(hidden: int, element_size: int, device: torch.device) -> tuple[int, int]:
    """vLLM's `_heuristic_config` (BLOCK_K, num_warps) for this hidden size, input element
    size and device (a CPU run, the interpreter's, takes the non-CUDA branch)."""
    is_fp32 = element_size > 2
    max_block_k = 256 if is_fp32 else 512
    num_warps = 4 if is_fp32 else 2
    if not is_fp32 and hidden >= 1024 and device.type == "cuda":
        capability = torch.cuda.get_device_capability(device)
        if capability >= (7, 5):
            max_block_k = 4096
            num_warps = 8 if capability == (7, 5) else 16
    block_k = max(128, min(triton.next_power_of_2(hidden), max_block_k))
    return block_k, num_warps


def prepare(
    cfg: MoeMulSumConfig, inputs: torch.Tensor, topk_weights: torch.Tensor,
    topk_ids: torch.Tensor, expert_map: torch.Tensor | None,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_moe_mul_sum")
    if inputs.ndim != 3 or not inputs.is_contiguous():
        raise ValueError("inputs must be a contiguous [tokens, topk, hidden] tensor")
    tokens, topk, hidden = inputs.shape
    if topk_weights.shape != (tokens, topk) or topk_ids.shape != (tokens, topk):
        raise ValueError("topk_weights and topk_ids must be [tokens, topk]")
    v_block, v_warps = vllm_config(hidden, inputs.element_size(), inputs.device)
    block_k = cfg.block_k or v_block
    warps = cfg.num_warps or v_warps
    stages = cfg.num_stages or VLLM_STAGES
    out = torch.empty(tokens, hidden, dtype=inputs.dtype, device=inputs.device)
    grid = (tokens,)

    def launch() -> torch.Tensor:
        handle = mod.moe_fused_mul_sum_kernel[grid](
            inputs, topk_weights, out, topk_ids, expert_map, None, topk * hidden,
            True, expert_map is not None, False, topk, hidden, block_k,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["moe_fused_mul_sum_kernel"],
            block_k=block_k, num_warps=warps, num_stages=stages, programs=grid[0],
            steps=triton.cdiv(hidden, block_k),
        )  # fmt: skip
        return out

    return launch
