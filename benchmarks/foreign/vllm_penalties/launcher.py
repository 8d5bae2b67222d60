"""vLLM's sampling penalties (vllm/v1/worker/gpu/sample/penalties.py, v0.34.0:
`_penalties_kernel`), launched as vLLM's `apply_penalties` launches it from the v1 GPU
worker's sampler (in place on the fp32 logits) so that its launch choices are knobs.

When any request of a step asks for a repetition, frequency or presence penalty (common in
chat APIs), every sampled row goes through it before the temperature and the draw: one
program per (row, BLOCK_SIZE vocabulary columns) reads its request's penalties (and returns
at once when it has none), loads the logits, the request's int32 output counts and its
prompt bit mask (one int32 word per 32 columns, expanded to bits in registers), adds the
row's earlier draft tokens to the counts (a loop over the row's place among its request's
drafts, comparing each draft with every column), scales the seen columns' logits by the
repetition penalty and subtracts the frequency and presence penalties, and stores the
logits back.

vLLM's launch: 8192-column blocks (PENALTIES_BLOCK_SIZE) with Triton's default 4 warps and 3
stages.  Knobs: the block (a multiple of 32, the mask's word), the warps and the stages,
None keeping vLLM's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 8192  # PENALTIES_BLOCK_SIZE on the GPU worker
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class PenaltiesConfig:
    block_size: int | None = None  # None: vLLM's 8192
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: PenaltiesConfig, logits: torch.Tensor, idx_mapping: torch.Tensor,
    token_ids: torch.Tensor, local_pos: torch.Tensor, repetition: torch.Tensor,
    frequency: torch.Tensor, presence: torch.Tensor, prompt_mask: torch.Tensor,
    output_counts: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_penalties")
    tokens, vocab = logits.shape
    if output_counts.shape[1] != vocab or prompt_mask.shape[1] != triton.cdiv(vocab, 32):
        raise ValueError("output counts [slots, vocab] and prompt mask [slots, vocab / 32]")
    block = cfg.block_size or VLLM_BLOCK
    if block % 32:
        raise ValueError("block_size must be a multiple of 32 (the prompt mask's word)")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    grid = (tokens, triton.cdiv(vocab, block))

    def launch() -> torch.Tensor:
        handle = mod._penalties_kernel[grid](
            logits, logits.stride(0), idx_mapping, token_ids, local_pos,
            repetition, frequency, presence, prompt_mask, prompt_mask.stride(0),
            output_counts, output_counts.stride(0), vocab,
            BLOCK_SIZE=block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_penalties_kernel"],
            block_size=block, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return logits

    return launch
