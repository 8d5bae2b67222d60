"""vLLM's rejection-sampling logits statistics (vllm/v1/worker/gpu/spec_decode/
rejection_sampler_utils.py, v0.34.0: `_compute_local_logits_stats_kernel`), launched as
vLLM's `rejection_sample` launches it, so that its launch choices are knobs.

The grid is (logits rows, vocabulary blocks).  A program on a request's bonus row (the
next row starts a new request) returns at once; otherwise it loads its row's slot, draft
position and temperature, then one BLOCK_SIZE tile of the fp32 target logits: for a greedy
row (temperature 0) it stores the tile's maximum and its column, for a sampling row the
tile's maximum and its sum of exp(x - max), then the same two of the draft model's cached
logits divided by the temperature (HAS_DRAFT_LOGITS).  The whole tile is one tl.max and one
tl.sum in registers: no loop.

vLLM's launch: 8192-column blocks (VOCAB_BLOCK_SIZE, fixed in rejection_sample) with
Triton's default 4 warps and 3 stages; draft logits cached, no row mapping (a replicated
cache).  Knobs: the block and the warps, None keeping vLLM's.  vLLM allocates the five
[rows, blocks] partial buffers per call (new_empty); here they are allocated, zeroed, in
`prepare` (the block sets their width).  The timed call is the kernel, then the per-row
combine that vLLM's next kernels make of the partials (`_compute_global_logsumexp`,
`_compute_global_target_argmax`), by torch ops: the maximum over blocks, the rescaled
sums' log, the argmax block's column, so that the output does not depend on the block.
Rows the kernel leaves unwritten keep zeros: their sums give -inf, their argmax 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 8192  # VOCAB_BLOCK_SIZE
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class RejectionStatsConfig:
    block_size: int | None = None  # None: vLLM's 8192 columns per program
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)


def _combine(mx: torch.Tensor, sumexp: torch.Tensor) -> torch.Tensor:
    """Per-row log-sum-exp from per-block maxima and sums (vLLM's global logsumexp)."""
    gmax = mx.amax(1, keepdim=True)
    return gmax[:, 0] + torch.log((sumexp * torch.exp(mx - gmax)).sum(1))


def prepare(
    cfg: RejectionStatsConfig, target_logits: torch.Tensor, draft_logits: torch.Tensor,
    expanded_idx_mapping: torch.Tensor, expanded_local_pos: torch.Tensor,
    temperature: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("vllm_rejection_stats")
    helper = _common.load_source("vllm_draft_logits_row")
    # The extracted kernel calls draft_logits_row (draft_logits.py) by global name.
    mod.draft_logits_row = helper.draft_logits_row
    if target_logits.stride(1) != 1 or draft_logits.dim() != 3 or draft_logits.stride(2) != 1:
        raise ValueError("target_logits [rows, vocab] and draft_logits [slots, drafts, vocab] "
                         "need unit column strides")  # fmt: skip
    block = cfg.block_size or VLLM_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    rows, vocab = target_logits.shape
    vocab = min(vocab, draft_logits.shape[-1])
    blocks = triton.cdiv(vocab, block)
    dev = target_logits.device
    t_arg = torch.zeros(rows, blocks, dtype=torch.int64, device=dev)
    t_max = torch.zeros(rows, blocks, dtype=torch.float32, device=dev)
    t_sum = torch.zeros(rows, blocks, dtype=torch.float32, device=dev)
    d_max = torch.zeros(rows, blocks, dtype=torch.float32, device=dev)
    d_sum = torch.zeros(rows, blocks, dtype=torch.float32, device=dev)
    grid = (rows, blocks)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = mod._compute_local_logits_stats_kernel[grid](
            t_arg, t_arg.stride(0), t_max, t_max.stride(0), t_sum, t_sum.stride(0),
            d_max, d_max.stride(0), d_sum, d_sum.stride(0),
            target_logits, target_logits.stride(0),
            draft_logits, draft_logits.stride(0), draft_logits.stride(1), None,
            expanded_idx_mapping, expanded_local_pos, temperature, vocab, rows,
            BLOCK_SIZE=block, HAS_DRAFT_LOGITS=True, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["_compute_local_logits_stats_kernel"], block_size=block,
            num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        t_lse = _combine(t_max, t_sum)
        arg = t_arg.gather(1, t_max.argmax(1, keepdim=True))[:, 0]
        return t_lse, arg, _combine(d_max, d_sum)

    return launch
