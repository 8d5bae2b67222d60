"""vLLM's sampling-mask compaction with vLLM's own launch: 8192-column blocks (fixed in
`SamplingMaskTensors.from_logits`), Triton's default 4 warps and 3 stages (vLLM passes
none; no heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_sampling_mask.launcher import MaskConfig
from foreign.vllm_sampling_mask.launcher import prepare as _prepare

CONFIG = MaskConfig(block_size=None, num_warps=None, num_stages=None)


def prepare(
    logits: torch.Tensor, cu_num_logits: torch.Tensor, num_sampled: torch.Tensor,
    max_num_kept: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The three outputs, allocated per call by vLLM (ids and bitmask zero-filled here)."""
    return _prepare(CONFIG, logits, cu_num_logits, num_sampled, max_num_kept)


def sampling_mask(
    logits: torch.Tensor,
    cu_num_logits: torch.Tensor,
    num_sampled: torch.Tensor,
    max_num_kept: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(logits, cu_num_logits, num_sampled, max_num_kept)()
