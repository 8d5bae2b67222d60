"""vLLM's min-p filter (vllm/v1/worker/gpu/sample/min_p.py, v0.34.0: `_min_p_kernel`),
launched as vLLM's `apply_min_p` launches it from the v1 GPU worker's sampler (in place on
the fp32 logits, after the temperature), so that its launch choices are knobs.

When any request of a step samples with a min-p, every logits row of the step goes through
it: one program per row reads its request's min-p (a program whose request has none
returns at once), walks the row in BLOCK_SIZE tiles for its maximum, then walks it again
and stores every tile back with the values below max + log(min_p) replaced by -inf.

vLLM's launch: 1024-column tiles (BLOCK_SIZE, fixed in apply_min_p) with Triton's default 4
warps and 3 stages.  Knobs: the tile, the warps and the stages (the depth of both loops),
None keeping vLLM's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 1024  # BLOCK_SIZE in apply_min_p
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class MinPConfig:
    block_size: int | None = None  # None: vLLM's 1024
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: MinPConfig, logits: torch.Tensor, expanded_idx_mapping: torch.Tensor,
    min_p: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_min_p")
    if logits.dtype != torch.float32 or logits.stride(1) != 1:
        raise ValueError("logits must be fp32 with unit column stride (vLLM's sampler copy)")
    rows, vocab = logits.shape
    block = cfg.block_size or VLLM_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    grid = (rows,)

    def launch() -> torch.Tensor:
        handle = mod._min_p_kernel[grid](
            logits, logits.stride(0), expanded_idx_mapping, min_p, vocab,
            BLOCK_SIZE=block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_min_p_kernel"], block_size=block,
            num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return logits

    return launch
