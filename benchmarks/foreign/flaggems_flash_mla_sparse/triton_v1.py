"""FlagGems' sparse MLA prefill with FlagGems' own choice: 32 heads a program (at 64 or 128
heads), 16 top-k entries a step, and the first of its two autotune entries, 8 warps and 4
stages; the outputs allocated outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_flash_mla_sparse.launcher import FlashMlaSparseConfig
from foreign.flaggems_flash_mla_sparse.launcher import prepare as _prepare

# FlagGems autotunes over two entries keyed on topk; this is the list's first
CONFIG = FlashMlaSparseConfig(block_h=None, block_k=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The output, max-logit and log-sum-exp buffers, outside the timed call."""
    return _prepare(CONFIG, q, kv, indices)


def flash_mla_sparse(
    q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(q, kv, indices)()
