"""SGLang's DeepEP-normal token permute with SGLang's own launch: 512-column tiles
(BLOCK_SIZE=512 in cutlass_w4a8_moe_deepep_normal), Triton's default 4 warps and 3 stages
(SGLang passes neither; no heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_deepep_permute.launcher import PermuteConfig
from foreign.sglang_deepep_permute.launcher import prepare as _prepare

CONFIG = PermuteConfig(block_size=None, num_warps=None, num_stages=None)


def prepare(
    a: torch.Tensor, topk_ids: torch.Tensor, src2dst: torch.Tensor, rows: int
) -> Callable[[], torch.Tensor]:
    """The output, allocated outside the timed call."""
    return _prepare(CONFIG, a, topk_ids, src2dst, rows)


def deepep_permute(
    a: torch.Tensor, topk_ids: torch.Tensor, src2dst: torch.Tensor, rows: int
) -> torch.Tensor:
    return prepare(a, topk_ids, src2dst, rows)()
