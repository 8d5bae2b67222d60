"""FlagGems' bucket-sort top-k with FlagGems' own choice: the first of the ten configurations
its @triton.autotune lists (32 columns per pass step, 32 candidates per refinement step, 1
warp, 1 stage); the output and scratch rows made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_bucket_topk.launcher import BucketTopkConfig
from foreign.flaggems_bucket_topk.launcher import prepare as _prepare

CONFIG = BucketTopkConfig(bs=None, bss=None, num_warps=None, num_stages=None)


def prepare(
    logits: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor, k: int
) -> Callable[[], torch.Tensor]:
    """The output and scratch buffers, outside the timed call."""
    return _prepare(CONFIG, logits, starts, ends, k)


def bucket_topk(
    logits: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor, k: int
) -> torch.Tensor:
    return prepare(logits, starts, ends, k)()
