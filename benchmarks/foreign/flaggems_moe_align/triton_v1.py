"""FlagGems' MoE block alignment with FlagGems' own launch (fixed, no tuner): the four
stages of `moe_align_block_size_triton` on stock Triton, one program per expert for the
count, the column scan and the scatter and one for the rounded offsets, the vector scan
where the expert count is a power of two, Triton's default 4 warps each; the outputs and
the scratch made outside the timed call, the counts zero-filled inside it."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_moe_align.launcher import MoeAlignConfig
from foreign.flaggems_moe_align.launcher import prepare as _prepare

# moe_align_block_size_triton passes no num_warps or num_stages to any of its four launches
# (Triton's defaults: 4 warps, 3 stages), on every GPU: these are the values it runs on an
# H100.
CONFIG = MoeAlignConfig(count_warps=None, scan_warps=None, offsets_warps=None, scatter_warps=None)


def prepare(
    topk_ids: torch.Tensor, experts: int, block_size: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The outputs and the scratch, outside the timed call."""
    return _prepare(CONFIG, topk_ids, experts, block_size)


def moe_align(
    topk_ids: torch.Tensor, experts: int, block_size: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(topk_ids, experts, block_size)()
