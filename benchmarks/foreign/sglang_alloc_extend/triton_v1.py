"""SGLang's paged KV allocation for an extend batch with SGLang's own launch: the extend tile
at the next power of two of the batch's new tokens (`seen_max_num_extend_tokens_next_power_of_2`
of a fresh allocator) and Triton's default 4 warps (SGLang passes none; no heuristic,
autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_alloc_extend.launcher import AllocExtendConfig
from foreign.sglang_alloc_extend.launcher import prepare as _prepare

CONFIG = AllocExtendConfig(extend_tile=None, num_warps=None)


def prepare(
    pre_lens: torch.Tensor, seq_lens: torch.Tensor, last_loc: torch.Tensor,
    free_pages: torch.Tensor, page_size: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output, outside the timed call."""
    return _prepare(CONFIG, pre_lens, seq_lens, last_loc, free_pages, page_size)


def alloc_extend(
    pre_lens: torch.Tensor, seq_lens: torch.Tensor, last_loc: torch.Tensor,
    free_pages: torch.Tensor, page_size: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(pre_lens, seq_lens, last_loc, free_pages, page_size)()
