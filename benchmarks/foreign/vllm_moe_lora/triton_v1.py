"""vLLM's one-shot fused MoE-LoRA with vLLM's own launch for a MoE layer's w13: BLOCK_M the
fused-MoE default heuristic's BLOCK_SIZE_M (no tuned table), BLOCK_R the rank padded to a
power of two >= 16, BLOCK_K 128 (hidden >= 256), BLOCK_N 128, NPID from vLLM's occupancy
heuristic over the SM count, 4 warps (8 when NPID > 1) and 3 stages, as
`_run_fused_moe_lora_one_shot` chooses them; the alignment, the pointer tables and the
copy of the base output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_moe_lora.launcher import MoeLoraConfig
from foreign.vllm_moe_lora.launcher import prepare as _prepare

CONFIG = MoeLoraConfig(
    block_m=None, block_n=None, block_k=None, npid=None, num_warps=None, num_stages=None
)


def prepare(
    out_base: torch.Tensor, x: torch.Tensor, lora_a: torch.Tensor, lora_b: torch.Tensor,
    topk_ids: torch.Tensor, topk_weights: torch.Tensor, mapping: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The alignment, the pointer tables and the base output's copy, outside the timed
    call."""
    return _prepare(CONFIG, out_base, x, lora_a, lora_b, topk_ids, topk_weights, mapping)


def moe_lora(
    out_base: torch.Tensor, x: torch.Tensor, lora_a: torch.Tensor, lora_b: torch.Tensor,
    topk_ids: torch.Tensor, topk_weights: torch.Tensor, mapping: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    return prepare(out_base, x, lora_a, lora_b, topk_ids, topk_weights, mapping)()
