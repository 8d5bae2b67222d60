"""DiffusionGemma's one-pass row statistics
(vllm/model_executor/models/diffusion_gemma_sampler.py, v0.34.0: `_row_stats_kernel`),
launched as vLLM's `sample_row_stats` launches it for a self-conditioned denoise step
(WRITE_PROBS on), so that its launch choices are knobs.

One program per canvas row.  A first loop walks the row in BLOCK-column steps: the logits
in fp32, an online maximum with the running sums z = sum exp(d) and s = sum d exp(d) (d the
temperature-scaled difference from the maximum) rescaled as it rises, the running argmax,
and Triton's Philox uniforms for Gumbel noise added to logits / T, with their running
argmax.  It stores the argmax, the sample and the entropy log z - s / z; a second loop
re-reads the row and stores exp(d) / z in the probs' dtype.

vLLM's launch: BLOCK 4096, 8 warps (literals in `sample_row_stats`), Triton's default 3
stages.  Knobs: the block, the warps and the stages, None keeping vLLM's.  vLLM's per-call
outputs (argmax, sample, entropy, probs) are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 4096
VLLM_WARPS = 8
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class RowStatsConfig:
    block: int | None = None  # None: vLLM's 4096 columns per step
    num_warps: int | None = None  # None: vLLM's 8
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def prepare(
    cfg: RowStatsConfig, logits: torch.Tensor, temps: torch.Tensor, canvas: int, seed: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("vllm_diffusion_row_stats")
    block = cfg.block or VLLM_BLOCK
    if block & (block - 1):
        raise ValueError(f"block {block} must be a power of two")
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    rows, vocab = logits.shape
    device = logits.device
    argmax = torch.empty(rows, dtype=torch.int64, device=device)
    sample = torch.empty(rows, dtype=torch.int64, device=device)
    entropy = torch.empty(rows, dtype=torch.float32, device=device)
    probs = torch.empty(rows, vocab, dtype=logits.dtype, device=device)
    grid = (rows,)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = mod._row_stats_kernel[grid](
            logits, logits.stride(0), temps, argmax, sample, entropy, probs, probs.stride(0),
            seed, vocab, canvas, WRITE_PROBS=True, BLOCK=block, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_row_stats_kernel"], block=block,
            num_warps=warps, num_stages=stages, programs=rows,
        )  # fmt: skip
        return argmax, sample, entropy, probs

    return launch
