"""vLLM's sampled-token ranks (vllm/v1/worker/gpu/sample/logprob.py, v0.34.0:
`_ranks_kernel`), launched as vLLM's `compute_topk_scores` launches it when a step returns
logprobs, so that its launch choices are knobs.

One program per row loads the sampled token's id and logit, then loops over the row in
BLOCK_SIZE-column tiles, counting the logits at or above it (masked columns read as -inf)
with an int32 tl.sum per tile, and stores the count into the int64 output.

vLLM's launch: 8192-column tiles with Triton's default 4 warps and 3 stages.  Knobs: the
tile, the warps and the stages, None keeping vLLM's.  vLLM allocates the output in every
call; here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 8192  # compute_topk_scores' BLOCK_SIZE for _ranks_kernel
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class RanksConfig:
    block_size: int | None = None  # None: vLLM's 8192
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: RanksConfig, logits: torch.Tensor, token_ids: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_logprob_ranks")
    rows, vocab = logits.shape
    if logits.stride(1) != 1 or token_ids.shape != (rows,):
        raise ValueError("logits [rows, vocab] with unit column stride, token ids [rows]")
    block = cfg.block_size or VLLM_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    out = torch.empty(rows, dtype=torch.int64, device=logits.device)
    grid = (rows,)

    def launch() -> torch.Tensor:
        handle = mod._ranks_kernel[grid](
            out, logits, logits.stride(0), token_ids, vocab,
            BLOCK_SIZE=block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_ranks_kernel"],
            block_size=block, num_warps=warps, num_stages=stages, programs=rows,
        )  # fmt: skip
        return out

    return launch
