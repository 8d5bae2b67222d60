"""Inkling's fused short convolution with vLLM's own launch: one program per 8 tokens and
256 flat channels (the channels' power of two when fewer), 4 warps, Triton's default
stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_paged_sconv.launcher import PagedSconvConfig
from foreign.vllm_paged_sconv.launcher import prepare as _prepare

CONFIG = PagedSconvConfig(block_t=None, block_c=None, num_warps=None, num_stages=None)


def prepare(
    x: torch.Tensor, weight: torch.Tensor, cache: torch.Tensor, positions: torch.Tensor,
    block_table: torch.Tensor, seq_idx: torch.Tensor, slot_mapping: torch.Tensor,
    query_start: torch.Tensor, off_s: int, ws: int, bs: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The output buffer and the grid, outside the timed call."""
    return _prepare(
        CONFIG, x, weight, cache, positions, block_table, seq_idx, slot_mapping, query_start,
        off_s, ws, bs,
    )  # fmt: skip


def paged_sconv(
    x: torch.Tensor, weight: torch.Tensor, cache: torch.Tensor, positions: torch.Tensor,
    block_table: torch.Tensor, seq_idx: torch.Tensor, slot_mapping: torch.Tensor,
    query_start: torch.Tensor, off_s: int, ws: int, bs: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(
        x, weight, cache, positions, block_table, seq_idx, slot_mapping, query_start, off_s,
        ws, bs,
    )()  # fmt: skip
